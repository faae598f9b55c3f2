"""Choosing a setting by cross-validation (``--select "A; B"``), as bnlearn's ``bn.cv`` does
with its log-likelihood loss.

The rows are dealt into ``--folds K`` folds of equal size in an order drawn with ``--seed``.
Each candidate setting (the run's options with the candidate's ``key=value`` overrides) learns
a network from the rows outside each fold; its CPTs are fitted there (Perks' prior,
:func:`bayesnet.fitting.fit_cpts`) and scored by the log-likelihood of the fold's rows. The
candidate with the highest held-out log-likelihood, summed over the folds, learns the run's
network from all rows (ties: the first given). The choice is made from the data alone, so it
is a setting, not a choice made knowing the true network.

Each training set is a data artifact keyed by the data's key, the fold count, the seed and the
fold, so its restriction, scores and solve are cached like any run's; the folds run in this
process, in a local pool of worker processes, or on Dask, with the same result. A stop request
(Ctrl-C, SIGTERM) ends the cross-validation between networks (those running stop at their safe
points) with :class:`pipeline.core.stopping.StageStopped` saying how many were learned; each is
cached, so the same command goes on from them. The run's network is learned only after the
choice, so a stopped selection has none to give.

``--score auto``, the default, cross-validates two settings the same way, the run with BDeu
(learned first, on all rows, so a stop keeps it) and with qNML under the arc prior, and takes
qNML only where it is better on so many folds that a one-sided sign test rejects at 0.05
(:func:`unless_consistently_better`; 5 of 5 folds). qNML is Silander, Leppä-aho, Jääsaari &
Roos (2018); the rule and its measurements are in ``docs/accuracy.md``.
"""

from __future__ import annotations

import json
import logging
import math
import signal
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesnet.dataset import Dataset
from bayesnet.fitting import fit_cpts, log_likelihood
from hybridbn.interrupt import stop_requested
from hybridbn.progress import Callback, TaskCount
from pipeline.core.cache import Artifact, StageCache
from pipeline.core.config import RunConfig, candidate_configs
from pipeline.core.declarations import FOLDS, ConfigError
from pipeline.core.executors import STOPPED, cached_results, map_tasks
from pipeline.core.kernels import ensure_compiled
from pipeline.core.stages import (STAGES, VERSIONS, dag_of, dataset_of, model_stages, restrict_params, run_stages,
                                  score_params, solve_params)
from pipeline.core.stopping import StageStopped
from scores.methods import AUTO, AUTO_LEVEL, AUTO_SCORES

logger = logging.getLogger(__name__)

FOLD_VERSION = "1"
SELECTION_VERSION = "1"
"""Version of the cached held-out log-likelihoods of a selection (the ``selection`` artifact)."""
HIGHEST_TOTAL, SIGN_TEST = "highest total", "sign test"
AUTO_QNML_PRIOR = 1.0
"""Arc prior ``E`` of the qNML setting of ``--score auto`` where the run has none."""
AUTO_MAX_VARIABLES = 100
"""Largest data ``--score auto`` cross-validates: bnlearn's repository calls networks of up to 100
nodes large; above them (pathfinder's default run takes about a minute) the ten networks of the
folds would take ten times as long again, and BDeu is kept."""


# ------------------------------------------------------------------------------------ folds
def fold_of_rows(n_rows: int, folds: int, seed: int) -> np.ndarray:
    """The fold of each row: ``0 .. folds-1`` in turn over a random order of the rows, so the
    folds' sizes differ by at most one."""
    if folds > n_rows:
        raise ConfigError(f"--folds {folds} exceeds the {n_rows} rows of the data")
    order = np.random.default_rng([seed, folds]).permutation(n_rows)
    fold = np.empty(n_rows, dtype=np.int64)
    fold[order] = np.arange(n_rows) % folds
    return fold


def training_stage(cache: StageCache, data: Artifact, folds: int, fold: int, seed: int) -> Artifact:
    """The rows outside ``fold`` of ``folds``; the states of every variable are kept."""
    params = {"folds_of": data.key, "folds": folds, "fold": fold, "seed": seed}

    def compute():
        frame = data.frames["data"]
        keep = fold_of_rows(len(frame), folds, seed) != fold
        meta = {"n_rows": int(keep.sum()), "n_vars": frame.shape[1], "network": None, "fold": fold}
        return {"data": frame[keep].reset_index(drop=True)}, meta

    return cache.get_or_compute("data", FOLD_VERSION, params, {"data": data.key}, compute)


def held_out_fold(cfg: RunConfig, cache_root: str, cache_enabled: bool, data: Artifact, folds: int,
                  fold: int, read_only: bool = False) -> tuple[float, str]:
    """Learn with ``cfg`` from the rows outside ``fold`` (of ``folds``, dealt with ``cfg.seed``)
    and return the log-likelihood of the fold's rows and the solver's status (a picklable job
    for the local pool and Dask). ``read_only``: only read its stages from the cache
    (:class:`pipeline.core.cache.NotCached` when one is missing)."""
    cache = StageCache(cache_root, enabled=cache_enabled, read_only=read_only)
    arts = {"data": training_stage(cache, data, folds, fold, cfg.seed)}
    model_stages(arts, cache, cfg, STAGES.index("solve"))
    network = fit_cpts(dag_of(arts["solve"]), dataset_of(arts["data"]), method="perks")
    frame = data.frames["data"]
    held_out = frame[fold_of_rows(len(frame), folds, cfg.seed) == fold].reset_index(drop=True)
    status = str(arts["solve"].meta["result"]["status"])
    return log_likelihood(network, Dataset.from_frame(held_out, warn=False)), status


# ----------------------------------------------------------------------------------- result
@dataclass
class SelectionResult:
    """The held-out log-likelihood of every candidate and fold, and the candidate chosen."""

    labels: list[str]
    log_likelihood: np.ndarray
    """``[candidate, fold]``: natural-log likelihood of the fold's rows."""
    n_rows: int
    statuses: list[list[str]]
    chosen: int
    config: RunConfig
    """The chosen candidate's configuration, with which the run's network is learned."""
    rule: str = HIGHEST_TOTAL
    """How the choice was made (:data:`RULES`): the highest total (``--select``), or the sign test
    (``--score auto``)."""

    @property
    def per_row(self) -> np.ndarray:
        """Each candidate's held-out log-likelihood over all folds, per row."""
        return self.log_likelihood.sum(axis=1) / self.n_rows

    def table(self) -> pd.DataFrame:
        """One row per candidate: the held-out log-likelihood per row, its folds', and the choice."""
        frame = pd.DataFrame({"candidate": self.labels, "log_likelihood_per_row": self.per_row})
        for k in range(self.log_likelihood.shape[1]):
            frame[f"fold_{k}"] = self.log_likelihood[:, k]
        frame["chosen"] = np.arange(len(self.labels)) == self.chosen
        return frame

    def record(self) -> dict[str, Any]:
        return {"folds": int(self.log_likelihood.shape[1]), "rule": self.rule, "chosen": self.labels[self.chosen],
                "candidates": self.table().drop(columns="chosen").to_dict(orient="records"),
                "statuses": {label: {s: row.count(s) for s in sorted(set(row))}
                             for label, row in zip(self.labels, self.statuses)}}

    def columns(self) -> dict[str, Any]:
        """The columns of a grid's results row: the chosen candidate and its held-out log-likelihood per row."""
        return {"selected": self.labels[self.chosen], "cv_log_likelihood": float(self.per_row[self.chosen])}

    def summary(self) -> str:
        scores = ", ".join(f"{label} {value:.4f}" for label, value in zip(self.labels, self.per_row))
        folds = self.log_likelihood.shape[1]
        if self.rule == SIGN_TEST:
            wins = folds_better(self.log_likelihood)
            return (f"selection : {self.labels[self.chosen]} by --score auto: {self.labels[1]} predicted the "
                    f"held-out rows better on {wins} of {folds} folds (sign test p = {sign_test_p(wins, folds):.3f}, "
                    f"{'at most' if self.chosen else 'above'} {AUTO_LEVEL:g}; per row {scores})")
        return f"selection : {self.labels[self.chosen]} by {folds}-fold held-out log-likelihood per row ({scores})"

    def write(self, folder: Path) -> None:
        """``selection.csv`` and ``selection.json`` in ``folder``."""
        self.table().to_csv(folder / "selection.csv", index=False)
        (folder / "selection.json").write_text(json.dumps(self.record(), indent=1))


@dataclass
class UnfinishedSelection:
    """The cross-validation of ``--score auto`` ended by a stop request (Ctrl-C, SIGTERM) after the
    reference setting's network was learned: that network is the run's, the folds learned are
    cached (the same command goes on from them)."""

    during: str
    """What the stop interrupted: ``the selection (k of n networks learned)``."""

    def record(self) -> dict[str, Any]:
        return {"rule": SIGN_TEST, "status": "interrupted", "during": self.during}

    def summary(self) -> str:
        return (f"selection : --score auto interrupted during {self.during}; the network is BDeu's (cached: "
                "the same command goes on from them)")

    def write(self, folder: Path) -> None:
        """``selection.json`` in ``folder``."""
        (folder / "selection.json").write_text(json.dumps(self.record(), indent=1))


def run_selection(cfg: RunConfig, cache: StageCache, data: Artifact, jobs: int = 1, executor=None,
                  report: Callback | None = None, candidates: list[tuple[str, RunConfig]] | None = None,
                  rule: str = HIGHEST_TOTAL) -> SelectionResult:
    """Cross-validate the candidates of ``cfg.select`` (or ``candidates``, labelled configurations)
    on ``data`` (on ``executor``, e.g. a :class:`pipeline.core.executors.DaskExecutor`, else a
    local pool of ``jobs`` processes, this process when 1) and return the held-out
    log-likelihoods and the configuration ``rule`` picks from them (:data:`RULES`). ``report``
    receives a progress record (stage ``selection``, ``networks`` learned of all: one per
    candidate and fold) as each is learned; folds found in the cache are read in this process.
    A stop request raises :class:`pipeline.core.stopping.StageStopped` (stage ``selection``)."""
    labels, configs = zip(*(candidate_configs(cfg) if candidates is None else candidates))
    n_rows = len(data.frames["data"])
    fold_of_rows(n_rows, cfg.folds, cfg.seed)  # too many folds fails before any learning

    def compute():
        values, statuses = cross_validate(configs, cache, data, cfg.folds, jobs, executor, report, cfg.solver)
        columns = [f"fold_{k}" for k in range(cfg.folds)]
        return {"log_likelihood": pd.DataFrame(values, columns=columns)}, {"statuses": statuses}

    if any(c.budget is not None or c.time_limit is not None for c in configs):  # not final: learned each time
        frames, meta = compute()
    else:  # the held-out values are cached as a whole too: a rerun reads one artifact, not every fold's
        params = {"candidates": [{"restrict": restrict_params(c), "scores": score_params(c), "solve": solve_params(c)}
                                 for c in configs], "folds": cfg.folds, "seed": cfg.seed, "stage_versions": VERSIONS}
        art = cache.get_or_compute("selection", SELECTION_VERSION, params, {"data": data.key}, compute)
        frames, meta = art.frames, art.meta
    values = frames["log_likelihood"].to_numpy(dtype=float)
    chosen = RULES[rule](values)
    logger.info("selected %s by %d-fold cross-validation", labels[chosen], cfg.folds)
    return SelectionResult(list(labels), values, n_rows, meta["statuses"], chosen, configs[chosen], rule)


def cross_validate(configs, cache: StageCache, data: Artifact, folds: int, jobs: int, executor,
                   report: Callback | None, solver: str) -> tuple[np.ndarray, list[list[str]]]:
    """The held-out log-likelihood ``[candidate, fold]`` of each configuration and its solves'
    statuses: the folds found in the cache read here, the others learned by :func:`held_out_fold`
    (see :func:`run_selection`)."""
    root = str(cache.root.resolve())
    every = [(c, root, cache.enabled, data, folds, k) for c in configs for k in range(folds)]
    found = cached_results(held_out_fold, every) if cache.enabled else {}
    tasks = [task for i, task in enumerate(every) if i not in found]
    count = None
    try:
        if tasks and executor is None and jobs > 1:  # compiled here, loaded by the workers
            ensure_compiled(*configs, run_stages=run_stages)
        count = TaskCount(report, "selection", solver, len(every), "networks", done=len(found))
        learned = iter(map_tasks(held_out_fold, tasks, jobs, executor, count.done))
        results = [found[i] if i in found else next(learned) for i in range(len(every))]
    except STOPPED:
        if count is not None:
            count.end("interrupted")
        done = 0 if count is None else count.count
        raise StageStopped("selection", stop_requested() or signal.SIGINT,
                           during=f"the selection ({done} of {len(every)} networks learned)") from None
    values = np.array([value for value, _ in results]).reshape(len(configs), folds)
    statuses = [[status for _, status in results[c * folds:(c + 1) * folds]] for c in range(len(configs))]
    return values, statuses


# ------------------------------------------------------------------------------ the rules
def highest_total(log_likelihood: np.ndarray) -> int:
    """The candidate of highest held-out log-likelihood summed over the folds (the first of equals),
    as bnlearn's ``bn.cv`` compares settings."""
    return int(np.argmax(log_likelihood.sum(axis=1)))


def sign_test_p(wins: int, folds: int) -> float:
    """One-sided sign test: the probability of ``wins`` or more of ``folds`` fair coin tosses."""
    return sum(math.comb(folds, k) for k in range(wins, folds + 1)) / 2.0 ** folds


def folds_better(log_likelihood: np.ndarray) -> int:
    """On how many folds the second candidate predicts the held-out rows better than the first."""
    return int((log_likelihood[1] > log_likelihood[0]).sum())


def unless_consistently_better(log_likelihood: np.ndarray, level: float = AUTO_LEVEL) -> int:
    """The first candidate (the reference), unless the second predicts the held-out rows better on
    so many folds that a one-sided sign test rejects "no better" at ``level`` (with 5 folds: on
    every fold). A conservative rule: a change of setting must show on the folds one by one, not
    only in their total, which one fold's large difference can decide."""
    return 1 if sign_test_p(folds_better(log_likelihood), log_likelihood.shape[1]) <= level else 0


RULES = {HIGHEST_TOTAL: highest_total, SIGN_TEST: unless_consistently_better}
"""How a selection chooses from the held-out log-likelihoods ``[candidate, fold]``."""


# ---------------------------------------------------------------------------- --score auto
def auto_score_candidates(cfg: RunConfig) -> list[tuple[str, RunConfig]]:
    """The two settings ``--score auto`` decides between: the run with BDeu (the reference) and
    with qNML, under the run's arc prior or, where it has none, ``E = 1`` (without a prior qNML's
    networks of hailfinder were erratic: ``docs/journal/2026-11-accuracy.md``, 2026-11-29)."""
    reference, alternative = AUTO_SCORES
    prior = AUTO_QNML_PRIOR if cfg.structure_prior is None else cfg.structure_prior
    run = replace(cfg, folds=FOLDS.default)
    return [(f"score={reference}", replace(run, score=reference).validated()),
            (f"score={alternative},structure_prior={prior:g}",
             replace(run, score=alternative, structure_prior=prior).validated())]


def auto_score_decidable(cfg: RunConfig, n_rows: int, n_vars: int) -> bool:
    """Whether ``--score auto`` cross-validates data of ``n_rows`` x ``n_vars``: 3 to
    :data:`AUTO_MAX_VARIABLES` variables (the arc prior ``E = 1`` needs 3) and at least two rows
    per fold (the options that rule it out make the score BDeu on validation:
    :meth:`pipeline.core.config.RunConfig.validated`)."""
    return 3 <= n_vars <= AUTO_MAX_VARIABLES and n_rows >= 2 * cfg.folds


def auto_reference(cfg: RunConfig) -> RunConfig | None:
    """The setting ``--score auto`` learns before its cross-validation, BDeu's, so that a stop
    there keeps that network; None when the run has no ``--score auto`` to decide."""
    return cfg.undecided_score() if cfg.score == AUTO and cfg.select is None else None


def chosen_needs_learning(reference: RunConfig | None, selection: SelectionResult | None) -> bool:
    """Whether the chosen setting's network is still to learn: no reference was learned first,
    or the selection chose another candidate."""
    return reference is None or (selection is not None and selection.chosen != 0)


def select_config(cfg: RunConfig, cache: StageCache, frame: pd.DataFrame | None = None, jobs: int = 1,
                  executor=None, report: Callback | None = None) -> tuple[RunConfig, SelectionResult | None]:
    """The configuration a run learns with: ``cfg`` itself; with ``cfg.select`` the candidate that
    :func:`run_selection` chooses on the run's data (``frame``: a table given in Python); with
    ``--score auto`` BDeu or qNML (:func:`unless_consistently_better`), or BDeu where the data
    are too small or too large to decide (:func:`auto_score_decidable`)."""
    if cfg.select is None and cfg.score != AUTO:
        return cfg, None
    data = run_stages(cache, cfg, upto="data", frame=frame)["data"]
    if cfg.select is not None:
        selection = run_selection(cfg, cache, data, jobs=jobs, executor=executor, report=report)
    elif auto_score_decidable(cfg, *data.frames["data"].shape):
        selection = run_selection(cfg, cache, data, jobs=jobs, executor=executor, report=report,
                                  candidates=auto_score_candidates(cfg), rule=SIGN_TEST)
    else:
        return cfg.undecided_score(), None
    return selection.config, selection
