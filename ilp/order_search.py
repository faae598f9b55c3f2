"""Local search over topological orders, to improve the DAGs the primal heuristics find.

For a fixed order of the nodes the best DAG is immediate: every node takes its best-scoring
candidate family whose parents all come earlier (Teyssier & Koller, UAI 2005, ordering-based
search). Starting from a topological order of a given DAG, we repeatedly move one node to the
position that raises the total score the most (an insertion move; moving ``v`` past ``u``
changes only the families open to ``v`` and ``u``) until no move improves. The result is never
worse than the DAG it started from, and acyclic by construction. Compiled with numba over
the columns of :class:`ilp.problem.FamilyProblem` (families of each child sorted by
decreasing score, so the first family that fits is the best).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from graphs.dag import topological_order
from ilp.problem import FamilyProblem

_MIN_GAIN = 1e-9


@njit(cache=True, nogil=True)
def _best(v, pos, limit, extra, banned, child_ptr, parent_ptr, parents):
    """Best family of ``v`` whose parents ``p`` all have ``p != banned`` and either
    ``pos[p] < limit`` or ``p == extra`` (-1 if none)."""
    for f in range(child_ptr[v], child_ptr[v + 1]):
        q = parent_ptr[f]
        while q < parent_ptr[f + 1]:
            p = parents[q]
            if p == banned or (pos[p] >= limit and p != extra):
                break
            q += 1
        if q == parent_ptr[f + 1]:
            return f
    return -1


@njit(cache=True, nogil=True)
def _mark(flags, ptr, idx, v, value):
    for k in range(ptr[v], ptr[v + 1]):
        flags[idx[k]] = value


@njit(cache=True, nogil=True)
def _search(order, score, child_ptr, parent_ptr, parents, arc_parent_ptr, arc_parents, arc_child_ptr, arc_children,
            max_passes):
    """Insertion moves until none improves. Passing ``u`` changes ``u``'s best family only if
    ``v`` is a candidate parent of ``u``, and ``v``'s only if ``u`` is one of ``v``'s, so the
    other positions cost O(1); a move changes the best families inside the moved range only.
    ``arc_*``: candidate parents and children of each node (:attr:`FamilyProblem.candidate_arcs`)."""
    n = order.size
    parent_of_v = np.zeros(n, dtype=np.bool_)
    child_of_v = np.zeros(n, dtype=np.bool_)
    pos = np.empty(n, dtype=np.int64)
    best = np.empty(n, dtype=np.int64)
    for i in range(n):
        pos[order[i]] = i
    for v in range(n):
        best[v] = _best(v, pos, pos[v], -1, -1, child_ptr, parent_ptr, parents)
    for _ in range(max_passes):
        improved = False
        for v0 in range(n):
            v = order[v0]
            i = pos[v]
            _mark(parent_of_v, arc_parent_ptr, arc_parents, v, True)
            _mark(child_of_v, arc_child_ptr, arc_children, v, True)
            gain, move_to, total, fv = 0.0, i, 0.0, best[v]
            for j in range(i - 1, -1, -1):  # v jumps ahead of u = order[j]: u may now use v
                u = order[j]
                if child_of_v[u]:
                    fu = _best(u, pos, pos[u], v, -1, child_ptr, parent_ptr, parents)
                    total += score[fu] - score[best[u]]
                if parent_of_v[u]:
                    fv = _best(v, pos, j, -1, -1, child_ptr, parent_ptr, parents)
                    if fv < 0:
                        break
                if total + score[fv] - score[best[v]] > gain + _MIN_GAIN:
                    gain, move_to = total + score[fv] - score[best[v]], j
            total, fv = 0.0, best[v]
            for j in range(i + 1, n):  # v falls behind u = order[j]: u loses v
                u = order[j]
                if child_of_v[u]:
                    fu = _best(u, pos, pos[u], -1, v, child_ptr, parent_ptr, parents)
                    if fu < 0:
                        break
                    total += score[fu] - score[best[u]]
                if parent_of_v[u]:
                    fv = _best(v, pos, j + 1, -1, -1, child_ptr, parent_ptr, parents)
                if total + score[fv] - score[best[v]] > gain + _MIN_GAIN:
                    gain, move_to = total + score[fv] - score[best[v]], j
            _mark(parent_of_v, arc_parent_ptr, arc_parents, v, False)
            _mark(child_of_v, arc_child_ptr, arc_children, v, False)
            if move_to != i:
                improved = True
                lo, hi = min(i, move_to), max(i, move_to)
                if move_to < i:
                    order[move_to + 1:i + 1] = order[move_to:i].copy()
                else:
                    order[i:move_to] = order[i + 1:move_to + 1].copy()
                order[move_to] = v
                for k in range(lo, hi + 1):
                    pos[order[k]] = k
                for k in range(lo, hi + 1):
                    w = order[k]
                    best[w] = _best(w, pos, pos[w], -1, -1, child_ptr, parent_ptr, parents)
        if not improved:
            break
    return best


def search_orders(problem: FamilyProblem, order, *, max_passes: int = 20) -> tuple[np.ndarray, list[int]]:
    """Insertion moves from ``order`` (at most ``max_passes`` sweeps over the nodes): the final
    order and the best family of each child for it. Every node needs a family fitting ``order``."""
    order = np.array(order, dtype=np.int64)
    best = _search(order, problem.score, problem.child_ptr, problem.parent_ptr, problem.parents,
                   *problem.candidate_arcs, max_passes)
    return order, best.tolist()


def improve_by_order(problem: FamilyProblem, chosen, *, max_passes: int = 20) -> list[int]:
    """Families (one per child) of a DAG scoring at least as much as ``chosen`` (one family per
    child), by :func:`search_orders` from a topological order of ``chosen`` (``ValueError`` if
    ``chosen`` is cyclic)."""
    order = topological_order(problem.dag_of(chosen))
    return search_orders(problem, order, max_passes=max_passes)[1]
