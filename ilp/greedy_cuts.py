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
number of parents of family ``f`` inside the current cluster.
"""

from __future__ import annotations

import numpy as np

from ilp.clusters import LPSupport
from ilp.problem import FamilyProblem

def _peel(sup: LPSupport, nodes: np.ndarray, min_excess: float) -> tuple[int, ...] | None:
    """Best cluster met while peeling ``nodes`` down one node at a time."""
    in_c = np.zeros(sup.n, dtype=bool)
    in_c[nodes] = True
    cnt = sup.P[:, nodes].sum(axis=1)
    best, best_excess = None, min_excess
    while in_c.sum() >= 2:
        member = in_c[sup.ch]
        mass = sup.in_mass(cnt * member)
        excess = mass[in_c].sum() - (in_c.sum() - 1)
        if excess > best_excess:
            best, best_excess = tuple(np.flatnonzero(in_c).tolist()), excess
        # Removing v: excess changes by 1 - mass[v] - (mass of other members' families whose
        # only parent in the cluster is v).
        lost = (sup.w * (member & (cnt == 1))) @ sup.P
        delta = np.where(in_c, 1.0 - mass - lost, -np.inf)
        v = int(np.argmax(delta))
        in_c[v] = False
        cnt -= sup.P[:, v]
    return best


def _grow(sup: LPSupport, seed: int, min_excess: float, max_size: int) -> tuple[int, ...] | None:
    """First violated cluster met while growing from ``seed`` by best excess gain."""
    in_c = np.zeros(sup.n, dtype=bool)
    in_c[seed] = True
    cnt = sup.P[:, seed].copy()
    excess = 0.0
    for _ in range(max_size - 1):
        member = in_c[sup.ch]
        # Adding u: members' families with no parent in C yet but u in W start to count, and
        # u's own families with a parent in C count; the cluster grows by one node.
        gain = (sup.w * (member & (cnt == 0))) @ sup.P + sup.in_mass(cnt) - 1.0
        gain[in_c] = -np.inf
        u = int(np.argmax(gain))
        if gain[u] <= -1.0 + 1e-9:
            return None
        in_c[u] = True
        cnt += sup.P[:, u]
        excess += gain[u]
        if excess > min_excess:
            return tuple(np.flatnonzero(in_c).tolist())
    return None


def greedy_clusters(
    problem: FamilyProblem, xval: np.ndarray, *, min_excess: float = 1e-4, grow: bool = True
) -> list[tuple[int, ...]]:
    """Distinct violated clusters (excess > ``min_excess``) found by peeling and growing."""
    sup = LPSupport(problem, xval)
    if sup.w.size == 0:
        return []
    found: dict[tuple[int, ...], None] = {}
    comps = sup.components()
    for comp in comps:
        cluster = _peel(sup, comp, min_excess)
        if cluster is not None:
            found[cluster] = None
    if grow:
        for comp in comps:
            for seed in comp.tolist():
                cluster = _grow(sup, seed, min_excess, comp.size)
                if cluster is not None:
                    found[cluster] = None
    return list(found)
