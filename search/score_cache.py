"""Memoised decomposable local score for the equivalence-class searches (GES, SGES).

GES and SGES are costed by the number of *distinct* local-score evaluations: Chickering & Meek
(2015, section 5) count "the number of times the scoring function was called on a unique node
and parent-set combination", caching scores so repeated requests are free. ``LocalScoreCache``
implements exactly that bookkeeping around any callable ``local_score(child, parents)``.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from graphs.bitsets import to_mask, to_tuple
from hybridbn.errors import HybridBNError

LocalScore = Callable[[int, tuple[int, ...]], float]


class ScoreCacheError(HybridBNError, ValueError):
    """Bad arguments for a local-score cache."""


class LocalScoreCache:
    """Cache of ``local_score(child, parents)`` keyed by ``(child, parent bitmask)``.

    ``local_score`` must be decomposable and score equivalent (e.g. BDeu, BIC); it receives the
    parents as a sorted tuple. ``n_evaluations`` counts the distinct families scored so far.
    """

    def __init__(self, local_score: LocalScore, n_vars: int):
        if not callable(local_score):
            raise ScoreCacheError(f"local_score must be callable, got {type(local_score).__name__}")
        if int(n_vars) < 1:
            raise ScoreCacheError(f"n_vars must be >= 1, got {n_vars}")
        self.local_score = local_score
        self.n_vars = int(n_vars)
        self._tables: list[dict[int, float]] = [{} for _ in range(self.n_vars)]

    @property
    def n_evaluations(self) -> int:
        """Number of distinct ``(child, parents)`` pairs evaluated."""
        return sum(len(t) for t in self._tables)

    def score_mask(self, child: int, parents: int) -> float:
        """Local score of ``child`` with the parent set given as a bitmask."""
        table = self._tables[child]
        value = table.get(parents)
        if value is None:
            if parents >> child & 1:
                raise ScoreCacheError(f"variable {child} cannot be its own parent")
            value = float(self.local_score(child, to_tuple(parents)))
            table[parents] = value
        return value

    def __call__(self, child: int, parents: Iterable[int]) -> float:
        """Local score of ``child`` with the parent set given as indices."""
        return self.score_mask(int(child), to_mask(parents))

    def dag_score(self, dag: np.ndarray) -> float:
        """Score of a DAG: the sum of the local scores of its families (decomposability)."""
        dag = np.asarray(dag, dtype=bool)
        return float(sum(self.score_mask(v, to_mask(np.flatnonzero(dag[:, v]))) for v in range(dag.shape[0])))
