"""A resumed exact solve keeps what the unfinished ones proved (``pipeline.core.incumbent``): their
best DAG as its start, and their tightest dual bound as its own where that is tighter."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hybridbn.progress import progress_record, relative_gap
from hybridbn.solving import Solution
from pipeline.apps.report import stage_details
from pipeline.core import stages
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.incumbent import EARLIER, Incumbent, Incumbents, with_earlier_bound
from pipeline.core.kernels import WARM_UP_TABLE
from pipeline.core.stages import run_stages


def test_the_slot_keeps_the_best_dag_and_the_tightest_bound_apart(tmp_path):
    slot = Incumbents(StageCache(tmp_path), {"solver": "ilp", "time_limit": 1.0}, {"scores": "k"}, "1")
    slot.offer([(), (0,)], {"objective": -10.0, "dual_bound": -4.0, "status": "timelimit"})
    slot.offer([(1,), ()], {"objective": -12.0, "dual_bound": -6.0, "status": "timelimit"})  # worse DAG, tighter
    slot.offer([(), ()], {"objective": -9.0, "dual_bound": None, "status": "interrupted"})  # better, no bound
    assert slot.load() == Incumbent([(), ()], -9.0, "interrupted", -6.0)
    slot.offer([(1,), ()], {"objective": -11.5, "dual_bound": -5.0, "status": "timelimit"})  # nothing better
    assert slot.load() == Incumbent([(), ()], -9.0, "interrupted", -6.0)
    other = Incumbents(StageCache(tmp_path), {"solver": "ilp", "time_limit": 9.0}, {"scores": "k"}, "1")
    assert other.load() == slot.load()  # the same problem under another time limit
    assert Incumbents(StageCache(tmp_path), {"solver": "ilp"}, {"scores": "other"}, "1").load() is None


@pytest.mark.parametrize("dual, status, applied", [(None, "timelimit", True), (-3.0, "timelimit", True),
                                                   (-6.0, "timelimit", False), (-8.0, "timelimit", False),
                                                   (-9.5, "optimal", False)])
def test_a_resumed_summary_takes_the_earlier_bound_only_where_it_is_tighter(dual, status, applied):
    summary = {"objective": -10.0, "dual_bound": dual, "gap": None, "status": status,
               "trajectory": [[0.5, -12.0, None], [1.0, -10.0, dual]]}
    out = with_earlier_bound(summary, Incumbent([()], -11.0, "timelimit", -6.0))
    assert out["trajectory"][0] == [0.5, -12.0, -6.0]  # before the solve's own bound, the earlier one held
    if not applied:
        assert out == {**summary, "trajectory": out["trajectory"]} and out["trajectory"][1] == [1.0, -10.0, dual]
        return
    assert (out["dual_bound"], out["dual_bound_from"]) == (-6.0, EARLIER)
    assert out["gap"] == pytest.approx(0.4) and out["trajectory"] == [[0.5, -12.0, -6.0], [1.0, -10.0, -6.0]]
    assert with_earlier_bound(summary, None) is summary
    assert with_earlier_bound(summary, Incumbent([()], -11.0, "timelimit")) is summary  # an older cache: no bound


def test_a_resumed_solve_reports_the_tightest_bound_of_all_its_runs(tmp_path, monkeypatch):
    """The ILP replaced by a stand-in that stops with the bounds given, one run per time limit."""
    bounds = {1.0: -53400.0, 2.0: None, 3.0: -53450.0, 4.0: -53420.0}
    seen = []

    def stand_in(cfg, inputs):
        dual = bounds[cfg.time_limit]
        start = inputs.start or [()] * inputs.table.n_vars
        objective = inputs.table.score_of(start)
        seen.append(inputs.start is not None)
        inputs.progress(progress_record("solve", "ilp", 0.1, primal=objective, dual=dual))
        return Solution(start, {"objective": objective, "dual_bound": dual, "gap": relative_gap(objective, dual),
                                "status": "timelimit", "n_edges": sum(map(len, start)),
                                "trajectory": [[0.1, objective, dual]]})

    solver = replace(stages.SOLVER, methods=(replace(stages.SOLVER["ilp"], run=stand_in), *stages.SOLVER.methods[1:]))
    monkeypatch.setattr(stages, "SOLVER", solver)
    cache = StageCache(tmp_path)
    for limit, expected, earlier in ((1.0, -53400.0, False), (2.0, -53400.0, True), (3.0, -53450.0, False),
                                     (4.0, -53450.0, True)):
        records = []
        out = run_stages(cache, RunConfig(scores=str(WARM_UP_TABLE), time_limit=limit).validated(), upto="solve",
                         report=records.append)
        result = out["solve"].meta["result"]
        assert result["dual_bound"] == expected and (result.get("dual_bound_from") == EARLIER) == earlier
        assert result["gap"] == pytest.approx(relative_gap(result["objective"], expected))
        assert records[0]["dual"] == expected  # the lines of a resumed solve show what is proven
        assert ("bound from an earlier run" in stage_details("solve", out["solve"])) == earlier
    assert seen == [False, True, True, True]  # each later run warm-starts


def test_a_stopped_ilp_resumed_never_reports_a_looser_bound(tmp_path):
    """The real ILP on alarm's table (about a second to solve) stopped at growing limits, then at
    one too short for SCIP to reach its root bound: no run reports a looser bound than the best
    of the runs before it."""
    cache = StageCache(tmp_path)
    proven = None
    for limit in (0.2, 0.4, 0.8, 0.01):
        result = run_stages(cache, RunConfig(scores=str(WARM_UP_TABLE), time_limit=limit).validated(),
                            upto="solve")["solve"].meta["result"]
        if proven is not None:
            assert result["dual_bound"] <= proven
            assert all(dual <= proven for _, _, dual in result["trajectory"])
        if result["status"] != "optimal" and result["dual_bound"] is not None:
            proven = result["dual_bound"] if proven is None else min(proven, result["dual_bound"])
    assert proven is not None and result["status"] == "timelimit"  # the last one was resumed from a bound
