"""What a solver of the solve stage takes and gives, shared by the solvers (``ilp.methods``,
``search.methods``) and the stage that calls them (``pipeline.core.stages``), with what every
solver shares: the time limit, the seed, the words of its capabilities.

A solver's ``run(settings, inputs) -> Solution`` reads the run's settings (anything with the
declared parameters as attributes) and a :class:`SolveInputs`: what the stages before produced
(the score table, or the data set and the restriction) and the expert knowledge as plain arcs.
A :class:`Solution` is the learned parent sets plus a JSON-ready summary whose common keys are
``objective`` (total local score of the DAG), ``dual_bound``, ``gap`` and ``status`` (the exact
ILP fills all four; heuristics report their score with no bound).

A solver says what it can do by the capability tags of its :class:`hybridbn.options.Method`
(:data:`TAGS`), which the run core reads instead of the solver's name (as scikit-learn's
estimator tags). A tag describes the solver over every DAG of its table; a setting that changes
the problem (``--treewidth``, ``--within-bags``) is asked beside it where it matters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hybridbn.options import SECONDS, OptionError, Param

TIME_LIMIT = Param("time_limit", SECONDS, None,
                   "solver time limit in seconds (default: none; 60 for the anytime kg / kastar / s2 / s2plus); an ILP stopped "
                   "by it then runs a tabu search from its best DAG for a tenth of it (2-60 s) and keeps the better",
                   key="time_limit", grid="time_limit", axis=False)
"""``--time-limit``, common to every solver; also the one check of the ``time_limit`` argument of
the algorithms' Python API (:func:`check_time_limit`)."""
SOLVER_SEED = 0
"""Seed of the solvers' random choices (k-G / k-A* orders, the perturbations of hc / tabu
restarts); a constant entry of every solve key, so a cached result is the one this seed gives."""

EXACT_BOUND = "exact_bound"
WARM_START = "warm_start"
POLISH = "polish"
ANYTIME = "anytime"
ARCS = "arcs"
ADJACENCY = "adjacency"
EXACT_GAP = "exact_gap"
TAGS = {
    EXACT_BOUND: "proves a dual bound on the best score of its table, which the run keeps for the table "
                 "(pipeline.core.exact_bound) and for a resumed solve (pipeline.core.incumbent)",
    WARM_START: "starts from the incumbent that an unfinished solve of the same problem left (SolveInputs.start)",
    POLISH: "its best DAG, when it stops at a limit, goes to a tabu search that keeps the better "
            "(pipeline.core.polish)",
    ANYTIME: "returns its best DAG at its time limit, so it can take what --budget leaves",
    ARCS: "honours required arcs, one-way forbidden arcs and tiers",
    ADJACENCY: "honours undirected requirements (a pair adjacent either way)",
    EXACT_GAP: "reports its gap against the exact bound of its table where one is known",
}
"""The capability tags a solver's declaration may carry, with what each promises."""


def check_time_limit(time_limit: Any, error: type[Exception]) -> float | None:
    """``time_limit`` in seconds as a float (None: no limit), or ``error`` (the caller's
    ``ValueError``) with :data:`TIME_LIMIT`'s message: the one check of every solver's and
    learner's time limit argument (:mod:`ilp.solve`, :mod:`search.hill_climbing`,
    :mod:`search.ktree_search`, :mod:`constraints.cops.learner`)."""
    try:
        return _TIME_LIMIT_ARGUMENT.validated(time_limit)
    except OptionError as exc:
        raise error(str(exc)) from None


_TIME_LIMIT_ARGUMENT = replace(TIME_LIMIT, keyword=True)
""":data:`TIME_LIMIT` spelt as the keyword argument ``time_limit`` in its messages."""


@dataclass
class SolveInputs:
    """What a solver may use: the score table or the data set (a :class:`bayesnet.dataset.Dataset`)
    with its ``allowed[p, c]`` matrix, the bags of a tree decomposition, the knowledge's
    ``required_arcs`` and ``forbidden_arcs`` (``(parent, child)`` indices) and
    ``adjacent_pairs`` (pairs that must be adjacent either way), ``start``, the parent sets of
    a DAG to start from (for a :data:`WARM_START` solver the incumbent of an earlier, unfinished
    solve; for the tabu search of :mod:`pipeline.core.polish` the ILP's DAG), and ``progress``,
    the callable that receives the solver's progress records (:mod:`hybridbn.progress`), or
    ``None``; it changes nothing of the result, so no cache key holds it."""

    names: list[str]
    table: Any = None
    dataset: Any = None
    allowed: np.ndarray | None = None
    bags: list[list[int]] | None = None
    required_arcs: list[tuple[int, int]] = field(default_factory=list)
    forbidden_arcs: list[tuple[int, int]] = field(default_factory=list)
    adjacent_pairs: list[tuple[int, int]] = field(default_factory=list)
    start: list[tuple[int, ...]] | None = None
    progress: Callable[[dict[str, Any]], None] | None = None


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
