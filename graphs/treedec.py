"""Tree decompositions: representation, validation, and the decomposition induced by an elimination order.

A tree decomposition of an undirected graph ``G`` is a tree whose nodes carry bags (vertex sets) such that
every vertex and every edge of ``G`` lies in some bag and the bags containing any vertex form a connected
subtree (running intersection). Its width is the largest bag size minus one (Robertson & Seymour 1986).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from graphs._checks import GraphError, as_symmetric


@dataclass(frozen=True)
class TreeDecomposition:
    """Bags (frozensets of vertex indices) and tree edges (pairs of bag indices).

    The decompositions built in ``graphs`` root the tree at bag 0 and list edges as ``(parent, child)``
    with ``parent < child``; :func:`validate_tree_decomposition` accepts edges in any orientation.
    """

    bags: tuple[frozenset[int], ...]
    edges: tuple[tuple[int, int], ...]

    @property
    def width(self) -> int:
        """Largest bag size minus one (-1 for no bags)."""
        return max((len(b) for b in self.bags), default=0) - 1

    def validate(self, G) -> int:
        """Check against the graph ``G``; returns the width or raises ``ValueError`` with the reason."""
        return validate_tree_decomposition(G, self.bags, self.edges)


def validate_tree_decomposition(graph, bags: Sequence[Iterable[int]], tree_edges: Iterable[tuple[int, int]]) -> int:
    """Width of the tree decomposition ``(bags, tree_edges)`` of the undirected ``graph``; raises
    ``ValueError`` (:class:`GraphError`) saying which condition fails: vertex or edge coverage, the tree
    property of ``tree_edges``, or running intersection (bags holding a vertex must be connected)."""
    G = as_symmetric(graph, "graph")
    n = G.shape[0]
    bag_lists = [sorted({int(v) for v in b}) for b in bags]
    m = len(bag_lists)
    if m == 0:
        if n:
            raise GraphError(f"no bags for a graph with {n} vertices")
        return -1
    member = np.zeros((m, n), dtype=bool)
    for k, b in enumerate(bag_lists):
        bad = [v for v in b if not 0 <= v < n]
        if bad:
            raise GraphError(f"bag {k} has vertices out of range 0..{n - 1}: {bad[:10]}")
        member[k, b] = True
    uncovered = np.flatnonzero(~member.any(axis=0))
    if len(uncovered):
        raise GraphError(f"vertices in no bag: {uncovered[:10].tolist()}")
    covered = np.zeros((n, n), dtype=bool)
    for b in bag_lists:
        covered[np.ix_(b, b)] = True
    missing = np.argwhere(G & ~covered)
    if len(missing):
        u, v = missing[0]
        raise GraphError(f"edge ({u}, {v}) lies in no bag ({len(missing) // 2} uncovered edges)")
    edges = [(int(a), int(b)) for a, b in tree_edges]
    if len(edges) != m - 1:
        raise GraphError(f"a tree on {m} bags needs {m - 1} edges, got {len(edges)}")
    root = list(range(m))

    def find(a: int) -> int:
        while root[a] != a:
            root[a] = root[root[a]]
            a = root[a]
        return a

    for a, b in edges:
        if not (0 <= a < m and 0 <= b < m) or a == b:
            raise GraphError(f"tree edge ({a}, {b}) is not between two distinct bags 0..{m - 1}")
        ra, rb = find(a), find(b)
        if ra == rb:
            raise GraphError(f"tree edges contain a cycle (closed by ({a}, {b}))")
        root[ra] = rb
    if edges:
        ia, ib = np.array(edges).T
        shared = (member[ia] & member[ib]).sum(axis=0)
    else:
        shared = np.zeros(n, dtype=np.int64)
    broken = np.flatnonzero(shared != member.sum(axis=0) - 1)
    if len(broken):
        raise GraphError(f"running intersection fails: bags containing vertex {broken[0]} are not connected")
    return int(member.sum(axis=1).max()) - 1


def elimination_fill(G, order: Sequence[int]) -> list[frozenset[int]]:
    """For each step of the elimination ``order``, the set of later neighbours of the eliminated vertex
    in the filled graph (eliminating a vertex makes its remaining neighbours a clique)."""
    M = as_symmetric(G, "G")
    n = M.shape[0]
    order = [int(v) for v in order]
    if sorted(order) != list(range(n)):
        raise GraphError(f"elimination order must be a permutation of 0..{n - 1}")
    nbrs = [set(np.flatnonzero(M[v]).tolist()) for v in range(n)]
    higher = []
    for v in order:
        nb = nbrs[v]
        higher.append(frozenset(nb))
        for u in nb:
            nbrs[u].discard(v)
            nbrs[u].update(nb)
            nbrs[u].discard(u)
        nbrs[v] = set()
    return higher


def elimination_width(G, order: Sequence[int]) -> int:
    """Width of the elimination ``order``: the largest number of later neighbours at elimination time."""
    return max((len(h) for h in elimination_fill(G, order)), default=-1)


def decomposition_from_order(G, order: Sequence[int]) -> TreeDecomposition:
    """Tree decomposition induced by an elimination order (Bodlaender 2006 / Koster et al. 2001):
    one bag ``{v} + later neighbours`` per vertex, a child of the bag of its earliest-eliminated later
    neighbour. Bags are listed in reverse elimination order, so bag 0 (the last vertex) is the root and
    every edge is ``(parent, child)`` with ``parent < child``; roots of further components hang from
    bag 0 (empty intersections are allowed)."""
    order = [int(v) for v in order]
    higher = elimination_fill(G, order)
    n = len(order)
    pos = {v: k for k, v in enumerate(order)}
    bags = tuple(frozenset(higher[k] | {order[k]}) for k in range(n - 1, -1, -1))
    edges = []
    for k, h in enumerate(higher):
        child = n - 1 - k
        if h:
            edges.append((n - 1 - min(pos[u] for u in h), child))
        elif child != 0:
            edges.append((0, child))
    return TreeDecomposition(bags, tuple(sorted(edges)))
