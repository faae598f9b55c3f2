"""The optimisers behind the solve stage, each behind one function of the same shape.

``solve(cfg, inputs) -> Solution``: ``inputs`` carries what the stages before produced (the
score table, the data set, the restriction); a :class:`Solution` is the learned parent sets plus
a JSON-ready summary whose common keys are ``objective`` (total local score of the DAG),
``dual_bound``, ``gap`` and ``status`` (the exact ILP fills all four; heuristics report their
score with no bound). Algorithm packages are imported inside the functions so that a solver's
dependencies are loaded only when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hybridbn.options import FLAG, FLOAT, INT, SECONDS, TEXT, Choice, Method, Param

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.config import RunConfig


@dataclass
class SolveInputs:
    """What a solver may use: score table, data set, ``allowed[p, c]`` matrix, decomposition bags."""

    names: list[str]
    table: Any = None
    dataset: Any = None
    allowed: np.ndarray | None = None
    bags: list[list[int]] | None = None
    knowledge: Any = None  # pipeline.knowledge.KnowledgeMatrices
    start: list[tuple[int, ...]] | None = None
    """Parent sets of a DAG to warm-start from (the incumbent of an earlier, unfinished solve)."""


@dataclass
class Solution:
    parent_sets: list[tuple[int, ...]]
    summary: dict[str, Any]


def json_ready(value: Any) -> Any:
    """numpy scalars to Python, tuples to lists, recursively (for JSON metadata)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


def solve_ilp_stage(cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """Exact ILP (Su 2023, section 5.6); optionally treewidth-bounded or inside the cops bags."""
    import ilp

    ilp_args: dict[str, Any] = {"time_limit": cfg.time_limit, "memory_limit": cfg.memory_limit}
    if inputs.knowledge is not None:
        from pipeline.knowledge import ilp_inputs

        ilp_args.update(ilp_inputs(inputs.knowledge))
    table = ilp.restrict_to_bags(inputs.table, inputs.bags) if cfg.within_bags else inputs.table
    if cfg.treewidth is not None:
        result = ilp.solve_bounded_treewidth(table, cfg.treewidth, **ilp_args)
    else:
        if inputs.start is not None:  # with the knowledge's hook, if any
            from pipeline.incumbent import start_solution

            ilp_args["extend"] = [*filter(None, [ilp_args.get("extend")]), start_solution(inputs.start)]
        result = ilp.solve_ilp(table, **ilp_args)
    summary = {k: v for k, v in result.to_dict().items() if k not in ("parent_sets", "names")}
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


ANYTIME_TIME_LIMIT = 60.0
"""Seconds k-G / k-A* search when the run gives no ``--time-limit``."""


def solve_kg(cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """k-G (Scanagatta et al., section 3.1): greedy k-tree growth along sampled orders."""
    from search.kgreedy import k_greedy

    return _bounded_search(k_greedy, cfg, inputs)


def solve_kastar(cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """k-A* (Scanagatta et al., section 3.2): A* over k-tree extensions along sampled orders."""
    from search.kastar import k_astar

    return _bounded_search(k_astar, cfg, inputs)


def _bounded_search(learner, cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """An anytime treewidth-bounded search (k-G or k-A*): treewidth at most ``cfg.treewidth``."""
    time_limit = ANYTIME_TIME_LIMIT if cfg.time_limit is None else cfg.time_limit
    result = learner(inputs.table, cfg.treewidth, time_limit=time_limit, seed=0)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": result.status,
        "treewidth_bound": cfg.treewidth, "treewidth": int(result.decomposition.width),
        "n_orders": int(result.n_orders), "time_limit": time_limit,
    }
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


def solve_ges(cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """GES (Chickering 2002)."""
    from search.ges import ges

    return _equivalence_search(ges, cfg, inputs, {})


def solve_sges(cfg: RunConfig, inputs: SolveInputs) -> Solution:
    """SGES (Chickering & Meek 2015) with the property bound ``cfg.sges_bound``."""
    from search.sges import sges

    def search(score, n, **options):
        return sges(score, n, cfg.sges_bound, **options)

    return _equivalence_search(search, cfg, inputs, {"sges_bound": cfg.sges_bound})


def _equivalence_search(search, cfg: RunConfig, inputs: SolveInputs, extra: dict[str, Any]) -> Solution:
    """An equivalence-class search scoring the data on demand.

    The parent limit bounds the forward phase; the restriction limits the adjacencies it may
    create. The DAG is a consistent extension of the learned CPDAG.
    """
    from graphs.dag import parents_from_adjacency
    from scores.local import local_score_function

    data, arities = inputs.dataset.data, inputs.dataset.arities
    score = local_score_function(data, arities, cfg.score, cfg.ess, cfg.structure_prior)
    result = search(score, data.shape[1], allowed=inputs.allowed, palim=cfg.palim)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": "converged",
        "n_score_evaluations": int(result.n_score_evaluations),
        "n_evaluations_forward": int(result.n_evaluations_forward),
        "n_inserts": int(result.n_inserts), "n_deletes": int(result.n_deletes), **extra,
    }
    return Solution(parents_from_adjacency(result.dag), json_ready(summary))


def _check_sges_bound(text: str) -> None:
    from search.sges import parse_bound

    parse_bound(text)


TIME_LIMIT = Param("time_limit", SECONDS, None,
                   "solver time limit in seconds (default: none; 60 for the anytime kg / kastar)",
                   key="time_limit", grid="time_limit", axis=False)
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
SGES_BOUND = Param("sges_bound", TEXT, "parents:3", "SGES property bound: parents:K, clique:K or vwidth:K",
                   metavar="NAME:K", key="sges_bound", grid="sges_bounds", check=_check_sges_bound)
ON_DATA = ("score", "palim")
"""What GES and SGES read besides the data: the score (and its parameters) and the parent limit."""

SOLVER = Choice(
    name="solver", default="ilp", grid="solvers", stage="solve",
    help="optimiser: ilp (exact), kg / kastar (treewidth-bounded, need --treewidth), ges / sges "
         "(equivalence-class search)",
    params=(TIME_LIMIT,), constants={"solver_seed": 0},
    methods=(
        Method("ilp", "exact ILP on SCIP (Su 2023, section 5.6)", solve_ilp_stage,
               (TREEWIDTH, WITHIN_BAGS, MEMORY_LIMIT)),
        Method("kg", "k-G (Scanagatta et al.)", solve_kg, (TREEWIDTH,), needs=("treewidth",)),
        Method("kastar", "k-A* (Scanagatta et al.)", solve_kastar, (TREEWIDTH,), needs=("treewidth",)),
        Method("ges", "GES (Chickering 2002)", solve_ges, uses=ON_DATA),
        Method("sges", "SGES (Chickering & Meek 2015)", solve_sges, (SGES_BOUND,), uses=ON_DATA),
    ),
)
"""``--solver``: ``run(cfg, inputs: SolveInputs) -> Solution``."""
