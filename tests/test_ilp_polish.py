"""What an exact solve stopped at a limit leaves behind: the tabu search from its incumbent
(``ilp.methods.polish_incumbent``) and the bound that later climbs of its table are measured
against (``pipeline.core.exact_bound``)."""

from __future__ import annotations

import numpy as np
import pytest

import ilp
from graphs.dag import adjacency_from_parents, is_acyclic
from ilp.methods import POLISH_SECONDS, POLISH_SHARE, polish_incumbent, run_ilp
from ilp.result import ILPResult
from pipeline.core.cache import Artifact, StageCache
from pipeline.core.config import RunConfig
from pipeline.core.exact_bound import ExactBound, exact_bound_slot
from hybridbn.solving import SolveInputs
from scores.table import ScoreTable
from search.hill_climbing import tabu_search


def random_table(n: int, seed: int) -> ScoreTable:
    """Every parent set of at most 2 parents, scores drawn so that parents often pay."""
    rng = np.random.default_rng(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {(): -30.0 - 10 * rng.random()}
        for i, a in enumerate(others):
            fam[(a,)] = -30.0 + 12 * rng.random()
            for b in others[i + 1:]:
                fam[(a, b)] = -30.0 + 20 * rng.random()
        families.append(fam)
    return ScoreTable.from_families(families)


def limited_summary(table: ScoreTable, parent_sets, dual_bound: float) -> dict:
    return {"status": "timelimit", "objective": table.score_of(parent_sets), "dual_bound": dual_bound,
            "gap": 0.5, "n_edges": sum(map(len, parent_sets)), "trajectory": [[3.0, table.score_of(parent_sets),
                                                                            dual_bound]]}


def test_a_poor_incumbent_is_replaced_by_the_better_dag_the_tabu_search_finds():
    table = random_table(7, 0)
    empty = [()] * 7
    optimum = ilp.solve_ilp(table)
    summary = limited_summary(table, empty, optimum.dual_bound + 5.0)
    sets, out = polish_incumbent(table, empty, summary, SolveInputs(names=[]), time_limit=30.0)
    assert out["local_search"]["adopted"] and out["local_search"]["start_objective"] == summary["objective"]
    assert out["objective"] == pytest.approx(table.score_of(sets)) and out["objective"] > summary["objective"]
    assert out["objective"] == pytest.approx(tabu_search(table, start=empty).score)
    assert out["objective"] <= optimum.objective + 1e-9 and is_acyclic(adjacency_from_parents(sets, 7))
    assert out["gap"] == pytest.approx((summary["dual_bound"] - out["objective"]) / abs(out["objective"]))
    assert out["n_edges"] == sum(map(len, sets)) and out["status"] == "timelimit"
    assert out["trajectory"][-1][1:] == [out["objective"], summary["dual_bound"]]
    assert out["trajectory"][-1][0] >= 3.0


def test_an_incumbent_no_move_improves_is_kept_as_it_is():
    table = random_table(7, 1)
    optimum = ilp.solve_ilp(table)
    best = [tuple(ps) for ps in optimum.parent_sets]
    summary = limited_summary(table, best, optimum.dual_bound)
    sets, out = polish_incumbent(table, best, summary, SolveInputs(names=[]), time_limit=None)
    assert sets == best and not out["local_search"]["adopted"]
    assert {k: v for k, v in out.items() if k != "local_search"} == summary


def test_the_search_keeps_the_knowledge_arcs():
    table = random_table(6, 2)
    empty = [()] * 6
    free, _ = polish_incumbent(table, empty, limited_summary(table, empty, 0.0), SolveInputs(names=[]), 10.0)
    arcs = [(p, c) for c, ps in enumerate(free) for p in ps]
    assert arcs  # something to forbid
    required = next((p, c) for p in range(6) for c in range(6) if p != c and (p, c) not in arcs
                    and (c, p) not in arcs)
    start = [() if c != required[1] else (required[0],) for c in range(6)]
    inputs = SolveInputs(names=[], required_arcs=[required], forbidden_arcs=arcs[:2])
    sets, out = polish_incumbent(table, start, limited_summary(table, start, 0.0), inputs, 10.0)
    held = {(p, c) for c, ps in enumerate(sets) for p in ps}
    assert required in held and not held & set(arcs[:2])


class Settings:
    time_limit, memory_limit, within_bags = 40.0, None, False

    def __init__(self, treewidth=None):
        self.treewidth = treewidth


@pytest.mark.parametrize("status, polished", [("timelimit", True), ("memlimit", True), ("optimal", False),
                                              ("userinterrupt", False)])
def test_the_ilp_polishes_only_an_incumbent_stopped_at_a_limit(monkeypatch, status, polished):
    table = random_table(6, 3)
    empty = [()] * 6
    seconds = []

    def stopped(table, **_):
        return ILPResult(np.zeros((6, 6), bool), empty, table.score_of(empty), 0.0, 1.0, status, list("abcdef"))

    def search(table, **options):
        seconds.append(options["time_limit"])
        return tabu_search(table, **options)

    monkeypatch.setattr(ilp, "solve_ilp", stopped)
    monkeypatch.setattr("search.hill_climbing.tabu_search", search)
    solution = run_ilp(Settings(), SolveInputs(names=list("abcdef"), table=table))
    assert ("local_search" in solution.summary) == polished
    assert (solution.parent_sets != empty) == polished
    if polished:
        assert seconds == [min(max(POLISH_SHARE * Settings.time_limit, POLISH_SECONDS[0]), POLISH_SECONDS[1])]


def test_the_bound_slot_keeps_the_tightest_bound_and_the_best_objective(tmp_path):
    slot = ExactBound(StageCache(tmp_path), {}, "table-key")
    assert slot.load() is None
    slot.offer({"status": "limited", "objective": -10.0, "dual_bound": None})  # a cut table: no bound
    assert slot.load() is None
    slot.offer({"status": "timelimit", "objective": -12.0, "dual_bound": -5.0})
    slot.offer({"status": "timelimit", "objective": -11.0, "dual_bound": -6.0})
    slot.offer({"status": "timelimit", "objective": -13.0, "dual_bound": -4.0})
    assert slot.load() == {"dual_bound": -6.0, "objective": -11.0, "status": "limited"}
    slot.offer({"status": "optimal", "objective": -8.0, "dual_bound": -8.0})
    slot.offer({"status": "timelimit", "objective": -9.0, "dual_bound": -7.0})
    assert slot.load() == {"dual_bound": -8.0, "objective": -8.0, "status": "optimal"}
    other = ExactBound(StageCache(tmp_path), {"knowledge": "abc"}, "table-key")
    assert other.load() is None  # another knowledge, another problem
    reader = ExactBound(StageCache(tmp_path, read_only=True), {"knowledge": "abc"}, "table-key")
    reader.offer({"status": "optimal", "objective": -8.0, "dual_bound": -8.0})
    assert other.load() is None  # a read-only cache is never written


def test_a_climb_is_measured_against_the_slot_where_it_has_a_bound(tmp_path):
    slot = ExactBound(StageCache(tmp_path), {}, "table-key")
    climb = Artifact("solve", "k", {}, {"result": {"objective": -10.0, "dual_bound": -2.0, "gap": 4.0,
                                                   "bound": "best families"}})
    assert slot.annotate(climb) is climb
    slot.offer({"status": "optimal", "objective": -8.0, "dual_bound": -8.0})
    result = slot.annotate(climb).meta["result"]
    assert (result["dual_bound"], result["gap"], result["bound"]) == (-8.0, pytest.approx(0.2), "ILP")
    assert result["best_families_bound"] == -2.0 and climb.meta["result"]["dual_bound"] == -2.0
    cut = Artifact("solve", "k", {}, {"result": {"objective": -10.0, "dual_bound": None, "gap": None}})
    assert slot.annotate(cut) is cut


@pytest.mark.parametrize("options, has_slot", [({}, True), ({"solver": "tabu"}, True), ({"solver": "ges"}, False),
                                               ({"treewidth": 2}, False), ({"solver": "kg", "treewidth": 2}, False)])
def test_only_exact_solves_and_climbs_over_every_dag_share_the_slot(tmp_path, options, has_slot):
    scores = Artifact("scores", "table-key")
    slot = exact_bound_slot(StageCache(tmp_path), RunConfig(network="asia", **options), {}, scores)
    assert (slot is not None) == has_slot
    assert exact_bound_slot(StageCache(tmp_path), RunConfig(network="asia"), {}, None) is None
