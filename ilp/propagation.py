"""Domain propagation for acyclicity (the propagation of GOBNILP's ``dagcluster`` handler).

At a node, an arc ``u -> v`` is *implied* when every family of ``v`` that is still allowed
(local upper bound 1) contains ``u`` (in particular when a family of ``v`` is fixed to 1). If
the implied arcs reach ``w`` from ``v``, any family ``W -> v`` with ``w in W`` would close a
directed cycle, so it can be fixed to 0; implied arcs that already form a cycle make the node
infeasible. Reachability is searched depth first from each node over the (sparse) implied arcs,
in numba-compiled kernels over the columns of :class:`ilp.problem.FamilyProblem`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ilp.problem import FamilyProblem


@njit(cache=True, nogil=True)
def _implied_arcs(n, parent_ptr, parents, child_ptr, allowed):
    """Implied arcs as CSR out-lists ``(ptr, succ)``: ``u -> v`` iff ``u`` is a parent in every
    allowed family of ``v`` (none for a child without allowed families)."""
    count = np.zeros(n, dtype=np.int64)
    tails = np.empty(parents.size, dtype=np.int64)
    heads = np.empty(parents.size, dtype=np.int64)
    m = 0
    for v in range(n):
        n_allowed, first = 0, -1
        for f in range(child_ptr[v], child_ptr[v + 1]):
            if allowed[f]:
                if first < 0:
                    first = f
                n_allowed += 1
                for q in range(parent_ptr[f], parent_ptr[f + 1]):
                    count[parents[q]] += 1
        if first < 0:
            continue
        for q in range(parent_ptr[first], parent_ptr[first + 1]):  # an implied parent is in every family
            if count[parents[q]] == n_allowed:
                tails[m], heads[m] = parents[q], v
                m += 1
        for f in range(child_ptr[v], child_ptr[v + 1]):
            if allowed[f]:
                for q in range(parent_ptr[f], parent_ptr[f + 1]):
                    count[parents[q]] = 0
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        ptr[tails[e] + 1] += 1
    for u in range(n):
        ptr[u + 1] += ptr[u]
    succ = np.empty(m, dtype=np.int64)
    fill = ptr[:-1].copy()
    for e in range(m):
        succ[fill[tails[e]]] = heads[e]
        fill[tails[e]] += 1
    return ptr, succ


@njit(cache=True, nogil=True)
def _closing_families(n, parent_ptr, parents, child_ptr, allowed):
    """``(closes, cyclic)``: allowed families ``W -> v`` with some ``w in W`` reachable from ``v``
    by implied arcs, and whether the implied arcs contain a directed cycle (then no family is
    returned)."""
    ptr, succ = _implied_arcs(n, parent_ptr, parents, child_ptr, allowed)
    closes = np.zeros(allowed.size, dtype=np.bool_)
    seen = np.full(n, -1, dtype=np.int64)  # seen[u] == v: u reachable from v (path length >= 1)
    stack = np.empty(n + 1, dtype=np.int64)  # v itself, then each node at most once
    for v in range(n):
        if ptr[v] == ptr[v + 1]:
            continue
        stack[0], top = v, 1  # v is not marked: it is seen only if a path returns to it
        while top > 0:
            top -= 1
            u = stack[top]
            for e in range(ptr[u], ptr[u + 1]):
                t = succ[e]
                if seen[t] != v:
                    seen[t] = v
                    stack[top] = t
                    top += 1
        if seen[v] == v:
            return np.zeros(allowed.size, dtype=np.bool_), True
        for f in range(child_ptr[v], child_ptr[v + 1]):
            if allowed[f]:
                for q in range(parent_ptr[f], parent_ptr[f + 1]):
                    if seen[parents[q]] == v:
                        closes[f] = True
                        break
    return closes, False


def cycle_closing_families(problem: FamilyProblem, allowed: np.ndarray) -> tuple[np.ndarray, bool]:
    """Allowed families that would close a cycle with the implied arcs, and whether those
    implied arcs are already cyclic. ``allowed`` is a boolean mask over families."""
    return _closing_families(problem.n_vars, problem.parent_ptr, problem.parents, problem.child_ptr,
                             np.ascontiguousarray(allowed, dtype=np.bool_))
