"""Declarations of the heuristic solvers and the ``--solver`` choice (see :mod:`hybridbn.options`).

A solver's ``run(settings, inputs) -> Solution`` (:mod:`hybridbn.solving`) reads the run's
settings (anything with the declared parameters as attributes, e.g. a
:class:`pipeline.core.config.RunConfig`) and a :class:`~hybridbn.solving.SolveInputs`: k-G,
k-A*, hill climbing and tabu search its score table, GES and SGES its data set and ``allowed``
matrix (they score the data on demand, so the score and the parent limit enter their key).
:data:`SEARCHES` lists them; :data:`pipeline.core.declarations.SOLVER` gathers them with the exact
ILP of :mod:`ilp.methods` into the ``--solver`` choice. Each declares its capability tags
(:data:`hybridbn.solving.TAGS`), which the run reads instead of its name.

Hill climbing and tabu search run on the same pruned table as the ILP (any parent limit, the
restriction and the knowledge already in it), so ``--budget``, ``--scores FILE.jkl`` and
``--time-limit`` apply as for k-G. Their families scored on demand from the data
(:func:`search.hill_climbing.hill_climb_on_data`) are a Python call, not a ``--solver``: a
run always has its table, cut by the budget where it would take too long.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from graphs.dag import parents_from_adjacency
import numpy as np

from hybridbn.options import INT, TEXT, Method, Param
from hybridbn.progress import relative_gap
from hybridbn.solving import ANYTIME, ARCS, EXACT_GAP, SOLVER_SEED, Solution, SolveInputs, json_ready
from ilp.methods import TREEWIDTH
from scores.methods import PALIM, SCORE

ANYTIME_TIME_LIMIT = 60.0
"""Seconds k-G / k-A* / S2 / S2+ search when the run gives no ``--time-limit``."""


def run_kg(settings, inputs: SolveInputs) -> Solution:
    """k-G (Scanagatta et al., section 3.1): greedy k-tree growth along sampled orders."""
    from search.kgreedy import k_greedy  # deferred: loads pandas and tqdm, not needed to declare

    return _bounded_search(k_greedy, settings, inputs)


def run_kastar(settings, inputs: SolveInputs) -> Solution:
    """k-A* (Scanagatta et al., section 3.2): A* over k-tree extensions along sampled orders."""
    from search.kastar import k_astar  # deferred: loads pandas and tqdm, not needed to declare

    return _bounded_search(k_astar, settings, inputs)


def run_s2(settings, inputs: SolveInputs) -> Solution:
    """S2 (Nie, de Campos & Ji 2015; Scanagatta et al., section 3.4): uniform k-trees accepted by
    their informative score, the best DAG inside each; at most ``settings.ktrees`` k-trees."""
    from search.s2 import s2  # deferred: as k-G, not needed to declare

    return _bounded_search(partial(s2, max_samples=settings.ktrees), settings, inputs)


def run_s2plus(settings, inputs: SolveInputs) -> Solution:
    """S2+ (Nie, de Campos & Ji 2016; Scanagatta et al., section 3.4): k-trees grown by pairwise
    information, the best DAG inside each; at most ``settings.ktrees`` k-trees."""
    from search.s2 import s2_plus  # deferred: as k-G, not needed to declare

    return _bounded_search(partial(s2_plus, max_samples=settings.ktrees), settings, inputs)


def _bounded_search(learner, settings, inputs: SolveInputs) -> Solution:
    """An anytime treewidth-bounded search (k-G, k-A*, S2 or S2+): treewidth at most
    ``settings.treewidth``."""
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
    bnlearn's ``restart``, ``perturb`` and ``max.iter``, from ``inputs.start`` where given (the
    empty graph plus the required arcs otherwise); its score beside :func:`best_families_bound`,
    the trivial upper bound on every DAG of the table."""
    from search.hill_climbing import hill_climb  # deferred: numba kernels, not needed to declare

    result = hill_climb(inputs.table, **tabu, max_iter=settings.max_iter, restarts=settings.restart,
                        perturb=settings.perturb, required_arcs=inputs.required_arcs,
                        forbidden_arcs=inputs.forbidden_arcs, start=inputs.start, time_limit=settings.time_limit,
                        seed=SOLVER_SEED, progress=inputs.progress)
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
KTREES = Param("ktrees", INT, None, "with s2 / s2plus: stop after this many k-trees (default: at the time limit "
                "only), so that the result does not depend on the machine's speed", low=1, none=True, metavar="N",
                key="ktrees", strict=True, grid="ktrees", axis=False, column=False)
GREEDY = (RESTART, PERTURB, MAX_ITER)
"""The parameters hill climbing and tabu search share, keyed at every value (no earlier key holds them)."""
ON_DATA = (SCORE, PALIM)
"""What GES and SGES read besides the data: the score (and its parameters) and the parent limit."""

TABLE_TAGS = frozenset({ANYTIME, ARCS})
"""What k-G, k-A*, S2, S2+, hill climbing and tabu search share: their best DAG at a time limit, and the
knowledge's arcs kept by the families of their table."""
SEARCHES = (
    Method("kg", "k-G (Scanagatta et al.)", run_kg, (TREEWIDTH,), needs=(TREEWIDTH,), tags=TABLE_TAGS),
    Method("kastar", "k-A* (Scanagatta et al.)", run_kastar, (TREEWIDTH,), needs=(TREEWIDTH,), tags=TABLE_TAGS),
    Method("s2", "S2 (Nie, de Campos & Ji 2015)", run_s2, (TREEWIDTH, KTREES), needs=(TREEWIDTH,), tags=TABLE_TAGS),
    Method("s2plus", "S2+ (Nie, de Campos & Ji 2016)", run_s2plus, (TREEWIDTH, KTREES), needs=(TREEWIDTH,),
           tags=TABLE_TAGS),
    Method("hc", "hill climbing over DAGs (bnlearn's hc)", run_hc, GREEDY, tags=TABLE_TAGS | {EXACT_GAP}),
    Method("tabu", "tabu search over DAGs (bnlearn's tabu)", run_tabu, (TABU, MAX_TABU, *GREEDY),
           tags=TABLE_TAGS | {EXACT_GAP}),
    Method("ges", "GES (Chickering 2002)", run_ges, uses=ON_DATA),
    Method("sges", "SGES (Chickering & Meek 2015)", run_sges, (SGES_BOUND,), uses=ON_DATA),
)
"""The search solvers of ``--solver``, in its order after the ILP:
``run(settings, inputs: SolveInputs) -> Solution``."""
