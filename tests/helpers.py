"""Helpers shared by the test modules: small graphs and score tables, brute-force references and
result checks (plain functions; the fixtures live in ``conftest.py``)."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from bayesnet.catalog import load_network
from graphs.dag import is_acyclic, parents_from_adjacency
from graphs.metrics import shd, skeleton_scores
from graphs.moral import moral_graph
from graphs.pdag import dag_to_cpdag
from scores.table import ScoreTable


def adjacency(*arcs, n: int) -> np.ndarray:
    """The ``(n, n)`` boolean matrix with ``A[i, j]`` True for each arc ``(i, j)``."""
    A = np.zeros((n, n), dtype=bool)
    for i, j in arcs:
        A[i, j] = True
    return A


def random_table(n: int, seed: int, palim: int = 3, keep: float = 1.0, empty: bool = True) -> ScoreTable:
    """Random scores for the parent sets of size <= palim; a fraction ``keep`` of non-empty sets
    is kept per child (restricted candidate lists), the empty set only if ``empty``."""
    rng = np.random.default_rng(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {}
        for k in range(0, min(palim, n - 1) + 1):
            for ps in itertools.combinations(others, k):
                if (k == 0 and empty) or (k > 0 and rng.random() < keep):
                    # Larger sets score better on average so optima have arcs.
                    fam[ps] = float(-rng.gamma(5.0) * 10 + 6.0 * k * rng.random())
        if not fam:
            fam[(others[0],) if others else ()] = -1.0
        families.append(fam)
    return ScoreTable.from_families(families)


def candidate_table(n: int, seed: int, n_sets: int = 3, max_size: int = 3) -> ScoreTable:
    """Per child: the empty set plus ``n_sets`` random parent sets of size 1..max_size; larger
    sets score better on average so that a treewidth bound binds."""
    rng = np.random.default_rng(seed)
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {(): float(-rng.gamma(5.0) * 10)}
        for _ in range(n_sets):
            size = int(rng.integers(1, min(max_size, n - 1) + 1))
            ps = tuple(sorted(rng.choice(others, size, replace=False).tolist()))
            fam[ps] = float(-rng.gamma(5.0) * 10 + 12.0 * size * rng.random())
        families.append(fam)
    return ScoreTable.from_families(families)



def brute_force(table: ScoreTable, accept) -> float:
    """Best total score over all acyclic choices of one family per child whose moral graph ``M``
    has ``accept(M)``."""
    n = table.n_vars
    best, seen = -np.inf, {}
    for combo in itertools.product(*(list(f.items()) for f in table.families)):
        total = sum(s for _, s in combo)
        if total <= best:
            continue
        dag = np.zeros((n, n), dtype=bool)
        for v, (ps, _) in enumerate(combo):
            dag[list(ps), v] = True
        if not is_acyclic(dag):
            continue
        moral = moral_graph(dag)
        key = moral.tobytes()
        if key not in seen:
            seen[key] = accept(moral)
        if seen[key]:
            best = total
    return best


def dyadic_point(problem, rng, support: int = 4) -> np.ndarray:
    """Convex combination of a few families per child with weights in multiples of 1/16 (so every
    sum of LP values is exact)."""
    x = np.zeros(problem.n_candidates)
    for fams in map(problem.families_of, range(problem.n_vars)):
        pick = rng.choice(fams, size=min(support, fams.size), replace=False)
        parts = rng.multinomial(16, np.ones(pick.size) / pick.size)
        x[pick] = parts / 16.0
    return x


def assert_consistent_solution(table: ScoreTable, res) -> None:
    """An optimiser's result is a DAG whose parent sets are ``res.parent_sets`` and whose table
    score is ``res.objective``."""
    assert is_acyclic(res.dag)
    assert parents_from_adjacency(res.dag) == [tuple(ps) for ps in res.parent_sets]
    assert table.score_of(res.parent_sets) == pytest.approx(res.objective, rel=1e-12)


def lauritzen_separated(A, x, y, S) -> bool:
    """x _||_ y | S iff S separates them in the moral graph of An({x, y} u S) (Lauritzen et al. 1990):
    a brute-force d-separation reference that uses no library code."""
    keep = {x, y, *S}
    stack = list(keep)
    while stack:
        v = stack.pop()
        for u in np.flatnonzero(A[:, v]):
            if int(u) not in keep:
                keep.add(int(u))
                stack.append(int(u))
    nbrs = {v: set() for v in keep}
    for v in keep:
        parents = [int(u) for u in np.flatnonzero(A[:, v])]
        for u in parents:
            nbrs[u].add(v)
            nbrs[v].add(u)
        for i, u in enumerate(parents):
            for w in parents[i + 1:]:
                nbrs[u].add(w)
                nbrs[w].add(u)
    seen, stack = {x}, [x]
    while stack:
        v = stack.pop()
        for u in nbrs[v]:
            if u == y:
                return False
            if u not in seen and u not in S:
                seen.add(u)
                stack.append(u)
    return True


def hashed_oracle(seed: int, p_indep: float = 0.6):
    """A deterministic stand-in for an erroneous CI test, ``indep(x, y, S) -> bool``: independence
    decided by a hash of the query, symmetric in ``x`` and ``y``."""
    def indep(x, y, S):
        digest = hashlib.sha256(repr((seed, min(x, y), max(x, y), S)).encode()).digest()
        return digest[0] < 256 * p_indep
    return indep


def cops_fingerprint(res) -> tuple:
    """Everything a cops-and-robbers run reports, for comparing two runs for identity."""
    return (res.status, res.k, res.k_lower_bound, res.tests_by_order, res.n_distinct_tests,
            res.components, res.component_widths,
            [sorted(b) for b in res.raw_decomposition.bags], res.raw_decomposition.edges,
            [sorted(b) for b in res.tree_decomposition.bags], res.tree_decomposition.edges,
            sorted(res.separating_sets.items()), res.cpdag.tobytes(), res.skeleton.tobytes())


def assert_evaluation_of(evaluation: dict, dag: np.ndarray, network: str) -> None:
    """A run's evaluation of ``dag`` against the catalog ``network``: the SHD of their CPDAGs, the
    skeleton counts and F1 = 2 TP / (2 TP + FP + FN), with SHD between the skeleton differences and
    the pairs adjacent in either graph."""
    truth = np.asarray(load_network(network).adjacency, dtype=bool)
    counts = skeleton_scores(dag, truth)
    assert evaluation["truth"] == network
    assert evaluation["shd"] == shd(dag_to_cpdag(dag), dag_to_cpdag(truth))
    assert {k: evaluation[k] for k in ("tp", "fp", "fn")} == {k: counts[k] for k in ("tp", "fp", "fn")}
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    assert evaluation["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    assert fp + fn <= evaluation["shd"] <= fp + fn + tp
