"""Directed acyclic graphs as boolean adjacency matrices (``A[i, j]`` iff ``i -> j``)."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Mapping, Sequence

import numpy as np

from graphs._checks import GraphError, as_adjacency

logger = logging.getLogger(__name__)


def _children_lists(A: np.ndarray) -> list[list[int]]:
    rows, cols = np.nonzero(A)
    children: list[list[int]] = [[] for _ in range(A.shape[0])]
    for i, j in zip(rows.tolist(), cols.tolist()):
        children[i].append(j)
    return children


def _kahn(A: np.ndarray) -> list[int]:
    """Kahn (1962) topological sort, smallest available index first; returns a partial order on a cycle."""
    children = _children_lists(A)
    indeg = A.sum(axis=0).astype(np.int64).tolist()
    heap = [v for v, d in enumerate(indeg) if d == 0]
    heapq.heapify(heap)
    order: list[int] = []
    while heap:
        v = heapq.heappop(heap)
        order.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                heapq.heappush(heap, c)
    return order


def topological_order(A) -> list[int]:
    """Topological order of a DAG (Kahn 1962; ties broken by smallest index, so deterministic).

    Raises ``ValueError`` (:class:`GraphError`) naming a directed cycle if ``A`` is not acyclic.
    """
    M = as_adjacency(A)
    order = _kahn(M)
    if len(order) < M.shape[0]:
        raise GraphError(f"graph has a directed cycle: {find_cycle(M)}")
    return order


def is_acyclic(A) -> bool:
    """True iff the directed graph ``A`` has no directed cycle (an undirected edge counts as a 2-cycle)."""
    M = as_adjacency(A)
    return len(_kahn(M)) == M.shape[0]


def find_cycle(A) -> list[int] | None:
    """A directed cycle ``[v0, v1, ..., vk]`` (with ``vk -> v0``) of ``A``, or ``None`` if acyclic.

    Nodes that Kahn's peeling removes cannot lie on a cycle; an iterative depth-first search on the
    rest finds a back edge.
    """
    M = as_adjacency(A)
    n = M.shape[0]
    removed = np.zeros(n, dtype=bool)
    removed[_kahn(M)] = True
    if removed.all():
        return None
    rest = M & ~removed[:, None] & ~removed[None, :]
    children = _children_lists(rest)
    state = [0] * n  # 0 unvisited, 1 on stack, 2 done
    for root in np.flatnonzero(~removed).tolist():
        if state[root]:
            continue
        path = [root]
        iters = [iter(children[root])]
        state[root] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state[nxt] == 1:
                return path[path.index(nxt):]
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(children[nxt]))
    raise AssertionError("Kahn left nodes but no cycle was found")  # unreachable


def adjacency_from_parents(parent_sets, n: int | None = None) -> np.ndarray:
    """DAG adjacency matrix from parent sets: a sequence (``parent_sets[v]``) or a mapping ``{v: parents}``.

    ``n`` defaults to ``len(parent_sets)``. Does not check acyclicity (use :func:`is_acyclic`).
    """
    if isinstance(parent_sets, Mapping):
        items = list(parent_sets.items())
        if n is None:
            n = 1 + max((int(v) for v, _ in items), default=-1)
    elif isinstance(parent_sets, Sequence):
        items = list(enumerate(parent_sets))
        if n is None:
            n = len(items)
        elif len(items) > n:
            raise GraphError(f"{len(items)} parent sets given for n={n} nodes")
    else:
        raise GraphError("parent_sets must be a sequence or a mapping of parent iterables")
    A = np.zeros((n, n), dtype=bool)
    for v, parents in items:
        v = int(v)
        if not 0 <= v < n:
            raise GraphError(f"child index {v} out of range 0..{n - 1}")
        for p in parents:
            p = int(p)
            if not 0 <= p < n:
                raise GraphError(f"parent index {p} of node {v} out of range 0..{n - 1}")
            if p == v:
                raise GraphError(f"node {v} lists itself as a parent")
            A[p, v] = True
    return A


def parents_from_adjacency(A) -> list[tuple[int, ...]]:
    """Sorted parent tuples ``[pa(0), pa(1), ...]`` of the directed graph ``A``."""
    M = as_adjacency(A)
    return [tuple(np.flatnonzero(M[:, v]).tolist()) for v in range(M.shape[0])]
