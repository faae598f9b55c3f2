"""Bounded-treewidth ILP (obstruction cuts, elimination order) and learning inside a fixed k-tree,
against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import assert_consistent_solution, brute_force, candidate_table

from graphs.dag import is_acyclic
from graphs.ktree import complete_k_tree, random_k_tree
from graphs.moral import moral_graph
from graphs.treedec import TreeDecomposition
from graphs.treewidth import dag_treewidth, treewidth_exact
from ilp import ILPInputError, ILPOptions
from ilp.treewidth.solve import solve_bounded_treewidth
from ilp.treewidth.bounded_dag import bounded_dag
from ilp.treewidth.density import dense_sets
from ilp.treewidth.ktree_filter import (
    TreewidthInputError,
    chordal_cliques,
    restrict_to_bags,
    solve_ilp_within,
    structure_bags,
)
from ilp.exact_dp import exact_optimum
from ilp.problem import build_problem
from scores.table import ScoreTable


# -- bounded treewidth (obstruction cuts and elimination order) ------------------------------
@pytest.mark.parametrize("n", [4, 5, 6])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("relaxation_first", [True, False])
@pytest.mark.parametrize("formulation", ["obstruction", "elimination"])
def test_bounded_matches_brute_force(n, k, seed, relaxation_first, formulation):
    """Every path is exact: both treewidth models, and the unbounded optimum when it fits."""
    table = candidate_table(n, 100 * n + 10 * k + seed)
    expected = brute_force(table, lambda moral: treewidth_exact(moral).width <= k)
    res = solve_bounded_treewidth(table, k, ILPOptions(seed=seed), relaxation_first=relaxation_first,
                                  formulation=formulation)
    assert res.status == "optimal"
    assert res.stats["relaxation_optimal"] in ((True, False) if relaxation_first else (False,))
    assert res.objective == pytest.approx(expected, abs=1e-9)
    assert_consistent_solution(table, res)
    assert dag_treewidth(res.dag).width <= k
    assert res.stats["treewidth"] == dag_treewidth(res.dag).width


@pytest.mark.parametrize("n", [7, 8])
@pytest.mark.parametrize("seed", range(2))
def test_formulations_agree_with_brute_force_on_larger_tables(n, seed):
    """Denser tables (4 sets of up to 3 parents per child) where the bound binds at k = 2."""
    table = candidate_table(n, 500 + 10 * n + seed, n_sets=4)
    expected = brute_force(table, lambda moral: treewidth_exact(moral).width <= 2)
    assert expected < exact_optimum(table)[0] - 1.0  # the bound binds
    for formulation in ("obstruction", "elimination"):
        res = solve_bounded_treewidth(table, 2, formulation=formulation, relaxation_first=False)
        assert res.objective == pytest.approx(expected, abs=1e-9)
        assert_consistent_solution(table, res)


@pytest.mark.parametrize("seed", range(3))
def test_bound_binds_between_k_and_unbounded(seed):
    table = candidate_table(6, 7 + seed, n_sets=4)
    scores = [solve_bounded_treewidth(table, k).objective for k in (1, 2, 3, 4, 5)]
    assert all(a <= b + 1e-9 for a, b in zip(scores, scores[1:]))
    assert scores[-1] == pytest.approx(exact_optimum(table)[0], abs=1e-9)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("seed", range(2))
def test_k_n_minus_1_is_unbounded(n, seed):
    table = candidate_table(n, 900 + seed, n_sets=4)
    res = solve_bounded_treewidth(table, n - 1)
    assert res.objective == pytest.approx(exact_optimum(table)[0], abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_moral_links_match_a_loop_over_families(seed):
    """Keys, family lists and key order against the definition, family by family."""
    problem = build_problem(candidate_table(7, 40 + seed, n_sets=5, max_size=4))
    arcs, spouses = {}, {}
    for f, c in enumerate(problem.child.tolist()):
        ps = problem.parents_of(f)
        for p in ps:
            arcs.setdefault((min(p, c), max(p, c)), []).append(f)
        for a, b in itertools.combinations(ps, 2):
            spouses.setdefault((c, a, b), []).append(f)
    got_arcs, got_spouses = problem.moral_links()
    assert list(got_arcs.items()) == list(arcs.items())
    assert list(got_spouses.items()) == list(spouses.items())
    assert all(type(f) is int for fams in got_spouses.values() for f in fams)


def test_moral_links_without_parents():
    problem = build_problem(ScoreTable.from_families([{(): -1.0}, {(): -2.0}]))
    assert problem.moral_links() == ({}, {})


def test_bounded_dag_repair_keeps_order_and_width():
    table = candidate_table(6, 3, n_sets=5)
    problem = build_problem(table)
    order = [3, 0, 5, 1, 4, 2]
    chosen, H, moral = bounded_dag(problem, order, 2)
    dag = problem.dag_of(chosen)
    assert is_acyclic(dag)
    assert (moral == moral_graph(dag)).all()
    assert not (moral & ~H).any()
    assert treewidth_exact(H).width <= 2
    assert all(len(problem.parents_of(f)) <= 2 for f in chosen)
    assert all(set(problem.parents_of(f)) <= set(order[: order.index(v)]) for v, f in enumerate(chosen))
    free, _, _ = bounded_dag(problem, order, 5)  # no bound: the best family consistent with the order
    for v, f in enumerate(free):
        prefix = set(order[: order.index(v)])
        best = max(s for ps, s in table.families[v].items() if set(ps) <= prefix)
        assert problem.score[f] == best


def test_unknown_formulation_is_rejected():
    with pytest.raises(TreewidthInputError, match="formulation"):
        solve_bounded_treewidth(candidate_table(5, 0), 2, formulation="magic")


def test_dense_sets_finds_k4_and_never_cuts_a_k_tree():
    K5 = ~np.eye(5, dtype=bool)
    K5[4, :] = K5[:, 4] = False
    K5[4, 0] = K5[0, 4] = True  # K4 on 0..3 plus a pendant vertex
    sets = dense_sets(K5.astype(float), 2)
    assert sets and sets[0] == [0, 1, 2, 3]
    assert dense_sets(K5.astype(float), 3) == []
    for seed in range(5):
        for k in (1, 2, 3):
            assert dense_sets(random_k_tree(8, k, seed).adjacency.astype(float), k) == []


# -- fixed k-tree / chordal graph / tree decomposition ----------------------------------------
@pytest.mark.parametrize("n, k", [(5, 1), (5, 2), (6, 2), (6, 3)])
@pytest.mark.parametrize("seed", range(2))
def test_within_ktree_matches_brute_force(n, k, seed):
    table = candidate_table(n, 500 + 10 * n + seed, n_sets=4, max_size=k + 1)
    kt = random_k_tree(n, k, seed)
    expected = brute_force(table, lambda moral: not (moral & ~kt.adjacency).any())
    for within in (kt, kt.adjacency, kt.tree_decomposition()):
        res = solve_ilp_within(table, within)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(expected, abs=1e-9)
        assert_consistent_solution(table, res)
        assert not (moral_graph(res.dag) & ~kt.adjacency).any()
    assert solve_ilp_within(table, kt.adjacency, k=k).objective == pytest.approx(expected, abs=1e-9)


def test_restrict_to_bags_keeps_exactly_families_inside_a_bag():
    table = candidate_table(6, 11, n_sets=6)
    bags = [{0, 1, 2}, {2, 3}, {3, 4, 5}]
    out = restrict_to_bags(table, bags)
    for v in range(6):
        assert () in out.families[v]
        for ps, s in table.families[v].items():
            inside = any({v, *ps} <= b for b in bags)
            assert (ps in out.families[v]) == (inside or not ps)
            if ps in out.families[v]:
                assert out.families[v][ps] == s


def test_chordal_cliques_and_structure_bags():
    kt = random_k_tree(7, 2, seed=4)
    maximal = {frozenset(c) for c in kt.cliques()}
    assert len(chordal_cliques(kt.adjacency)) == 7 - 2
    assert set(chordal_cliques(kt.adjacency)) == maximal
    assert set(structure_bags(kt, 7)) == maximal
    assert set(structure_bags(kt.adjacency, 7, k=2)) == maximal
    td = kt.tree_decomposition()
    assert structure_bags(td, 7) == list(td.bags)


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, -1, 5, 6, 1.5, True, None])
def test_bad_k(k):
    table = candidate_table(5, 0)
    with pytest.raises(TreewidthInputError, match="k"):
        solve_bounded_treewidth(table, k)
    assert issubclass(TreewidthInputError, ILPInputError) and issubclass(TreewidthInputError, ValueError)


def test_bad_k_message_names_the_limit():
    with pytest.raises(TreewidthInputError, match=r"exceeds n - 1 = 4"):
        solve_bounded_treewidth(candidate_table(5, 0), 5)
    with pytest.raises(TreewidthInputError, match=r">= 1"):
        solve_bounded_treewidth(candidate_table(5, 0), 0)


def test_not_a_k_tree():
    table = candidate_table(5, 1)
    kt = random_k_tree(5, 2, seed=0)
    broken = kt.adjacency.copy()
    i, j = np.argwhere(broken)[0]
    broken[i, j] = broken[j, i] = False
    with pytest.raises(TreewidthInputError, match="not a 2-tree"):
        solve_ilp_within(table, broken, k=2)
    with pytest.raises(TreewidthInputError, match="not a 1-tree"):
        solve_ilp_within(table, kt.adjacency, k=1)
    with pytest.raises(TreewidthInputError, match="k=3 given for a 2-tree"):
        solve_ilp_within(table, kt, k=3)
    partial = complete_k_tree(2, n=5)  # only 3 of the 5 vertices inserted
    with pytest.raises(TreewidthInputError, match="not a 2-tree"):
        solve_ilp_within(table, partial)


def test_not_chordal_or_not_a_decomposition():
    table = candidate_table(5, 2)
    cycle = np.zeros((5, 5), dtype=bool)
    for a in range(5):
        cycle[a, (a + 1) % 5] = cycle[(a + 1) % 5, a] = True
    with pytest.raises(TreewidthInputError, match="not chordal"):
        solve_ilp_within(table, cycle)
    with pytest.raises(TreewidthInputError, match="shape"):
        solve_ilp_within(table, np.zeros((4, 4), dtype=bool))
    bags = tuple(frozenset(b) for b in ({0, 1}, {1, 2}, {0, 3, 4}))
    with pytest.raises(TreewidthInputError, match="running intersection"):
        solve_ilp_within(table, TreeDecomposition(bags, ((0, 1), (1, 2))))
    with pytest.raises(TreewidthInputError, match="vertices in no bag"):
        solve_ilp_within(table, TreeDecomposition(bags[:2], ((0, 1),)))
    with pytest.raises(TreewidthInputError, match="outside"):
        restrict_to_bags(table, [{0, 7}])


def test_child_without_family_inside_the_bags():
    table = ScoreTable.from_families([{(1,): -1.0}, {(): -1.0}, {(): -2.0}])
    with pytest.raises(TreewidthInputError, match="child '0'"):
        restrict_to_bags(table, [{0, 2}, {1}])
