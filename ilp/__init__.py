"""GOBNILP-style integer programming for Bayesian-network structure learning on SCIP.

The names below load on first use (PEP 562): importing a submodule such as :mod:`ilp.methods`,
the solver's declaration that every run reads, costs no SCIP or numba start-up (``import
ilp.solve`` takes about 1.3 s, ``ilp.methods`` 0.24 s: ``python -X importtime``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ILPOptions", "ILPInputError", "ILPInfeasibleError", "ILPResult", "ILPSolveError", "solve_ilp",
           "TreewidthInputError", "restrict_to_bags", "solve_ilp_within", "solve_bounded_treewidth"]

if TYPE_CHECKING:  # pragma: no cover
    from ilp.options import ILPOptions
    from ilp.problem import ILPInfeasibleError, ILPInputError
    from ilp.result import ILPResult
    from ilp.solve import ILPSolveError, solve_ilp
    from ilp.treewidth.ktree_filter import TreewidthInputError, restrict_to_bags, solve_ilp_within
    from ilp.treewidth.solve import solve_bounded_treewidth


def __getattr__(name: str) -> Any:
    """Load the public names on first use (PEP 562), as :mod:`hybridbn` does: the module of each."""
    # deferred: SCIP and numba start-up
    if name == "ILPOptions":
        import ilp.options as home
    elif name in ("ILPInputError", "ILPInfeasibleError"):
        import ilp.problem as home
    elif name == "ILPResult":
        import ilp.result as home
    elif name in ("ILPSolveError", "solve_ilp"):
        import ilp.solve as home
    elif name in ("TreewidthInputError", "restrict_to_bags", "solve_ilp_within"):
        import ilp.treewidth.ktree_filter as home
    elif name == "solve_bounded_treewidth":
        import ilp.treewidth.solve as home
    else:
        raise AttributeError(f"module 'ilp' has no attribute {name!r}")
    value = globals()[name] = getattr(home, name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
