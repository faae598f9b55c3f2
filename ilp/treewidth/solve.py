"""``solve_bounded_treewidth``: the best DAG whose moral graph has treewidth at most ``k``.

Exact, on :func:`ilp.solve_ilp` with one of two treewidth models: ``"obstruction"`` (default;
lazy obstruction cuts on moral-edge variables, :mod:`ilp.treewidth.obstruction`) or ``"elimination"``
(the elimination-order program (3) of Nie, Mauá, de Campos & Ji, NIPS 2014,
:mod:`ilp.treewidth.elimination`). The unbounded problem with parent limit ``k`` is a relaxation and is
solved first: if its optimum already has treewidth ``<= k`` it is the answer; otherwise its
dual bound enters the bounded model as the objective row ``sum_f s_f x_f <= U``, so the bounded
search starts from the relaxation's bound instead of its own (much weaker) LP bound.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np
from pyscipopt import quicksum

from graphs.moral import moral_graph
from graphs.treewidth import dag_treewidth, width_at_most
from hybridbn.progress import Callback, Record, Trajectory, check_callback
from ilp.model import FamilyModel
from ilp.options import ILPOptions
from ilp.result import ILPResult
from ilp.solve import ILPSolveError, solve_ilp
from ilp.treewidth.elimination import elimination_extension
from ilp.treewidth.ktree_filter import TreewidthInputError, check_width
from ilp.treewidth.obstruction import obstruction_extension
from scores.table import ScoreTable

logger = logging.getLogger(__name__)

FORMULATIONS = {"obstruction": obstruction_extension, "elimination": elimination_extension}

BOUNDED_SEPA_FREQ = 10
"""Cluster cuts every 10 depth levels in the bounded model, not at every node as in the unbounded
default: alarm k = 2 (BIC, N=5000) took 168.7 CPU s and 1063 nodes so, 429.7 s and 2895 nodes
with separation at every node."""


def _certified_within(dag: np.ndarray, k: int) -> bool:
    """Whether the moral graph of ``dag`` provably has treewidth ``<= k`` (undecided: False)."""
    try:
        return width_at_most(moral_graph(dag), k)
    except ValueError:  # too large for the exact programme
        return False


def _with_objective_bound(extend, upper_bound: float | None):
    """``extend`` plus the row ``sum_f s_f x_f <= upper_bound`` (nothing if ``None``)."""

    def wrapped(fm: FamilyModel):
        if upper_bound is not None:
            objective = quicksum(s * x for s, x in zip(fm.problem.score.tolist(), fm.x))
            fm.model.addCons(objective <= upper_bound, name="relaxation_bound")
        return extend(fm)

    return wrapped


def _in_phase(progress: Callback | None, phase: str, offset: float, limit: float | None) -> Callback | None:
    """``progress`` for one of the two solves: seconds since the call began, the call's time limit,
    and the ``phase``; the relaxation's incumbents need not be bounded DAGs, so its records give
    only its bound."""
    if progress is None:
        return None

    def report(record: Record) -> None:
        record = {**record, "elapsed": record["elapsed"] + offset, "limit": limit, "phase": phase}
        if phase == "relaxation":
            record.update(primal=None, gap=None)
        progress(record)

    return report


def _joined(points: list) -> list:
    """The points of both solves as one trajectory: incumbents never worse, bounds never weaker."""
    joined = Trajectory(min_spacing=0.0, rel_spacing=0.0)
    for point in points[:-1]:
        joined.add(*point)
    return joined.finish(*points[-1])


def solve_bounded_treewidth(
    table: ScoreTable,
    k: int,
    options: ILPOptions = ILPOptions(),
    *,
    formulation: str = "obstruction",
    required_arcs=(),
    forbidden_arcs=(),
    palim: int | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    relaxation_first: bool = True,
    progress: Callback | None = None,
) -> ILPResult:
    """Best DAG over the families of ``table`` whose moral graph has treewidth at most ``k``.

    ``formulation`` picks the treewidth model (see the module docstring); ``palim`` is capped
    at ``k``; the arcs, ``palim``, ``time_limit`` and ``memory_limit`` are those of
    :func:`ilp.solve_ilp`, which solves with ``options``; in the bounded model the core
    sink-finding heuristic and warm start give way to the treewidth-repaired ones
    (:mod:`ilp.treewidth.heur_bounded_sinks`, run as ``options.sinks_freq`` and
    ``options.warm_start`` say) and cluster cuts are separated every :data:`BOUNDED_SEPA_FREQ`
    depth levels (``options.sepa_freq`` is the relaxation's). With
    ``relaxation_first`` the unbounded problem is solved first with half of any time limit;
    ``stats["relaxation_optimal"]`` says whether its optimum was the answer and
    ``stats["relaxation_bound"]`` is the bound it gave otherwise. ``stats["treewidth"]`` is the
    exact treewidth of the result's moral graph. ``progress`` receives the records of both solves
    (:func:`ilp.solve_ilp`) with their ``phase`` (``"relaxation"``, ``"bounded"``) and the time
    since this call began; ``trajectory`` joins the relaxation's bounds and the bounded solve's
    points. Raises :class:`TreewidthInputError` unless
    ``1 <= k <= n - 1`` and the formulation is known.
    """
    if not isinstance(table, ScoreTable):
        raise TreewidthInputError(f"expected a ScoreTable, got {type(table).__name__}")
    if formulation not in FORMULATIONS:
        raise TreewidthInputError(f"formulation must be one of {sorted(FORMULATIONS)}, got {formulation!r}")
    k = check_width(k, table.n_vars)
    if palim is None or (isinstance(palim, (int, np.integer)) and palim > k):
        palim = k
    progress = check_callback(progress)
    problem = {"required_arcs": required_arcs, "forbidden_arcs": forbidden_arcs, "palim": palim}
    res, via_relaxation, bound = None, False, None
    limit, offset, points = time_limit, 0.0, []
    if relaxation_first:
        first = solve_ilp(table, options, time_limit=None if time_limit is None else time_limit / 2,
                          memory_limit=memory_limit, progress=_in_phase(progress, "relaxation", 0.0, limit),
                          **problem)
        offset = sum(first.times.values())
        points = [(t, None, dual) for t, _, dual in first.trajectory]
        if first.status == "optimal" and _certified_within(first.dag, k):
            res, via_relaxation = first, True
            logger.info("the unbounded optimum has treewidth <= %d: it is the bounded optimum", k)
        else:
            if math.isfinite(first.dual_bound):
                bound = first.dual_bound + 1e-9 * max(1.0, abs(first.dual_bound))
            if time_limit is not None:
                time_limit = max(time_limit - offset, time_limit / 4)
    if res is None:
        model = FORMULATIONS[formulation](k, options.warm_start, options.sinks_freq)
        bounded = replace(options, sepa_freq=BOUNDED_SEPA_FREQ, sinks_freq=-1, warm_start=False)
        res = solve_ilp(table, bounded, time_limit=time_limit, memory_limit=memory_limit,
                        extend=_with_objective_bound(model, bound),
                        progress=_in_phase(progress, "bounded", offset, limit), **problem)
        points += [(t + offset, primal, dual) for t, primal, dual in res.trajectory]
    else:
        points[-1] = res.trajectory[-1]
    res.trajectory = _joined(points)
    width = dag_treewidth(res.dag).width
    if width > k:  # pragma: no cover - guarded by the treewidth model
        raise ILPSolveError(f"the learned DAG has treewidth {width} > k={k}")
    res.stats.update(treewidth=width, relaxation_optimal=via_relaxation, relaxation_bound=bound,
                     formulation=formulation)
    return res
