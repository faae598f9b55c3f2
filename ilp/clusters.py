"""Cluster constraints (Jaakkola et al. 2010; Cussens 2011) over family variables.

For a cluster ``C`` (``|C| >= 2``) of an acyclic graph some member has no parent in ``C``:
``sum_{v in C} sum_{W: W ∩ C = ∅} I(W -> v) >= 1``, equivalently (by convexity)
``sum_{v in C} sum_{W: W ∩ C ≠ ∅} I(W -> v) <= |C| - 1``. The *excess* of ``C`` at a point
``x`` is ``sum_{v in C, W ∩ C ≠ ∅} x(W -> v) - (|C| - 1)``; the cut is violated iff it is > 0.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ilp.problem import FamilyProblem
from scores.table import segment_indices

SUPPORT_EPS = 1e-6


class LPSupport:
    """Support of an LP solution (families with ``x* > 0`` and parents).

    Weights ``w``, children ``ch``, the parent indicator ``P`` (float, families x n) and the
    same in sparse form: the parents of family ``i`` are ``par_idx[par_ptr[i]:par_ptr[i + 1]]``
    (CSR), the families with parent ``u`` are ``fam_idx[fam_ptr[u]:fam_ptr[u + 1]]`` (CSC),
    ascending.
    """

    def __init__(self, problem: FamilyProblem, xval: np.ndarray):
        keep = np.flatnonzero((xval > SUPPORT_EPS) & (np.diff(problem.par_ptr) > 0))
        self.n = problem.n
        self.w = xval[keep]
        self.ch = problem.child[keep]
        self.P = problem.parent_matrix(keep).astype(np.float64)
        fams, self.par_idx = np.nonzero(self.P)  # row-major: by family, parents ascending
        self.par_ptr = np.searchsorted(fams, np.arange(keep.size + 1))
        by_parent = np.argsort(self.par_idx, kind="stable")
        self.fam_idx = fams[by_parent]
        self.fam_ptr = np.searchsorted(self.par_idx[by_parent], np.arange(self.n + 1))

    def components(self) -> list[np.ndarray]:
        """Strongly connected components (size >= 2) of the digraph of support arcs.

        A most violated cluster lies inside one component: if no support arc enters ``A`` from
        ``B = C \\ A``, then ``excess(C) <= excess(A)`` (members of ``B`` add at most 1 each to
        the intersecting mass and 1 each to ``|C| - 1``).
        """
        rows, cols = np.nonzero(self.P)
        graph = coo_matrix((np.ones(rows.size), (cols, self.ch[rows])), shape=(self.n, self.n))
        k, labels = connected_components(graph, directed=True, connection="strong")
        comps = [np.flatnonzero(labels == c) for c in range(k)]
        return [c for c in comps if c.size >= 2]


def member_families(problem: FamilyProblem, cluster) -> tuple[np.ndarray, np.ndarray]:
    """The families of the members of ``cluster`` (ascending) and, for each, whether it has a
    parent in ``cluster``; only the members' families are visited, so a cut on a large table
    costs what its members hold."""
    members = np.unique(np.asarray(list(cluster), dtype=np.int64))
    starts = problem.fam_ptr[members]
    fams = segment_indices(starts, problem.fam_ptr[members + 1] - starts)
    return fams, problem.has_parent_in(members, fams)


def intersecting_families(problem: FamilyProblem, cluster) -> np.ndarray:
    """Indices of families of members of ``cluster`` with at least one parent in ``cluster``."""
    fams, intersecting = member_families(problem, cluster)
    return fams[intersecting]


def cluster_excess(problem: FamilyProblem, xval: np.ndarray, cluster) -> float:
    """Excess of the cluster constraint of ``cluster`` at ``xval`` (> 0 iff violated)."""
    return float(xval[intersecting_families(problem, cluster)].sum()) - (len(cluster) - 1)


def cut_row(problem: FamilyProblem, cluster) -> tuple[np.ndarray, float | None, float | None]:
    """The shorter of the two equivalent forms of the cut: ``(families, lhs, rhs)``.

    Either ``sum_{intersecting} x <= |C| - 1`` or ``sum_{non-intersecting} x >= 1``; the row
    with fewer nonzeros is returned (as GOBNILP does), with ``None`` for an infinite side.
    """
    cl = list(cluster)
    fams, intersecting = member_families(problem, cl)
    inside, outside = fams[intersecting], fams[~intersecting]
    if inside.size <= outside.size:
        return inside, None, float(len(cl) - 1)
    return outside, 1.0, None
