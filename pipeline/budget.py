"""One wall-clock budget (``--budget SECONDS``) for restriction, scoring and solving together.

GOBNILP's time limit covers only its solver; here the budget covers the whole hybrid:

* the cops-and-robbers restriction, the one restriction that can run for long, may use at most
  ``RESTRICT_SHARE`` of the budget (it then restricts to what it found, a safe superset);
  PC / PMMS / MMPC at bounded order and the scoring stage run to completion;
* the solver gets what is left: the budget minus the restriction's and the scoring's compute
  times (at least ``MIN_SOLVE_SECONDS``, so that a DAG is always returned), capped by
  ``--time-limit`` when both are given; the exact ILP then returns its best DAG with bound and
  gap, k-G / k-A* their best DAG.

The solver's share is computed from the compute times recorded in the restriction and scores
artifacts, which the cache keeps, so re-running the same command finds the same solve key and
is instant. :func:`budget_record` is what ``result.json`` reports under ``budget``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from pipeline.cache import Artifact
from pipeline.config import RunConfig

RESTRICT_SHARE = 0.5
"""Largest fraction of the budget the cops restriction may use."""
MIN_SOLVE_SECONDS = 1.0
"""The solver's time when restriction and scoring used up the budget."""
SPENT_STAGES = ("restrict", "scores")


def restrict_config(cfg: RunConfig) -> RunConfig:
    """``cfg`` with the cops time limit lowered to its share of the budget (other runs unchanged)."""
    if cfg.budget is None or cfg.method != "cops":
        return cfg
    share = RESTRICT_SHARE * cfg.budget
    limit = share if cfg.cops_time_limit is None else min(cfg.cops_time_limit, share)
    return replace(cfg, cops_time_limit=limit)


def solve_config(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> RunConfig:
    """``cfg`` with the solver's time limit set to what the budget has left (unchanged without one)."""
    if cfg.budget is None:
        return cfg
    spent = sum(artifacts[s].seconds for s in SPENT_STAGES if s in artifacts)
    left = max(cfg.budget - spent, MIN_SOLVE_SECONDS)
    limit = left if cfg.time_limit is None else min(cfg.time_limit, left)
    return replace(cfg, time_limit=round(limit, 3))


def budget_record(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> dict[str, Any] | None:
    """The budget and what each stage got (``limit``: its time limit, ``seconds``: what it used)."""
    if cfg.budget is None:
        return None
    stages: dict[str, Any] = {}
    if "restrict" in artifacts:
        stages["restrict"] = {"limit": restrict_config(cfg).cops_time_limit,
                              "seconds": artifacts["restrict"].seconds}
    if "scores" in artifacts:
        stages["scores"] = {"limit": None, "seconds": artifacts["scores"].seconds}
    if "solve" in artifacts:
        stages["solve"] = {"limit": solve_config(cfg, artifacts).time_limit, "seconds": artifacts["solve"].seconds}
    return {"seconds": cfg.budget, "used": sum(s["seconds"] for s in stages.values()), "stages": stages}
