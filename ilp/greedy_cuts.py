"""Cheap heuristic separation of cluster cuts from a fractional LP solution.

Exact separation is NP-hard (Cussens, Järvisalo, Korhonen & Bartlett, JAIR 2017), so, as ELSA
(Trösser, de Givry & Katsirelos, IJCAI 2021) does, we first look for violated clusters greedily
and leave the exact sub-IP (:mod:`ilp.subip`) as the fallback. Two greedy searches over the
support of the LP solution ``x*`` (families with ``x* > 0`` and a non-empty parent set):

* *peeling*: start from each strongly connected component of the support digraph and repeatedly
  remove the node whose removal raises the cluster excess the most, keeping the best cluster;
* *growing*: start from each node and repeatedly add the node that raises the excess the most,
  stopping at the first violated cluster.

The excess (see :mod:`ilp.clusters`) is kept up to date incrementally through ``cnt[f]``, the
number of parents of family ``f`` inside the current cluster. The searches are compiled with
numba and walk the support's sparse parent lists (:class:`ilp.clusters.LPSupport`), so a step
costs O(support x palim) instead of a dense product over all ``n`` nodes; a cluster's excess is
summed pairwise as NumPy does (``_pairwise_sum``), the gains in family order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ilp.clusters import LPSupport
from ilp.problem import FamilyProblem


@njit(cache=True, nogil=True)
def _pairwise_sum(a):
    """``a.sum()`` rounded exactly as NumPy does it (pairwise, 8 accumulators, blocks of 128)."""
    n = a.size
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        r = a[:8].copy()
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a[:half]) + _pairwise_sum(a[half:])


@njit(cache=True, nogil=True)
def _in_mass(w, child, cnt, in_c, members_only):
    """Per node: LP mass of its families with a parent in the cluster (``cnt > 0``), only for
    cluster members if ``members_only``; summed in family order."""
    mass = np.zeros(in_c.size)
    for i in range(w.size):
        if cnt[i] > 0 and (in_c[child[i]] or not members_only):
            mass[child[i]] += w[i]
    return mass


@njit(cache=True, nogil=True)
def _parent_mass(w, child, cnt, in_c, count, parent_ptr, parents):
    """Per node ``u``: LP mass of the members' families with ``cnt == count`` and ``u`` as a
    parent (``w`` masked, times ``P``), summed in family order."""
    out = np.zeros(in_c.size)
    for i in range(w.size):
        if in_c[child[i]] and cnt[i] == count:
            for k in range(parent_ptr[i], parent_ptr[i + 1]):
                out[parents[k]] += w[i]
    return out


@njit(cache=True, nogil=True)
def _members(in_c, size):
    """The ``size`` nodes of the cluster ``in_c``, ascending."""
    out = np.empty(size, dtype=np.int64)
    k = 0
    for v in range(in_c.size):
        if in_c[v]:
            out[k] = v
            k += 1
    return out


@njit(cache=True, nogil=True)
def _add(cnt, row_ptr, rows, v, step):
    """``cnt[i] += step`` for the support rows ``i`` with ``v`` as a parent."""
    for k in range(row_ptr[v], row_ptr[v + 1]):
        cnt[rows[k]] += step


@njit(cache=True, nogil=True)
def _peel(w, child, parent_ptr, parents, row_ptr, rows, nodes, min_excess):
    """Best cluster met while peeling ``nodes`` down one node at a time (empty if none has
    excess ``> min_excess``)."""
    n = row_ptr.size - 1
    in_c = np.zeros(n, dtype=np.bool_)
    cnt = np.zeros(w.size, dtype=np.int64)  # parents of each family inside the cluster
    for v in nodes:
        in_c[v] = True
        _add(cnt, row_ptr, rows, v, 1)
    best, best_excess = np.zeros(0, dtype=np.int64), min_excess
    size = nodes.size
    while size >= 2:
        mass = _in_mass(w, child, cnt, in_c, True)
        inside = _members(in_c, size)
        excess = _pairwise_sum(mass[inside]) - (size - 1)
        if excess > best_excess:
            best, best_excess = inside, excess
        # Removing v: excess changes by 1 - mass[v] - (mass of other members' families whose
        # only parent in the cluster is v).
        lost = _parent_mass(w, child, cnt, in_c, 1, parent_ptr, parents)
        v = inside[0]
        for u in inside:
            if 1.0 - mass[u] - lost[u] > 1.0 - mass[v] - lost[v]:
                v = u
        in_c[v] = False
        size -= 1
        _add(cnt, row_ptr, rows, v, -1)
    return best


@njit(cache=True, nogil=True)
def _grow(w, child, parent_ptr, parents, row_ptr, rows, seed, min_excess, max_size):
    """First violated cluster met while growing from ``seed`` by best excess gain (empty if
    none within ``max_size`` nodes)."""
    n = row_ptr.size - 1
    in_c = np.zeros(n, dtype=np.bool_)
    in_c[seed] = True
    cnt = np.zeros(w.size, dtype=np.int64)
    _add(cnt, row_ptr, rows, seed, 1)
    excess = 0.0
    for size in range(2, max_size + 1):
        # Adding u: members' families with no parent in C yet but u in W start to count, and
        # u's own families with a parent in C count; the cluster grows by one node.
        gain = _parent_mass(w, child, cnt, in_c, 0, parent_ptr, parents)
        mass = _in_mass(w, child, cnt, in_c, False)
        u = -1
        for j in range(n):
            if not in_c[j]:
                gain[j] = gain[j] + mass[j] - 1.0
                if u < 0 or gain[j] > gain[u]:
                    u = j
        if u < 0 or gain[u] <= -1.0 + 1e-9:
            break
        in_c[u] = True
        _add(cnt, row_ptr, rows, u, 1)
        excess += gain[u]
        if excess > min_excess:
            return _members(in_c, size)
    return np.zeros(0, dtype=np.int64)


def greedy_clusters(
    problem: FamilyProblem, xval: np.ndarray, *, min_excess: float = 1e-4
) -> list[tuple[int, ...]]:
    """Distinct violated clusters (excess > ``min_excess``) found by peeling and growing."""
    sup = LPSupport(problem, xval)
    if sup.w.size == 0:
        return []
    data = (sup.w, sup.child, sup.parent_ptr, sup.parents, sup.row_ptr, sup.rows)
    comps = sup.components()
    clusters = [_peel(*data, comp, min_excess) for comp in comps]
    clusters += [_grow(*data, seed, min_excess, comp.size) for comp in comps for seed in comp.tolist()]
    found = dict.fromkeys(tuple(c.tolist()) for c in clusters if c.size)
    return list(found)
