"""Density inequalities of bounded treewidth, separated by greedy peeling.

A graph of treewidth ``<= k`` is a subgraph of a k-tree, which has ``k |S| - k (k + 1) / 2``
edges on any ``|S| > k`` vertices; so ``sum_{a<b in S} w[a, b] <= k |S| - k (k + 1) / 2`` for the
edge indicators ``w`` of any such graph and every vertex set ``S`` with ``|S| > k``. Used on the
chordal supergraph of :mod:`ilp.treewidth.elimination` and on the moral-edge variables of
:mod:`ilp.treewidth.obstruction`.
"""

from __future__ import annotations

import numpy as np


def density_rhs(k: int, size: int) -> int:
    """Most edges a graph of treewidth ``<= k`` has on ``size > k`` vertices."""
    return k * size - k * (k + 1) // 2


def dense_sets(w: np.ndarray, k: int, min_excess: float = 1e-4) -> list[list[int]]:
    """Vertex sets ``S`` (``|S| > k``) violating the density inequality of treewidth ``<= k``,
    ``sum_{a<b in S} w[a, b] <= k |S| - k (k + 1) / 2`` (a graph of treewidth ``<= k`` has at most
    as many edges as a k-tree; every subgraph too), found by greedy peeling (Charikar 2000):
    from the whole graph and from each vertex's closed neighbourhood in the support of the
    symmetric weights ``w``, drop the vertex of least weighted degree, keeping the most violated
    set seen. Returns the distinct violated sets, most violated first."""
    n = w.shape[0]
    starts = [np.ones(n, dtype=bool)] + [(w[v] > 0) | (np.arange(n) == v) for v in range(n)]
    found: dict[tuple[int, ...], float] = {}
    for alive in starts:
        alive = alive.copy()
        size = int(alive.sum())
        deg = w[:, alive].sum(axis=1)
        total = deg[alive].sum() / 2
        best, best_set = min_excess, None
        while size > k:
            excess = total - density_rhs(k, size)
            if excess > best:
                best, best_set = excess, tuple(np.flatnonzero(alive).tolist())
            v = int(np.flatnonzero(alive)[np.argmin(deg[alive])])
            alive[v] = False
            size -= 1
            total -= deg[v]
            deg -= w[:, v]
        if best_set is not None:
            found[best_set] = best
    return [list(S) for S in sorted(found, key=lambda S: -found[S])]
