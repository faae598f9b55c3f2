"""Cluster constraints (Jaakkola et al. 2010; Cussens 2011) over family variables.

For a cluster ``C`` (``|C| >= 2``) of an acyclic graph some member has no parent in ``C``:
``sum_{v in C} sum_{W: W ∩ C = ∅} I(W -> v) >= 1``, equivalently (by convexity)
``sum_{v in C} sum_{W: W ∩ C ≠ ∅} I(W -> v) <= |C| - 1``. The *excess* of ``C`` at a point
``x`` is ``sum_{v in C, W ∩ C ≠ ∅} x(W -> v) - (|C| - 1)``; the cut is violated iff it is > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ilp.problem import FamilyProblem
from scores.table import segment_indices

SUPPORT_EPS = 1e-6


class LPSupport:
    """Support of an LP solution: the families with ``x* > 0`` and a parent, as rows ``i``.

    In the table's vocabulary: row ``i`` (family ``keep[i]`` of the problem) has weight ``w[i]``,
    child ``child[i]`` and parents ``parents[parent_ptr[i]:parent_ptr[i + 1]]`` (ascending), also
    as the dense indicator ``P`` (float, rows x ``n_vars``); the other way round, the rows with
    parent ``u`` are ``rows[row_ptr[u]:row_ptr[u + 1]]`` (ascending).
    """

    def __init__(self, problem: FamilyProblem, xval: np.ndarray):
        keep = np.flatnonzero((xval > SUPPORT_EPS) & (problem.sizes > 0))
        self.n_vars = problem.n_vars
        self.w = xval[keep]
        self.child = problem.child[keep]
        self.P = problem.parent_matrix(keep).astype(np.float64)
        rows, self.parents = np.nonzero(self.P)  # row-major: by row, parents ascending
        self.parent_ptr = np.searchsorted(rows, np.arange(keep.size + 1))
        by_parent = np.argsort(self.parents, kind="stable")
        self.rows = rows[by_parent]
        self.row_ptr = np.searchsorted(self.parents[by_parent], np.arange(self.n_vars + 1))

    def components(self) -> list[np.ndarray]:
        """Strongly connected components (size >= 2) of the digraph of support arcs.

        A most violated cluster lies inside one component: if no support arc enters ``A`` from
        ``B = C \\ A``, then ``excess(C) <= excess(A)`` (members of ``B`` add at most 1 each to
        the intersecting mass and 1 each to ``|C| - 1``).
        """
        rows, cols = np.nonzero(self.P)
        graph = coo_matrix((np.ones(rows.size), (cols, self.child[rows])), shape=(self.n_vars, self.n_vars))
        k, labels = connected_components(graph, directed=True, connection="strong")
        comps = [np.flatnonzero(labels == c) for c in range(k)]
        return [c for c in comps if c.size >= 2]


def member_families(problem: FamilyProblem, cluster) -> tuple[np.ndarray, np.ndarray]:
    """The families of the members of ``cluster`` (ascending) and, for each, how many of its
    parents are in ``cluster``; only the members' families are visited, so a cut on a large
    table costs what its members hold."""
    members = np.unique(np.asarray(list(cluster), dtype=np.int64))
    starts = problem.child_ptr[members]
    fams = segment_indices(starts, problem.child_ptr[members + 1] - starts)
    return fams, problem.parents_in(members, fams)


def intersecting_families(problem: FamilyProblem, cluster) -> np.ndarray:
    """Indices of families of members of ``cluster`` with at least one parent in ``cluster``."""
    fams, inside = member_families(problem, cluster)
    return fams[inside > 0]


def cluster_excess(problem: FamilyProblem, xval: np.ndarray, cluster) -> float:
    """Excess of the cluster constraint of ``cluster`` at ``xval`` (> 0 iff violated)."""
    return float(xval[intersecting_families(problem, cluster)].sum()) - (len(cluster) - 1)


@dataclass(frozen=True)
class CutRow:
    """A cluster cut as an LP row: ``lhs <= sum family_coefs * I(families) + sum_{(u, v) in
    arcs} I(u -> v) <= rhs`` (``None``: no bound on that side)."""

    families: np.ndarray
    family_coefs: np.ndarray
    arcs: list[tuple[int, int]]
    lhs: float | None
    rhs: float | None


def arc_form_children(problem: FamilyProblem, arc_min_saving: int) -> np.ndarray:
    """The nodes whose share of some cut of :func:`cut_row` can take the arc form: a member's arc
    form saves at most ``min(n_in, n_out)`` nonzeros, at most half its families, so it needs
    ``2 * arc_min_saving`` of them. Only their incoming arcs need arc variables."""
    return np.diff(problem.child_ptr) >= 2 * arc_min_saving


def cut_row(problem: FamilyProblem, cluster, *, arc_min_saving: int | None = None) -> CutRow:
    """The cluster cut of ``cluster`` as a short LP row.

    Member ``v``'s share ``sum_{W ∩ C ≠ ∅} I(W -> v)`` equals ``1 - sum_{W ∩ C = ∅} I(W -> v)``
    given the convexity row of ``v`` and, given the arc rows ``I(u -> v) = sum_{W ∋ u}
    I(W -> v)``, ``sum_{u in C} I(u -> v) - sum_W (|W ∩ C| - 1)^+ I(W -> v)``, a few arcs and
    the families with two or more parents in ``C``. Every form gives the same LP cut. A member
    whose arc form is at least ``arc_min_saving`` nonzeros shorter than the other two takes it
    (``None``: never; the model needs arc variables); the rest of the row takes the shorter of
    the first two forms over all its members, as GOBNILP does. A member with tens of thousands
    of families (pathfinder's 63-state node) otherwise puts thousands of nonzeros into almost
    every cut, which every dual simplex iteration reads (docs/benchmarks.md).
    """
    members = np.unique(np.asarray(list(cluster), dtype=np.int64))
    fams, inside = member_families(problem, members)
    member = np.searchsorted(members, problem.child[fams])

    def count(mask):  # families per member
        return np.bincount(member[mask], minlength=members.size)

    n_in, n_out = count(inside > 0), count(inside == 0)
    by_arcs = np.zeros(members.size, dtype=bool)
    # a member's arc form saves at most min(n_in, n_out) nonzeros (see arc_form_children), so
    # only a member holding at least ``arc_min_saving`` families in both forms can take it
    if arc_min_saving is not None and np.minimum(n_in, n_out).max() >= arc_min_saving:
        cand_ptr, cand_parents = problem.candidate_arcs[:2]  # each node's candidate parents
        in_cluster = np.zeros(problem.n_vars, dtype=bool)
        in_cluster[members] = True
        sizes = cand_ptr[members + 1] - cand_ptr[members]
        arc_parents = cand_parents[segment_indices(cand_ptr[members], sizes)]
        arc_member = np.repeat(np.arange(members.size), sizes)
        hit = in_cluster[arc_parents]
        n_arcs = np.bincount(arc_member[hit], minlength=members.size) + count(inside > 1)
        by_arcs = np.minimum(n_in, n_out) - n_arcs >= arc_min_saving
    complement = n_out[~by_arcs].sum() < n_in[~by_arcs].sum()
    share = ((inside == 0) if complement else (inside > 0)).astype(np.float64)
    if not by_arcs.any():  # GOBNILP's row: the intersecting families <= |C| - 1, or the others >= 1
        keep = share > 0
        return CutRow(fams[keep], share[keep], [], 1.0 if complement else None,
                      None if complement else float(members.size - 1))
    coefs = np.where(by_arcs[member], np.minimum(1 - inside, 0), -share if complement else share)
    keep = coefs != 0
    take = hit & by_arcs[arc_member]
    arcs = list(zip(arc_parents[take].tolist(), members[arc_member[take]].tolist()))
    rhs = members.size - 1 - (np.count_nonzero(~by_arcs) if complement else 0)
    return CutRow(fams[keep], coefs[keep], arcs, None, float(rhs))
