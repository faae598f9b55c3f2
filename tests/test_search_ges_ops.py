"""GES operators on CPDAGs checked against brute force over the DAG members of the class.

Chickering (2002), Theorems 15/17: the valid Insert (Delete) operators of a CPDAG yield exactly
the classes reachable by one edge addition (deletion) in some member DAG, and each operator's
score difference equals the score change of that DAG edit.
"""

from itertools import product

import numpy as np
import pytest

from graphs.dag import is_acyclic
from graphs.pdag import dag_to_cpdag, pdag_to_dag
from graphs.random_graphs import random_dag
from graphs.bitsets import bits, to_mask, to_tuple
from search.chordal import clique_subsets, is_clique, max_clique_size, maximal_cliques
from search.ges_ops import (
    CPDAGMasks,
    GESOperatorError,
    all_delete_subsets,
    apply_delete,
    apply_insert,
    deletable_pairs,
    delete_deltas,
    insert_candidates,
    insertable_pairs,
)
from search.oracle_score import OracleScore
from search.score_cache import LocalScoreCache
from search.synthetic import random_cpts


def _members(P):
    """All DAGs in the class of the CPDAG ``P`` (orient every undirected edge both ways)."""
    und = [(i, j) for i, j in zip(*np.nonzero(np.triu(P & P.T)))]
    out = []
    for bits_ in product((0, 1), repeat=len(und)):
        D = P & ~P.T
        for (i, j), b in zip(und, bits_):
            D[i, j], D[j, i] = (True, False) if b else (False, True)
        if is_acyclic(D) and np.array_equal(dag_to_cpdag(D), P):
            out.append(D.copy())
    return out


def _key(P):
    return P.tobytes()


def _inserts(P, cache):
    """Every valid ``Insert(x, y, T)`` of ``P`` as ``(x, y, T, score difference)``, as FES scores them."""
    m = CPDAGMasks.of(P)
    return [(x, y, to_tuple(t), delta) for x, y in insertable_pairs(m)
            for delta, t in insert_candidates(cache, m, x, y)]


def _deletes(P, cache):
    """Every valid ``Delete(x, y, H)`` of ``P`` as ``(x, y, H, score difference)``, as BES scores them."""
    m = CPDAGMasks.of(P)
    out = []
    for x, y in deletable_pairs(m):
        hs = all_delete_subsets(m, x, y)
        out.extend((x, y, to_tuple(h), delta) for h, delta in zip(hs, delete_deltas(cache, m, x, y, hs)))
    return out


def _cases():
    for seed in range(8):
        n = 5 + seed % 2
        yield seed, n, random_dag(n, edge_prob=0.45, seed=seed)


def _score(seed, dag):
    n = dag.shape[0]
    rng = np.random.default_rng(100 + seed)
    parents = [np.flatnonzero(dag[:, v]).tolist() for v in range(n)]
    arities = rng.integers(2, 4, size=n)
    return LocalScoreCache(OracleScore(parents, random_cpts(parents, arities, rng), n_samples=1000.0), n)


@pytest.mark.parametrize("seed,n,dag", list(_cases()))
def test_inserts_match_single_edge_additions(seed, n, dag):
    P = dag_to_cpdag(dag)
    cache = _score(seed, dag)
    expected = set()
    for D in _members(P):
        for x, y in product(range(n), repeat=2):
            if x != y and not (D[x, y] or D[y, x]):
                D2 = D.copy()
                D2[x, y] = True
                if is_acyclic(D2):
                    expected.add(_key(dag_to_cpdag(D2)))
    got = {}
    base = cache.dag_score(pdag_to_dag(P))
    for x, y, t, delta in _inserts(P, cache):
        Q = apply_insert(P, x, y, t)
        got.setdefault(_key(Q), Q)
        assert np.array_equal(dag_to_cpdag(pdag_to_dag(Q)), Q)
        # property: the operator's score difference equals the rescored difference
        assert cache.dag_score(pdag_to_dag(Q)) - base == pytest.approx(delta, rel=1e-9, abs=1e-7)
        assert Q[x, y] or Q[y, x]
    assert set(got) == expected


@pytest.mark.parametrize("seed,n,dag", list(_cases()))
def test_deletes_match_single_edge_deletions(seed, n, dag):
    P = dag_to_cpdag(dag)
    cache = _score(seed, dag)
    expected = set()
    for D in _members(P):
        for x, y in zip(*np.nonzero(D)):
            D2 = D.copy()
            D2[x, y] = False
            expected.add(_key(dag_to_cpdag(D2)))
    base = cache.dag_score(pdag_to_dag(P))
    got = set()
    for x, y, h, delta in _deletes(P, cache):
        Q = apply_delete(P, x, y, h)
        got.add(_key(Q))
        assert not (Q[x, y] or Q[y, x])
        assert cache.dag_score(pdag_to_dag(Q)) - base == pytest.approx(delta, rel=1e-9, abs=1e-7)
    assert got == expected


def test_operator_errors():
    P = dag_to_cpdag(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=bool))  # 0 - 1 - 2
    with pytest.raises(GESOperatorError, match="already adjacent"):
        apply_insert(P, 0, 1, [])
    with pytest.raises(GESOperatorError, match="no edge"):
        apply_delete(P, 0, 2, [])
    with pytest.raises(GESOperatorError, match="not an undirected neighbour"):
        apply_insert(P, 0, 2, [0])


def _random_chordal(n, rng):
    """Chordal graph: each new vertex joins a random clique of the earlier ones (PEO in reverse)."""
    adj = [0] * n
    for v in range(1, n):
        pick = 1 << int(rng.integers(v))
        c = pick | adj[pick.bit_length() - 1]
        sub = 0
        for u in bits(c):
            if rng.random() < 0.7 and is_clique(sub | (1 << u), adj):
                sub |= 1 << u
        for u in bits(sub):
            adj[u] |= 1 << v
        adj[v] = sub
    return adj


@pytest.mark.parametrize("seed", range(6))
def test_maximal_cliques_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 8
    adj = _random_chordal(n, rng)
    nodes = to_mask(v for v in range(n) if rng.random() < 0.8)
    cliques = [c for c in range(1 << n) if c & ~nodes == 0 and is_clique(c, adj)]
    maximal = {c for c in cliques if not any(c != d and c & d == c for d in cliques)}
    assert set(maximal_cliques(nodes, adj)) == maximal
    assert max_clique_size(nodes, adj) == max(c.bit_count() for c in cliques)
    assert sorted(clique_subsets(nodes, adj)) == sorted(cliques)


def test_all_delete_subsets_are_the_valid_ones():
    P = dag_to_cpdag(random_dag(7, edge_prob=0.6, seed=3))
    m = CPDAGMasks.of(P)
    for y in range(7):
        for x in bits(m.pa[y] | m.ne[y]):
            na = m.ne[y] & m.adj[x]
            brute = {h for h in range(1 << 7) if h & ~na == 0 and is_clique(na & ~h, m.adj)}
            hs = all_delete_subsets(m, x, y)
            assert len(hs) == len(set(hs)) and set(hs) == brute
