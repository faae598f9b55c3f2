"""Arc confidence by the bootstrap (``--bootstrap B``), as bnlearn's ``boot.strength`` and
``averaged.network``: learn ``B`` networks from resamples of the rows, count how often each arc
appears (:mod:`graphs.averaging`), and keep the arcs above Scutari & Nagarajan's (2013) threshold
(or ``--threshold``) as the averaged network.

Each resample is a data artifact keyed by the original data's key, the seed and its replicate
number (rows drawn with replacement from ``numpy.random.default_rng([seed, replicate])``), so its
restriction, scores and solve are cached like any run's and a rerun is read from the cache.
The replicates run in this process, in a local pool of worker processes, or on Dask; the
strengths do not depend on which. A stop request (Ctrl-C, SIGTERM) ends the bootstrap between
replicates (those running stop at their safe points) with :class:`BootstrapStopped`, which says
how many were learned (:class:`UnfinishedBootstrap`); each is cached, so the same command goes on
from them.
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

from graphs._checks import GraphError
from graphs.averaging import arc_strengths, averaged_network, inclusion_threshold, pair_strengths, strength_frame
from graphs.export import to_edge_frame
from graphs.metrics import shd, skeleton_scores
from graphs.pdag import dag_to_cpdag, pdag_to_dag
from hybridbn.interrupt import stop_requested
from hybridbn.progress import Callback, TaskCount
from pipeline.apps.pictures import draw, strength_drawing
from pipeline.core.cache import Artifact, StageCache
from pipeline.core.config import RunConfig
from pipeline.core.executors import STOPPED, cached_results, map_tasks
from pipeline.core.kernels import ensure_compiled
from pipeline.core.stages import STAGES, dag_of, model_stages, names_of, run_stages, true_dag
from pipeline.core.stopping import StageStopped

logger = logging.getLogger(__name__)

RESAMPLE_VERSION = "1"


def resample_stage(cache: StageCache, cfg: RunConfig, data: Artifact, replicate: int) -> Artifact:
    """Replicate ``replicate`` of the data: as many rows, drawn with replacement (seed ``cfg.seed``);
    the states of every variable are kept, so the arities do not change."""
    params = {"bootstrap_of": data.key, "replicate": replicate, "seed": cfg.seed}

    def compute():
        frame = data.frames["data"]
        rows = np.random.default_rng([cfg.seed, replicate]).integers(0, len(frame), size=len(frame))
        meta = {"n_rows": len(frame), "n_vars": frame.shape[1], "network": None, "replicate": replicate}
        return {"data": frame.iloc[rows].reset_index(drop=True)}, meta

    return cache.get_or_compute("data", RESAMPLE_VERSION, params, {"data": data.key}, compute)


def learn_replicate(cfg: RunConfig, cache_root: str, cache_enabled: bool, data: Artifact,
                    replicate: int, read_only: bool = False) -> tuple[np.ndarray, str]:
    """Learn the network of one resample (restriction, scores, solve); returns its DAG and the
    solver's status (a picklable job for the local pool and Dask). ``read_only``: only read it
    from the cache (:class:`pipeline.core.cache.NotCached` when some stage is missing)."""
    cache = StageCache(cache_root, enabled=cache_enabled, read_only=read_only)
    arts = {"data": resample_stage(cache, cfg, data, replicate)}
    model_stages(arts, cache, cfg, STAGES.index("solve"))
    return dag_of(arts["solve"]), str(arts["solve"].meta["result"]["status"])


@dataclass
class BootstrapResult:
    """Arc strengths of ``B`` bootstrap networks and their averaged network."""

    names: list[str]
    strength: np.ndarray
    direction: np.ndarray
    threshold: float
    threshold_rule: str
    averaged: np.ndarray
    statuses: list[str]
    seed: int
    evaluation: dict[str, Any] | None = None

    @property
    def replicates(self) -> int:
        return len(self.statuses)

    def strengths(self) -> pd.DataFrame:
        """bnlearn's ``bn.strength`` table: from, to, strength, direction."""
        return strength_frame(self.strength, self.direction, self.names)

    def averaged_edges(self) -> pd.DataFrame:
        """The averaged network's edges (source, target, directed) with their strength and direction."""
        frame = to_edge_frame(self.averaged, self.names)
        index = {name: k for k, name in enumerate(self.names)}
        i, j = frame["source"].map(index).to_numpy(), frame["target"].map(index).to_numpy()
        return frame.assign(strength=self.strength[i, j], direction=self.direction[i, j])

    def record(self) -> dict[str, Any]:
        return {"replicates": self.replicates, "seed": self.seed, "threshold": self.threshold,
                "threshold_rule": self.threshold_rule, "n_edges": int(np.triu(self.averaged | self.averaged.T).sum()),
                "statuses": {s: self.statuses.count(s) for s in sorted(set(self.statuses))},
                "evaluation": self.evaluation}

    def columns(self) -> dict[str, Any]:
        """The columns of a grid's results row: B, threshold, the averaged network's size and accuracy."""
        ev = self.evaluation or {}
        return {"bootstrap": self.replicates, "threshold": self.threshold, "n_edges_averaged": self.record()["n_edges"],
                "shd_averaged": ev.get("shd"), "f1_averaged": ev.get("f1")}

    def summary(self) -> str:
        rec = self.record()
        line = (f"bootstrap : {self.replicates} resamples, threshold {self.threshold:.3g} ({self.threshold_rule}), "
                f"averaged network {rec['n_edges']} edges")
        if self.evaluation is not None:
            line += (f", SHD {self.evaluation['shd']}, skeleton F1 {self.evaluation['f1']:.3f} "
                     f"(precision {self.evaluation['precision']:.3f}, recall {self.evaluation['recall']:.3f})")
        return line

    def write(self, folder: Path) -> None:
        """``strengths.csv``, ``averaged.csv``, ``bootstrap.json`` and ``averaged.png/svg`` in ``folder``."""
        self.strengths().to_csv(folder / "strengths.csv", index=False)
        self.averaged_edges().to_csv(folder / "averaged.csv", index=False)
        (folder / "bootstrap.json").write_text(json.dumps(self.record(), indent=1))
        title = f"averaged network of {self.replicates} bootstrap networks (threshold {self.threshold:.3g})"
        try:
            draw(strength_drawing(self.averaged, self.strength, self.names, title), folder / "averaged")
        except (ValueError, ImportError, OSError, RuntimeError) as exc:
            logger.warning("averaged.png/.svg not drawn: %s", exc)


@dataclass
class UnfinishedBootstrap:
    """A bootstrap that a stop request ended after ``done`` of its ``replicates`` networks (each
    cached: the same command goes on from them); it has no strengths yet."""

    replicates: int
    done: int
    seed: int

    def record(self) -> dict[str, Any]:
        return {"replicates": self.replicates, "done": self.done, "seed": self.seed, "status": "interrupted"}

    def summary(self) -> str:
        return (f"bootstrap : interrupted after {self.done} of {self.replicates} resamples (cached: the same "
                f"command goes on from them)")

    def write(self, folder: Path) -> None:
        """``bootstrap.json`` in ``folder``."""
        (folder / "bootstrap.json").write_text(json.dumps(self.record(), indent=1))


class BootstrapStopped(StageStopped):
    """A stop request (signal ``signum``) ended the bootstrap; ``unfinished`` says how far it got."""

    def __init__(self, unfinished: UnfinishedBootstrap, signum: int):
        super().__init__("bootstrap", signum,
                         during=f"the bootstrap ({unfinished.done} of {unfinished.replicates} resamples learned)")
        self.unfinished = unfinished

    def __reduce__(self):
        return type(self), (self.unfinished, self.signum)


def run_bootstrap(cfg: RunConfig, cache: StageCache, data: Artifact, jobs: int = 1, executor=None,
                  report: Callback | None = None) -> BootstrapResult:
    """Learn ``cfg.bootstrap`` networks from resamples of ``data`` on ``executor`` (e.g. a
    :class:`pipeline.core.executors.DaskExecutor`, left open), else in a local pool of ``jobs``
    processes (this process when 1), and average them at ``cfg.threshold`` or at the estimated
    threshold. ``report`` receives a progress record (stage ``bootstrap``, ``networks`` done of
    all) as each network is learned. A stop request raises :class:`BootstrapStopped`."""
    root = str(cache.root.resolve())
    every = [(cfg, root, cache.enabled, data, b) for b in range(cfg.bootstrap)]
    results = cached_results(learn_replicate, every) if cache.enabled else {}  # keyed by replicate number
    tasks = [task for b, task in enumerate(every) if b not in results]
    count = None
    try:
        if tasks and executor is None and jobs > 1:  # compiled here, loaded by the workers
            ensure_compiled(cfg, run_stages=run_stages)
        count = TaskCount(report, "bootstrap", cfg.solver, cfg.bootstrap, "networks", done=len(results))
        learned = map_tasks(learn_replicate, tasks, jobs, executor, count.done)
    except STOPPED:
        if count is not None:
            count.end("interrupted")
        unfinished = UnfinishedBootstrap(cfg.bootstrap, len(results) if count is None else count.count, cfg.seed)
        raise BootstrapStopped(unfinished, stop_requested() or signal.SIGINT) from None
    names = names_of(data)
    results.update((task[-1], result) for task, result in zip(tasks, learned))
    cpdags = [dag_to_cpdag(results[b][0]) for b in range(cfg.bootstrap)]
    strength, direction = arc_strengths(cpdags)
    if cfg.threshold is None:
        threshold, rule = inclusion_threshold(pair_strengths(strength)), "Scutari & Nagarajan 2013"
    else:
        threshold, rule = cfg.threshold, "--threshold"
    averaged = averaged_network(strength, direction, threshold)
    truth = data.meta.get("network")
    return BootstrapResult(names, strength, direction, threshold, rule, averaged,
                           [results[b][1] for b in range(cfg.bootstrap)], cfg.seed,
                           None if truth is None else evaluate_averaged(averaged, truth))


def evaluate_averaged(averaged: np.ndarray, network: str) -> dict[str, Any]:
    """SHD between the CPDAGs of the averaged network (of a DAG extending it when one exists, else
    the PDAG itself) and of the true network, and skeleton precision / recall / F1."""
    truth = true_dag(network)
    try:
        estimate = dag_to_cpdag(pdag_to_dag(averaged))
    except GraphError:
        estimate = averaged
    scores = skeleton_scores(averaged, truth)
    return {"truth": network, "shd": shd(estimate, dag_to_cpdag(truth)),
            **{k: scores[k] for k in ("precision", "recall", "f1")}}
