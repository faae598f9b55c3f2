"""What a solver of the solve stage takes and gives, shared by the solvers (``ilp.methods``,
``search.methods``) and the stage that calls them (``pipeline.core.stages``).

A solver's ``run(settings, inputs) -> Solution`` reads the run's settings (anything with the
declared parameters as attributes) and a :class:`SolveInputs`: what the stages before produced
(the score table, or the data set and the restriction) and the expert knowledge as plain arcs.
A :class:`Solution` is the learned parent sets plus a JSON-ready summary whose common keys are
``objective`` (total local score of the DAG), ``dual_bound``, ``gap`` and ``status`` (the exact
ILP fills all four; heuristics report their score with no bound).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class SolveInputs:
    """What a solver may use: the score table or the data set (a :class:`bayesnet.dataset.Dataset`)
    with its ``allowed[p, c]`` matrix, the bags of a tree decomposition, the knowledge's
    ``required_arcs`` and ``forbidden_arcs`` (``(parent, child)`` indices) and
    ``adjacent_pairs`` (pairs that must be adjacent either way), ``start``, the parent sets of
    a DAG to warm-start from (the incumbent of an earlier, unfinished solve), and ``progress``,
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
