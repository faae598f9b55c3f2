"""One wall-clock budget (``--budget SECONDS``) for restriction, scoring and solving together.

GOBNILP's time limit covers only its solver; here the budget covers the whole hybrid. Each
stage may use a share of what the budget has left when it starts, and one that runs out stops at
a safe point with a result the next stage can use:

* the restriction (every method) gets ``RESTRICT_SHARE`` of the budget. PC, PMMS and MMPC
  check their deadline between units of work (a batch of PC pairs, or a level on an executor;
  a PMMS / MMPC candidate) and stop removing edges: the pairs not yet separated stay allowed, a
  superset of the skeleton the full run finds. The cops restriction gets the same share as its
  time limit (``--cops-time-limit`` caps it; they check it every 1000 oracle calls) and
  restricts to what it found. Either way the restriction's status is ``timeout``. The
  ``candidates`` restriction runs to completion;
* the scoring gets ``SCORES_SHARE`` of what the restriction left. It checks its deadline
  before each child's kernel call and while the kernels run (on an executor each group does);
  past it, the running kernels stop with the sets they scored and each child not yet scored
  keeps only its required (without knowledge: empty) parent set, so a DAG still exists. The
  children cut are the table's ``unscored`` list and the stage's status is ``timeout``. The
  families that undirected required adjacencies need are always scored (the problem stays
  feasible);
* the solver gets all that is left (at least ``MIN_SOLVE_SECONDS``, so that a DAG is always
  returned), capped by ``--time-limit`` when both are given; the exact ILP returns its best DAG
  with bound and gap, k-G / k-A* their best DAG. On a cut score table the DAG and its objective
  stand (every family in it is scored exactly) but no bound does: the result's status is
  ``limited``, ``dual_bound`` and ``gap`` are None and ``reason`` says why
  (:func:`pipeline.core.stages.cut_table_result`).

Limits are computed from the compute times recorded in the artifacts, which the cache keeps, so
re-running the same command finds the same keys and is instant. A restriction or table the
budget cut is cached under its key plus its limit (:meth:`pipeline.core.cache.StageCache.get_or_compute`),
never under the key an unlimited run reads; one that finished in time is the unlimited run's
result and is cached as such. :func:`budget_record` is what ``result.json`` reports under
``budget``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from pipeline.core.cache import LIMITED, Artifact
from pipeline.core.config import RunConfig

RESTRICT_SHARE = 0.5
"""Largest fraction of the budget the restriction may use."""
SCORES_SHARE = 0.5
"""Largest fraction of what the restriction left that the scoring may use."""
MIN_SOLVE_SECONDS = 1.0
"""The solver's time when restriction and scoring used up the budget."""
SPENT_STAGES = ("restrict", "scores")


def _left(cfg: RunConfig, artifacts: Mapping[str, Artifact], spent: tuple[str, ...] = SPENT_STAGES) -> float:
    """Seconds of the budget left after the stages ``spent`` (those of them in ``artifacts``)."""
    return cfg.budget - sum(artifacts[s].seconds for s in spent if s in artifacts)


def budget_left(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> float | None:
    """Seconds of the budget that restriction and scoring left to the solver (None without a budget)."""
    return None if cfg.budget is None else _left(cfg, artifacts)


def restrict_limit(cfg: RunConfig) -> float | None:
    """The restriction's time limit: its share of the budget (None without one)."""
    return None if cfg.budget is None else round(RESTRICT_SHARE * cfg.budget, 3)


def scores_limit(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> float | None:
    """The scoring's time limit: its share of what the restriction left (None without a budget)."""
    return None if cfg.budget is None else round(max(SCORES_SHARE * _left(cfg, artifacts, ("restrict",)), 0.0), 3)


def solve_config(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> RunConfig:
    """``cfg`` with the solver's time limit set to what the budget has left (unchanged without one)."""
    if cfg.budget is None:
        return cfg
    left = max(_left(cfg, artifacts), MIN_SOLVE_SECONDS)
    limit = left if cfg.time_limit is None else min(cfg.time_limit, left)
    return replace(cfg, time_limit=round(limit, 3))


def budget_record(cfg: RunConfig, artifacts: Mapping[str, Artifact]) -> dict[str, Any] | None:
    """The budget and what each stage got: ``limit`` (its time limit; None: a score file, read
    whole), ``seconds`` (what it used) and ``limited`` (whether the limit cut it)."""
    if cfg.budget is None:
        return None
    limits = {"restrict": restrict_limit(cfg),
              "scores": scores_limit(cfg, artifacts) if "data" in artifacts else None,
              "solve": solve_config(cfg, artifacts).time_limit}
    stages = {stage: {"limit": limit, "seconds": artifacts[stage].seconds,
                      "limited": artifacts[stage].completion == LIMITED}
              for stage, limit in limits.items() if stage in artifacts}
    return {"seconds": cfg.budget, "used": sum(s["seconds"] for s in stages.values()), "stages": stages}
