"""Score tables: the candidate parent sets of every child with their local scores.

A score table is the interface between the score stage (``scores``) and every optimiser
(``ilp``, ``search``). It is columnar: one row per family ``W -> v`` (a candidate parent set
``W`` of child ``v`` with its local score ``s(v, W)``, larger is better), held as ``child``,
``score`` and the parent sets as offsets ``parent_ptr`` into the flat members ``parents``, plus
names and metadata (score name, ESS, N, palim, pruning counts). The score kernel produces these
arrays, the cache stores them as they are, and the ILP filters them with numpy. See the hybrid
thesis (Su 2023, section 5.6) for its role: the family variables ``I(W -> v)`` of the ILP are
exactly its rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from hybridbn.errors import HybridBNError

ParentSet = tuple[int, ...]


class ScoreTableError(HybridBNError, ValueError):
    """A score table that cannot be used by an optimiser."""


def offsets(sizes: np.ndarray) -> np.ndarray:
    """CSR offsets ``[0, s0, s0 + s1, ...]`` of consecutive groups of the given sizes."""
    ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ptr


def segment_indices(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + k)`` over ``zip(starts, sizes)``."""
    ends = np.cumsum(sizes)
    return np.arange(ends[-1] if ends.size else 0) - np.repeat(ends - sizes - starts, sizes)


def family_ids(families: np.ndarray) -> np.ndarray:
    """Dense ids of families given as the rows ``[child, parent, ...]`` of an integer matrix (shorter
    parent sets padded with -1): equal rows, equal ids, in lexicographic order. The columns are folded
    in one at a time, each fold re-ranked, so the codes stay below ``rows x (n_vars + 2)``."""
    ids = np.zeros(families.shape[0], dtype=np.int64)
    for column in families.T.astype(np.int64):
        ids = np.unique(ids * (int(column.max(initial=0)) + 2) + column + 1, return_inverse=True)[1]
    return ids


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Candidate parent sets and local scores for ``n_vars`` variables, one row per family.

    Row ``f`` is the parent set ``parents[parent_ptr[f]:parent_ptr[f + 1]]`` (strictly ascending)
    of child ``child[f]`` with local score ``score[f]``. Invariant (checked by :meth:`validate`):
    rows are grouped by child in ascending order and, within a child, sorted by decreasing score,
    ties in the order they were given; every child has a row. Derived: ``sizes`` (parents per row),
    ``child_ptr`` (the rows of child ``v`` are ``child_ptr[v] .. child_ptr[v + 1] - 1``) and
    ``member_row`` (the row of each entry of ``parents``). These names are the one vocabulary of the
    family table from the score kernel to the ILP, whose :class:`ilp.problem.FamilyProblem` is a
    score table too. Build tables with :meth:`from_columns` or :meth:`from_families` (hand-written
    tables), which put the rows in this order; edit them on the columns (:meth:`respecting`,
    :meth:`within`, :meth:`select`).
    """

    n_vars: int
    child: np.ndarray
    parent_ptr: np.ndarray
    parents: np.ndarray
    score: np.ndarray
    names: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_columns(cls, n_vars: int, child, parent_ptr, parents, score, names: list[str] | None = None,
                     meta: dict[str, Any] | None = None) -> "ScoreTable":
        """A table of the given rows, put in the table's order (a stable sort)."""
        child = np.asarray(child, dtype=np.int32)
        parent_ptr = np.asarray(parent_ptr, dtype=np.int64)
        parents = np.asarray(parents, dtype=np.int32)
        score = np.asarray(score, dtype=np.float64)
        order = np.lexsort((-score, child))
        if np.any(order != np.arange(order.size)):
            sizes = np.diff(parent_ptr)[order]
            parents = parents[segment_indices(parent_ptr[order], sizes)]
            child, score, parent_ptr = child[order], score[order], offsets(sizes)
        return cls(int(n_vars), child, parent_ptr, parents, score, None if names is None else list(names),
                   dict(meta or {}))

    @classmethod
    def from_families(cls, families: Sequence[dict[ParentSet, float]], names: list[str] | None = None,
                      meta: dict[str, Any] | None = None) -> "ScoreTable":
        """A table from ``families[v][parents] = score`` (hand-written tables, tests)."""
        rows = [(v, ps, s) for v, fam in enumerate(families) for ps, s in fam.items()]
        sizes = np.array([len(ps) for _, ps, _ in rows], dtype=np.int64)
        members = [p for _, ps, _ in rows for p in ps]
        return cls.from_columns(len(families), [v for v, _, _ in rows], offsets(sizes), members,
                                [s for _, _, s in rows], names, meta)

    @property
    def n_candidates(self) -> int:
        """Total number of (child, parent set) rows."""
        return int(self.child.size)

    @property
    def sizes(self) -> np.ndarray:
        """Number of parents of each row."""
        return np.diff(self.parent_ptr)

    @cached_property
    def child_ptr(self) -> np.ndarray:
        """The rows of child ``v`` are ``child_ptr[v] .. child_ptr[v + 1] - 1``."""
        return offsets(np.bincount(self.child, minlength=self.n_vars))

    @cached_property
    def member_row(self) -> np.ndarray:
        """The row of each entry of ``parents``."""
        return np.repeat(np.arange(self.n_candidates), self.sizes)

    @cached_property
    def families(self) -> list[dict[ParentSet, float]]:
        """Read-only view ``families[v][parents] = score`` (rows in table order), built on first use:
        for tests and debugging; the code edits tables on their columns."""
        sets = np.split(self.parents, self.parent_ptr[1:-1]) if self.n_candidates else []
        view: list[dict[ParentSet, float]] = [{} for _ in range(self.n_vars)]
        for v, ps, s in zip(self.child.tolist(), sets, self.score.tolist()):
            view[v][tuple(ps.tolist())] = s
        return view

    def label(self, v: int) -> str:
        """Name of variable ``v`` (its index when the table has no names)."""
        return self.names[v] if self.names else str(v)

    def row_of(self, v: int, parents: Iterable[int]) -> int:
        """The row of the family ``parents -> v``; ``KeyError`` if it is not in the table."""
        ps = sorted(parents)
        rows = np.arange(self.child_ptr[v], self.child_ptr[v + 1])
        rows = rows[self.sizes[rows] == len(ps)]
        members = self.parents[segment_indices(self.parent_ptr[rows], np.full(rows.size, len(ps)))]
        hit = rows[(members.reshape(rows.size, len(ps)) == ps).all(axis=1)]
        if not hit.size:
            raise KeyError((v, tuple(ps)))
        return int(hit[0])

    def score_of(self, parent_sets: Sequence[Iterable[int]]) -> float:
        """Sum of the local scores of a DAG given as one parent set per child.

        Raises ``KeyError`` if some family is not in the table.
        """
        return float(sum(self.score[self.row_of(v, ps)].item() for v, ps in enumerate(parent_sets)))

    def respecting(self, allowed: np.ndarray, required: np.ndarray) -> np.ndarray:
        """Mask of the rows ``W -> v`` with ``allowed[p, v]`` for every ``p`` in ``W`` and ``p`` in ``W``
        for every ``required[p, v]`` (boolean ``(n, n)`` matrices)."""
        rows, heads = self.member_row, self.child[self.member_row]
        keep = np.bincount(rows[~allowed[self.parents, heads]], minlength=self.n_candidates) == 0
        held = np.bincount(rows[required[self.parents, heads]], minlength=self.n_candidates)
        return keep & (held == required.sum(axis=0)[self.child])

    def within(self, nodes: Iterable[int]) -> np.ndarray:
        """Mask of the rows ``W -> v`` with ``v`` and every ``p`` in ``W`` among ``nodes`` (indices);
        only the rows of those children are read."""
        nodes = np.unique(np.fromiter(nodes, dtype=np.int64))
        inside = np.zeros(self.n_vars, dtype=bool)
        inside[nodes] = True
        rows = segment_indices(self.child_ptr[nodes], self.child_ptr[nodes + 1] - self.child_ptr[nodes])
        sizes = self.parent_ptr[rows + 1] - self.parent_ptr[rows]
        outside = ~inside[self.parents[segment_indices(self.parent_ptr[rows], sizes)]]
        keep = np.zeros(self.n_candidates, dtype=bool)
        keep[rows] = np.bincount(np.repeat(np.arange(rows.size), sizes)[outside], minlength=rows.size) == 0
        return keep

    def select(self, keep: np.ndarray, meta: dict[str, Any] | None = None) -> "ScoreTable":
        """The rows where the boolean mask ``keep`` is True (order kept), with ``meta`` if given."""
        sizes = self.sizes[keep]
        parents = self.parents[segment_indices(self.parent_ptr[:-1][keep], sizes)]
        return ScoreTable(self.n_vars, self.child[keep], offsets(sizes), parents, self.score[keep], self.names,
                          dict(self.meta if meta is None else meta))

    def validate(self) -> None:
        """Raise :class:`ScoreTableError` unless the table is usable by an optimiser."""
        n, rows = self.n_vars, self.n_candidates
        if n < 1:
            raise ScoreTableError(f"score table has no children (n_vars={n})")
        if self.names is not None and len(self.names) != n:
            raise ScoreTableError(f"{len(self.names)} names for {n} variables")
        ptr = self.parent_ptr
        if (self.score.shape != (rows,) or ptr.shape != (rows + 1,) or ptr[0] != 0 or ptr[-1] != self.parents.size
                or np.any(np.diff(ptr) < 0)):
            raise ScoreTableError(f"score table columns disagree: {rows} children, {self.score.size} scores, "
                                  f"{ptr.size} parent offsets for {self.parents.size} parents")
        if rows and (self.child.min() < 0 or self.child.max() >= n):
            raise ScoreTableError(f"score table has children outside 0..{n - 1}")
        if np.any(np.diff(self.child) < 0):
            raise ScoreTableError("score table rows are not grouped by child in ascending order")
        empty = np.flatnonzero(np.diff(self.child_ptr) == 0)
        if empty.size:
            raise ScoreTableError(f"child {self.label(int(empty[0]))!r} has no candidate parent set")
        heads = self.child[self.member_row]
        within = self.member_row[1:] == self.member_row[:-1]
        bad = (self.parents < 0) | (self.parents >= n) | (self.parents == heads)
        bad[1:] |= within & (self.parents[1:] <= self.parents[:-1])
        if bad.any():
            f = int(self.member_row[np.argmax(bad)])
            raise ScoreTableError(f"child {self.label(int(self.child[f]))!r}: invalid parent set "
                                  f"{tuple(self.parents[ptr[f]:ptr[f + 1]].tolist())} (sorted, distinct, "
                                  f"in 0..{n - 1}, not the child)")
        finite = np.isfinite(self.score)
        if not finite.all():
            f = int(np.argmin(finite))
            raise ScoreTableError(f"child {self.label(int(self.child[f]))!r}: non-finite score for parents "
                                  f"{tuple(self.parents[ptr[f]:ptr[f + 1]].tolist())}")
        rising = np.flatnonzero((self.child[1:] == self.child[:-1]) & (self.score[1:] > self.score[:-1]))
        if rising.size:
            raise ScoreTableError(f"child {self.label(int(self.child[rising[0]]))!r}: rows not sorted by "
                                  "decreasing score")

    def to_arrow(self) -> pa.Table:
        """The rows as an Arrow table (``child``, ``parents`` list, ``score``), for the stage cache."""
        parents = pa.ListArray.from_arrays(pa.array(self.parent_ptr.astype(np.int32)), pa.array(self.parents))
        return pa.table({"child": self.child, "parents": parents, "score": self.score})

    @classmethod
    def from_arrow(cls, frame: pa.Table | pd.DataFrame, n_vars: int, names: list[str] | None = None,
                   meta: dict[str, Any] | None = None) -> "ScoreTable":
        """Inverse of :meth:`to_arrow`; also reads the pandas frames of older caches (rows in any order)."""
        if isinstance(frame, pd.DataFrame):
            frame = pa.Table.from_pandas(frame, preserve_index=False)
        lists = frame.column("parents").combine_chunks()
        ptr = lists.offsets.to_numpy()
        return cls.from_columns(n_vars, frame.column("child").to_numpy(), ptr - ptr[0], lists.flatten().to_numpy(),
                                frame.column("score").to_numpy(), names, meta)
