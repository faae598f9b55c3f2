"""GOBNILP-style integer programming for Bayesian-network structure learning on SCIP.

The names below load on first use (PEP 562): importing a submodule such as :mod:`ilp.methods`,
the solver's declaration that every run reads, costs no SCIP or numba start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ilp.options import ILPOptions
    from ilp.problem import ILPInfeasibleError, ILPInputError
    from ilp.result import ILPResult
    from ilp.solve import ILPSolveError, solve_ilp
    from ilp.treewidth.ktree_filter import TreewidthInputError, restrict_to_bags, solve_ilp_within
    from ilp.treewidth.solve import solve_bounded_treewidth

HOMES = {
    "ILPOptions": "ilp.options", "ILPInputError": "ilp.problem", "ILPInfeasibleError": "ilp.problem",
    "ILPResult": "ilp.result", "ILPSolveError": "ilp.solve", "solve_ilp": "ilp.solve",
    "TreewidthInputError": "ilp.treewidth.ktree_filter", "restrict_to_bags": "ilp.treewidth.ktree_filter",
    "solve_ilp_within": "ilp.treewidth.ktree_filter", "solve_bounded_treewidth": "ilp.treewidth.solve",
}
"""The module of each public name."""
__all__ = list(HOMES)


def __getattr__(name: str) -> Any:
    if name not in HOMES:
        raise AttributeError(f"module 'ilp' has no attribute {name!r}")
    value = getattr(importlib.import_module(HOMES[name]), name)  # deferred: SCIP and numba start-up
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
