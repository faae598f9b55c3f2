"""--budget: one wall-clock budget for restriction, scoring and solving (pipeline.core.budget)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import hybridbn
from pipeline.core.budget import MIN_SOLVE_SECONDS, RESTRICT_SHARE, SCORES_SHARE, restrict_limit, scores_limit, solve_config
from pipeline.core.cache import Artifact, StageCache
from pipeline.apps.cli import main
from pipeline.core.config import RunConfig
from pipeline.apps.grid import _param_columns, parse_grid, run_grid


def spent(restrict: float, scores: float) -> dict[str, Artifact]:
    return {"restrict": Artifact("restrict", "r", seconds=restrict), "scores": Artifact("scores", "s", seconds=scores)}


@pytest.mark.parametrize("budget,time_limit,used,expected", [
    (10.0, None, (1.0, 2.0), 7.0),            # the solver gets what is left
    (10.0, 4.0, (1.0, 2.0), 4.0),             # --time-limit caps it
    (10.0, None, (6.0, 7.0), MIN_SOLVE_SECONDS),  # over budget: still a DAG
    (None, 4.0, (100.0, 100.0), 4.0),         # no budget: the time limit as given
])
def test_solver_gets_what_restriction_and_scoring_left(budget, time_limit, used, expected):
    cfg = RunConfig(network="asia", budget=budget, time_limit=time_limit).validated()
    assert solve_config(cfg, spent(*used)).time_limit == pytest.approx(expected)


@pytest.mark.parametrize("method", ["pc", "pmms", "mmpc", "cops", "none"])
def test_restriction_and_scoring_get_their_shares_of_what_is_left(method):
    cfg = RunConfig(network="asia", method=method, budget=20.0).validated()
    assert restrict_limit(cfg) == RESTRICT_SHARE * 20.0
    assert scores_limit(cfg, spent(4.0, 100.0)) == SCORES_SHARE * 16.0  # the scores' own time is not yet spent
    assert scores_limit(cfg, spent(25.0, 0.0)) == 0.0
    unlimited = RunConfig(network="asia", method=method).validated()
    assert restrict_limit(unlimited) is None and scores_limit(unlimited, spent(1.0, 1.0)) is None


def test_run_records_what_each_stage_got_and_reruns_from_the_cache(tmp_path, capsys):
    argv = ["--network", "asia", "--rows", "500", "--budget", "30", "--cache-dir", str(tmp_path / "c"),
            "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "budget" in out and "solver time limit" in out
    folder = next((tmp_path / "o").iterdir())
    record = json.loads((folder / "result.json").read_text())
    budget, stages = record["budget"], record["stages"]
    assert budget["seconds"] == 30 and record["config"]["budget"] == 30
    left = 30 - stages["restrict"]["seconds"] - stages["scores"]["seconds"]
    assert budget["stages"]["solve"]["limit"] == pytest.approx(left, abs=1e-3)
    assert stages["solve"]["meta"]["result"]["status"] == "optimal" and record["result"]["gap"] == 0
    assert budget["used"] == pytest.approx(sum(stages[s]["seconds"] for s in ("restrict", "scores", "solve")))
    assert not any(got["limited"] for got in budget["stages"].values())
    again = hybridbn.learn("asia", rows=500, budget=30, cache_dir=tmp_path / "c")
    assert all(again.cached.values()) and again.budget == budget
    unlimited = hybridbn.learn("asia", rows=500, cache_dir=tmp_path / "c")  # finished in time: the same stages
    assert unlimited.cached["restrict"] and unlimited.cached["scores"] and not unlimited.cached["solve"]


def test_a_budget_spent_at_once_cuts_each_stage_and_the_result_claims_no_bound(tmp_path, capsys):
    """1e-9 s: restriction and scoring get 0 s (a deadline passed at their first check); the solver
    still returns a DAG, whose status says it is not the proven optimum."""
    argv = ["--network", "asia", "--rows", "500", "--budget", "1e-9", "--cache-dir", str(tmp_path / "c"),
            "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "stopped by their limits: restrict, scores, solve" in out
    record = json.loads((next((tmp_path / "o").iterdir()) / "result.json").read_text())
    got = record["budget"]["stages"]
    assert {stage: (got[stage]["limit"], got[stage]["limited"]) for stage in got} == {
        "restrict": (0.0, True), "scores": (0.0, True), "solve": (MIN_SOLVE_SECONDS, True)}
    assert all(got[stage]["seconds"] == record["stages"][stage]["seconds"] for stage in got)
    restrict, scores = record["stages"]["restrict"]["meta"], record["stages"]["scores"]["meta"]
    assert restrict["status"] == "timeout" and restrict["n_allowed"] == restrict["n_pairs"] == 28
    assert scores["status"] == "timeout" and scores["table_meta"]["unscored"] == list(range(8))
    assert scores["n_candidates"] == 8
    result = record["result"]
    assert (result["status"], result["solver_status"], result["dual_bound"], result["gap"]) == (
        "limited", "optimal", None, None)
    assert "no bound" in result["reason"]
    again = hybridbn.learn("asia", rows=500, budget=1e-9, cache_dir=tmp_path / "c")
    assert all(again.cached.values()) and again.status == "limited" and again.bound is None
    assert again.arcs == [] and again.objective == pytest.approx(result["objective"])  # the empty sets' DAG
    unlimited = hybridbn.learn("asia", rows=500, cache_dir=tmp_path / "c")  # never the cut stages
    assert not (unlimited.cached["restrict"] or unlimited.cached["scores"]) and unlimited.status == "optimal"
    assert unlimited.counts["restrict"]["n_allowed"] < 28


@pytest.mark.parametrize("method", ["pmms", "mmpc"])
def test_every_restriction_method_stops_at_its_share(tmp_path, method):
    cut = hybridbn.learn("asia", rows=500, method=method, budget=1e-9, stage="restrict", cache_dir=tmp_path)
    meta = cut.counts["restrict"]
    assert meta["status"] == "timeout" and meta["n_allowed"] == meta["n_pairs"]
    assert cut.artifacts["restrict"].completion == "limited"


def test_cops_take_their_share_as_time_limit(tmp_path):
    """The cops check a time limit (every 1000 oracle calls): what was left of their share, or
    ``--cops-time-limit`` when shorter."""
    def limit(**options):
        run = hybridbn.learn("asia", rows=500, method="cops", budget=20, stage="restrict", use_cache=False,
                             **options)
        return run.counts["restrict"]["params"]["time_limit"]

    assert RESTRICT_SHARE * 20 - 1 < limit() <= RESTRICT_SHARE * 20 and limit(cops_time_limit=3) == 3


def test_anytime_solver_and_score_file_runs_take_the_budget(tmp_path):
    result = hybridbn.learn("asia", rows=300, solver="kg", treewidth=2, budget=2, cache_dir=tmp_path / "c")
    limit = result.budget["stages"]["solve"]["limit"]
    assert result.solver_result["time_limit"] == limit and MIN_SOLVE_SECONDS <= limit <= 2
    path = result.write_scores(tmp_path / "a.jkl")
    from_file = hybridbn.learn(str(path), budget=5, cache_dir=tmp_path / "c")
    assert from_file.budget["stages"]["solve"]["limit"] == pytest.approx(5 - from_file.times["scores"], abs=1e-3)


@pytest.mark.parametrize("argv,message", [
    (["--budget", "0"], "--budget must be a positive number of seconds"),
    (["--budget", "inf"], "--budget must be a positive number of seconds"),
    (["--budget", "soon"], "argument --budget: invalid float value: 'soon'"),
    (["--budget", "10", "--solver", "ges"], "--budget needs a solver with a time limit (ilp, kg, kastar, s2, s2plus, hc, tabu), not --solver ges"),
])
def test_bad_budget_is_a_one_line_error(capsys, tmp_path, argv, message):
    try:
        status = main(["--network", "asia", *argv, "--cache-dir", str(tmp_path / "c")])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "c").exists()


def test_grid_key(tmp_path):
    grid = parse_grid('networks = ["asia"]\nbudget = 60\n', name="g")
    assert [cfg.budget for cfg in grid.configs] == [60.0]
    assert _param_columns(grid.configs[0])["budget"] == 60.0  # a column of the results table
    with pytest.raises(ValueError, match="--budget must be a positive"):
        parse_grid('networks = ["asia"]\nbudget = -1\n', name="g")
    spent = parse_grid('networks = ["asia"]\nrows = 300\nbaseline = false\nbudget = 1e-9\n', name="g")
    row = run_grid(spent, StageCache(tmp_path)).iloc[0]
    assert row["budget"] == 1e-9 and row["status"] == "limited" and pd.isna(row["gap"])


def test_a_cut_table_still_holds_the_families_required_adjacencies_need(tmp_path):
    """Undirected requirements need families with the partner: they are scored even past the deadline."""
    required = tmp_path / "r.csv"
    required.write_text("source,target,directed\nasia,tub,true\nsmoke,lung,false\n")
    cut = hybridbn.learn("asia", rows=500, budget=1e-9, required=str(required), use_cache=False)
    assert cut.status == "limited" and cut.counts["scores"]["table_meta"]["unscored"] == list(range(8))
    arcs = set(cut.arcs)
    assert ("asia", "tub") in arcs and {("smoke", "lung"), ("lung", "smoke")} & arcs
