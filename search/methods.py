"""Declarations of the heuristic solvers and the ``--solver`` choice (see :mod:`hybridbn.options`).

A solver's ``run(settings, inputs) -> Solution`` (:mod:`hybridbn.solving`) reads the run's
settings (anything with the declared parameters as attributes, e.g. a
:class:`pipeline.core.config.RunConfig`) and a :class:`~hybridbn.solving.SolveInputs`: k-G,
k-A*, hill climbing and tabu search its score table, GES and SGES its data set and ``allowed``
matrix (they score the data on demand, so the score and the parent limit enter their key).
:data:`SOLVER` gathers them with the exact ILP declared in :mod:`ilp.methods`.

Hill climbing and tabu search run on the same pruned table as the ILP (any parent limit, the
restriction and the knowledge already in it), so ``--budget``, ``--scores FILE.jkl`` and
``--time-limit`` apply as for k-G. Their families scored on demand from the data
(:func:`search.hill_climbing.hill_climb_on_data`) are a Python call, not a ``--solver``: a
run always has its table, cut by the budget where it would take too long.
"""

from __future__ import annotations

from typing import Any

from graphs.dag import parents_from_adjacency
import numpy as np

from hybridbn.options import INT, SECONDS, TEXT, Choice, Method, Param
from hybridbn.progress import relative_gap
from hybridbn.solving import Solution, SolveInputs, json_ready
from ilp.methods import ILP, TREEWIDTH
from scores.methods import PALIM, SCORE

ANYTIME_TIME_LIMIT = 60.0
"""Seconds k-G / k-A* search when the run gives no ``--time-limit``."""
SOLVER_SEED = 0
"""Seed of the solvers' random choices (k-G / k-A* orders, the perturbations of hc / tabu
restarts); a constant entry of every solve key, so a cached result is the one this seed gives."""


def run_kg(settings, inputs: SolveInputs) -> Solution:
    """k-G (Scanagatta et al., section 3.1): greedy k-tree growth along sampled orders."""
    from search.kgreedy import k_greedy  # deferred: loads pandas and tqdm, not needed to declare

    return _bounded_search(k_greedy, settings, inputs)


def run_kastar(settings, inputs: SolveInputs) -> Solution:
    """k-A* (Scanagatta et al., section 3.2): A* over k-tree extensions along sampled orders."""
    from search.kastar import k_astar  # deferred: loads pandas and tqdm, not needed to declare

    return _bounded_search(k_astar, settings, inputs)


def _bounded_search(learner, settings, inputs: SolveInputs) -> Solution:
    """An anytime treewidth-bounded search (k-G or k-A*): treewidth at most ``settings.treewidth``."""
    time_limit = ANYTIME_TIME_LIMIT if settings.time_limit is None else settings.time_limit
    result = learner(inputs.table, settings.treewidth, time_limit=time_limit, seed=SOLVER_SEED,
                     progress=inputs.progress)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": result.status,
        "treewidth_bound": settings.treewidth, "treewidth": int(result.decomposition.width),
        "n_orders": int(result.n_orders), "time_limit": time_limit,
        "trajectory": [(t, score, None) for t, _, score in result.stats["history"]]
        + [(result.time_s, float(result.score), None)],
    }
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


def run_hc(settings, inputs: SolveInputs) -> Solution:
    """Hill climbing over DAGs by arc addition, deletion and reversal (bnlearn's ``hc``)."""
    return _greedy_search(settings, inputs, tabu=0)


def run_tabu(settings, inputs: SolveInputs) -> Solution:
    """Tabu search over DAGs (bnlearn's ``tabu``): tabu list of ``settings.tabu`` graphs."""
    return _greedy_search(settings, inputs, tabu=settings.tabu, max_tabu=settings.max_tabu)


def _greedy_search(settings, inputs: SolveInputs, **tabu) -> Solution:
    """:func:`search.hill_climbing.hill_climb` on the score table, with the knowledge's arcs and
    bnlearn's ``restart``, ``perturb`` and ``max.iter``; its score beside
    :func:`best_families_bound`, the trivial upper bound on every DAG of the table."""
    from search.hill_climbing import hill_climb  # deferred: numba kernels, not needed to declare

    result = hill_climb(inputs.table, **tabu, max_iter=settings.max_iter, restarts=settings.restart,
                        perturb=settings.perturb, required_arcs=inputs.required_arcs,
                        forbidden_arcs=inputs.forbidden_arcs, time_limit=settings.time_limit, seed=SOLVER_SEED,
                        progress=inputs.progress)
    bound = best_families_bound(inputs.table, inputs.required_arcs, inputs.forbidden_arcs)
    summary = {
        "objective": float(result.score), "dual_bound": bound, "bound": "best families",
        "gap": relative_gap(result.score, bound), "status": result.status,
        "n_iterations": int(result.n_iterations), "n_restarts": int(result.n_restarts),
        "time_limit": settings.time_limit, "trajectory": result.trajectory,
    }
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


def best_families_bound(table, required_arcs=(), forbidden_arcs=()) -> float:
    """The sum over children of each child's best family in ``table`` that holds its required
    parents and no forbidden one: an upper bound on the score of every DAG of those families
    (the graph with each child at its best family, acyclic or not; the admissible heuristic of
    A* search for BNs, Yuan & Malone 2013, at the start state). It is trivial beside the ILP's LP
    bound, and tight only when the best families form a DAG."""
    n = table.n_vars
    required, allowed = np.zeros((n, n), dtype=bool), np.ones((n, n), dtype=bool)
    for mat, arcs, value in ((required, required_arcs, True), (allowed, forbidden_arcs, False)):
        for p, c in arcs:
            mat[p, c] = value
    rows = np.flatnonzero(table.respecting(allowed, required))
    _, first = np.unique(table.child[rows], return_index=True)  # rows of a child by decreasing score
    return float(sum(table.score[rows[first]].tolist()))


def run_ges(settings, inputs: SolveInputs) -> Solution:
    """GES (Chickering 2002)."""
    from search.ges import ges  # deferred: start-up (about 15 ms on every run, cached ones included)

    return _equivalence_search(ges, settings, inputs, {})


def run_sges(settings, inputs: SolveInputs) -> Solution:
    """SGES (Chickering & Meek 2015) with the property bound ``settings.sges_bound``."""
    from search.sges import sges  # deferred: start-up, as search.ges

    def search(score, n, **options):
        return sges(score, n, settings.sges_bound, **options)

    return _equivalence_search(search, settings, inputs, {"sges_bound": settings.sges_bound})


def _equivalence_search(search, settings, inputs: SolveInputs, extra: dict[str, Any]) -> Solution:
    """An equivalence-class search scoring the data on demand.

    The parent limit bounds the forward phase; the restriction limits the adjacencies it may
    create. The DAG is a consistent extension of the learned CPDAG.
    """
    from scores.local import local_score_function  # deferred: numba kernels, not needed to declare

    data, arities = inputs.dataset.data, inputs.dataset.arities
    score = local_score_function(data, arities, settings.score, settings.ess, settings.structure_prior)
    result = search(score, data.shape[1], allowed=inputs.allowed, palim=settings.palim, progress=inputs.progress)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": result.status,
        "n_score_evaluations": int(result.n_score_evaluations),
        "n_evaluations_forward": int(result.n_evaluations_forward),
        "n_inserts": int(result.n_inserts), "n_deletes": int(result.n_deletes), **extra,
    }
    return Solution(parents_from_adjacency(result.dag), json_ready(summary))


def _check_sges_bound(text: str) -> None:
    from search.sges import parse_bound  # deferred: start-up, as search.ges (checked only when set)

    parse_bound(text)


TIME_LIMIT = Param("time_limit", SECONDS, None,
                   "solver time limit in seconds (default: none; 60 for the anytime kg / kastar); an ILP stopped "
                   "by it then runs a tabu search from its best DAG for a tenth of it (2-60 s) and keeps the better",
                   key="time_limit", grid="time_limit", axis=False)
SGES_BOUND = Param("sges_bound", TEXT, "parents:3", "SGES property bound: parents:K, clique:K or vwidth:K",
                   metavar="NAME:K", key="sges_bound", grid="sges_bounds", check=_check_sges_bound)
RESTART = Param("restart", INT, 0,
                "with hc / tabu: random restarts, each from the best DAG so far perturbed by --perturb random "
                "arc moves (bnlearn's restart)", metavar="R", key="restart", strict=True, grid="restart",
                axis=False)
PERTURB = Param("perturb", INT, 1, "with hc / tabu: random arc additions, deletions or reversals before each "
                "restart (bnlearn's perturb)", low=1, metavar="P", key="perturb", strict=True, grid="perturb",
                axis=False, column=False)
MAX_ITER = Param("max_iter", INT, None, "with hc / tabu: at most this many arc moves over all climbs (bnlearn's "
                 "max.iter; default: none)", low=1, none=True, metavar="M", key="max_iter", strict=True,
                 grid="max_iter", axis=False, column=False)
TABU = Param("tabu", INT, 10, "with tabu: length of the tabu list of recent graphs (bnlearn's tabu)", low=1,
             metavar="T", key="tabu", strict=True, grid="tabu", axis=False)
MAX_TABU = Param("max_tabu", INT, None, "with tabu: moves that do not improve since the last new best before a "
                 "climb ends (bnlearn's max.tabu; default: --tabu)", low=1, none=True, metavar="T", key="max_tabu",
                 strict=True, grid="max_tabu", axis=False, column=False)
GREEDY = (RESTART, PERTURB, MAX_ITER)
"""The parameters hill climbing and tabu search share, keyed at every value (no earlier key holds them)."""
HILL_CLIMBERS = ("hc", "tabu")
"""The solvers of :func:`search.hill_climbing.hill_climb`, whose kernels' warm-up needs a restart."""
ON_DATA = (SCORE, PALIM)
"""What GES and SGES read besides the data: the score (and its parameters) and the parent limit."""

SOLVER = Choice(
    name="solver", default="ilp", grid="solvers", stage="solve",
    help="optimiser: ilp (exact), kg / kastar (treewidth-bounded, need --treewidth), hc / tabu (hill "
         "climbing, tabu search over DAGs, as bnlearn's), ges / sges (equivalence-class search)",
    params=(TIME_LIMIT,), constants={"solver_seed": SOLVER_SEED},
    methods=(
        ILP,
        Method("kg", "k-G (Scanagatta et al.)", run_kg, (TREEWIDTH,), needs=(TREEWIDTH,)),
        Method("kastar", "k-A* (Scanagatta et al.)", run_kastar, (TREEWIDTH,), needs=(TREEWIDTH,)),
        Method("hc", "hill climbing over DAGs (bnlearn's hc)", run_hc, GREEDY),
        Method("tabu", "tabu search over DAGs (bnlearn's tabu)", run_tabu, (TABU, MAX_TABU, *GREEDY)),
        Method("ges", "GES (Chickering 2002)", run_ges, uses=ON_DATA),
        Method("sges", "SGES (Chickering & Meek 2015)", run_sges, (SGES_BOUND,), uses=ON_DATA),
    ),
)
"""``--solver``: ``run(settings, inputs: SolveInputs) -> Solution``."""
