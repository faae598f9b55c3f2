"""Domain propagation for acyclicity (the propagation of GOBNILP's ``dagcluster`` handler).

At a node, an arc ``u -> v`` is *implied* when every family of ``v`` that is still allowed
(local upper bound 1) contains ``u`` (in particular when a family of ``v`` is fixed to 1). If
the implied arcs reach ``w`` from ``v``, any family ``W -> v`` with ``w in W`` would close a
directed cycle, so it can be fixed to 0; implied arcs that already form a cycle make the node
infeasible. Reachability is the transitive closure of the implied-arc matrix (Warshall 1962).
"""

from __future__ import annotations

import numpy as np

from ilp.problem import FamilyProblem


def implied_arcs(problem: FamilyProblem, allowed: np.ndarray) -> np.ndarray:
    """``A[u, v]`` True iff ``u`` is a parent in every allowed family of ``v``.

    ``allowed`` is a boolean mask over families; a child with no allowed family has no implied
    arcs (the convexity row makes that node infeasible anyway).
    """
    n = problem.n
    child = problem.child[allowed]
    counts = np.bincount(child, minlength=n)
    # per_parent[v, u]: allowed families of v containing u (one flat bincount beats np.add.at).
    cells = (child[:, None] * n + np.arange(n)).ravel()
    per_parent = np.bincount(cells, weights=problem.pmask[allowed].ravel(), minlength=n * n).reshape(n, n)
    return ((per_parent == counts[:, None]) & (counts[:, None] > 0)).T


def transitive_closure(adj: np.ndarray) -> np.ndarray:
    """Reachability by paths of length >= 1 (Warshall's algorithm, vectorised per pivot)."""
    reach = adj.copy()
    for k in range(reach.shape[0]):
        reach |= reach[:, k:k + 1] & reach[k:k + 1, :]
    return reach


def cycle_closing_families(problem: FamilyProblem, allowed: np.ndarray) -> tuple[np.ndarray, bool]:
    """Allowed families that would close a cycle with the implied arcs, and whether those
    implied arcs are already cyclic."""
    reach = transitive_closure(implied_arcs(problem, allowed))
    if reach.diagonal().any():
        return np.zeros(problem.n_families, dtype=bool), True
    closes = (problem.pmask & reach[problem.child, :]).any(axis=1)
    return allowed & closes, False
