"""Incumbents of unfinished exact solves, so that a later solve continues instead of starting over.

A solve stopped by its time limit or by Ctrl-C leaves its best DAG in the stage cache as an
``incumbent`` artifact, keyed like the solve but without the time limit: every solve of the same
score table (a rerun after Ctrl-C, a larger ``--time-limit``) finds it and hands it to SCIP as
a start solution (:func:`ilp.hooks.start_solution`), so the search begins at least as good as
where the last one stopped. Only the best incumbent is kept. The treewidth-bounded ILP and the
heuristics do not warm-start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from pipeline.core.cache import Artifact, StageCache, stage_key
from pipeline.core.config import RunConfig
from search.methods import TIME_LIMIT

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
        self.params = {k: v for k, v in params.items() if k != TIME_LIMIT.key}
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
