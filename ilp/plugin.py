"""The protocol shared by the SCIP plugins of :mod:`ilp` and :mod:`ilp.treewidth`.

A plugin class derives from :class:`Plugin` and one PySCIPOpt plugin kind
(``class ClusterConshdlr(Plugin, Conshdlr)``; the files are named by that kind, as in GOBNILP:
``conshdlr_*``, ``heur_*``, ``sepa_*``). The protocol:

* **errors**: PySCIPOpt cannot carry an exception out of a C callback, so every callback is
  wrapped in :func:`guarded`, which keeps the first exception (or ``KeyboardInterrupt``: a second
  Ctrl-C inside :func:`hybridbn.interrupt.catching_signals`) in ``plugin.error`` and interrupts
  the solve; :func:`raise_plugin_error` re-raises it after ``optimize`` returns;
* **statistics**: each plugin counts its work in its ``stats`` dict, merged into
  :attr:`ilp.result.ILPResult.stats` by :func:`plugin_stats`;
* **rows**: :meth:`Plugin.add_cut` (an LP row, during separation and LP enforcement) and
  :meth:`Plugin.add_constraint` (a constraint, where no row may be added: pseudo-solution
  enforcement), each counted in ``stats`` under its kind;
* **variables**: :class:`TransformedVars` caches the transformed copies of a plugin's variables
  for one solving run and reads their LP values and local upper bounds in bulk with the cheapest
  PySCIPOpt accessors (``Variable.getLPSol`` is about six times faster than
  ``Model.getSolVal(None, v)``), as the arrays the numba kernels take.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
from pyscipopt import SCIP_RESULT, quicksum
from pyscipopt.scip import Variable


def guarded(method):
    """Keep the first exception raised inside a SCIP callback in ``self.error`` and stop the solve."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except (Exception, KeyboardInterrupt) as err:  # noqa: BLE001 - re-raised by raise_plugin_error after the solve
            if self.error is None:
                self.error = err
            self.model.interruptSolve()
            return {"result": SCIP_RESULT.DIDNOTRUN}

    return wrapper


class Plugin:
    """Error slot, statistics and row helpers of a plugin; ``stats`` starts as the given counters."""

    def __init__(self, **stats: Any):
        self.error: Exception | None = None
        self.stats: dict[str, Any] = stats

    def empty_row(self, name: str, lhs: float | None, rhs: float | None):
        """A new globally valid, removable LP row (separators override it to name themselves its origin)."""
        return self.model.createEmptyRowUnspec(name=name, lhs=lhs, rhs=rhs, local=False,
                                               modifiable=False, removable=True)

    def add_cut(self, variables: Iterable, lhs: float | None, rhs: float | None, kind: str, *,
                coefs: Iterable[float] | None = None, force: bool = False, pool: bool = True) -> bool:
        """Add ``lhs <= sum(coefs * variables) <= rhs`` (transformed variables; ``None``: no bound;
        ``coefs`` default all 1) as a cut counted in ``stats[kind]``, with ``pool`` also to SCIP's
        global cut pool; True if it proves the node infeasible."""
        model = self.model
        row = self.empty_row(f"{kind}{self.stats[kind]}", lhs, rhs)
        model.cacheRowExtensions(row)
        for var, coef in zip(variables, itertools.repeat(1.0) if coefs is None else coefs):
            model.addVarToRow(row, var, coef)
        model.flushRowExtensions(row)
        infeasible = model.addCut(row, forcecut=force)
        if pool:
            model.addPoolCut(row)
        model.releaseRow(row)
        self.stats[kind] += 1
        return infeasible

    def add_constraint(self, variables: Iterable, lhs: float | None, rhs: float | None, kind: str,
                       name: str, *, coefs: Iterable[float] | None = None) -> None:
        """Add ``sum(coefs * variables) <= rhs`` or, with ``rhs`` ``None``, ``>= lhs`` (``coefs``
        default all 1) as a removable constraint named ``name`` plus its count, counted in
        ``stats[kind]``."""
        expr = quicksum(variables) if coefs is None else quicksum(c * v for c, v in zip(coefs, variables))
        self.model.addCons(expr <= rhs if rhs is not None else expr >= lhs,
                           name=f"{name}{self.stats[kind]}", removable=True)
        self.stats[kind] += 1


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


def raise_plugin_error(plugins: Iterable[Plugin]) -> None:
    """Re-raise the first error kept by a plugin's callback (call after ``optimize``)."""
    for plugin in plugins:
        if plugin.error is not None:
            raise plugin.error


def plugin_stats(plugins: Iterable[Plugin]) -> dict[str, Any]:
    """The plugins' statistics in one dict (a later plugin's key wins)."""
    return {key: value for plugin in plugins for key, value in plugin.stats.items()}
