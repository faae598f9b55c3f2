"""Declarations of the heuristic solvers and the ``--solver`` choice (see :mod:`hybridbn.options`).

A solver's ``run(settings, inputs) -> Solution`` (:mod:`hybridbn.solving`) reads the run's
settings (anything with the declared parameters as attributes, e.g. a
:class:`pipeline.core.config.RunConfig`) and a :class:`~hybridbn.solving.SolveInputs`: k-G and
k-A* its score table, GES and SGES its data set and ``allowed`` matrix (they score the data on
demand, so the score and the parent limit enter their key).  :data:`SOLVER` gathers them with
the exact ILP declared in :mod:`ilp.methods`.
"""

from __future__ import annotations

from typing import Any

from graphs.dag import parents_from_adjacency
from hybridbn.options import SECONDS, TEXT, Choice, Method, Param
from hybridbn.solving import Solution, SolveInputs, json_ready
from ilp.methods import ILP, TREEWIDTH
from scores.methods import PALIM, SCORE

ANYTIME_TIME_LIMIT = 60.0
"""Seconds k-G / k-A* search when the run gives no ``--time-limit``."""


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
    result = learner(inputs.table, settings.treewidth, time_limit=time_limit, seed=0)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": result.status,
        "treewidth_bound": settings.treewidth, "treewidth": int(result.decomposition.width),
        "n_orders": int(result.n_orders), "time_limit": time_limit,
    }
    return Solution([tuple(int(p) for p in ps) for ps in result.parent_sets], json_ready(summary))


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
    result = search(score, data.shape[1], allowed=inputs.allowed, palim=settings.palim)
    summary = {
        "objective": float(result.score), "dual_bound": None, "gap": None, "status": "converged",
        "n_score_evaluations": int(result.n_score_evaluations),
        "n_evaluations_forward": int(result.n_evaluations_forward),
        "n_inserts": int(result.n_inserts), "n_deletes": int(result.n_deletes), **extra,
    }
    return Solution(parents_from_adjacency(result.dag), json_ready(summary))


def _check_sges_bound(text: str) -> None:
    from search.sges import parse_bound  # deferred: start-up, as search.ges (checked only when set)

    parse_bound(text)


TIME_LIMIT = Param("time_limit", SECONDS, None,
                   "solver time limit in seconds (default: none; 60 for the anytime kg / kastar)",
                   key="time_limit", grid="time_limit", axis=False)
SGES_BOUND = Param("sges_bound", TEXT, "parents:3", "SGES property bound: parents:K, clique:K or vwidth:K",
                   metavar="NAME:K", key="sges_bound", grid="sges_bounds", check=_check_sges_bound)
ON_DATA = (SCORE, PALIM)
"""What GES and SGES read besides the data: the score (and its parameters) and the parent limit."""

SOLVER = Choice(
    name="solver", default="ilp", grid="solvers", stage="solve",
    help="optimiser: ilp (exact), kg / kastar (treewidth-bounded, need --treewidth), ges / sges "
         "(equivalence-class search)",
    params=(TIME_LIMIT,), constants={"solver_seed": 0},
    methods=(
        ILP,
        Method("kg", "k-G (Scanagatta et al.)", run_kg, (TREEWIDTH,), needs=(TREEWIDTH,)),
        Method("kastar", "k-A* (Scanagatta et al.)", run_kastar, (TREEWIDTH,), needs=(TREEWIDTH,)),
        Method("ges", "GES (Chickering 2002)", run_ges, uses=ON_DATA),
        Method("sges", "SGES (Chickering & Meek 2015)", run_sges, (SGES_BOUND,), uses=ON_DATA),
    ),
)
"""``--solver``: ``run(settings, inputs: SolveInputs) -> Solution``."""
