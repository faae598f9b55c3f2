"""The tabu search after an exact solve stopped at a limit, a step of the solve stage that composes
two declared solvers: the run's solver (tagged ``polish``, :data:`hybridbn.solving.TAGS`), then
``--solver tabu`` with bnlearn's defaults from its best DAG.

SCIP's last incumbent is often a few arc moves from a better DAG: on the munin1 and munin2 tables
of ``docs/benchmarks.md`` the search raises it within 0.2 and 6 CPU s, past what SCIP reaches in
600 s. The search runs on the families the solve chose from (inside the cops bags with
``--within-bags``) and keeps the knowledge's arcs; it cannot keep a treewidth bound or an
undirected requirement, so a run with either is not polished.
"""

from __future__ import annotations

from dataclasses import replace

from hybridbn.options import defaults
from hybridbn.progress import progress_record, relative_gap
from hybridbn.solving import POLISH, Solution, SolveInputs, json_ready
from pipeline.core.config import RunConfig
from pipeline.core.declarations import SOLVER

POLISHER = "tabu"
"""The declared solver that polishes."""
POLISH_SHARE = 0.1
"""Share of the time limit that the tabu search from a stopped solve's incumbent may take after it."""
POLISH_SECONDS = (2.0, 60.0)
"""Least and most seconds of that tabu search (the most also when the solve had no time limit)."""
NOT_POLISHED = frozenset({"optimal", "userinterrupt"})
"""Statuses after which the incumbent is returned as it is (proved, or the user asked to stop)."""


def polishes(cfg: RunConfig) -> bool:
    """Whether ``cfg``'s solver hands a DAG it stopped with to the tabu search: tagged ``polish``
    and without a treewidth bound."""
    return POLISH in SOLVER[cfg.solver].tags and cfg.treewidth is None


def polished(cfg: RunConfig, inputs: SolveInputs, solution: Solution) -> Solution:
    """``solution`` of ``cfg``'s solver on ``inputs``, polished by :func:`polish_incumbent` where
    it stopped at a limit (status not in :data:`NOT_POLISHED`), :func:`polishes` and the knowledge
    has no undirected requirement; as it is otherwise."""
    if not polishes(cfg) or inputs.adjacent_pairs or solution.summary["status"] in NOT_POLISHED:
        return solution
    if cfg.within_bags:
        import ilp  # deferred: SCIP start-up, already paid by the solve that just ran

        inputs = replace(inputs, table=ilp.restrict_to_bags(inputs.table, inputs.bags))
    return polish_incumbent(cfg, inputs, solution)


def polish_incumbent(cfg: RunConfig, inputs: SolveInputs, solution: Solution) -> Solution:
    """The tabu search (``--solver tabu`` at its declared defaults, bnlearn's) from
    ``solution``'s DAG on ``inputs``' table, for ``POLISH_SHARE`` of ``cfg``'s time limit (within
    ``POLISH_SECONDS``), honouring the knowledge's arcs. Returns the better DAG and the summary
    with ``local_search`` (the search's objective, moves, seconds, status, the incumbent's
    ``start_objective`` and whether it was ``adopted``); an adopted DAG brings its objective, gap
    and arc count, and a last trajectory point. The search's progress records go to
    ``inputs.progress`` (solver ``"tabu"``), then a last record of the run's solver with its status
    and the DAG it returns."""
    low, high = POLISH_SECONDS
    seconds = high if cfg.time_limit is None else min(max(POLISH_SHARE * cfg.time_limit, low), high)
    tabu = SOLVER[POLISHER]
    settings = replace(cfg, solver=POLISHER, time_limit=seconds, **defaults(tabu.params))
    found = tabu.run(settings, replace(inputs, start=solution.parent_sets))
    summary, search = solution.summary, found.summary
    adopted = found.parent_sets != solution.parent_sets and search["objective"] > summary["objective"]
    report = {"solver": POLISHER, "start_objective": summary["objective"], "objective": search["objective"],
              "n_iterations": search["n_iterations"],
              "seconds": search["trajectory"][-1][0],  # the search's last point is its end
              "status": search["status"], "adopted": adopted}
    dual = summary["dual_bound"]
    end = (summary["trajectory"][-1][0] if summary["trajectory"] else 0.0) + report["seconds"]
    if adopted:
        summary = {**summary, "objective": search["objective"], "gap": relative_gap(search["objective"], dual),
                   "n_edges": sum(map(len, found.parent_sets)),
                   "trajectory": [*summary["trajectory"], [end, search["objective"], dual]]}
    if inputs.progress is not None:  # the solve's last record: its status, the DAG it returns
        inputs.progress(progress_record("solve", cfg.solver, end, limit=cfg.time_limit, primal=summary["objective"],
                                        dual=dual, nodes=summary.get("stats", {}).get("nodes"),
                                        status=summary["status"]))
    return Solution(found.parent_sets if adopted else solution.parent_sets,
                    json_ready({**summary, "local_search": report}))
