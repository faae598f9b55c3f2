"""Score tables: the candidate parent sets of every child with their local scores.

A score table is the interface between the score stage (``scores``) and every optimiser
(``ilp``, ``search``). It holds, per child ``v``, a mapping from a parent set ``W`` (a sorted
tuple of variable indices) to the local score ``s(v, W)`` (larger is better), plus metadata
(score name, ESS, N, palim, pruning counts). See the hybrid thesis (Su 2023, section 5.6) for
its role: the family variables ``I(W -> v)`` of the ILP are exactly its rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from hybridbn.errors import HybridBNError

ParentSet = tuple[int, ...]


class ScoreTableError(HybridBNError, ValueError):
    """A score table that cannot be used by an optimiser."""


@dataclass
class ScoreTable:
    """Candidate parent sets and local scores for ``n_vars`` variables.

    ``families[v]`` maps a sorted parent tuple to the local score of child ``v``.
    """

    n_vars: int
    families: list[dict[ParentSet, float]]
    names: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_candidates(self) -> int:
        """Total number of (child, parent set) rows."""
        return sum(len(f) for f in self.families)

    def score_of(self, parent_sets: Sequence[Iterable[int]]) -> float:
        """Sum of the local scores of a DAG given as one parent set per child.

        Raises ``KeyError`` if some family is not in the table.
        """
        return float(sum(self.families[v][tuple(sorted(ps))] for v, ps in enumerate(parent_sets)))

    def validate(self) -> None:
        """Raise :class:`ScoreTableError` unless the table is usable by an optimiser."""
        if self.n_vars < 1 or len(self.families) != self.n_vars:
            raise ScoreTableError(
                f"score table has {len(self.families)} children for n_vars={self.n_vars}"
            )
        if self.names is not None and len(self.names) != self.n_vars:
            raise ScoreTableError(f"{len(self.names)} names for {self.n_vars} variables")
        for v, fam in enumerate(self.families):
            label = self.names[v] if self.names else str(v)
            if not fam:
                raise ScoreTableError(f"child {label!r} has no candidate parent set")
            for ps, s in fam.items():
                if tuple(sorted(set(ps))) != tuple(ps):
                    raise ScoreTableError(f"child {label!r}: parent set {ps} is not a sorted tuple")
                if v in ps or any(p < 0 or p >= self.n_vars for p in ps):
                    raise ScoreTableError(f"child {label!r}: invalid parent set {ps}")
                if not np.isfinite(s):
                    raise ScoreTableError(f"child {label!r}: non-finite score for parents {ps}")

    def to_frame(self) -> pd.DataFrame:
        """Long format: one row per family (``child``, ``parents`` list, ``score``)."""
        rows = [(v, list(ps), s) for v, fam in enumerate(self.families) for ps, s in fam.items()]
        frame = pd.DataFrame(rows, columns=["child", "parents", "score"])
        return frame.astype({"child": "int32", "score": "float64"})

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        n_vars: int,
        names: list[str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> "ScoreTable":
        """Inverse of :meth:`to_frame`."""
        families: list[dict[ParentSet, float]] = [{} for _ in range(n_vars)]
        for child, parents, score in zip(frame["child"], frame["parents"], frame["score"]):
            families[int(child)][tuple(int(p) for p in parents)] = float(score)
        return cls(n_vars=n_vars, families=families, names=names, meta=dict(meta or {}))
