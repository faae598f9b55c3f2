"""Cussens' sink finding: a DAG from (LP) family weights, and with none a greedy warm start.

Sink finding (Bartlett & Cussens, AIJ 2017, section 7; GOBNILP's ``heur_sinks.c``): build a DAG
from the last node of a topological order backwards. While nodes remain, every remaining node's
*preferred* family is its first family (by decreasing LP value ``x*``, ties by decreasing local
score) whose parents are all still remaining; the next sink is the node whose preferred family has
the largest ``x*``, ties broken by the least score lost by the other remaining nodes, which may no
longer use the sink as a parent. Finally every node takes its best-scoring family consistent with
the order found. With no LP values (all weights 0) the same procedure is a greedy, score-only
warm start. The search is compiled with numba over the columns of
:class:`ilp.problem.FamilyProblem`; the heuristic plugin :class:`ilp.heur_sinks.SinksHeur` runs it
on LP solutions inside SCIP.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ilp.problem import FamilyProblem


@njit(cache=True, nogil=True)
def _first_fit(ranked, end, start, parent_ptr, parents, remaining, banned):
    """First position ``>= start`` in ``ranked[:end]`` of a family whose parents all remain and
    differ from ``banned`` (``-1``: none banned); ``end`` if there is none."""
    i = start
    while i < end:
        f = ranked[i]
        q = parent_ptr[f]
        while q < parent_ptr[f + 1] and remaining[parents[q]] and parents[q] != banned:
            q += 1
        if q == parent_ptr[f + 1]:
            return i
        i += 1
    return end


@njit(cache=True, nogil=True)
def _sinks(n, score, parent_ptr, parents, child_ptr, ranked, w_round):
    """``(ok, family per child)`` of sink finding with (rounded) family weights ``w_round``;
    ``ranked`` holds each child's families (positions ``child_ptr[v]:child_ptr[v + 1]``) by
    decreasing weight."""
    remaining = np.ones(n, dtype=np.bool_)
    ptr = child_ptr[:-1].copy()  # position of each node's preferred family in ranked
    damage = np.zeros(n)
    removed_at = np.zeros(n, dtype=np.int64)
    for step in range(n):
        for v in range(n):
            if remaining[v]:
                ptr[v] = _first_fit(ranked, child_ptr[v + 1], ptr[v], parent_ptr, parents, remaining, -1)
                if ptr[v] == child_ptr[v + 1]:
                    return False, ptr
                damage[v] = 0.0
        for u in range(n):
            if remaining[u]:
                f = ranked[ptr[u]]
                for q in range(parent_ptr[f], parent_ptr[f + 1]):
                    p = parents[q]
                    j = _first_fit(ranked, child_ptr[u + 1], ptr[u] + 1, parent_ptr, parents, remaining, p)
                    damage[p] += score[f] - score[ranked[j]] if j < child_ptr[u + 1] else np.inf
        sink = -1
        for v in range(n):  # max of (w_round[preferred family], -damage), ties to the lowest node
            if remaining[v]:
                if sink < 0:
                    sink = v
                    continue
                wv, ws = w_round[ranked[ptr[v]]], w_round[ranked[ptr[sink]]]
                if wv > ws or (wv == ws and damage[v] < damage[sink]):
                    sink = v
        remaining[sink] = False
        removed_at[sink] = step
    chosen = np.empty(n, dtype=np.int64)
    for v in range(n):  # best family whose parents became sinks after v (earlier in the order)
        for f in range(child_ptr[v], child_ptr[v + 1]):
            q = parent_ptr[f]
            while q < parent_ptr[f + 1] and removed_at[parents[q]] > removed_at[v]:
                q += 1
            if q == parent_ptr[f + 1]:
                chosen[v] = f
                break
    return True, chosen


def sinks_dag(problem: FamilyProblem, weights: np.ndarray | None = None) -> list[int] | None:
    """Families (one per child, indexed by child) of a DAG built by sink finding, or ``None``.

    ``None`` is returned only when the greedy choice leaves some node with no candidate parent
    set (possible for restricted candidate lists). Weights are compared rounded to 9 decimals.
    """
    w = np.zeros(problem.n_candidates) if weights is None else np.asarray(weights, dtype=float)
    w_round = np.round(w, 9)
    # Stable: equal weights keep the problem's order (decreasing score).
    ranked = np.lexsort((-w_round, problem.child))
    ok, chosen = _sinks(problem.n_vars, problem.score, problem.parent_ptr, problem.parents, problem.child_ptr, ranked,
                        w_round)
    return chosen.tolist() if ok else None
