"""Incumbents of unfinished exact solves, so that a later solve continues instead of starting over.

A solve stopped by its time limit or by Ctrl-C leaves its best DAG in the stage cache as an
``incumbent`` artifact, keyed like the solve but without the time limit: every solve of the same
score table (a rerun after Ctrl-C, a larger ``--time-limit``) finds it and hands it to SCIP as
a start solution, so the search begins at least as good as where the last one stopped. Only
the best incumbent is kept. The treewidth-bounded ILP and the heuristics do not warm-start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from pipeline.cache import Artifact, StageCache, stage_key
from pipeline.config import RunConfig

logger = logging.getLogger(__name__)

STAGE = "incumbent"


def supports_warm_start(cfg: RunConfig) -> bool:
    """Whether the run's solver takes a start solution (the exact ILP without a treewidth bound)."""
    return cfg.solver == "ilp" and cfg.treewidth is None


@dataclass(frozen=True)
class Incumbent:
    parent_sets: list[tuple[int, ...]]
    objective: float
    status: str

    def summary(self) -> dict[str, Any]:
        return {"objective": self.objective, "status": self.status}


class Incumbents:
    """The incumbent slot of one solve problem (its parameters without the time limit)."""

    def __init__(self, cache: StageCache, params: Mapping[str, Any], inputs: Mapping[str, str], version: str):
        self.cache = cache
        self.params = {k: v for k, v in params.items() if k != "time_limit"}
        self.inputs = dict(inputs)
        self.version = version
        self.key = stage_key(STAGE, version, self.params, self.inputs)

    def load(self) -> Incumbent | None:
        art = self.cache.load(STAGE, self.key)
        if art is None:
            return None
        frame = art.frames["parents"]
        parent_sets = [tuple(int(p) for p in ps) for ps in frame["parents"]]
        return Incumbent(parent_sets, float(art.meta["objective"]), str(art.meta["status"]))

    def offer(self, parent_sets: Sequence[Sequence[int]], summary: Mapping[str, Any]) -> None:
        """Keep ``parent_sets`` unless the stored incumbent scores at least as well."""
        objective = summary.get("objective")
        if objective is None:
            return
        best = self.load()
        if best is not None and best.objective >= objective:
            return
        frame = pd.DataFrame({"parents": [list(map(int, ps)) for ps in parent_sets]})
        meta = {"objective": float(objective), "status": summary.get("status")}
        self.cache.store(Artifact(STAGE, self.key, {"parents": frame}, meta), self.params, self.inputs,
                         self.version)


def start_solution(parent_sets: Sequence[Sequence[int]]):
    """An ``extend`` hook for :func:`ilp.solve_ilp` adding ``parent_sets`` as a start solution.

    Nothing is added when a family is not among the model's candidates (SCIP also drops a start
    solution that violates a constraint).
    """

    def extend(fm) -> list:
        problem = fm.problem
        family = {(c, problem.parents_of(f)): f for f, c in enumerate(problem.child.tolist())}
        chosen = [family.get((v, tuple(int(p) for p in ps))) for v, ps in enumerate(parent_sets)]
        if len(parent_sets) != problem.n or None in chosen:
            logger.warning("the stored incumbent does not fit this problem; solving without it")
            return []
        sol = fm.model.createSol()
        for f in chosen:
            fm.model.setSolVal(sol, fm.x[f], 1.0)
        for (u, v), arc in fm.arcs.items():
            if u in parent_sets[v]:
                fm.model.setSolVal(sol, arc, 1.0)
        if not fm.model.addSol(sol):
            logger.warning("SCIP rejected the stored incumbent as a start solution")
        return []

    return extend
