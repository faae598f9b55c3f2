"""Equivalence classes narrowed by background knowledge (Meek 1995): known answers, errors, and a
brute-force enumeration of the DAGs of the class that satisfy the knowledge on small graphs."""

import itertools

import numpy as np
import pytest
from helpers import adjacency

from graphs._checks import GraphError
from graphs.pdag import (
    KnowledgeConflictError,
    dag_to_cpdag,
    dag_to_pdag_with_knowledge,
    meek_closure,
    orient_with_knowledge,
    pdag_from_edges,
    v_structures,
)
from graphs.random_graphs import random_dag


def tier_exclusions(tiers: dict[int, int], n: int) -> np.ndarray:
    """``forbidden[p, c]``: ``p`` in a later tier than ``c`` (untiered nodes are unconstrained)."""
    F = np.zeros((n, n), dtype=bool)
    for p, c in itertools.permutations(tiers, 2):
        F[p, c] = tiers[p] > tiers[c]
    return F


def class_members(dag: np.ndarray) -> list[np.ndarray]:
    """Every DAG Markov equivalent to ``dag`` (same skeleton, same v-structures; Verma & Pearl 1990),
    found by orienting the skeleton along each of the n! node orders."""
    n = len(dag)
    skel = dag | dag.T
    ranks = np.argsort(np.array(list(itertools.permutations(range(n)))), axis=1)
    orientations = skel[None] & (ranks[:, :, None] < ranks[:, None, :])
    unique = np.unique(orientations.reshape(len(orientations), -1), axis=0).reshape(-1, n, n)
    target = v_structures(dag)
    return [D for D in unique if v_structures(D) == target]


def brute_force_pdag(dag, required, forbidden) -> np.ndarray | None:
    """Union of the class members holding every required arc and no forbidden one (None if none):
    ``p -> c`` alone where every member has it, both directions where the members differ."""
    members = [D for D in class_members(dag) if not (required & ~D).any() and not (forbidden & D).any()]
    if not members:
        return None
    return np.logical_or.reduce(members)


def random_topological_order(dag: np.ndarray, rng) -> list[int]:
    order, left = [], set(range(len(dag)))
    while left:
        sources = [v for v in sorted(left) if not dag[sorted(left), v].any()]
        v = int(rng.choice(sources))
        order.append(v)
        left.remove(v)
    return order


def consistent_knowledge(dag: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """Required arcs (a random subset of the DAG's), and forbidden arcs from random tiers along a
    random topological order plus random absent arcs: knowledge the DAG satisfies."""
    n = len(dag)
    required = dag & (rng.random((n, n)) < rng.choice([0.0, 0.2, 0.5]))
    order = random_topological_order(dag, rng)
    tier_of_position = np.cumsum(rng.random(n) < 0.4)
    tiered = rng.random(n) < rng.choice([0.0, 0.5, 1.0])
    tiers = {v: int(tier_of_position[k]) for k, v in enumerate(order) if tiered[v]}
    forbidden = tier_exclusions(tiers, n) | (~dag & (rng.random((n, n)) < 0.15))
    np.fill_diagonal(forbidden, False)
    assert not (required & ~dag).any() and not (forbidden & dag).any()
    return required, forbidden


def test_chain_with_tiers_known_answer():
    # a - b - c; tier a=0, b=1 forbids b -> a, and R1 then orients b -> c
    a, b, c = 0, 1, 2
    dag = adjacency((b, a), (b, c), n=3)
    assert np.array_equal(dag_to_cpdag(dag), pdag_from_edges(3, undirected=[(a, b), (b, c)]))
    forbidden = tier_exclusions({a: 0, b: 1}, 3)
    expected = pdag_from_edges(3, arcs=[(a, b), (b, c)])
    assert np.array_equal(dag_to_pdag_with_knowledge(dag, forbidden=forbidden), expected)
    # the same from a required arc, and a tier that leaves the chain's other edge free
    assert np.array_equal(dag_to_pdag_with_knowledge(dag, required=adjacency((a, b), n=3)), expected)
    assert np.array_equal(dag_to_pdag_with_knowledge(dag, forbidden=tier_exclusions({b: 0, c: 1}, 3)),
                          pdag_from_edges(3, arcs=[(b, c)], undirected=[(a, b)]))


def test_rule_4_fires_with_knowledge():
    # skeleton i-k, k-l, l-j, i-l, i-j (k, j non-adjacent), no v-structure: the CPDAG is undirected.
    # Requiring k -> l gives l -> j (R1), and i -> j only by R4 (i - k -> l -> j, i adjacent to l).
    i, k, l, j = 0, 1, 2, 3
    dag = adjacency((i, k), (i, l), (i, j), (k, l), (l, j), n=4)
    cpdag = dag_to_cpdag(dag)
    assert np.array_equal(cpdag, dag | dag.T)
    required = adjacency((k, l), n=4)
    expected = pdag_from_edges(4, arcs=[(k, l), (l, j), (i, j)], undirected=[(i, k), (i, l)])
    result = orient_with_knowledge(cpdag, required=required)
    assert np.array_equal(result, expected)
    assert np.array_equal(result, brute_force_pdag(dag, required, np.zeros_like(dag)))
    without_r4 = meek_closure(cpdag & ~required.T, rules=(1, 2, 3))
    assert without_r4[j, i]  # R1-R3 leave i - j undirected


def test_no_knowledge_gives_the_cpdag():
    for seed in range(20):
        dag = random_dag(7, 0.4, seed=seed)
        assert np.array_equal(dag_to_pdag_with_knowledge(dag), dag_to_cpdag(dag))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_brute_force_consistent_knowledge(n):
    rng = np.random.default_rng(n)
    oriented_by_knowledge = 0
    for trial in range(60):
        dag = random_dag(n, edge_prob=rng.choice([0.3, 0.5, 0.8]), seed=1000 * n + trial)
        required, forbidden = consistent_knowledge(dag, rng)
        result = dag_to_pdag_with_knowledge(dag, required, forbidden)
        assert np.array_equal(result, brute_force_pdag(dag, required, forbidden)), (dag, required, forbidden)
        assert result[dag].all()  # the DAG itself is in the narrowed class
        oriented_by_knowledge += int((dag_to_cpdag(dag) & ~result).sum())
    assert oriented_by_knowledge > 0


@pytest.mark.parametrize("n", [3, 4, 5])
def test_brute_force_arbitrary_knowledge(n):
    """Random knowledge, contradictory or not: an error exactly when no DAG of the class satisfies it."""
    rng = np.random.default_rng(10 + n)
    outcomes = set()
    for trial in range(80):
        dag = random_dag(n, edge_prob=0.5, seed=2000 * n + trial)
        skel = dag | dag.T
        required = skel & (rng.random((n, n)) < 0.15)
        required &= ~required.T
        forbidden = rng.random((n, n)) < 0.2
        np.fill_diagonal(forbidden, False)
        expected = brute_force_pdag(dag, required, forbidden)
        outcomes.add(expected is None)
        if expected is None:
            with pytest.raises(KnowledgeConflictError):
                dag_to_pdag_with_knowledge(dag, required, forbidden)
        else:
            assert np.array_equal(dag_to_pdag_with_knowledge(dag, required, forbidden), expected)
    assert outcomes == {True, False}


def test_conflicting_knowledge_errors():
    a, b, c = 0, 1, 2
    collider = adjacency((a, c), (b, c), n=3)  # compelled a -> c <- b
    names = ["a", "b", "c"]
    with pytest.raises(KnowledgeConflictError, match="reverse is compelled.*c -> a"):
        dag_to_pdag_with_knowledge(collider, required=adjacency((c, a), n=3), names=names)
    with pytest.raises(KnowledgeConflictError, match="non-adjacent.*a -> b"):
        dag_to_pdag_with_knowledge(collider, required=adjacency((a, b), n=3), names=names)
    with pytest.raises(KnowledgeConflictError, match="forbidden arcs compelled.*b -> c"):
        dag_to_pdag_with_knowledge(collider, forbidden=adjacency((b, c), n=3), names=names)
    chain = adjacency((a, b), (b, c), n=3)  # class a - b - c
    with pytest.raises(KnowledgeConflictError, match="both directions: a -> b"):
        dag_to_pdag_with_knowledge(chain, forbidden=adjacency((a, b), (b, a), n=3), names=names)
    with pytest.raises(KnowledgeConflictError, match="both required and forbidden"):
        dag_to_pdag_with_knowledge(chain, required=adjacency((a, b), n=3), forbidden=adjacency((a, b), n=3))
    # each arc alone is fine, together they make the new v-structure a -> b <- c
    with pytest.raises(KnowledgeConflictError, match="together"):
        dag_to_pdag_with_knowledge(chain, required=adjacency((a, b), (c, b), n=3))
    assert isinstance(KnowledgeConflictError("x"), ValueError)


def test_knowledge_matrix_input():
    dag = adjacency((0, 1), (1, 2), n=3)
    allowed = ~np.eye(3, dtype=bool)
    allowed[1, 0] = False  # pipeline style: diagonal False, so ~allowed has a True diagonal
    assert np.array_equal(dag_to_pdag_with_knowledge(dag, forbidden=~allowed), dag)
    assert np.array_equal(dag_to_pdag_with_knowledge(dag, forbidden=(~allowed).astype(int)), dag)
    with pytest.raises(GraphError, match=r"\(3, 3\)"):
        dag_to_pdag_with_knowledge(dag, required=np.zeros((2, 2), dtype=bool))
    with pytest.raises(GraphError, match="0/1"):
        dag_to_pdag_with_knowledge(dag, required=np.full((3, 3), 2))
