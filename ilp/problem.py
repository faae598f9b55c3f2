"""Validated family problem: the score table after parent limit and required/forbidden arcs.

The ILP (Cussens 2011; Bartlett & Cussens 2017; Su 2023 section 5.6) has one binary variable
``I(W -> v)`` per candidate family. This module turns a :class:`scores.table.ScoreTable` plus
user options into flat numpy arrays over the families that survive the options, and rejects bad
input with :class:`ILPInputError` before any solver is started.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from graphs.dag import find_cycle
from hybridbn.errors import HybridBNError
from ilp.flat import FamilyArrays
from scores.table import ParentSet, ScoreTable, ScoreTableError

logger = logging.getLogger(__name__)


class ILPInputError(HybridBNError, ValueError):
    """Input that the ILP cannot solve: malformed table, bad options, contradictory arcs."""


class ILPInfeasibleError(ILPInputError):
    """No acyclic choice of the remaining candidate parent sets exists."""


@dataclass(frozen=True)
class FamilyProblem:
    """Families ``f = 0..F-1`` with child ``child[f]``, parents ``parents[f]``, score ``score[f]``.

    ``pmask[f, u]`` is True iff ``u`` is a parent in family ``f``; ``by_child[v]`` lists the
    families of ``v`` (sorted by decreasing score).
    """

    n: int
    names: list[str]
    child: np.ndarray
    parents: list[ParentSet]
    score: np.ndarray
    pmask: np.ndarray
    by_child: list[np.ndarray]

    @cached_property
    def arrays(self) -> FamilyArrays:
        """The families as flat CSR arrays for the compiled plugin kernels (built on first use)."""
        return FamilyArrays.of(self)

    @property
    def n_families(self) -> int:
        return len(self.parents)

    def arc_pairs(self) -> list[tuple[int, int]]:
        """Arcs ``u -> v`` that occur in at least one family, sorted."""
        pu, fv = np.nonzero(self.pmask.T)
        return sorted({(int(u), int(self.child[f])) for u, f in zip(pu, fv)})

    def moral_links(self) -> tuple[dict[tuple[int, int], list[int]], dict[tuple[int, int, int], list[int]]]:
        """What makes ``a - b`` (``a < b``) an edge of the moral graph: ``arcs[(a, b)]`` lists the
        families with an arc between ``a`` and ``b``, ``spouses[(c, a, b)]`` the families of
        child ``c`` holding both as parents (at most one family of each list can be chosen)."""
        arcs: dict[tuple[int, int], list[int]] = {}
        spouses: dict[tuple[int, int, int], list[int]] = {}
        for f, (c, ps) in enumerate(zip(self.child.tolist(), self.parents)):
            for p in ps:
                arcs.setdefault((min(p, c), max(p, c)), []).append(f)
            for a, b in itertools.combinations(sorted(ps), 2):
                spouses.setdefault((c, a, b), []).append(f)
        return arcs, spouses

    def dag_of(self, fams: Iterable[int]) -> np.ndarray:
        """Boolean adjacency matrix of a choice of families (one per child)."""
        adj = np.zeros((self.n, self.n), dtype=bool)
        for f in fams:
            adj[list(self.parents[f]), self.child[f]] = True
        return adj


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
    if palim is not None and (not isinstance(palim, (int, np.integer)) or palim < 0):
        raise ILPInputError(f"palim must be a non-negative int or None, got {palim!r}")

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

    child, parents, score, dropped = [], [], [], 0
    for v, fam in enumerate(table.families):
        need = set(np.flatnonzero(required[:, v]).tolist())
        banned = set(np.flatnonzero(forbidden[:, v]).tolist())
        kept = [
            (ps, s)
            for ps, s in fam.items()
            if (palim is None or len(ps) <= palim) and need.issubset(ps) and banned.isdisjoint(ps)
        ]
        if not kept:
            reasons = []
            if palim is not None:
                reasons.append(f"palim={palim}")
            if need:
                reasons.append("required parents " + ", ".join(names[u] for u in sorted(need)))
            if banned:
                reasons.append(f"{len(banned)} forbidden parents")
            raise ILPInputError(
                f"child {names[v]!r} has no candidate parent set left"
                + (f" after {'; '.join(reasons)}" if reasons else "")
            )
        dropped += len(fam) - len(kept)
        kept.sort(key=lambda item: -item[1])
        for ps, s in kept:
            child.append(v)
            parents.append(tuple(ps))
            score.append(s)

    F = len(parents)
    child_arr = np.array(child, dtype=np.int64)
    pmask = np.zeros((F, n), dtype=bool)
    for f, ps in enumerate(parents):
        pmask[f, list(ps)] = True
    by_child = [np.flatnonzero(child_arr == v) for v in range(n)]
    logger.debug("family problem: n=%d, %d families kept, %d dropped by options", n, F, dropped)
    return FamilyProblem(
        n=n,
        names=names,
        child=child_arr,
        parents=parents,
        score=np.array(score, dtype=np.float64),
        pmask=pmask,
        by_child=by_child,
    )
