"""The compiled ILP plugin kernels against straightforward references on random small problems.

The references are the former pure-Python/NumPy implementations (sink finding over Python-int bit
sets, implied arcs by bincount with Warshall's closure, greedy peeling and growing with dense
matrix products); every output must be identical, ties included. LP points with dyadic weights
make every sum exact, so the comparisons do not depend on the order of floating-point additions.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dyadic_point, random_table

from ilp.clusters import LPSupport
from ilp.greedy_cuts import greedy_clusters
from ilp.sinks import sinks_dag
from ilp.problem import build_problem
from ilp.propagation import cycle_closing_families


# -- references ---------------------------------------------------------------------------------
def ref_sinks_dag(problem, weights=None):
    n, score = problem.n_vars, problem.score
    bits = [sum(1 << p for p in ps) for ps in map(problem.parents_of, range(problem.n_candidates))]
    w = np.zeros(problem.n_candidates) if weights is None else np.asarray(weights, dtype=float)
    w_round = np.round(w, 9)
    ranked = [fams[np.argsort(-w_round[fams], kind="stable")].tolist()
              for fams in map(problem.families_of, range(problem.n_vars))]
    w_round = w_round.tolist()
    ptr, remaining, allowed = [0] * n, (1 << n) - 1, [0] * n

    def first_fit(v, start, banned):
        i = start
        while i < len(ranked[v]) and bits[ranked[v][i]] & banned:
            i += 1
        return i

    alive = set(range(n))
    while alive:
        outside = ~remaining
        pref = {}
        for v in alive:
            ptr[v] = first_fit(v, ptr[v], outside)
            if ptr[v] == len(ranked[v]):
                return None
            pref[v] = ranked[v][ptr[v]]
        damage = dict.fromkeys(alive, 0.0)
        for u in alive:
            f = pref[u]
            for p in problem.parents_of(f):
                j = first_fit(u, ptr[u] + 1, outside | (1 << p))
                damage[p] += (score[f] - score[ranked[u][j]]) if j < len(ranked[u]) else np.inf
        sink = max(alive, key=lambda v: (w_round[pref[v]], -damage[v], -v))
        remaining &= ~(1 << sink)
        allowed[sink] = remaining
        alive.remove(sink)
    return [next(f for f in problem.families_of(v).tolist() if not bits[f] & ~allowed[v]) for v in range(n)]


def ref_cycle_closing_families(problem, allowed):
    n = problem.n_vars
    pmask = problem.parent_matrix(np.arange(problem.n_candidates))
    child = problem.child[allowed]
    counts = np.bincount(child, minlength=n)
    cells = (child[:, None] * n + np.arange(n)).ravel()
    per_parent = np.bincount(cells, weights=pmask[allowed].ravel(), minlength=n * n).reshape(n, n)
    reach = ((per_parent == counts[:, None]) & (counts[:, None] > 0)).T
    for k in range(n):
        reach |= reach[:, k:k + 1] & reach[k:k + 1, :]
    if reach.diagonal().any():
        return np.zeros(problem.n_candidates, dtype=bool), True
    return allowed & (pmask & reach[problem.child, :]).any(axis=1), False


def _in_mass(sup, cnt):
    return np.bincount(sup.child, weights=sup.w * (cnt > 0), minlength=sup.n_vars)


def _ref_peel(sup, nodes, min_excess):
    in_c = np.zeros(sup.n_vars, dtype=bool)
    in_c[nodes] = True
    cnt = sup.P[:, nodes].sum(axis=1)
    best, best_excess = None, min_excess
    while in_c.sum() >= 2:
        member = in_c[sup.child]
        mass = _in_mass(sup, cnt * member)
        excess = mass[in_c].sum() - (in_c.sum() - 1)
        if excess > best_excess:
            best, best_excess = tuple(np.flatnonzero(in_c).tolist()), excess
        lost = (sup.w * (member & (cnt == 1))) @ sup.P
        v = int(np.argmax(np.where(in_c, 1.0 - mass - lost, -np.inf)))
        in_c[v] = False
        cnt -= sup.P[:, v]
    return best


def _ref_grow(sup, seed, min_excess, max_size):
    in_c = np.zeros(sup.n_vars, dtype=bool)
    in_c[seed] = True
    cnt = sup.P[:, seed].copy()
    excess = 0.0
    for _ in range(max_size - 1):
        member = in_c[sup.child]
        gain = (sup.w * (member & (cnt == 0))) @ sup.P + _in_mass(sup, cnt) - 1.0
        gain[in_c] = -np.inf
        u = int(np.argmax(gain))
        if gain[u] <= -1.0 + 1e-9:
            return None
        in_c[u] = True
        cnt += sup.P[:, u]
        excess += gain[u]
        if excess > min_excess:
            return tuple(np.flatnonzero(in_c).tolist())
    return None


def ref_greedy_clusters(problem, xval, min_excess=1e-4):
    sup = LPSupport(problem, xval)
    if sup.w.size == 0:
        return []
    found = {}
    comps = sup.components()
    for comp in comps:
        cluster = _ref_peel(sup, comp, min_excess)
        if cluster is not None:
            found[cluster] = None
    for comp in comps:
        for seed in comp.tolist():
            cluster = _ref_grow(sup, seed, min_excess, comp.size)
            if cluster is not None:
                found[cluster] = None
    return list(found)


# -- random instances ---------------------------------------------------------------------------
def _problem(n, seed, palim, keep):
    return build_problem(random_table(n, seed, palim=palim, keep=keep, empty=seed % 3 != 0))


@pytest.mark.parametrize("seed", range(40))
def test_sinks_dag_matches_reference(seed):
    rng = np.random.default_rng(seed)
    problem = _problem(int(rng.integers(2, 10)), seed, palim=int(rng.integers(1, 4)), keep=0.5)
    points = [None, dyadic_point(problem, rng), rng.random(problem.n_candidates).round(2)]
    for w in points:
        assert sinks_dag(problem, w) == ref_sinks_dag(problem, w)


def test_sinks_dag_beyond_64_nodes():
    rng = np.random.default_rng(7)
    problem = _problem(70, 7, palim=1, keep=0.2)
    for w in (None, dyadic_point(problem, rng)):
        assert sinks_dag(problem, w) == ref_sinks_dag(problem, w)


@pytest.mark.parametrize("seed", range(40))
def test_cycle_closing_families_matches_reference(seed):
    rng = np.random.default_rng(seed)
    problem = _problem(int(rng.integers(2, 12)), seed, palim=2, keep=0.6)
    for density in (0.1, 0.3, 0.6, 1.0):
        # Few allowed families per child, so that implied arcs (and some cycles) occur.
        allowed = rng.random(problem.n_candidates) < density
        closing, cyclic = cycle_closing_families(problem, allowed)
        ref_closing, ref_cyclic = ref_cycle_closing_families(problem, allowed)
        assert cyclic == ref_cyclic
        assert np.array_equal(closing, ref_closing)


@pytest.mark.parametrize("seed", range(40))
def test_greedy_clusters_match_reference(seed):
    rng = np.random.default_rng(seed)
    problem = _problem(int(rng.integers(3, 12)), seed, palim=int(rng.integers(1, 4)), keep=0.7)
    for support in (2, 4):
        x = dyadic_point(problem, rng, support)
        for min_excess in (1e-4, -0.5):
            found = greedy_clusters(problem, x, min_excess=min_excess)
            assert found == ref_greedy_clusters(problem, x, min_excess)


def test_greedy_clusters_on_a_large_component():
    """Clusters of more than 128 nodes exercise the blocked pairwise sum of the peeling."""
    rng = np.random.default_rng(3)
    problem = _problem(150, 3, palim=1, keep=0.05)
    x = dyadic_point(problem, rng, 3)
    assert greedy_clusters(problem, x, min_excess=-50.0) == ref_greedy_clusters(problem, x, -50.0)


def test_pairwise_sum_rounds_like_numpy():
    from ilp.greedy_cuts import _pairwise_sum

    rng = np.random.default_rng(0)
    for size in [0, 1, 7, 8, 9, 16, 127, 128, 129, 300, 1000]:
        a = rng.random(size) * 10.0 ** rng.integers(-4, 4, size)
        assert _pairwise_sum(a) == a.sum()
