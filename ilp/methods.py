"""Declaration of the exact ILP as a solver of the solve stage (see :mod:`hybridbn.options`),
with its parameters: the treewidth bound, the cops bags, SCIP's memory limit.

``run_ilp(settings, inputs) -> Solution`` (:mod:`hybridbn.solving`) reads ``settings.time_limit``,
``.memory_limit``, ``.treewidth`` and ``.within_bags`` (anything with these attributes, e.g. a
:class:`pipeline.core.config.RunConfig`) and the score table, knowledge arcs, bags, start
solution and progress callback of ``inputs``; the solution's summary holds the solve's
``trajectory`` (:class:`ilp.result.ILPResult`). The ``--solver`` choice is assembled in
:mod:`pipeline.core.declarations`; the tabu search after a solve stopped at a limit is a step of
the solve stage (:mod:`pipeline.core.polish`), which the ``polish`` tag asks for.
"""

from __future__ import annotations

from hybridbn.options import FLAG, FLOAT, INT, Method, Param
from hybridbn.solving import (ADJACENCY, ANYTIME, ARCS, EXACT_BOUND, POLISH, WARM_START, Solution, SolveInputs,
                              json_ready)

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
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


ILP = Method("ilp", "exact ILP on SCIP (Su 2023, section 5.6)", run_ilp, (TREEWIDTH, WITHIN_BAGS, MEMORY_LIMIT),
             tags=frozenset({EXACT_BOUND, WARM_START, POLISH, ANYTIME, ARCS, ADJACENCY}))
"""``--solver ilp``."""
