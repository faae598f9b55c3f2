"""Flat views that the SCIP plugins hand to their compiled (numba) kernels.

:class:`FamilyArrays` is a :class:`ilp.problem.FamilyProblem` as CSR integer arrays (numba takes
neither lists of tuples nor Python-int bit sets, and networks may have thousands of nodes); a
problem builds it once, as ``problem.arrays``.
:class:`TransformedVars` caches the transformed copies of a plugin's variables for one solving
run and reads their LP values and local upper bounds in bulk with the cheapest PySCIPOpt
accessors (``Variable.getLPSol`` is about six times faster than ``Model.getSolVal(None, v)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pyscipopt.scip import Variable

if TYPE_CHECKING:  # ilp.problem builds FamilyArrays
    from ilp.problem import FamilyProblem


@dataclass(frozen=True)
class FamilyArrays:
    """Parents of family ``f``: ``par_idx[par_ptr[f]:par_ptr[f + 1]]`` (ascending); families of
    child ``v`` in ``by_child`` order (decreasing score): ``fam_idx[fam_ptr[v]:fam_ptr[v + 1]]``."""

    n: int
    child: np.ndarray
    score: np.ndarray
    par_ptr: np.ndarray
    par_idx: np.ndarray
    fam_ptr: np.ndarray
    fam_idx: np.ndarray

    @classmethod
    def of(cls, problem: FamilyProblem) -> FamilyArrays:
        rows, cols = np.nonzero(problem.pmask)
        sizes = np.array([fams.size for fams in problem.by_child], dtype=np.int64)
        return cls(
            n=problem.n,
            child=problem.child,
            score=problem.score,
            par_ptr=_offsets(np.bincount(rows, minlength=problem.n_families)),
            par_idx=cols.astype(np.int64),
            fam_ptr=_offsets(sizes),
            fam_idx=np.concatenate(problem.by_child).astype(np.int64) if sizes.size else sizes,
        )


def _offsets(sizes: np.ndarray) -> np.ndarray:
    ptr = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    return ptr


class TransformedVars:
    """Transformed copies of the original variables ``original``, fetched on first use.

    Presolving (again after a restart) creates new transformed variables: the owning plugin calls
    :meth:`reset` from its ``initsol`` callback.
    """

    def __init__(self, original: list):
        self.original = original
        self.reset()

    def reset(self) -> None:
        self._vars: list | None = None
        self._active: np.ndarray | None = None

    def vars(self, model) -> list:
        """The transformed variables, in the order of ``original``."""
        if self._vars is None:
            self._vars = [model.getTransformedVar(v) for v in self.original]
            self._active = np.fromiter(map(Variable.isActive, self._vars), bool, len(self._vars))
        return self._vars

    def active(self, model) -> np.ndarray:
        """``isActive()`` of each transformed variable (fixed or aggregated ones are not)."""
        self.vars(model)
        return self._active

    def lp_values(self, model) -> np.ndarray:
        """Values in the LP solution of the current node (what ``model.getSolVal(None, v)``
        returns while that LP is solved)."""
        return np.fromiter(map(Variable.getLPSol, self.vars(model)), float, len(self.original))

    def upper_bounds(self, model) -> np.ndarray:
        """Local upper bounds at the current node."""
        return np.fromiter(map(Variable.getUbLocal, self.vars(model)), float, len(self.original))
