"""Cliques of (chordal) undirected graphs given as bitmask adjacency lists.

``adj[v]`` is the bitmask of the neighbours of ``v``; a node set is passed as a bitmask and the
functions work on the subgraph it induces. Maximal cliques of a chordal graph are read off a
maximum-cardinality search (Tarjan & Yannakakis 1984; Blair & Peyton 1993, "An introduction to
chordal graphs and clique trees", section 4), as used by Selective-Generate-Ops of SGES
(Chickering & Meek 2015, section 4.3).
"""

from __future__ import annotations

from typing import Iterator, Sequence

from graphs.bitsets import bits


def is_clique(nodes: int, adj: Sequence[int]) -> bool:
    """True iff every two nodes of ``nodes`` are adjacent."""
    for v in bits(nodes):
        if (nodes & ~(1 << v)) & ~adj[v]:
            return False
    return True


def mcs_order(nodes: int, adj: Sequence[int]) -> list[int]:
    """Maximum-cardinality search order of the subgraph induced by ``nodes``.

    Repeatedly numbers the unnumbered node with the most numbered neighbours (ties: lowest
    index, so the order is deterministic).
    """
    order: list[int] = []
    numbered = 0
    remaining = nodes
    while remaining:
        best, best_w = -1, -1
        for v in bits(remaining):
            w = (adj[v] & numbered).bit_count()
            if w > best_w:
                best, best_w = v, w
        order.append(best)
        numbered |= 1 << best
        remaining &= ~(1 << best)
    return order


def maximal_cliques(nodes: int, adj: Sequence[int]) -> list[int]:
    """Maximal cliques (bitmasks) of the chordal subgraph induced by ``nodes``.

    With an MCS order, the sets ``{v} ∪ (neighbours of v numbered before v)`` are cliques of a
    chordal graph and every maximal clique is one of them (Blair & Peyton 1993, Thm 4.1 ff.);
    the non-maximal candidates are dropped. At most ``|nodes|`` cliques. The empty node set has
    the single maximal clique ``0``. The input must be chordal (CPDAG chain components are,
    Andersson et al. 1997); this is not checked.
    """
    if nodes == 0:
        return [0]
    numbered = 0
    candidates: list[int] = []
    for v in mcs_order(nodes, adj):
        candidates.append((adj[v] & numbered) | (1 << v))
        numbered |= 1 << v
    cliques = []
    for i, c in enumerate(candidates):
        if not any(c != d and c & d == c for d in candidates) and c not in candidates[:i]:
            cliques.append(c)
    return cliques


def max_clique_size(nodes: int, adj: Sequence[int]) -> int:
    """Size of the largest clique of the chordal subgraph induced by ``nodes`` (0 if empty)."""
    return max(c.bit_count() for c in maximal_cliques(nodes, adj))


def clique_subsets(candidates: int, adj: Sequence[int], base: int = 0) -> Iterator[int]:
    """Every clique ``C ⊆ candidates`` (the empty set first) such that ``C ∪ base`` is a clique.

    ``base`` is assumed to be a clique itself. Enumeration grows cliques in increasing index
    order, so only cliques are visited (no ``2^|candidates|`` scan) and the order is deterministic.
    """
    pool = candidates
    for b in bits(base):
        pool &= adj[b]
    yield 0
    yield from _grow(0, pool, adj)


def _grow(clique: int, pool: int, adj: Sequence[int]) -> Iterator[int]:
    for v in bits(pool):
        c = clique | (1 << v)
        yield c
        later = pool & ~((1 << (v + 1)) - 1) & adj[v]
        if later:
            yield from _grow(c, later, adj)
