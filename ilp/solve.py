"""``solve_ilp``: provably optimal DAG for a score table by the GOBNILP-style IP on SCIP.

Assembles the model (:mod:`ilp.model`, with GOBNILP's set-packing rows), the cluster-cut
constraint handler (:mod:`ilp.conshdlr_cluster`, with GOBNILP's 4-node convex-hull cuts), the
sink-finding heuristic and greedy warm start (:mod:`ilp.heur_sinks`), the progress event handler
(:mod:`ilp.event_progress`: progress records, trajectory, stop requests), and sets SCIP parameters
in the spirit of GOBNILP (Bartlett & Cussens 2017; GOBNILP manual): SCIP's own primal
heuristics off, cluster cuts separated at every node (``sepa_freq`` 1; the exact sub-IP only at
the root), light presolving, cheap branching (on arc variables, which tables of many candidate arcs
get only where cuts can use them), steepest-edge pricing on large tables, and one restart after a
root that fixed most families.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from pyscipopt import SCIP_PARAMSETTING, SCIP_STAGE

from graphs.dag import find_cycle
from hybridbn.errors import HybridBNError
from hybridbn.progress import Callback, check_callback, progress_record
from hybridbn.solving import check_time_limit
from ilp.clusters import arc_form_children
from ilp.conshdlr_cluster import include_cluster_conshdlr
from ilp.event_progress import include_progress_eventhdlr
from ilp.heur_sinks import include_sinks_heur
from ilp.model import FamilyModel, build_model
from ilp.options import ILPOptions
from ilp.plugin import plugin_stats, raise_plugin_error
from ilp.portfolio import solve_by_dp, use_dp
from ilp.problem import FamilyProblem, ILPInfeasibleError, ILPInputError, build_problem
from ilp.result import NO_SEARCH, ILPResult
from scores.table import ScoreTable

logger = logging.getLogger(__name__)

MIN_SCIP_SECONDS = 0.01
"""SCIP's time when model building used up ``time_limit``: it then returns the warm start."""

Hook = Callable[[FamilyModel], Iterable[Any]]
"""An ``extend`` hook of :func:`solve_ilp`: adds rows and plugins to the model, returns the plugins."""


class ILPSolveError(HybridBNError, RuntimeError):
    """SCIP stopped without any DAG (e.g. a time limit before the first feasible solution)."""


def _set_parameters(model, options: ILPOptions, n_families: int) -> None:
    model.hideOutput(not options.verbose)
    model.setHeuristics(SCIP_PARAMSETTING.OFF)
    model.setPresolve(SCIP_PARAMSETTING.FAST)
    # FAST presolving allows no restart; one after a root that fixed most families shortens the LPs
    model.setParam("presolving/maxrestarts", options.restarts)
    model.setParam("presolving/restartfac", options.restart_min_fixed)
    model.setParam("presolving/immrestartfac", options.restart_min_fixed)
    # SCIP's generic cuts (gomory, zerohalf) tighten the root a lot here; aggregation (c-MIR,
    # flow cover) finds nothing on set-partitioning rows, nor does the clique separator once the
    # set-packing rows are in (0 cuts on every table of docs/benchmarks.md, 13 of 90 CPU s on
    # andes without restriction): both only cost time.
    model.setParam("separating/aggregation/freq", -1)
    model.setParam("separating/clique/freq", -1)
    model.setParam("presolving/donotmultaggr", True)
    model.setParam("randomization/randomseedshift", int(options.seed))
    model.setParam("limits/gap", 0.0)
    model.setParam("limits/absgap", 0.0)
    model.setParam("separating/maxstallroundsroot", -1)
    model.setParam("separating/maxroundsroot", options.root_rounds)
    # Strong branching dominated the run time (alarm N=5000): trust pseudocosts after one
    # strong-branching sample and skip propagation inside strong branching (our Python
    # propagator would run for every candidate).
    model.setParam("branching/relpscost/maxreliable", 1.0)
    model.setParam("branching/relpscost/maxproprounds", 0)
    # and strong-branch at most 20 candidates per node (default 100): fewer LP iterations on
    # every unrestricted benchmark case (docs/benchmarks.md)
    model.setParam("branching/relpscost/initcand", 20)
    # Conflict analysis cost 2-3 s per alarm N=5000 solve and never shortened the tree once the
    # convex4 cuts were in (docs/benchmarks.md).
    model.setParam("conflict/enable", False)
    if n_families >= options.steepest_edge_min_families:
        model.setParam("lp/pricing", "s")
    for name, value in options.scip_params.items():
        model.setParam(name, value)


def arc_children(problem: FamilyProblem, options: ILPOptions) -> np.ndarray:
    """The nodes whose incoming arcs get arc variables, as :class:`ILPOptions` says
    (``arc_vars``, ``arc_vars_max_arcs``, ``arc_form_min_saving``)."""
    if not options.arc_vars:
        return np.zeros(problem.n_vars, dtype=bool)
    if problem.n_candidate_arcs <= options.arc_vars_max_arcs:
        return np.ones(problem.n_vars, dtype=bool)
    return arc_form_children(problem, options.arc_form_min_saving)


def _search_counts(model) -> dict[str, int]:
    """Nodes, LP iterations, cuts applied and runs (1 plus the restarts); all 0 when SCIP stopped
    before solving began (a tiny time limit ends it in presolving, where SCIP refuses these queries)."""
    if model.getStage() not in (SCIP_STAGE.SOLVING, SCIP_STAGE.SOLVED):
        return dict(NO_SEARCH)
    return {"nodes": model.getNTotalNodes(), "lp_iterations": model.getNLPIterations(),
            "cuts_applied": model.getNCutsApplied(), "runs": model.getNRuns()}


def solve_ilp(
    table: ScoreTable,
    options: ILPOptions = ILPOptions(),
    *,
    required_arcs=(),
    forbidden_arcs=(),
    palim: int | None = None,
    extend: Hook | Sequence[Hook] | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    progress: Callback | None = None,
) -> ILPResult:
    """Maximise the total local score over DAGs whose families are in ``table``.

    Family-variable IP with convexity and cluster constraints (Cussens 2011; Bartlett & Cussens
    2017; Su 2023 section 5.6), solved as :class:`ilp.options.ILPOptions` says. The problem:
    ``required_arcs`` / ``forbidden_arcs`` as ``(parent, child)`` pairs of indices or names;
    ``palim`` drops larger parent sets; ``extend(fm)`` (or each of a sequence of such hooks), if
    given, is called on the :class:`ilp.model.FamilyModel` once the plugins are in place and
    before the warm start; it may add variables, rows, plugins and start solutions (e.g. the
    treewidth models of :mod:`ilp.treewidth`) and returns its plugins
    (:class:`ilp.plugin.Plugin`): their ``error`` is re-raised after the solve and their
    ``stats`` dicts are merged into the result's. ``time_limit`` (seconds) bounds the whole call
    (SCIP gets what validation and model building left, at least ``MIN_SCIP_SECONDS``, so that
    ``--budget`` is kept) and returns the best DAG found with its dual bound and gap (status
    ``"timelimit"``). ``memory_limit`` (megabytes) caps the memory SCIP holds by its own account
    (``limits/memory``: the model, the LP and the cuts, which grow with every cut round on large
    tables; the process needs more for Python, the kernels and the table) and ends the solve the
    same way, status ``"memlimit"``. ``progress``, if given, receives a progress record
    (:mod:`hybridbn.progress`: elapsed time, incumbent, dual bound, gap, nodes) about once a second
    during the solve and a last one, with its ``status``, at the end; ``result.trajectory`` holds the
    solve's ``(seconds, incumbent, bound)`` points. A stop request (:mod:`hybridbn.interrupt`) ends
    the solve like a time limit, status ``"userinterrupt"`` (so does Ctrl-C caught by SCIP itself).

    Raises :class:`ILPInputError` (a ``ValueError``) on bad input before the solver starts,
    :class:`ILPInfeasibleError` if no acyclic choice of candidate parent sets exists, and
    :class:`ILPSolveError` if SCIP stopped before finding any DAG.

    Problems of at most ``options.dp_max_vars`` variables (and no ``extend``) are solved exactly
    by the dynamic programme of :mod:`ilp.portfolio` instead of SCIP when its rule says the DP is
    the cheaper.
    """
    t0 = time.perf_counter()
    if not isinstance(options, ILPOptions):
        raise ILPInputError(f"options must be an ILPOptions, got {type(options).__name__}")
    time_limit = check_time_limit(time_limit, ILPInputError)
    if memory_limit is not None and not memory_limit > 0:
        raise ILPInputError(f"memory_limit must be positive (megabytes) or None, got {memory_limit!r}")
    progress = check_callback(progress)
    problem = build_problem(table, required_arcs=required_arcs, forbidden_arcs=forbidden_arcs, palim=palim)
    hooks = () if extend is None else (extend,) if callable(extend) else tuple(extend)
    if not hooks and use_dp(problem, options.dp_max_vars):
        result = solve_by_dp(problem, table, t0)
        result.trajectory = [(sum(result.times.values()), result.objective, result.dual_bound)]
        _report_end(progress, result, time_limit)
        return result
    fm = build_model(problem, arc_children=arc_children(problem, options), set_packing=options.set_packing,
                     cluster_3=options.cluster_3)
    model = fm.model
    _set_parameters(model, options, problem.n_candidates)

    conshdlr = include_cluster_conshdlr(fm, options)
    for a in fm.arcs.values():
        model.chgVarBranchPriority(a, options.arc_branch_priority)
    heur = include_sinks_heur(fm, options)
    events = include_progress_eventhdlr(fm, t0, time_limit, progress)
    plugins = [conshdlr, heur, events] + [plugin for hook in hooks for plugin in hook(fm)]
    warm = heur.add_warm_start() if options.warm_start else None
    t_build = time.perf_counter() - t0
    t_first = t_build if warm is not None else None
    if time_limit is not None:  # the limit covers validation and model building too
        model.setParam("limits/time", max(time_limit - t_build, MIN_SCIP_SECONDS))
    if memory_limit is not None:
        model.setParam("limits/memory", float(memory_limit))

    model.optimizeNogil()  # SCIP's C code lets other threads run (the progress display's ticker)
    events.close()
    t_solve = time.perf_counter() - t0 - t_build
    if t_first is None and model.getNSols() > 0:
        t_first = t_build + min(model.getSolTime(s) for s in model.getSols())
    if options.verbose:
        model.printStatistics()
    raise_plugin_error(plugins)
    status = model.getStatus()
    if status == "infeasible":
        raise ILPInfeasibleError("no acyclic choice of the candidate parent sets exists")
    if status == "userinterrupt" and model.getNSols() == 0:  # Ctrl-C before any DAG: nothing to report
        raise KeyboardInterrupt("SCIP was interrupted before it found a DAG")
    if model.getNSols() == 0:
        raise ILPSolveError(f"SCIP stopped with status {status!r} before finding any DAG")

    sol = model.getBestSol()
    chosen = [f for f in range(problem.n_candidates) if model.getSolVal(sol, fm.x[f]) > 0.5]
    parent_sets = [()] * problem.n_vars
    for f in chosen:
        parent_sets[problem.child[f]] = problem.parents_of(f)
    dag = problem.dag_of(chosen)
    if find_cycle(dag) is not None:  # pragma: no cover - guarded by the constraint handler
        raise ILPSolveError("SCIP returned a cyclic graph")
    objective = table.score_of(parent_sets)
    dual = float(model.getDualbound())
    if model.isInfinity(abs(dual)):  # stopped before the root LP gave a bound
        dual = math.inf
    gap = 0.0 if status == "optimal" else max(0.0, (dual - objective) / max(abs(objective), 1e-12))
    counts = _search_counts(model)
    stats = {
        "method": "ilp",
        "n_vars": problem.n_vars,
        "n_families": problem.n_candidates,
        "n_arc_vars": len(fm.arcs),
        **counts,
        "warm_start_objective": float(problem.score[warm].sum()) if warm is not None else None,
        # SCIP leaves the root bound unset when the search ends at the root
        "root_dual_bound": float(model.getDualboundRoot()) if counts["nodes"] > 1 else dual,
        "first_incumbent_s": t_first,
        **plugin_stats(plugins),
    }
    logger.info("ILP %s: objective %.6f, dual bound %.6f, %d nodes, %.2f s",
                status, objective, dual, stats["nodes"], t_solve)
    trajectory = events.trajectory.finish(t_build + t_solve, objective, dual if math.isfinite(dual) else None)
    result = ILPResult(
        dag=dag, parent_sets=parent_sets, objective=objective, dual_bound=dual, gap=gap,
        status=status, names=problem.names, times={"build": t_build, "solve": t_solve}, stats=stats,
        trajectory=trajectory,
    )
    _report_end(progress, result, time_limit)
    return result


def _report_end(progress: Callback | None, result: ILPResult, limit: float | None) -> None:
    """The last progress record of a solve: its final state and ``status``."""
    if progress is not None:
        dual = result.dual_bound if math.isfinite(result.dual_bound) else None
        progress(progress_record("solve", "ilp", sum(result.times.values()), limit=limit, primal=result.objective,
                                 dual=dual, nodes=result.stats["nodes"], status=result.status))
