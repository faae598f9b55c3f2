"""Validated family problem: the score table after parent limit and required/forbidden arcs.

The ILP (Cussens 2011; Bartlett & Cussens 2017; Su 2023 section 5.6) has one binary variable
``I(W -> v)`` per candidate family. This module filters the rows of a
:class:`scores.table.ScoreTable` with numpy by the user options into a :class:`FamilyProblem`,
the same table (same columns, same order: by child, then by decreasing score) over the families
that survive them, and rejects bad input with :class:`ILPInputError` before any solver is started.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import cached_property

import numpy as np

from graphs.dag import find_cycle
from hybridbn.checks import check_parent_limit
from hybridbn.errors import HybridBNError
from scores.table import ParentSet, ScoreTable, ScoreTableError, segment_indices

logger = logging.getLogger(__name__)


class ILPInputError(HybridBNError, ValueError):
    """Input that the ILP cannot solve: malformed table, bad options, contradictory arcs."""


class ILPInfeasibleError(ILPInputError):
    """No acyclic choice of the remaining candidate parent sets exists."""


class FamilyProblem(ScoreTable):
    """The rows of a score table that survive the options: the ILP's families ``f = 0..F-1``.

    A :class:`scores.table.ScoreTable`, so the same columns in the same order: family ``f`` is
    ``parents[parent_ptr[f]:parent_ptr[f + 1]] -> child[f]`` (parents ascending) with local score
    ``score[f]``, the families of child ``v`` are ``child_ptr[v] .. child_ptr[v + 1] - 1`` by
    decreasing score (ties in table order), so the first that fits a constraint is the best, and
    ``member_row`` is the family of each entry of ``parents``. ``child`` and ``parents`` are int64
    and ``names`` always set; the compiled plugin kernels take the columns as they are (numba takes
    neither lists of tuples nor Python-int bit sets). What it adds is what the ILP derives from the
    families: candidate arcs, moral links, parent indicators and DAGs of a choice of families.
    """

    def families_of(self, v: int) -> np.ndarray:
        """Indices of the families of child ``v`` (decreasing score)."""
        return np.arange(self.child_ptr[v], self.child_ptr[v + 1])

    def parents_of(self, f: int) -> ParentSet:
        """Parent set of family ``f`` (a sorted tuple)."""
        return tuple(self.parents[self.parent_ptr[f]:self.parent_ptr[f + 1]].tolist())

    @cached_property
    def candidate_arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The distinct arcs ``u -> v`` of the families, per node, as ``(arc_parent_ptr, arc_parents,
        arc_child_ptr, arc_children)``: the candidate parents of ``v`` are
        ``arc_parents[arc_parent_ptr[v]:arc_parent_ptr[v + 1]]`` and the candidate children of ``u``
        ``arc_children[arc_child_ptr[u]:arc_child_ptr[u + 1]]``, ascending."""
        heads, n = self.child[self.member_row], self.n_vars
        by_child = np.unique(heads * n + self.parents)
        by_parent = np.unique(self.parents * n + heads)
        bounds = np.arange(n + 1) * n
        return (np.searchsorted(by_child, bounds), by_child % n,
                np.searchsorted(by_parent, bounds), by_parent % n)

    @property
    def n_candidate_arcs(self) -> int:
        """How many distinct arcs ``u -> v`` the families hold."""
        return int(self.candidate_arcs[1].size)

    def has_parent_in(self, nodes, families: np.ndarray | None = None) -> np.ndarray:
        """Whether each family (of ``families``, default all, in that order) has at least one
        parent in ``nodes``; only those families' parents are read."""
        return self.parents_in(nodes, families) > 0

    def parents_in(self, nodes, families: np.ndarray | None = None) -> np.ndarray:
        """How many parents in ``nodes`` each family (of ``families``, default all, in that
        order) has; only those families' parents are read."""
        inside = np.zeros(self.n_vars, dtype=bool)
        inside[list(nodes)] = True
        if families is None:
            return np.bincount(self.member_row[inside[self.parents]], minlength=self.n_candidates)
        first = self.parent_ptr[families]
        sizes = self.parent_ptr[families + 1] - first
        hit = inside[self.parents[segment_indices(first, sizes)]]
        return np.bincount(np.repeat(np.arange(families.size), sizes)[hit], minlength=families.size)

    def parent_matrix(self, families: np.ndarray) -> np.ndarray:
        """Dense parent indicator of ``families``: ``out[i, u]`` iff ``u`` is a parent in ``families[i]``."""
        out = np.zeros((len(families), self.n_vars), dtype=bool)
        sizes = self.parent_ptr[families + 1] - self.parent_ptr[families]
        rows = np.repeat(np.arange(len(families)), sizes)
        out[rows, self.parents[segment_indices(self.parent_ptr[families], sizes)]] = True
        return out

    def arc_families(self) -> dict[tuple[int, int], np.ndarray]:
        """The families holding each arc ``u -> v`` that occurs in at least one family, by arc
        (sorted), each list ascending."""
        heads = self.child[self.member_row]
        order = np.lexsort((self.member_row, heads, self.parents))
        tails, heads, fams = self.parents[order], heads[order], self.member_row[order]
        starts = np.flatnonzero(np.r_[True, (tails[1:] != tails[:-1]) | (heads[1:] != heads[:-1])])
        return {(int(tails[i]), int(heads[i])): group
                for i, group in zip(starts, np.split(fams, starts[1:]))}

    def moral_links(self) -> tuple[dict[tuple[int, int], list[int]], dict[tuple[int, int, int], list[int]]]:
        """What makes ``a - b`` (``a < b``) an edge of the moral graph: ``arcs[(a, b)]`` lists the
        families with an arc between ``a`` and ``b``, ``spouses[(c, a, b)]`` the families of
        child ``c`` holding both as parents (at most one family of each list can be chosen).

        Each list is ascending; keys come in the order of their first family (then of its parents)."""
        n, fam = self.n_vars, self.member_row
        heads = self.child[fam]
        arc_codes, arcs = _groups(np.minimum(self.parents, heads) * n + np.maximum(self.parents, heads), fam)
        # pairs of entries of one family, in itertools.combinations order: entry e with each later one
        entry = np.arange(self.parents.size)
        later = self.parent_ptr[fam + 1] - entry - 1
        first, second = np.repeat(entry, later), segment_indices(entry + 1, later)
        spouse_codes, spouses = _groups((self.child[fam[first]] * n + self.parents[first]) * n
                                        + self.parents[second], fam[first])
        lo, hi = np.divmod(arc_codes, n)
        c, ab = np.divmod(spouse_codes, n * n)
        a, b = np.divmod(ab, n)
        return (dict(zip(zip(lo.tolist(), hi.tolist()), arcs)),
                dict(zip(zip(c.tolist(), a.tolist(), b.tolist()), spouses)))

    def dag_of(self, fams: Iterable[int]) -> np.ndarray:
        """Boolean adjacency matrix of a choice of families (one per child)."""
        fams = np.fromiter(fams, dtype=np.int64)
        sizes = self.parent_ptr[fams + 1] - self.parent_ptr[fams]
        adj = np.zeros((self.n_vars, self.n_vars), dtype=bool)
        adj[self.parents[segment_indices(self.parent_ptr[fams], sizes)], np.repeat(self.child[fams], sizes)] = True
        return adj


def _groups(codes: np.ndarray, fams: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    """The distinct ``codes`` in the order of their first entries, and for each the ``fams`` of
    its entries, in entry order."""
    order = np.argsort(codes, kind="stable")
    codes, fams = codes[order], fams[order].tolist()
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if codes.size else codes
    bounds = np.r_[starts, codes.size].tolist()
    rank = np.argsort(order[starts], kind="stable")
    return codes[starts[rank]], [fams[bounds[g]:bounds[g + 1]] for g in rank.tolist()]


def _arc_matrix(arcs, n: int, names: list[str], what: str) -> np.ndarray:
    """Boolean matrix of arcs given as ``(u, v)`` pairs of indices or variable names."""
    index = {name: i for i, name in enumerate(names)}
    mat = np.zeros((n, n), dtype=bool)
    for arc in arcs:
        try:
            u, v = arc
        except (TypeError, ValueError):
            raise ILPInputError(f"{what} arc {arc!r} is not a (parent, child) pair") from None
        ends = []
        for end in (u, v):
            if isinstance(end, str):
                if end not in index:
                    raise ILPInputError(f"{what} arc {arc!r}: unknown variable {end!r}")
                ends.append(index[end])
            elif isinstance(end, (int, np.integer)) and 0 <= end < n:
                ends.append(int(end))
            else:
                raise ILPInputError(f"{what} arc {arc!r}: node {end!r} is not in 0..{n - 1}")
        if ends[0] == ends[1]:
            raise ILPInputError(f"{what} arc {arc!r} is a self-loop")
        mat[ends[0], ends[1]] = True
    return mat


def build_problem(
    table: ScoreTable,
    *,
    required_arcs=(),
    forbidden_arcs=(),
    palim: int | None = None,
) -> FamilyProblem:
    """Validate ``table`` and the options; keep the families that respect them.

    A family ``W -> v`` is kept iff ``|W| <= palim``, no arc ``u -> v`` with ``u in W`` is
    forbidden, and every required parent of ``v`` is in ``W``. Raises :class:`ILPInputError`
    for a malformed table, an arc that is both required and forbidden, required arcs that form a
    directed cycle, or a child left without any candidate parent set.
    """
    if not isinstance(table, ScoreTable):
        raise ILPInputError(f"expected a ScoreTable, got {type(table).__name__}")
    try:
        table.validate()
    except ScoreTableError as err:
        raise ILPInputError(f"malformed score table: {err}") from err
    n = table.n_vars
    names = list(table.names) if table.names else [str(v) for v in range(n)]
    palim = check_parent_limit(palim, ILPInputError)

    required = _arc_matrix(required_arcs, n, names, "required")
    forbidden = _arc_matrix(forbidden_arcs, n, names, "forbidden")
    both = np.argwhere(required & forbidden)
    if both.size:
        u, v = both[0]
        raise ILPInputError(f"arc {names[u]} -> {names[v]} is both required and forbidden")
    cycle = find_cycle(required)
    if cycle is not None:
        shown = " -> ".join(names[c] for c in cycle + cycle[:1])
        raise ILPInputError(f"required arcs form a directed cycle: {shown}")

    keep = table.respecting(~forbidden, required)
    if palim is not None:
        keep &= table.sizes <= palim
    left = np.bincount(table.child[keep], minlength=n)
    if not left.all():
        v = int(np.argmin(left))
        need, banned = np.flatnonzero(required[:, v]), np.flatnonzero(forbidden[:, v])
        reasons = [f"palim={palim}"] if palim is not None else []
        if need.size:
            reasons.append("required parents " + ", ".join(names[u] for u in need))
        if banned.size:
            reasons.append(f"{banned.size} forbidden parents")
        raise ILPInputError(
            f"child {names[v]!r} has no candidate parent set left"
            + (f" after {'; '.join(reasons)}" if reasons else "")
        )
    kept = table.select(keep)
    logger.debug("family problem: n=%d, %d families kept, %d dropped by options", n, kept.n_candidates,
                 table.n_candidates - kept.n_candidates)
    return FamilyProblem(n_vars=n, child=kept.child.astype(np.int64), parent_ptr=kept.parent_ptr,
                         parents=kept.parents.astype(np.int64), score=kept.score, names=names, meta=kept.meta)
