"""ILP optimum against the exact DP on random score tables; acyclicity and bookkeeping properties.

The cross-checks run both routes of ``solve_ilp``: SCIP (``ILPOptions(dp_max_vars=0)``) and the small-problem
DP route of :mod:`ilp.portfolio` (the default on these sizes); the other tests exercise SCIP."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from helpers import assert_consistent_solution, random_table
from pyscipopt import Model

from ilp import ILPInfeasibleError, ILPOptions, ILPResult, solve_ilp
from ilp.exact_dp import ExactDPError, exact_optimum
from ilp.problem import build_problem
from ilp.solve import _set_parameters, arc_children
from scores.table import ScoreTable


def _check_result(table: ScoreTable, res: ILPResult) -> None:
    assert res.dag.dtype == bool and res.dag.shape == (table.n_vars, table.n_vars)
    assert_consistent_solution(table, res)
    assert res.dual_bound >= res.objective - 1e-6 * abs(res.objective)
    if res.status == "optimal":
        assert res.gap == 0.0 and res.dual_bound == pytest.approx(res.objective, rel=1e-6)
    else:
        assert res.gap == pytest.approx((res.dual_bound - res.objective) / abs(res.objective))


SCIP = ILPOptions(dp_max_vars=0)
ROUTES = pytest.mark.parametrize("route", [SCIP, ILPOptions()], ids=["scip", "portfolio"])


@ROUTES
@pytest.mark.parametrize("n", [4, 5, 6, 7, 8])
@pytest.mark.parametrize("seed", range(4))
def test_matches_exact_dp(n, seed, route):
    table = random_table(n, 1000 * n + seed, palim=3)
    res = solve_ilp(table, replace(route, seed=seed))
    score, _ = exact_optimum(table)
    assert res.status == "optimal" and res.stats["method"] == ("ilp" if route == SCIP else "exact_dp")
    assert res.objective == pytest.approx(score, rel=1e-9)
    _check_result(table, res)


@ROUTES
@pytest.mark.parametrize("seed", range(8))
def test_restricted_tables(seed, route):
    table = random_table(7, 50 + seed, palim=2, keep=0.4, empty=seed % 3 != 0)
    try:
        score, _ = exact_optimum(table)
    except ExactDPError:
        with pytest.raises(ILPInfeasibleError):
            solve_ilp(table, route)
        return
    res = solve_ilp(table, route)
    assert res.objective == pytest.approx(score, rel=1e-9)
    _check_result(table, res)


@ROUTES
@pytest.mark.parametrize("seed", range(4))
def test_required_forbidden_palim_match_filtered_dp(seed, route):
    rng = np.random.default_rng(seed)
    table = random_table(7, 300 + seed, palim=3)
    order = rng.permutation(7)
    required = [(int(order[0]), int(order[3])), (int(order[1]), int(order[4]))]
    forbidden = [(int(order[5]), int(order[2])), (int(order[2]), int(order[6]))]
    palim = 2
    filtered = [
        {ps: s for ps, s in fam.items()
         if len(ps) <= palim
         and all(u in ps for u, c in required if c == v)
         and not any(u in ps for u, c in forbidden if c == v)}
        for v, fam in enumerate(table.families)
    ]
    score, _ = exact_optimum(ScoreTable.from_families(filtered))
    res = solve_ilp(table, route, required_arcs=required, forbidden_arcs=forbidden, palim=palim)
    assert res.objective == pytest.approx(score, rel=1e-9)
    assert all(res.dag[u, c] for u, c in required)
    assert not any(res.dag[u, c] for u, c in forbidden)
    _check_result(table, res)


@pytest.mark.parametrize("options", [
    {"arc_vars": False}, {"cluster_3": True}, {"subip": False}, {"sinks_freq": -1, "warm_start": False},
    {"prop_freq": -1, "sepa_freq": 1, "subip_maxdepth": 100}, {"sepa_freq": 0, "arc_branch_priority": 0},
    {"convex4": False, "set_packing": False}, {"root_rounds": 1}, {"root_rounds": -1},
    {"subip_root_every": 0}, {"subip_root_every": 1}, {"arc_form_min_saving": 0},
    {"steepest_edge_min_families": 0}, {"arc_vars_max_arcs": 0}, {"restarts": 0}, {"restart_min_fixed": 0.0},
    {"inout_weight": 0.8}, {"inout_weight": 0.3},
])
def test_option_variants_stay_exact(options):
    table = random_table(8, 77, palim=3)
    score, _ = exact_optimum(table)
    res = solve_ilp(table, replace(SCIP, **options))
    assert res.objective == pytest.approx(score, rel=1e-9)
    _check_result(table, res)


@pytest.mark.parametrize("n_families, pricing", [(99, "l"), (100, "s")])
def test_tables_from_the_threshold_on_price_by_steepest_edge(n_families, pricing):
    model = Model()
    _set_parameters(model, ILPOptions(steepest_edge_min_families=100), n_families)
    assert model.getParam("lp/pricing") == pricing
    _set_parameters(model, ILPOptions(scip_params={"lp/pricing": "d"}), n_families)
    assert model.getParam("lp/pricing") == "d"  # the caller's SCIP parameters come last


@pytest.mark.parametrize("seed", range(3))
def test_root_rounds_bound_the_root_cut_loop_and_keep_the_optimum(seed):
    table = random_table(12, 300 + seed, palim=3)
    unlimited = solve_ilp(table, replace(SCIP, root_rounds=-1, set_packing=False, convex4=False))
    limited = solve_ilp(table, replace(SCIP, root_rounds=1, set_packing=False, convex4=False))
    assert unlimited.stats["root_rounds"] > 1  # the case needs more than one round at the root
    assert limited.stats["root_rounds"] == limited.stats["runs"]  # one round at the root of each run
    assert limited.objective == pytest.approx(unlimited.objective, rel=1e-12)
    _check_result(table, limited)


@pytest.mark.parametrize("seed", [0, 2, 4, 5])
def test_a_restart_after_the_root_keeps_the_optimum(seed):
    # these tables end their root with families fixed by reduced costs and need a tree
    table = random_table(16, 300 + seed, palim=3)
    score, _ = exact_optimum(table)
    plain = replace(SCIP, set_packing=False, convex4=False, restart_min_fixed=0.0)
    restarted = solve_ilp(table, plain)
    assert restarted.stats["runs"] == 2
    once = solve_ilp(table, replace(plain, restarts=0))
    assert once.stats["runs"] == 1
    for res in (restarted, once):
        assert res.objective == pytest.approx(score, rel=1e-9)
        _check_result(table, res)


def _solve_twice(seed: int, first: dict, second: dict):
    """The 12-node table ``300 + seed`` solved without set-packing rows or convex4 cuts, with the
    options ``first`` and then ``second``."""
    table = random_table(12, 300 + seed, palim=3)
    plain = replace(SCIP, set_packing=False, convex4=False)
    return table, solve_ilp(table, replace(plain, **first)), solve_ilp(table, replace(plain, **second))


@pytest.mark.parametrize("seed", range(3))
def test_exact_separation_every_root_round_keeps_the_optimum(seed):
    table, only_on_failure, every_round = _solve_twice(seed, {"subip_root_every": 0}, {"subip_root_every": 1})
    assert only_on_failure.stats["subip_calls"] < only_on_failure.stats["root_rounds"]
    assert every_round.stats["subip_calls"] >= every_round.stats["root_rounds"]
    assert every_round.objective == pytest.approx(only_on_failure.objective, rel=1e-12)
    _check_result(table, every_round)


@pytest.mark.parametrize("seed", range(3))
def test_in_out_separation_adds_cuts_and_keeps_the_optimum(seed):
    table, lp_only, inout = _solve_twice(seed, {"inout_weight": 1.0}, {"inout_weight": 0.8})
    assert lp_only.stats["inout_cuts"] == 0 < inout.stats["inout_cuts"]
    assert inout.objective == pytest.approx(lp_only.objective, rel=1e-12)
    _check_result(table, inout)


@pytest.mark.parametrize("seed", range(3))
def test_cuts_in_arc_form_keep_the_optimum(seed):
    table, by_arcs, without = _solve_twice(seed, {"arc_form_min_saving": 0}, {"arc_form_min_saving": 10**9})
    score, _ = exact_optimum(table)
    assert by_arcs.stats["arc_form_cuts"] > 0 and without.stats["arc_form_cuts"] == 0
    assert by_arcs.objective == pytest.approx(score, rel=1e-9)
    assert without.objective == pytest.approx(score, rel=1e-9)
    _check_result(table, by_arcs)


@pytest.mark.parametrize("seed", range(3))
def test_tables_over_the_arc_threshold_link_only_the_arcs_that_cuts_can_use(seed):
    # nodes 0-3 keep all 232 parent sets of size <= 3, the other 8 only the empty set and single parents
    full = random_table(12, 300 + seed, palim=3)
    table = ScoreTable.from_families([{ps: s for ps, s in fams.items() if v < 4 or len(ps) <= 1}
                                      for v, fams in enumerate(full.families)])
    score, _ = exact_optimum(table)
    problem = build_problem(table)
    n_arcs = problem.n_candidate_arcs
    large = replace(SCIP, arc_vars_max_arcs=n_arcs - 1, arc_form_min_saving=100, set_packing=False, convex4=False)
    assert arc_children(problem, large).tolist() == [True] * 4 + [False] * 8
    assert arc_children(problem, replace(large, arc_vars_max_arcs=n_arcs)).all()
    assert not arc_children(problem, replace(large, arc_vars=False)).any()
    res = solve_ilp(table, large)
    assert res.stats["n_arc_vars"] == 4 * 11  # every other node is a candidate parent of each of 0-3
    assert res.objective == pytest.approx(score, rel=1e-9)
    _check_result(table, res)


def test_time_limit_returns_best_dag_with_bound():
    table = random_table(14, 5, palim=3, keep=0.8)
    res = solve_ilp(table, SCIP, time_limit=0.2)
    assert res.status in ("timelimit", "optimal")
    _check_result(table, res)
    if res.status == "timelimit":
        assert res.gap == pytest.approx((res.dual_bound - res.objective) / abs(res.objective))


def test_memory_limit_returns_best_dag_with_bound():
    """SCIP's own account of a 16-node model is over 1 MB from the start: it stops with status
    ``memlimit`` and the warm-start DAG (no bound yet), as it would at a time limit."""
    table = random_table(16, 7, palim=3, keep=0.9)
    capped, full = solve_ilp(table, SCIP, memory_limit=1), solve_ilp(table, SCIP)
    assert (capped.status, full.status) == ("memlimit", "optimal")
    _check_result(table, capped)
    assert capped.objective < full.objective and capped.gap == np.inf


def test_deterministic_for_a_seed_and_serialisable():
    table = random_table(8, 9, palim=3)
    a, b = solve_ilp(table, replace(SCIP, seed=3)), solve_ilp(table, replace(SCIP, seed=3))
    assert a.parent_sets == b.parent_sets and a.stats["nodes"] == b.stats["nodes"]
    d = json.loads(json.dumps(a.to_dict()))
    assert d["status"] == "optimal" and d["parent_sets"] == [list(ps) for ps in a.parent_sets]
    assert set(d["times"]) == {"build", "solve"}
    for key in ("nodes", "lp_iterations", "integral_cuts", "inout_cuts", "greedy_cuts", "subip_cuts", "convex4_cuts"):
        assert key in d["stats"]


@pytest.mark.parametrize("seed", range(3))
def test_portfolio_threshold_picks_the_route(seed):
    """At the threshold the DP answers; one variable below it SCIP does; both are optimal."""
    table = random_table(9, 900 + seed, palim=3)
    dp, ip = solve_ilp(table, ILPOptions(dp_max_vars=9)), solve_ilp(table, ILPOptions(dp_max_vars=8))
    assert (dp.stats["method"], ip.stats["method"]) == ("exact_dp", "ilp")
    assert dp.objective == pytest.approx(ip.objective, rel=1e-9)
    assert dp.dual_bound == dp.objective and dp.gap == 0.0
    _check_result(table, dp)


def test_portfolio_rule_above_16_variables_depends_on_the_table_size():
    """17 variables: a small table stays with SCIP, a large one goes to the DP; both exact."""
    small, large = random_table(17, 1, palim=1), random_table(17, 2, palim=2, keep=0.6)
    assert small.n_candidates < 1000 <= large.n_candidates
    for table, method in ((small, "ilp"), (large, "exact_dp")):
        res = solve_ilp(table)
        assert res.stats["method"] == method
        assert res.objective == pytest.approx(exact_optimum(table)[0], rel=1e-9)
        _check_result(table, res)
