"""A DAG along a node order whose moral graph keeps treewidth ``<= k``: the primal side of the
treewidth-bounded ILPs.

:func:`bounded_dag` walks a topological order and gives each node its best family that keeps a
chordal supergraph of the moral graph within width ``k``; the heuristic plugin
:class:`ilp.treewidth.heur_bounded_sinks.BoundedSinksHeur` runs it on the order that Cussens' sink
finding (:mod:`ilp.sinks`) finds from the LP solution.
"""

from __future__ import annotations

import numpy as np

from graphs.treedec import elimination_fill
from graphs.treewidth import greedy_elimination_order
from ilp.problem import FamilyProblem


def _width_within(G: np.ndarray, k: int) -> np.ndarray | None:
    """Chordal supergraph of ``G`` of width ``<= k`` from a min-fill order, or ``None``."""
    order = greedy_elimination_order(G, "min_fill")
    later = elimination_fill(G, order)
    if max((len(h) for h in later), default=0) > k:
        return None
    H = np.zeros_like(G)
    for v, h in zip(order, later):
        H[v, list(h)] = H[list(h), v] = True
    return H


def bounded_dag(problem: FamilyProblem, order: list[int], k: int):
    """Along ``order``, give each node its best-scoring family whose parents come earlier and
    whose moral edges keep a chordal supergraph ``H`` of width ``<= k``.

    A family whose parents already form a clique of ``H`` joins as a simplicial vertex; otherwise
    ``H`` is recomputed by min-fill on the new moral graph. Returns ``(families by child, H, moral
    graph of the DAG)`` or ``None`` when some node has no such family (impossible if the empty set
    is a candidate).
    """
    n = problem.n_vars
    moral = np.zeros((n, n), dtype=bool)
    H = moral.copy()
    placed = np.zeros(n, dtype=bool)
    chosen = [-1] * n
    for v in order:
        for f in problem.families_of(v).tolist():
            ps = list(problem.parents_of(f))
            if len(ps) > k or not placed[ps].all():
                continue
            trial = moral.copy()
            trial[v, ps] = trial[ps, v] = True
            trial[np.ix_(ps, ps)] = True
            np.fill_diagonal(trial, False)
            if H[np.ix_(ps, ps)].sum() == len(ps) * (len(ps) - 1):
                H[v, ps] = H[ps, v] = True
            else:
                new_H = _width_within(trial, k)
                if new_H is None:
                    continue
                H = new_H
            moral, chosen[v] = trial, f
            break
        if chosen[v] < 0:
            return None
        placed[v] = True
    return chosen, H, moral
