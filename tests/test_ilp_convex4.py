"""4-node convex-hull cuts and set-packing rows: validity on every DAG, exact separation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog
from helpers import dyadic_point, random_table

from graphs.dag import is_acyclic
from ilp.clusters import SUPPORT_EPS
from ilp.convex4 import convex4_row, violated_convex4
from ilp.problem import build_problem
from ilp.set_packing import set_packing_rows
from scores.table import ScoreTable


def _all_dags(n: int):
    """Parent-set tuples of every DAG on ``n`` labelled nodes."""
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v]
    for bits in itertools.product((False, True), repeat=len(pairs)):
        adj = np.zeros((n, n), dtype=bool)
        for (u, v), bit in zip(pairs, bits):
            adj[u, v] = bit
        if is_acyclic(adj):
            yield [tuple(np.flatnonzero(adj[:, v]).tolist()) for v in range(n)]


def _full_problem(n: int):
    """Every parent set of every node as a candidate family."""
    families = [{ps: -1.0 for k in range(n) for ps in itertools.combinations([u for u in range(n) if u != v], k)}
                for v in range(n)]
    return build_problem(ScoreTable.from_families(families))


def _chosen(problem, parent_sets) -> np.ndarray:
    x = np.zeros(problem.n_candidates)
    for f, (v, ps) in enumerate(zip(problem.child.tolist(), map(problem.parents_of, range(problem.n_candidates)))):
        x[f] = tuple(ps) == parent_sets[v]
    return x


FOUR = _full_problem(4)
DAGS4 = [_chosen(FOUR, ps) for ps in _all_dags(4)]


def test_there_are_543_dags_on_four_nodes():
    assert len(DAGS4) == 543


@pytest.mark.parametrize("quad", list(itertools.permutations(range(4))))
def test_convex4_inequality_holds_on_every_dag_and_is_tight(quad):
    row = convex4_row(FOUR, quad)
    lhs = [x[row].sum() for x in DAGS4]
    assert max(lhs) == 2


def test_convex4_is_not_implied_by_cluster_constraints():
    # Maximise the cut's left-hand side over convexity + all 11 cluster constraints of 4 nodes:
    # the LP optimum is 2.5, so the cut is violated by 0.5 (as at alarm's root), and found.
    quad = (0, 1, 2, 3)
    clusters = [c for size in (2, 3, 4) for c in itertools.combinations(range(4), size)]
    a_ub = [np.isin(FOUR.child, c) & FOUR.has_parent_in(c) for c in clusters]
    a_eq = [FOUR.child == v for v in range(4)]
    cost = np.zeros(FOUR.n_candidates)
    cost[convex4_row(FOUR, quad)] = -1.0
    lp = linprog(cost, A_ub=np.array(a_ub, float), b_ub=[len(c) - 1 for c in clusters],
                 A_eq=np.array(a_eq, float), b_eq=np.ones(4), bounds=(0, 1))
    assert lp.status == 0 and -lp.fun == pytest.approx(2.5)
    assert [_canonical(q) for q in violated_convex4(FOUR, lp.x)] == [_canonical(quad)]


def _canonical(quad):
    a, b, c, d = quad
    return (frozenset((a, d)), frozenset((b, c)))


def _brute_force(problem, x, min_excess=1e-4):
    xs = np.where(x > SUPPORT_EPS, x, 0.0)
    found = set()
    for nodes in itertools.combinations(range(problem.n_vars), 4):
        for quad in itertools.permutations(nodes):
            if xs[convex4_row(problem, quad)].sum() > 2 + min_excess:
                found.add(_canonical(quad))
    return found


@pytest.mark.parametrize("seed", range(30))
def test_separation_finds_exactly_the_violated_inequalities(seed):
    rng = np.random.default_rng(seed)
    problem = build_problem(random_table(6 + seed % 3, 300 + seed, palim=3, keep=0.6))
    x = dyadic_point(problem, rng, support=3)
    found = violated_convex4(problem, x, max_cuts=10**6)
    assert len({_canonical(q) for q in found}) == len(found)  # each inequality once
    for quad in found:
        assert x[convex4_row(problem, quad)].sum() > 2 + 1e-4
    assert {_canonical(q) for q in found} == _brute_force(problem, x)


def test_separation_returns_the_most_violated_first():
    rng = np.random.default_rng(7)
    problem = build_problem(random_table(8, 11, palim=3, keep=0.7))
    for _ in range(20):
        x = dyadic_point(problem, rng, support=3)
        found = violated_convex4(problem, x, max_cuts=10**6)
        lhs = [x[convex4_row(problem, q)].sum() for q in found]
        assert lhs == sorted(lhs, reverse=True)
        assert violated_convex4(problem, x, max_cuts=2) == found[:2]


def test_set_packing_rows_hold_on_every_dag():
    rows = set_packing_rows(FOUR)
    assert {cluster for cluster, _ in rows} == set(itertools.combinations(range(4), 3)) | {(0, 1, 2, 3)}
    for cluster, fams in rows:
        assert max(x[fams].sum() for x in DAGS4) == 1
        # exactly the families whose parents hold the rest of the cluster
        sets = map(FOUR.parents_of, range(FOUR.n_candidates))
        expect = [f for f, (v, ps) in enumerate(zip(FOUR.child.tolist(), sets)) if v in cluster and set(cluster) - {v} <= set(ps)]
        assert fams.tolist() == expect


@pytest.mark.parametrize("seed", range(4))
def test_set_packing_rows_match_their_definition(seed):
    # every cluster of >= 3 nodes whose members all have a family holding the rest, in tuple order
    problem = build_problem(random_table(7, seed, palim=3, keep=0.5))
    family = list(zip(problem.child.tolist(), map(set, map(problem.parents_of, range(problem.n_candidates)))))
    expect = []
    for cluster in (c for size in (3, 4) for c in itertools.combinations(range(problem.n_vars), size)):
        fams = [f for f, (v, ps) in enumerate(family) if v in cluster and set(cluster) - {v} <= ps]
        if {family[f][0] for f in fams} == set(cluster):
            expect.append((cluster, fams))
    assert expect
    assert [(cluster, fams.tolist()) for cluster, fams in set_packing_rows(problem)] == sorted(expect)


def test_set_packing_needs_every_member_covered():
    # 2 can never have both 0 and 1 as parents: no row on {0, 1, 2}
    families = [{(): 0.0, (1, 2): -1.0}, {(): 0.0, (0, 2): -1.0}, {(): 0.0, (0,): -1.0, (1,): -1.0}]
    assert set_packing_rows(build_problem(ScoreTable.from_families(families))) == []
    families[2][(0, 1)] = -1.0
    rows = set_packing_rows(build_problem(ScoreTable.from_families(families)))
    assert [cluster for cluster, _ in rows] == [(0, 1, 2)]
