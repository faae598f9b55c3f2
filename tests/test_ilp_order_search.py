"""Order-based local search for the primal heuristics: never worse, acyclic, locally optimal."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_table

from graphs.dag import is_acyclic, topological_order
from ilp.sinks import sinks_dag
from ilp.order_search import improve_by_order, search_orders
from ilp.problem import build_problem
from scores.table import ScoreTable


def _best_for_order(problem, order) -> tuple[float, list[int]]:
    """Reference: every node takes its best family with all parents earlier in ``order``."""
    pos = {v: i for i, v in enumerate(order)}
    chosen = []
    for v in range(problem.n_vars):
        fits = [f for f in problem.families_of(v).tolist() if all(pos[p] < pos[v] for p in problem.parents_of(f))]
        chosen.append(max(fits, key=lambda f: problem.score[f]) if fits else None)
    if None in chosen:
        return -np.inf, chosen
    return float(problem.score[chosen].sum()), chosen


def _moves(order):
    """Every order reachable by moving one node to another position."""
    for i, v in enumerate(order):
        rest = order[:i] + order[i + 1:]
        for j in range(len(order)):
            if j != i:
                yield rest[:j] + [v] + rest[j:]


def _random_dag_families(problem, rng) -> list[int]:
    order = rng.permutation(problem.n_vars).tolist()
    pos = {v: i for i, v in enumerate(order)}
    chosen = []
    for v in range(problem.n_vars):
        fits = [f for f in problem.families_of(v).tolist() if all(pos[p] < pos[v] for p in problem.parents_of(f))]
        chosen.append(int(rng.choice(fits)))
    return chosen


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("n, palim, keep", [(5, 3, 0.8), (9, 2, 0.1)])  # dense; few candidate parents
def test_never_worse_acyclic_and_locally_optimal(seed, n, palim, keep):
    rng = np.random.default_rng(seed)
    problem = build_problem(random_table(n + seed % 4, 900 + seed, palim=palim, keep=keep))
    start = _random_dag_families(problem, rng)
    result = improve_by_order(problem, start)
    assert [int(problem.child[f]) for f in result] == list(range(problem.n_vars))
    assert is_acyclic(problem.dag_of(result))
    assert problem.score[result].sum() >= problem.score[start].sum() - 1e-9
    order, result = search_orders(problem, topological_order(problem.dag_of(start)), max_passes=10**6)
    order = order.tolist()
    assert sorted(order) == list(range(problem.n_vars))
    score = float(problem.score[result].sum())
    ref_score, _ = _best_for_order(problem, order)
    assert score == pytest.approx(ref_score, abs=1e-9)  # best DAG for its own order
    for moved in _moves(order):  # and no single insertion move improves it
        assert _best_for_order(problem, moved)[0] <= score + 1e-9


def test_improves_the_greedy_warm_start():
    problem = build_problem(random_table(9, 4242, palim=3))
    warm = sinks_dag(problem)
    better = improve_by_order(problem, warm)
    assert problem.score[better].sum() > problem.score[warm].sum()


def test_rejects_a_cyclic_start():
    families = [{(): 0.0, (1,): 1.0}, {(): 0.0, (0,): 1.0}]
    problem = build_problem(ScoreTable.from_families(families))
    cyclic = [int(f) for v in range(2) for f in problem.families_of(v) if problem.parents_of(f)]
    with pytest.raises(ValueError, match="cycle"):
        improve_by_order(problem, cyclic)


@pytest.mark.parametrize("seed", range(5))
def test_candidate_arcs_and_parent_hits_match_the_families(seed):
    problem = build_problem(random_table(9, 40 + seed, palim=2, keep=0.15))
    arcs = {(u, int(problem.child[f])) for f in range(problem.n_candidates) for u in problem.parents_of(f)}
    arc_parent_ptr, arc_parents, arc_child_ptr, arc_children = problem.candidate_arcs
    for v in range(problem.n_vars):
        assert arc_parents[arc_parent_ptr[v]:arc_parent_ptr[v + 1]].tolist() == sorted(u for u, w in arcs if w == v)
        assert arc_children[arc_child_ptr[v]:arc_child_ptr[v + 1]].tolist() == sorted(w for u, w in arcs if u == v)
    nodes, fams = [1, 4, 6], np.arange(problem.n_candidates)[::-2]
    expected = [bool(set(problem.parents_of(f)) & set(nodes)) for f in fams]
    assert problem.has_parent_in(nodes, fams).tolist() == expected
    assert problem.has_parent_in(nodes)[fams].tolist() == expected
