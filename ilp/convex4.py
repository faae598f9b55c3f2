"""Separation of 4-node convex-hull cuts (GOBNILP's "convex4b" class).

The cluster constraints do not describe the family-variable polytope; for four nodes its facets
are known (Cussens, Järvisalo, Korhonen & Bartlett, JAIR 2017), and GOBNILP separates one class of
them by default. For distinct nodes ``a, b, c, d``, with ``{a, d}`` and ``{b, c}`` the two
symmetric role pairs, every DAG satisfies

    sum I(W -> a) [d ∈ W, W ∩ {b, c} ≠ ∅] + sum I(W -> d) [a ∈ W, W ∩ {b, c} ≠ ∅]
  + sum I(W -> b) [c ∈ W or {a, d} ⊆ W]   + sum I(W -> c) [b ∈ W or {a, d} ⊆ W]   <= 2,

(no DAG on four nodes has three of the four families; ``tests/test_ilp_convex4.py`` checks
all 543). On alarm (N=5000, BDeu) the LP after cluster separation violates 26 of these by up
to 0.5; adding them lifts the root bound from -53115.8 to -53296.4 (optimum -53531.96).

Search: a violated inequality needs three positive terms, so ``a``'s term is positive (roles
renamed if needed), i.e. ``d`` is a parent of ``a`` in the LP support; one of ``b, c`` is then a
support parent of ``a`` or ``d``, and the other is linked to it by a support arc or has a
support family holding both ``a`` and ``d``. The scan over these candidates is compiled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ilp.clusters import LPSupport
from ilp.problem import FamilyProblem
from scores.table import offsets

A, B, C, D = 0, 1, 2, 3  # roles


@njit(cache=True, nogil=True)
def _term_holds(P, i, role, a, b, c, d) -> bool:
    """Does family ``i`` (a row of the parent indicator ``P``) count in its child's term?"""
    if role == A:
        return P[i, d] != 0 and (P[i, b] != 0 or P[i, c] != 0)
    if role == D:
        return P[i, a] != 0 and (P[i, b] != 0 or P[i, c] != 0)
    if role == B:
        return P[i, c] != 0 or (P[i, a] != 0 and P[i, d] != 0)
    return P[i, b] != 0 or (P[i, a] != 0 and P[i, d] != 0)


@njit(cache=True, nogil=True)
def _term_families(P, ptr, order, a, b, c, d):
    """Rows of ``P`` on the left-hand side of the inequality of ``(a, b, c, d)``; the rows of
    child ``v`` are ``order[ptr[v]:ptr[v + 1]]``."""
    quad = (a, b, c, d)
    out = []
    for role in range(4):
        v = quad[role]
        for k in range(ptr[v], ptr[v + 1]):
            if _term_holds(P, order[k], role, a, b, c, d):
                out.append(order[k])
    return out


@njit(cache=True, nogil=True)
def _lhs(w, P, ptr, order, a, b, c, d) -> float:
    total = 0.0
    for i in _term_families(P, ptr, order, a, b, c, d):
        total += w[i]
    return total


@njit(cache=True, nogil=True)
def _violated(w, ch, P, min_excess):
    """``(lhs, a, b, c, d)`` for the violated inequalities met by the candidate scan."""
    n = P.shape[1]
    order = np.argsort(ch, kind="mergesort")
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(ch.size):
        ptr[ch[i] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    arc = np.zeros((n, n))  # arc[u, v]: support mass of v's families with parent u
    for i in range(w.size):
        for u in range(n):
            if P[i, u] != 0.0:
                arc[u, ch[i]] += w[i]
    out = []
    for a in range(n):
        for d in range(n):
            if d == a or arc[d, a] <= 0.0 or (arc[a, d] > 0.0 and d < a):
                continue  # a's term needs d in W; {a, d} is unordered when both terms can count
            both_ad = np.zeros(n, dtype=np.bool_)  # nodes with a support family holding a and d
            for i in range(w.size):
                if P[i, a] != 0.0 and P[i, d] != 0.0:
                    both_ad[ch[i]] = True
            near = np.zeros(n, dtype=np.bool_)  # support parents of a or d
            for u in range(n):
                near[u] = u != a and u != d and (arc[u, a] > 0.0 or arc[u, d] > 0.0)
            for b in range(n):
                if not near[b]:
                    continue
                for c in range(n):
                    if c == a or c == d or c == b or (near[c] and c < b):
                        continue
                    if not (arc[b, c] > 0.0 or arc[c, b] > 0.0 or both_ad[b] or both_ad[c]):
                        continue
                    lhs = _lhs(w, P, ptr, order, a, b, c, d)
                    if lhs > 2.0 + min_excess:
                        out.append((lhs, a, b, c, d))
    return out


def violated_convex4(problem: FamilyProblem, xval: np.ndarray, *, min_excess: float = 1e-4,
                     max_cuts: int = 50) -> list[tuple[int, int, int, int]]:
    """Up to ``max_cuts`` most violated inequalities at ``xval``, as role tuples ``(a, b, c, d)``."""
    sup = LPSupport(problem, xval)
    if sup.w.size == 0:
        return []
    nodes = np.flatnonzero(sup.P.any(axis=0) | np.isin(np.arange(problem.n_vars), sup.child))
    local = np.searchsorted(nodes, sup.child)  # the scan runs on the support's nodes only
    P = np.ascontiguousarray(sup.P[:, nodes])  # C-ordered float64, as in convex4_row: one compiled version
    found = sorted(_violated(sup.w, local, P, min_excess), key=lambda t: -t[0])
    return [tuple(int(nodes[v]) for v in t[1:]) for t in found[:max_cuts]]


def convex4_row(problem: FamilyProblem, quad) -> np.ndarray:
    """Families on the left-hand side of the inequality of ``quad = (a, b, c, d)`` (rhs 2)."""
    fams = np.concatenate([problem.families_of(v) for v in sorted(quad)])  # grouped by child
    ptr = offsets(np.bincount(problem.child[fams], minlength=problem.n_vars))
    P = problem.parent_matrix(fams).astype(np.float64)  # the scan's type (violated_convex4)
    rows = _term_families(P, ptr, np.arange(fams.size), *quad)
    return fams[np.array(rows, dtype=np.int64)]
