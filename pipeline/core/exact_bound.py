"""The exact ILP's bound on a score table, kept for the heuristics that climb the same table.

Every exact solve of a score table (a solver tagged ``exact_bound``, :data:`hybridbn.solving.TAGS`,
without a treewidth bound or the cops bags, on a table the budget did not cut) records its dual
bound, its best objective and its status in the stage cache, keyed by the table and the expert
knowledge, whatever its time limit: the tightest bound and the best objective seen are kept. The
searches tagged ``exact_gap`` (hill climbing and tabu search) on that table then report their
score against this bound (``"bound": "ILP"``) instead of the trivial best-families bound of
:func:`search.methods.best_families_bound`: where the ILP proved its optimum, the gap is the
climb's distance from it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from hybridbn.progress import relative_gap
from pipeline.core.cache import Artifact, StageCache, stage_key
from hybridbn.solving import EXACT_BOUND, EXACT_GAP
from pipeline.core.config import RunConfig
from pipeline.core.declarations import SOLVER

STAGE = "exact_bound"
VERSION = "1"


def applies(cfg: RunConfig) -> bool:
    """Whether ``cfg``'s solve is over every DAG of its table (no treewidth bound, no cops bags):
    only then does the ILP's bound bound the climbs, and do the climbs meet the ILP's problem."""
    return cfg.treewidth is None and not cfg.within_bags


class ExactBound:
    """The bound slot of one score table (its stage key) under the run's knowledge (``params``)."""

    def __init__(self, cache: StageCache, params: Mapping[str, Any], scores_key: str):
        self.cache = cache
        self.params = dict(params)
        self.inputs = {"scores": scores_key}
        self.key = stage_key(STAGE, VERSION, self.params, self.inputs)

    def load(self) -> dict[str, Any] | None:
        """``{"dual_bound", "objective", "status"}`` of the exact solves so far, or None."""
        art = self.cache.load(STAGE, self.key)
        return None if art is None else dict(art.meta)

    def offer(self, result: Mapping[str, Any]) -> None:
        """Keep an exact solve's ``result`` (its summary) where it tightens the bound or raises the
        objective; a result without a bound (the budget cut the table) is ignored, and so is
        every result in a read-only cache (a bootstrap's look for finished replicates)."""
        if result.get("dual_bound") is None or self.cache.read_only:
            return
        best = self.load()
        if best is not None and best["status"] == "optimal":
            return
        entry = {"dual_bound": float(result["dual_bound"]), "objective": float(result["objective"]),
                 "status": "optimal" if result.get("status") == "optimal" else "limited"}
        if best is not None:
            entry = {**entry, "dual_bound": min(best["dual_bound"], entry["dual_bound"]),
                     "objective": max(best["objective"], entry["objective"])}
        if entry != best:
            self.cache.store(Artifact(STAGE, self.key, {}, entry), self.params, self.inputs, VERSION)

    def annotate(self, solve: Artifact) -> Artifact:
        """A climb's ``solve`` artifact with its gap measured against the ILP's bound, and the
        ILP's ``exact`` entry beside it, when one is known (the artifact as it is otherwise)."""
        exact = self.load()
        result = solve.meta["result"]
        if exact is None or result.get("dual_bound") is None:  # no ILP yet, or a cut table
            return solve
        bound = exact["dual_bound"]
        result = {**result, "dual_bound": bound, "bound": "ILP", "gap": relative_gap(result["objective"], bound),
                  "exact": exact,
                  "best_families_bound": result["dual_bound"]}
        return replace(solve, meta={**solve.meta, "result": result})


def exact_bound_slot(cache: StageCache, cfg: RunConfig, solve_params: Mapping[str, Any],
                     scores: Artifact | None) -> ExactBound | None:
    """The slot of the run's table under the knowledge entry of its solve key ``solve_params``,
    for an exact solver (which offers to it, :func:`proves_bound`) and the climbs (which read it);
    None for other solvers, problems and score sources without a table."""
    wanted = SOLVER[cfg.solver].tags & {EXACT_BOUND, EXACT_GAP}
    if scores is None or not wanted or not applies(cfg):
        return None
    knowledge = {k: v for k, v in solve_params.items() if k == "knowledge"}
    return ExactBound(cache, knowledge, scores.key)


def proves_bound(cfg: RunConfig) -> bool:
    """Whether ``cfg``'s solver leaves a proven bound on its table (tagged ``exact_bound``); the
    others' results are measured against it."""
    return EXACT_BOUND in SOLVER[cfg.solver].tags
