"""GOBNILP-style integer programming for Bayesian-network structure learning on SCIP."""

from ilp.problem import ILPInfeasibleError, ILPInputError
from ilp.result import ILPResult
from ilp.solve import ILPSolveError, solve_ilp

__all__ = ["solve_ilp", "ILPResult", "ILPInputError", "ILPInfeasibleError", "ILPSolveError"]
