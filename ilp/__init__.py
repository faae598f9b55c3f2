"""GOBNILP-style integer programming for Bayesian-network structure learning on SCIP."""

from ilp.options import ILPOptions
from ilp.problem import ILPInfeasibleError, ILPInputError
from ilp.result import ILPResult
from ilp.solve import ILPSolveError, solve_ilp
from ilp.treewidth.ktree_filter import TreewidthInputError, restrict_to_bags, solve_ilp_within
from ilp.treewidth.solve import solve_bounded_treewidth

__all__ = [
    "solve_ilp", "solve_ilp_within", "solve_bounded_treewidth", "restrict_to_bags", "ILPOptions", "ILPResult",
    "ILPInputError", "ILPInfeasibleError", "ILPSolveError", "TreewidthInputError",
]
