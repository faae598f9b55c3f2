"""What an exact solve stopped at a limit leaves behind: the tabu search from its incumbent, a
step of the solve stage (``pipeline.core.polish``), and the bound that later climbs of its table
are measured against (``pipeline.core.exact_bound``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import ilp
from graphs.dag import adjacency_from_parents, is_acyclic
from hybridbn.solving import Solution, SolveInputs
from pipeline.core.cache import Artifact, StageCache
from pipeline.core.config import RunConfig
from pipeline.core.exact_bound import ExactBound, exact_bound_slot
from pipeline.core.polish import POLISH_SECONDS, POLISH_SHARE, polish_incumbent, polished, polishes
from scores.table import ScoreTable
from search import hill_climbing
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


def stopped(table: ScoreTable, parent_sets, dual_bound: float, status: str = "timelimit") -> Solution:
    """An ILP's solution stopped at a limit with ``parent_sets`` as its incumbent."""
    objective = table.score_of(parent_sets)
    return Solution(list(parent_sets), {"status": status, "objective": objective, "dual_bound": dual_bound,
                                        "gap": 0.5, "n_edges": sum(map(len, parent_sets)),
                                        "trajectory": [[3.0, objective, dual_bound]]})


def config(time_limit: float | None = 30.0, **options) -> RunConfig:
    return RunConfig(network="asia", time_limit=time_limit, **options)


def test_a_poor_incumbent_is_replaced_by_the_better_dag_the_tabu_search_finds():
    table = random_table(7, 0)
    empty = [()] * 7
    optimum = ilp.solve_ilp(table)
    solution = stopped(table, empty, optimum.dual_bound + 5.0)
    found = polish_incumbent(config(), SolveInputs(names=[], table=table), solution)
    sets, out, summary = found.parent_sets, found.summary, solution.summary
    assert out["local_search"]["adopted"] and out["local_search"]["start_objective"] == summary["objective"]
    assert out["objective"] == pytest.approx(table.score_of(sets)) and out["objective"] > summary["objective"]
    assert out["objective"] == pytest.approx(tabu_search(table, start=empty).score)
    assert out["objective"] <= optimum.objective + 1e-9 and is_acyclic(adjacency_from_parents(sets, 7))
    assert out["gap"] == pytest.approx((summary["dual_bound"] - out["objective"]) / abs(out["objective"]))
    assert out["n_edges"] == sum(map(len, sets)) and out["status"] == "timelimit"
    assert out["trajectory"][-1][1:] == [out["objective"], summary["dual_bound"]]
    assert out["trajectory"][-1][0] == pytest.approx(3.0 + out["local_search"]["seconds"])


def test_an_incumbent_no_move_improves_is_kept_as_it_is():
    table = random_table(7, 1)
    optimum = ilp.solve_ilp(table)
    best = [tuple(ps) for ps in optimum.parent_sets]
    solution = stopped(table, best, optimum.dual_bound)
    found = polish_incumbent(config(None), SolveInputs(names=[], table=table), solution)
    assert found.parent_sets == best and not found.summary["local_search"]["adopted"]
    assert {k: v for k, v in found.summary.items() if k != "local_search"} == solution.summary


def test_the_search_keeps_the_knowledge_arcs():
    table = random_table(6, 2)
    empty = [()] * 6
    free = polish_incumbent(config(10.0), SolveInputs(names=[], table=table), stopped(table, empty, 0.0)).parent_sets
    arcs = [(p, c) for c, ps in enumerate(free) for p in ps]
    assert arcs  # something to forbid
    required = next((p, c) for p in range(6) for c in range(6) if p != c and (p, c) not in arcs
                    and (c, p) not in arcs)
    start = [() if c != required[1] else (required[0],) for c in range(6)]
    inputs = SolveInputs(names=[], table=table, required_arcs=[required], forbidden_arcs=arcs[:2])
    sets = polish_incumbent(config(10.0), inputs, stopped(table, start, 0.0)).parent_sets
    held = {(p, c) for c, ps in enumerate(sets) for p in ps}
    assert required in held and not held & set(arcs[:2])


def test_with_the_cops_bags_the_search_stays_inside_them():
    table = random_table(6, 4)
    empty = [()] * 6
    bags = [[0, 1, 2], [2, 3, 4], [4, 5]]
    inputs = SolveInputs(names=[], table=table, bags=bags)

    def outside(sets):
        return [(v, ps) for v, ps in enumerate(sets) if not any({v, *ps} <= set(bag) for bag in bags)]

    assert outside(polished(config(10.0), inputs, stopped(table, empty, 0.0)).parent_sets)  # free: it leaves them
    inside = polished(config(10.0, within_bags=True), inputs, stopped(table, empty, 0.0))
    assert inside.summary["local_search"]["adopted"] and not outside(inside.parent_sets)


def test_a_stopped_solve_is_polished_for_a_share_of_its_time_limit(monkeypatch):
    table = random_table(6, 3)
    empty = [()] * 6
    seconds, original = [], hill_climbing.hill_climb

    def climb(table, **options):
        assert (options["tabu"], options["max_tabu"], options["restarts"], options["start"]) == (10, None, 0, empty)
        seconds.append(options["time_limit"])
        return original(table, **options)

    monkeypatch.setattr(hill_climbing, "hill_climb", climb)
    for limit in (None, 1.0, 40.0, 1000.0):
        polished(config(limit), SolveInputs(names=[], table=table), stopped(table, empty, 0.0))
    low, high = POLISH_SECONDS
    assert seconds == [high, low, POLISH_SHARE * 40.0, high]


@pytest.mark.parametrize("status, options, adjacent, polish", [
    ("timelimit", {}, [], True), ("memlimit", {}, [], True), ("optimal", {}, [], False),
    ("userinterrupt", {}, [], False), ("timelimit", {"treewidth": 2}, [], False),
    ("timelimit", {}, [(0, 1)], False), ("timelimit", {"solver": "tabu"}, [], False),
])
def test_only_a_polish_solver_stopped_at_a_limit_without_bound_or_adjacency_is_polished(status, options, adjacent,
                                                                                       polish):
    table = random_table(6, 3)
    empty = [()] * 6
    cfg = config(**options)
    assert polishes(cfg) == ("treewidth" not in options and cfg.solver == "ilp")
    solution = stopped(table, empty, 0.0, status)
    out = polished(cfg, SolveInputs(names=[], table=table, adjacent_pairs=adjacent), solution)
    assert ("local_search" in out.summary) == polish and (out.parent_sets != empty) == polish
    assert out is solution or polish


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
