"""Incumbents of unfinished exact solves, so that a later solve continues instead of starting over.

A solve stopped by its time limit or by Ctrl-C leaves its best DAG in the stage cache as an
``incumbent`` artifact, keyed like the solve but without the time limit: every solve of the same
score table (a rerun after Ctrl-C, a larger ``--time-limit``) finds it and hands it to SCIP as
a start solution (:func:`ilp.hooks.start_solution`), so the search begins at least as good as
where the last one stopped. Only the best incumbent is kept, with the tightest dual bound the
unfinished solves proved: the bound of the same maximisation on the same table under the same
knowledge stays valid, so a resumed solve reports the tighter of its own and that one
(:func:`with_earlier_bound`; a requeued batch job never loses proven progress). SCIP is not told
the earlier bound: a row holding it would change the LP and with it which of tied optima is
returned. Only a solver tagged ``warm_start`` (:data:`hybridbn.solving.TAGS`) warm-starts, and
not with a treewidth bound (the bounded ILP takes no start solution).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import pandas as pd

from hybridbn.progress import Callback, relative_gap
from hybridbn.solving import TIME_LIMIT, WARM_START
from pipeline.core.cache import Artifact, StageCache, stage_key
from pipeline.core.config import RunConfig
from pipeline.core.declarations import SOLVER

STAGE = "incumbent"
EARLIER = "earlier run"
"""``dual_bound_from`` of a resumed solve whose bound an earlier, unfinished solve proved."""


def supports_warm_start(cfg: RunConfig) -> bool:
    """Whether the run's solver takes a start solution: tagged ``warm_start``, without a treewidth bound."""
    return WARM_START in SOLVER[cfg.solver].tags and cfg.treewidth is None


@dataclass(frozen=True)
class Incumbent:
    """The best DAG of the unfinished solves (its ``objective`` and ``status``) and the tightest
    ``dual_bound`` they proved (None: none did, or a cache written before bounds were kept)."""

    parent_sets: list[tuple[int, ...]]
    objective: float
    status: str
    dual_bound: float | None = None

    def summary(self) -> dict[str, Any]:
        """What a warm-started solve's ``warm_start`` entry says of its start."""
        return {"objective": self.objective, "status": self.status}


def with_earlier_bound(summary: dict[str, Any], earlier: Incumbent | None) -> dict[str, Any]:
    """``summary`` of a resumed exact solve under the earlier solves' bound: its trajectory's bounds
    no looser than that one and, where it is tighter than the solve's own (or the solve has none)
    and the solve did not prove its optimum, that bound, the gap from it and ``dual_bound_from``
    saying so."""
    if earlier is None or earlier.dual_bound is None:
        return summary
    bound, dual = earlier.dual_bound, summary.get("dual_bound")
    trajectory = [[t, primal, _tighter(at, bound)] for t, primal, at in summary.get("trajectory", [])]
    if summary.get("status") == "optimal" or (dual is not None and dual <= bound):
        return {**summary, "trajectory": trajectory}
    return {**summary, "dual_bound": bound, "gap": relative_gap(summary["objective"], bound),
            "trajectory": trajectory, "dual_bound_from": EARLIER}


def reporting_earlier_bound(progress: Callback | None, earlier: Incumbent | None, solver: str) -> Callback | None:
    """``progress`` with each record of ``solver`` bounded by the earlier solves' bound too (and
    its gap from the tighter one), so that the lines of a resumed solve show what is proven."""
    if progress is None or earlier is None or earlier.dual_bound is None:
        return progress
    bound = earlier.dual_bound

    def report(record: dict[str, Any]) -> None:
        if record["solver"] == solver and record.get("status") != "optimal":
            dual = _tighter(record["dual"], bound)
            record = {**record, "dual": dual, "gap": relative_gap(record["primal"], dual)}
        progress(record)

    return report


def _tighter(dual: float | None, bound: float) -> float:
    """The tighter of a solve's ``dual`` bound (None: none yet) and an earlier ``bound``."""
    return bound if dual is None or not dual <= bound else dual


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
        return Incumbent(parent_sets, float(art.meta["objective"]), str(art.meta["status"]),
                         art.meta.get("dual_bound"))

    def offer(self, parent_sets: Sequence[Sequence[int]], summary: Mapping[str, Any]) -> None:
        """Keep ``parent_sets`` unless the stored incumbent scores at least as well, and the
        tighter of the stored dual bound and ``summary``'s (None: no bound)."""
        objective = summary.get("objective")
        if objective is None:
            return
        best = self.load()
        bounds = [b for b in (summary.get("dual_bound"), None if best is None else best.dual_bound) if b is not None]
        dual = min(bounds) if bounds else None
        if best is not None and best.objective >= objective:
            if dual == best.dual_bound:
                return
            parent_sets, objective, status = best.parent_sets, best.objective, best.status
        else:
            status = summary.get("status")
        frame = pd.DataFrame({"parents": [list(map(int, ps)) for ps in parent_sets]})
        meta = {"objective": float(objective), "status": status, "dual_bound": dual}
        self.cache.store(Artifact(STAGE, self.key, {"parents": frame}, meta), self.params, self.inputs,
                         self.version)
