"""Declaration of the exact ILP as a solver of the solve stage (see :mod:`hybridbn.options`),
with its parameters: the treewidth bound, the cops bags, SCIP's memory limit.

``run_ilp(settings, inputs) -> Solution`` (:mod:`hybridbn.solving`) reads ``settings.time_limit``,
``.memory_limit``, ``.treewidth`` and ``.within_bags`` (anything with these attributes, e.g. a
:class:`pipeline.core.config.RunConfig`) and the score table, knowledge arcs, bags, start
solution and progress callback of ``inputs``; the solution's summary holds the solve's
``trajectory`` (:class:`ilp.result.ILPResult`). The ``--solver`` choice is assembled in :mod:`search.methods`.

A solve that stops at a limit with a gap hands its incumbent to a tabu search
(:func:`polish_incumbent`), which keeps the better of the two and says what it found.
"""

from __future__ import annotations

from typing import Any

from hybridbn.options import FLAG, FLOAT, INT, Method, Param
from hybridbn.progress import progress_record, relative_gap
from hybridbn.solving import Solution, SolveInputs, json_ready

POLISH_SHARE = 0.1
"""Share of the time limit that the tabu search from a stopped solve's incumbent may take after it."""
POLISH_SECONDS = (2.0, 60.0)
"""Least and most seconds of that tabu search (the most also when the solve had no time limit)."""
NOT_POLISHED = frozenset({"optimal", "userinterrupt"})
"""ILP statuses after which the incumbent is returned as it is (proved, or the user asked to stop)."""

MEMORY_LIMIT = Param("memory_limit", FLOAT, None,
                     "with the ilp: megabytes SCIP may hold (its own account: model, LP, cuts); past it the "
                     "solve stops like at a time limit, with its best DAG, bound and gap (default: none)",
                     low=0.0, open="low", none=True, metavar="MB", key="memory_limit", keyed_when_set=True,
                     strict=True, grid="memory_limit", axis=False)
TREEWIDTH = Param("treewidth", INT, None,
                  "bound the treewidth of the learned DAG's moral graph by K: needed by kg/kastar; with ilp it "
                  "solves the exact treewidth-bounded ILP",
                  low=1, none=True, metavar="K", key="treewidth", keyed_when_set=True, strict=True,
                  grid="treewidths", what="a treewidth bound")
WITHIN_BAGS = Param("within_bags", FLAG, False,
                    "with --method cops and the ilp: families must lie inside a bag of the cops tree decomposition",
                    key="within_bags", keyed_when_set=True, strict=True, requires={"method": "cops"},
                    grid="within_bags")


def run_ilp(settings, inputs: SolveInputs) -> Solution:
    """Exact ILP (Su 2023, section 5.6); optionally treewidth-bounded or inside the cops bags,
    with the knowledge's arcs and adjacencies, warm-started from ``inputs.start`` (not with a
    treewidth bound)."""
    # deferred: SCIP and the numba kernels load only when the ILP runs, not where it is declared
    import ilp
    from ilp.hooks import adjacency_rows, start_solution

    args = {"time_limit": settings.time_limit, "memory_limit": settings.memory_limit,
            "required_arcs": inputs.required_arcs, "forbidden_arcs": inputs.forbidden_arcs,
            "progress": inputs.progress}
    table = ilp.restrict_to_bags(inputs.table, inputs.bags) if settings.within_bags else inputs.table
    if settings.treewidth is not None:  # no hooks: the knowledge's adjacencies are refused with a bound
        result = ilp.solve_bounded_treewidth(table, settings.treewidth, **args)
    else:
        hooks = [adjacency_rows(inputs.adjacent_pairs)] if inputs.adjacent_pairs else []
        if inputs.start is not None:
            hooks.append(start_solution(inputs.start))
        result = ilp.solve_ilp(table, **args, **({"extend": hooks} if hooks else {}))  # no hooks: the DP may solve it
    summary = {k: v for k, v in result.to_dict().items() if k not in ("parent_sets", "names")}
    parent_sets = [tuple(int(p) for p in ps) for ps in result.parent_sets]
    if settings.treewidth is None and not inputs.adjacent_pairs and result.status not in NOT_POLISHED:
        parent_sets, summary = polish_incumbent(table, parent_sets, summary, inputs, settings.time_limit)
    return Solution(parent_sets, json_ready(summary))


def polish_incumbent(table, parent_sets: list[tuple[int, ...]], summary: dict[str, Any], inputs: SolveInputs,
                     time_limit: float | None) -> tuple[list[tuple[int, ...]], dict[str, Any]]:
    """Tabu search with bnlearn's defaults (:func:`search.hill_climbing.tabu_search`) from the
    incumbent ``parent_sets`` of an ILP that stopped at a limit, for ``POLISH_SHARE`` of the time
    limit (within ``POLISH_SECONDS``), honouring the knowledge's arcs. SCIP's last incumbent is
    often a few arc moves from a better DAG: on the munin1 and munin2 tables of
    ``docs/benchmarks.md`` the search raises it within 0.2 and 6 CPU s, past what SCIP reaches in
    600 s. Returns the better DAG and ``summary`` with ``local_search`` (the search's objective,
    moves, seconds, status, the incumbent's ``start_objective`` and whether it was ``adopted``);
    an adopted DAG brings its objective, gap and arc count, and a last trajectory point. The
    search's progress records go to ``inputs.progress`` (solver ``"tabu"``), then a last
    ``"ilp"`` record with the solve's status and the DAG it returns."""
    from search.hill_climbing import tabu_search  # deferred: numba kernels, loaded only after a limit

    low, high = POLISH_SECONDS
    seconds = high if time_limit is None else min(max(POLISH_SHARE * time_limit, low), high)
    found = tabu_search(table, start=parent_sets, required_arcs=inputs.required_arcs,
                        forbidden_arcs=inputs.forbidden_arcs, time_limit=seconds, progress=inputs.progress)
    found_sets = [tuple(int(p) for p in ps) for ps in found.parent_sets]
    adopted = found_sets != parent_sets and found.score > summary["objective"]
    report = {"solver": "tabu", "start_objective": summary["objective"], "objective": float(found.score),
              "n_iterations": int(found.n_iterations),
              "seconds": float(found.time_s), "status": found.status, "adopted": adopted}
    dual = summary["dual_bound"]
    end = (summary["trajectory"][-1][0] if summary["trajectory"] else 0.0) + found.time_s
    if adopted:
        summary = {**summary, "objective": float(found.score), "gap": relative_gap(found.score, dual),
                   "n_edges": sum(map(len, found_sets)),
                   "trajectory": [*summary["trajectory"], [end, float(found.score), dual]]}
    if inputs.progress is not None:  # the solve's last record: the ILP's status, the DAG it returns
        inputs.progress(progress_record("solve", "ilp", end, limit=time_limit, primal=summary["objective"],
                                        dual=dual, nodes=summary.get("stats", {}).get("nodes"), status=summary["status"]))
    return (found_sets if adopted else parent_sets), {**summary, "local_search": report}


ILP = Method("ilp", "exact ILP on SCIP (Su 2023, section 5.6)", run_ilp, (TREEWIDTH, WITHIN_BAGS, MEMORY_LIMIT))
"""``--solver ilp``."""
