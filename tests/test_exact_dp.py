"""Exact DP (ilp.exact_dp) against brute force over all DAGs on random score tables."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import random_table

from scores.table import ScoreTable, ScoreTableError
from ilp.exact_dp import ExactDPError, exact_optimum


def _is_acyclic(adj: np.ndarray) -> bool:
    adj = adj.copy()
    alive = np.ones(len(adj), dtype=bool)
    while alive.any():
        sources = alive & ~adj[alive].any(axis=0)
        if not sources.any():
            return False
        alive &= ~sources
        adj[sources] = False
    return True


def brute_force(table: ScoreTable) -> float:
    """Best score over all DAGs on n nodes whose families are all in the table."""
    n = table.n_vars
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    best = -np.inf
    for bits in itertools.product((False, True), repeat=len(pairs)):
        adj = np.zeros((n, n), dtype=bool)
        for (i, j), b in zip(pairs, bits):
            adj[i, j] = b
        parent_sets = [tuple(np.flatnonzero(adj[:, j]).tolist()) for j in range(n)]
        if all(ps in table.families[v] for v, ps in enumerate(parent_sets)) and _is_acyclic(adj):
            best = max(best, table.score_of(parent_sets))
    return best


def _check(table: ScoreTable, score: float, parent_sets) -> None:
    n = table.n_vars
    adj = np.zeros((n, n), dtype=bool)
    for v, ps in enumerate(parent_sets):
        adj[list(ps), v] = True
    assert _is_acyclic(adj)
    assert table.score_of(parent_sets) == pytest.approx(score, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", range(4))
def test_matches_brute_force_full_tables(n, seed):
    table = random_table(n, seed)
    score, parent_sets = exact_optimum(table)
    _check(table, score, parent_sets)
    assert score == pytest.approx(brute_force(table), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_matches_brute_force_restricted_tables(seed):
    table = random_table(4, 100 + seed, palim=2, keep=0.5, empty=seed % 2 == 0)
    expected = brute_force(table)
    if not np.isfinite(expected):
        with pytest.raises(ExactDPError):
            exact_optimum(table)
        return
    score, parent_sets = exact_optimum(table)
    _check(table, score, parent_sets)
    assert score == pytest.approx(expected, rel=1e-12)


def test_no_acyclic_choice_raises():
    # 0 must have parent 1 and 1 must have parent 0: only a 2-cycle is available.
    table = ScoreTable.from_families([{(1,): -1.0}, {(0,): -1.0}])
    with pytest.raises(ExactDPError, match="acyclic"):
        exact_optimum(table)


def test_too_many_variables_raises():
    table = random_table(6, 0, palim=1)
    with pytest.raises(ExactDPError, match="max_vars"):
        exact_optimum(table, max_vars=5)


def test_malformed_table_raises():
    with pytest.raises(ScoreTableError):
        exact_optimum(ScoreTable.from_families([{(): 0.0}, {}]))


def test_larger_instance_is_consistent():
    # n = 12: the DP answer is a DAG whose table score equals the reported optimum and is at
    # least as good as every single-order greedy choice (the optimum is consistent with some order).
    table = random_table(12, 7, palim=2, keep=0.6)
    score, parent_sets = exact_optimum(table)
    _check(table, score, parent_sets)
    rng = np.random.default_rng(0)
    for _ in range(20):
        order = rng.permutation(12)
        pos = np.empty(12, dtype=int)
        pos[order] = np.arange(12)
        total = 0.0
        for v in range(12):
            total += max(s for ps, s in table.families[v].items() if all(pos[p] < pos[v] for p in ps))
        assert total <= score + 1e-9
