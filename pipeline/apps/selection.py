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
"""

from __future__ import annotations

import json
import logging
import signal
from dataclasses import dataclass
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
from pipeline.core.declarations import ConfigError
from pipeline.core.executors import STOPPED, map_tasks
from pipeline.core.kernels import ensure_compiled
from pipeline.core.stages import STAGES, dag_of, dataset_of, model_stages, run_stages
from pipeline.core.stopping import StageStopped

logger = logging.getLogger(__name__)

FOLD_VERSION = "1"


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
                  fold: int) -> tuple[float, str]:
    """Learn with ``cfg`` from the rows outside ``fold`` (of ``folds``, dealt with ``cfg.seed``)
    and return the log-likelihood of the fold's rows and the solver's status (a picklable job
    for the local pool and Dask)."""
    cache = StageCache(cache_root, enabled=cache_enabled)
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
        return {"folds": int(self.log_likelihood.shape[1]), "chosen": self.labels[self.chosen],
                "candidates": self.table().drop(columns="chosen").to_dict(orient="records"),
                "statuses": {label: {s: row.count(s) for s in sorted(set(row))}
                             for label, row in zip(self.labels, self.statuses)}}

    def columns(self) -> dict[str, Any]:
        """The columns of a grid's results row: the chosen candidate and its held-out log-likelihood per row."""
        return {"selected": self.labels[self.chosen], "cv_log_likelihood": float(self.per_row[self.chosen])}

    def summary(self) -> str:
        scores = ", ".join(f"{label} {value:.4f}" for label, value in zip(self.labels, self.per_row))
        return (f"selection : {self.labels[self.chosen]} by {self.log_likelihood.shape[1]}-fold held-out "
                f"log-likelihood per row ({scores})")

    def write(self, folder: Path) -> None:
        """``selection.csv`` and ``selection.json`` in ``folder``."""
        self.table().to_csv(folder / "selection.csv", index=False)
        (folder / "selection.json").write_text(json.dumps(self.record(), indent=1))


def run_selection(cfg: RunConfig, cache: StageCache, data: Artifact, jobs: int = 1, executor=None,
                  report: Callback | None = None) -> SelectionResult:
    """Cross-validate the candidates of ``cfg.select`` on ``data`` (on ``executor``, e.g. a
    :class:`pipeline.core.executors.DaskExecutor`, else a local pool of ``jobs`` processes, this
    process when 1) and return the held-out log-likelihoods and the chosen configuration.
    ``report`` receives a progress record (stage ``selection``, ``networks`` learned of all: one
    per candidate and fold) as each is learned. A stop request raises
    :class:`pipeline.core.stopping.StageStopped` (stage ``selection``)."""
    labels, configs = zip(*candidate_configs(cfg))
    n_rows = len(data.frames["data"])
    fold_of_rows(n_rows, cfg.folds, cfg.seed)  # too many folds fails before any learning
    root = str(cache.root.resolve())
    tasks = [(c, root, cache.enabled, data, cfg.folds, k) for c in configs for k in range(cfg.folds)]
    count = None
    try:
        if executor is None and jobs > 1:  # compiled here, loaded by the workers
            ensure_compiled(*configs, run_stages=run_stages)
        count = TaskCount(report, "selection", cfg.solver, len(tasks), "networks")
        results = map_tasks(held_out_fold, tasks, jobs, executor, count.done)
    except STOPPED:
        if count is not None:
            count.end("interrupted")
        done = 0 if count is None else count.count
        raise StageStopped("selection", stop_requested() or signal.SIGINT,
                           during=f"the selection ({done} of {len(tasks)} networks learned)") from None
    values = np.array([value for value, _ in results]).reshape(len(configs), cfg.folds)
    statuses = [[status for _, status in results[c * cfg.folds:(c + 1) * cfg.folds]] for c in range(len(configs))]
    chosen = int(np.argmax(values.sum(axis=1)))
    logger.info("selected %s by %d-fold cross-validation", labels[chosen], cfg.folds)
    return SelectionResult(list(labels), values, n_rows, statuses, chosen, configs[chosen])


def select_config(cfg: RunConfig, cache: StageCache, frame: pd.DataFrame | None = None, jobs: int = 1,
                  executor=None, report: Callback | None = None) -> tuple[RunConfig, SelectionResult | None]:
    """The configuration a run learns with: ``cfg`` itself, or with ``cfg.select`` the candidate
    that :func:`run_selection` chooses on the run's data (``frame``: a table given in Python)."""
    if cfg.select is None:
        return cfg, None
    data = run_stages(cache, cfg, upto="data", frame=frame)["data"]
    selection = run_selection(cfg, cache, data, jobs=jobs, executor=executor, report=report)
    return selection.config, selection
