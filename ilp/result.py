"""Result of :func:`ilp.solve_ilp`: the DAG found, bounds, status, timings and solver statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scores.table import ParentSet


NO_SEARCH = {"nodes": 0, "lp_iterations": 0, "cuts_applied": 0, "runs": 0}
"""The search counts of a solve without SCIP's search: the DP route, or SCIP stopped in presolving."""


def _plain(value):
    """Numpy scalars as Python numbers (JSON-ready)."""
    return value.item() if isinstance(value, np.generic) else value


def _finite(value: float) -> float | None:
    """JSON has no infinity: an unbounded dual bound or gap is written as null."""
    return float(value) if math.isfinite(value) else None


def _optional(value: float | None) -> float | None:
    return None if value is None else _finite(value)


@dataclass
class ILPResult:
    """A learned DAG with its objective and the solver's proof status.

    ``dag[i, j]`` is True iff ``i -> j``; ``parent_sets[v]`` are the sorted parents of ``v``;
    ``objective`` is the table score of the DAG (``ScoreTable.score_of``); ``dual_bound`` is
    SCIP's upper bound on the optimum and ``gap`` the relative gap (0 when proved optimal; both
    ``inf`` when SCIP stopped before it had a bound);
    ``status`` is SCIP's status (``"optimal"``, ``"timelimit"``, ...); ``times`` holds seconds for
    ``build`` (validation and model) and ``solve``; ``stats`` holds node, LP-iteration, run and
    cut counts (cuts by kind: ``integral_cuts`` from cyclic integral solutions, ``inout_cuts``
    and ``greedy_cuts`` from the greedy finder at the in-out point and at the LP solution,
    ``subip_cuts``, ``convex4_cuts``); ``trajectory`` holds ``(seconds, incumbent, bound)``
    points of the solve (:class:`hybridbn.progress.Trajectory`; ``None`` before the first
    incumbent or bound), the last one the result's.
    """

    dag: np.ndarray
    parent_sets: list[ParentSet]
    objective: float
    dual_bound: float
    gap: float
    status: str
    names: list[str]
    times: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    trajectory: list[tuple[float, float | None, float | None]] = field(default_factory=list)

    @property
    def optimal(self) -> bool:
        return self.status == "optimal"

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Arcs as ``(parent name, child name)`` pairs."""
        return [(self.names[i], self.names[j]) for i, j in zip(*np.nonzero(self.dag))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (for the pipeline's manifest); the DAG as a parent-set list."""
        return {
            "status": self.status,
            "objective": self.objective,
            "dual_bound": _finite(self.dual_bound),
            "gap": _finite(self.gap),
            "n_vars": len(self.parent_sets),
            "n_edges": int(self.dag.sum()),
            "parent_sets": [list(map(int, ps)) for ps in self.parent_sets],
            "names": list(self.names),
            "times": {k: float(v) for k, v in self.times.items()},
            "stats": {k: _plain(v) for k, v in self.stats.items()},
            "trajectory": [[float(t), _optional(primal), _optional(dual)] for t, primal, dual in self.trajectory],
        }
