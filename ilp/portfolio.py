"""The small-problem route of :func:`ilp.solve_ilp`: the exact dynamic programme.

On few variables the best-sink dynamic programme (Silander & Myllymäki 2006,
:mod:`ilp.exact_dp`) costs ``O(n 2^n)`` whatever the table, while the IP's difficulty grows
with the table and its LP gap: child (20 variables) at N=100, BDeu ESS 100, palim 3 (5,355
parent sets) takes the DP 0.4 CPU s and leaves both SCIP-based solvers (ours and GOBNILP) with a
gap after 60 s (docs/benchmarks.md), while SCIP solves small tables of 20 variables in a tenth of
that. A portfolio in the spirit of Malone et al. (2018): a deterministic rule on the number of
variables and families (:func:`use_dp`) picks the DP, which is exact on the same filtered family
set, or the IP.
"""

from __future__ import annotations

import time

from graphs.dag import adjacency_from_parents
from ilp.problem import FamilyProblem, ILPInfeasibleError
from ilp.result import NO_SEARCH, ILPResult
from scores.table import ScoreTable
from ilp.exact_dp import ExactDPError, exact_optimum

DP_MAX_VARS = 20
"""Default largest number of variables solved by the DP (its memory is ~12 n 2^n bytes)."""

DP_ALWAYS_VARS = 16
"""Up to this many variables the DP costs a few hundredths of a second: always taken."""

DP_MIN_FAMILIES = 1000
"""Above ``DP_ALWAYS_VARS`` the DP (about 0.4 CPU s at 20 variables) is taken from this many
families on: child N=1000 with 291-592 families is solved by SCIP in 0.06-0.24 s, with 1503-5355
families in 0.6 s to more than 60 s."""


def use_dp(problem: FamilyProblem, dp_max_vars: int) -> bool:
    """Whether :func:`ilp.solve_ilp` hands ``problem`` to the DP (a deterministic rule)."""
    return problem.n_vars <= dp_max_vars and (
        problem.n_vars <= DP_ALWAYS_VARS or problem.n_candidates >= DP_MIN_FAMILIES)


def solve_by_dp(problem: FamilyProblem, table: ScoreTable, t0: float) -> ILPResult:
    """Optimal DAG of ``problem`` by the DP, as an :class:`ILPResult` (status ``"optimal"``);
    ``problem`` is itself a score table (the families after parent limit and arcs), which the DP
    takes as it is; the objective is re-scored on the caller's ``table``. ``t0``: the caller's
    start clock."""
    t_build = time.perf_counter() - t0
    try:
        _, parent_sets = exact_optimum(problem, max_vars=problem.n_vars)
    except ExactDPError:  # the only error left on a validated problem within max_vars
        raise ILPInfeasibleError("no acyclic choice of the candidate parent sets exists") from None
    objective = table.score_of(parent_sets)
    t_solve = time.perf_counter() - t0 - t_build
    stats = {"method": "exact_dp", "n_vars": problem.n_vars, "n_families": problem.n_candidates,
             **NO_SEARCH, "root_dual_bound": objective,
             "first_incumbent_s": t_build + t_solve}
    return ILPResult(
        dag=adjacency_from_parents(parent_sets, problem.n_vars), parent_sets=parent_sets,
        objective=objective, dual_bound=objective, gap=0.0, status="optimal",
        names=problem.names, times={"build": t_build, "solve": t_solve}, stats=stats,
    )
