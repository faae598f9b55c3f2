"""DAG, PDAG/CPDAG, moral graph and d-separation: known answers, brute force and properties."""

import itertools

import numpy as np
import pytest
from helpers import adjacency, lauritzen_separated

from graphs.dag import (
    adjacency_from_parents,
    find_cycle,
    is_acyclic,
    parents_from_adjacency,
    topological_order,
)
from graphs.dsep import DSeparation, d_separated
from graphs.moral import moral_graph
from graphs.pdag import dag_to_cpdag, meek_closure, pdag_to_dag, skeleton, v_structures
from graphs.random_graphs import random_dag


# asia: 0 asia, 1 tub, 2 smoke, 3 lung, 4 bronc, 5 either, 6 xray, 7 dysp
ASIA = adjacency((0, 1), (2, 3), (2, 4), (1, 5), (3, 5), (5, 6), (4, 7), (5, 7), n=8)


def test_topological_order_and_cycles():
    A = adjacency((3, 1), (1, 0), (2, 0), n=4)
    order = topological_order(A)
    assert order == [2, 3, 1, 0]
    assert is_acyclic(A) and find_cycle(A) is None
    A[0, 3] = True
    assert not is_acyclic(A)
    cyc = find_cycle(A)
    assert sorted(cyc) == [0, 1, 3]
    assert all(A[cyc[k], cyc[(k + 1) % len(cyc)]] for k in range(len(cyc)))
    with pytest.raises(ValueError, match="cycle"):
        topological_order(A)


def test_find_cycle_random():
    rng = np.random.default_rng(0)
    for _ in range(200):
        A = rng.random((7, 7)) < 0.25
        np.fill_diagonal(A, False)
        cyc = find_cycle(A)
        assert (cyc is None) == is_acyclic(A)
        if cyc is not None:
            assert len(set(cyc)) == len(cyc)
            assert all(A[cyc[k], cyc[(k + 1) % len(cyc)]] for k in range(len(cyc)))
        else:
            pos = {v: k for k, v in enumerate(topological_order(A))}
            assert all(pos[i] < pos[j] for i, j in zip(*np.nonzero(A)))


def test_parent_sets_round_trip_and_errors():
    ps = [(), (0,), (0, 1), (2,)]
    A = adjacency_from_parents(ps, 4)
    assert parents_from_adjacency(A) == ps
    assert np.array_equal(adjacency_from_parents({1: [0], 3: (2,)}, 4), adjacency((0, 1), (2, 3), n=4))
    with pytest.raises(ValueError, match="itself"):
        adjacency_from_parents([(0,)], 1)
    with pytest.raises(ValueError, match="out of range"):
        adjacency_from_parents([(), (5,)], 2)
    with pytest.raises(ValueError, match="self-loops"):
        is_acyclic(np.eye(3, dtype=bool))
    with pytest.raises(ValueError, match="square"):
        is_acyclic(np.zeros((2, 3), dtype=bool))


def test_asia_cpdag_known():
    assert v_structures(ASIA) == [(1, 5, 3), (4, 7, 5)]
    C = dag_to_cpdag(ASIA)
    und = {(i, j) for i, j in zip(*np.nonzero(C & C.T)) if i < j}
    directed = {(i, j) for i, j in zip(*np.nonzero(C & ~C.T))}
    assert und == {(0, 1), (2, 3), (2, 4)}
    assert directed == {(1, 5), (3, 5), (5, 6), (5, 7), (4, 7)}


def test_tree_without_v_structures_is_fully_undirected():
    rng = np.random.default_rng(1)
    for seed in range(20):
        n = 12
        # a random rooted tree with arcs pointing away from the root has no v-structure
        A = np.zeros((n, n), dtype=bool)
        perm = rng.permutation(n)
        for k in range(1, n):
            A[perm[rng.integers(k)], perm[k]] = True
        assert v_structures(A) == []
        C = dag_to_cpdag(A)
        assert np.array_equal(C, A | A.T)


def markov_class(A):
    """All DAGs with A's skeleton and v-structures (brute force over orientations)."""
    S = skeleton(A)
    iu, ju = np.nonzero(np.triu(S, 1))
    vs = set(v_structures(A))
    out = []
    for bits in itertools.product((0, 1), repeat=len(iu)):
        B = np.zeros_like(A)
        for b, i, j in zip(bits, iu, ju):
            B[(i, j) if b else (j, i)] = True
        if is_acyclic(B) and set(v_structures(B)) == vs:
            out.append(B)
    return out


def test_cpdag_matches_brute_force_markov_class():
    for seed in range(60):
        A = random_dag(6, 0.4, seed)
        if A.sum() > 11:
            continue
        members = markov_class(A)
        assert any(np.array_equal(B, A) for B in members)
        common = np.logical_and.reduce(members)  # arcs present in every member are compelled
        expected = skeleton(A) & ~(common.T & ~common)  # drop the reversed copy of compelled arcs
        C = dag_to_cpdag(A)
        assert np.array_equal(C, expected), seed
        for B in members:  # every Markov-equivalent DAG gives the same CPDAG
            assert np.array_equal(dag_to_cpdag(B), C)


def covered_edges(A):
    return [(i, j) for i, j in zip(*np.nonzero(A)) if np.array_equal(A[:, j] & ~np.eye(len(A), dtype=bool)[i], A[:, i])]


def test_covered_edge_reversals_preserve_cpdag():
    rng = np.random.default_rng(2)
    for seed in range(30):
        A = random_dag(15, 0.2, seed)
        C = dag_to_cpdag(A)
        B = A.copy()
        for _ in range(10):
            cov = covered_edges(B)
            if not cov:
                break
            i, j = cov[rng.integers(len(cov))]
            B[i, j], B[j, i] = False, True
            assert is_acyclic(B)
            assert np.array_equal(dag_to_cpdag(B), C)


def random_extension(C, rng):
    """A random consistent extension: Dor-Tarsi with random choice among eligible nodes."""
    P = C.copy()
    n = len(P)
    alive = np.ones(n, bool)
    out = P & ~P.T
    adj = P | P.T
    for _ in range(n):
        cands = []
        for x in np.flatnonzero(alive):
            if np.any(P[x] & ~P[:, x] & alive):
                continue
            nb = set(np.flatnonzero(adj[x] & alive))
            und = np.flatnonzero(P[x] & P[:, x] & alive)
            if all(nb - {y} <= set(np.flatnonzero(adj[y])) for y in und):
                cands.append(x)
        x = cands[rng.integers(len(cands))]
        out[np.flatnonzero(P[x] & P[:, x] & alive), x] = True
        alive[x] = False
    return out


def test_extensions_reproduce_cpdag():
    rng = np.random.default_rng(3)
    for seed in range(40):
        A = random_dag(20, 0.15, seed)
        C = dag_to_cpdag(A)
        D = pdag_to_dag(C)
        assert is_acyclic(D) and not (D & D.T).any()
        assert np.array_equal(dag_to_cpdag(D), C)
        assert np.array_equal(D & ~D.T & C & ~C.T, C & ~C.T)
        for _ in range(3):
            E = random_extension(C, rng)
            assert np.array_equal(dag_to_cpdag(E), C)


def test_pdag_to_dag_without_extension():
    # 4-cycle a-b-c-d-a undirected has no extension without a new v-structure (chordless cycle)
    P = adjacency((0, 1), (1, 2), (2, 3), (3, 0), n=4)
    P = P | P.T
    with pytest.raises(ValueError, match="no consistent DAG extension"):
        pdag_to_dag(P)
    # directed cycle
    with pytest.raises(ValueError):
        pdag_to_dag(adjacency((0, 1), (1, 2), (2, 0), n=3))
    # a directed edge plus an undirected one that would need a new v-structure: 0->1-2, 0, 2 apart
    P = adjacency((0, 1), (1, 2), (2, 1), n=3)
    assert np.array_equal(pdag_to_dag(P), adjacency((0, 1), (1, 2), n=3))


def test_meek_rules_individually():
    # R1: 0->1-2 => 1->2
    P = adjacency((0, 1), (1, 2), (2, 1), n=3)
    assert np.array_equal(meek_closure(P), adjacency((0, 1), (1, 2), n=3))
    # R2: 0->1->2 and 0-2 => 0->2
    P = adjacency((0, 1), (1, 2), (0, 2), (2, 0), n=3)
    assert np.array_equal(meek_closure(P), adjacency((0, 1), (1, 2), (0, 2), n=3))
    # R3: 0-1, 0-2, 0-3, 1->3<-2, 1,2 non-adjacent => 0->3
    P = adjacency((0, 1), (1, 0), (0, 2), (2, 0), (0, 3), (3, 0), (1, 3), (2, 3), n=4)
    Q = meek_closure(P)
    assert Q[0, 3] and not Q[3, 0] and Q[0, 1] and Q[1, 0]
    # R4: 0-1, 1->2->3, 0-3, 0-2 (i=0, k=1, l=2, j=3; 1,3 non-adjacent) => 0->3
    P = adjacency((0, 1), (1, 0), (1, 2), (2, 3), (0, 3), (3, 0), (0, 2), (2, 0), n=4)
    Q = meek_closure(P, rules=(4,))
    assert Q[0, 3] and not Q[3, 0]
    assert np.array_equal(meek_closure(P, rules=(1,)), P)
    with pytest.raises(ValueError):
        meek_closure(P, rules=(5,))


def test_meek_closure_idempotent_and_sound():
    rng = np.random.default_rng(4)
    for seed in range(40):
        A = random_dag(15, 0.2, seed)
        C = dag_to_cpdag(A)
        # background knowledge: orient some reversible edges as in A, close, and check soundness
        P = C.copy()
        und = [(i, j) for i, j in zip(*np.nonzero(C & C.T))]
        for k in rng.permutation(len(und))[: len(und) // 3]:
            i, j = und[k]
            if A[i, j]:
                P[j, i] = False
        Q = meek_closure(P)
        assert np.array_equal(meek_closure(Q), Q)
        assert not (Q & ~Q.T & A.T).any()  # never orients against the true DAG
        assert np.array_equal(skeleton(Q), skeleton(A))


def test_dsep_matches_lauritzen_brute_force():
    rng = np.random.default_rng(5)
    for seed in range(30):
        A = random_dag(9, 0.3, seed)
        ds = DSeparation(A)
        for _ in range(60):
            x, y = rng.choice(9, 2, replace=False)
            rest = [v for v in range(9) if v not in (x, y)]
            S = sorted(rng.choice(rest, rng.integers(0, 5), replace=False).tolist())
            assert ds.separated(int(x), int(y), S) == lauritzen_separated(A, int(x), int(y), S)


def test_dsep_known_and_sets():
    A = ASIA
    assert d_separated(A, 0, 2, [])  # asia _|_ smoke
    assert not d_separated(A, 0, 2, [5])  # collider either observed
    assert not d_separated(A, 0, 2, [6])  # descendant of the collider
    assert d_separated(A, 1, 7, [5, 4]) and not d_separated(A, 1, 7, [5])
    assert d_separated(A, [0, 1], [2, 4], [])
    assert not d_separated(A, [0, 1], [2, 4], [7])
    ds = DSeparation(A)
    assert ds.reachable(0, [5]) == {0, 1, 3, 2, 4, 7}
    with pytest.raises(ValueError, match="overlap"):
        d_separated(A, 0, [0, 1], [])
    with pytest.raises(ValueError, match="overlap"):
        d_separated(A, 0, 1, [1])
    with pytest.raises(ValueError, match="out of range"):
        d_separated(A, 0, 9, [])


def test_moral_graph():
    M = moral_graph(ASIA)
    assert np.array_equal(M, M.T) and not M.diagonal().any()
    expected = skeleton(ASIA)
    for a, b in [(1, 3), (4, 5)]:
        expected[a, b] = expected[b, a] = True
    assert np.array_equal(M, expected)


def test_dsep_sets_equal_all_pairs():
    rng = np.random.default_rng(6)
    for seed in range(20):
        A = random_dag(10, 0.25, seed)
        ds = DSeparation(A)
        for _ in range(30):
            perm = rng.permutation(10).tolist()
            X, Y, S = perm[:2], perm[2:4], perm[4 : 4 + int(rng.integers(0, 4))]
            assert ds.separated(X, Y, S) == all(ds.separated(x, y, S) for x in X for y in Y)
            reach = ds.reachable(X, S)
            assert all((y in reach) != ds.separated(X, y, S) for y in perm[2:] if y not in S)
