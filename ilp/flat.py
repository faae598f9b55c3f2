"""Flat views of SCIP variables for the plugins' compiled (numba) kernels.

:class:`TransformedVars` caches the transformed copies of a plugin's variables for one solving
run and reads their LP values and local upper bounds in bulk with the cheapest PySCIPOpt
accessors (``Variable.getLPSol`` is about six times faster than ``Model.getSolVal(None, v)``).
"""

from __future__ import annotations

import numpy as np
from pyscipopt.scip import Variable


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
