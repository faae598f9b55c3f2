"""The Python API: one call runs the cached stages and returns a :class:`LearnResult`.

    >>> import hybridbn
    >>> result = hybridbn.learn("asia", rows=2000, seed=1)        # doctest: +SKIP
    >>> result.arcs, result.objective, result.evaluation["shd"]   # doctest: +SKIP

``learn(source, **options)`` takes a pandas DataFrame, a file (data: CSV, parquet, feather; a
network to sample from: ``.bif`` / ``.bif.gz``; a score table: ``.jkl`` / ``.jkl.gz``) or a
benchmark network name, and the options of ``run.py`` under their :class:`RunConfig` names
(``rows``, ``seed``, ``method``, ``alpha``, ``palim``, ``solver``, ``missing``, ``budget``...).
The command line (:mod:`pipeline.apps.cli`) is a thin layer over :func:`run_config`, which this
function calls too, so both share the stage cache.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from bayesnet.catalog import UnknownNetworkError, check_network, is_network_file
from pipeline.apps.bootstrap import run_bootstrap
from pipeline.apps.learned import LearnResult
from pipeline.apps.selection import select_config
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.declarations import SCORE_FILE_SUFFIXES, SOURCE_OPTIONS, STAGES, ConfigError
from pipeline.core.preflight import check_readable
from pipeline.core.stages import run_stages

#: learn() options that are not RunConfig fields
RUN_OPTIONS = ("cache_dir", "use_cache", "stage", "progress", "n_jobs")
DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".feather")


def learn(
    source: pd.DataFrame | str | Path,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    stage: str = "evaluate",
    progress: bool = False,
    n_jobs: int = 1,
    **options: Any,
) -> LearnResult:
    """Learn a Bayesian network from ``source`` (a DataFrame, a file or a benchmark name).

    ``options`` are the run parameters of :class:`RunConfig` (``rows``, ``seed``, ``method``,
    ``test``, ``alpha``, ``max_order``, ``score``, ``ess``, ``palim``, ``solver``, ``time_limit``,
    ``treewidth``, ``bootstrap``, ``threshold``, ...); ``stage`` stops after that stage; the
    stage cache lives in ``cache_dir`` (default as for ``run.py``) unless ``use_cache`` is false.
    With ``bootstrap=B`` the B networks are learned in ``n_jobs`` processes. Bad options raise
    :class:`ValueError` naming the option before any work starts.
    """
    if stage not in STAGES:
        raise ConfigError(f"stage must be one of {', '.join(STAGES)}; got {stage!r}")
    cfg, frame = config_for(source, options)
    check_whole_network_stage(cfg, stage)
    cache = StageCache(cache_dir, enabled=use_cache)
    cache.check_writable()
    return run_config(cfg, cache, stage=stage, progress=progress, n_jobs=n_jobs, frame=frame)


def config_for(source: pd.DataFrame | str | Path, options: dict[str, Any]) -> tuple[RunConfig, pd.DataFrame | None]:
    """The validated configuration of ``learn(source, **options)`` and the DataFrame, if any."""
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    sources = {p.name for p in SOURCE_OPTIONS}
    unknown = sorted(set(options) - fields)
    if unknown:
        allowed = ", ".join(sorted(fields - sources) + list(RUN_OPTIONS))
        raise ConfigError(f"unknown option {unknown[0]!r}; options are {allowed}")
    given = sorted(sources & set(options))
    if given:
        raise ConfigError(f"give the data as the first argument, not as {given[0]}=")
    frame = None
    if isinstance(source, pd.DataFrame):
        frame, where = source, {"data": "DataFrame"}
    elif isinstance(source, (str, Path)):
        where = {source_kind(str(source)): str(source)}
    else:
        raise ConfigError(f"source must be a DataFrame, a file or a network name, got {type(source).__name__}")
    cfg = RunConfig(**where, **options).validated()
    if frame is None:
        check_source(cfg)
    return cfg, frame


def source_kind(source: str) -> str:
    """Which :class:`RunConfig` field a file or name fills: ``network``, ``data`` or ``scores``."""
    lower = source.lower()
    if lower.endswith(SCORE_FILE_SUFFIXES):
        return "scores"
    if lower.endswith(DATA_SUFFIXES):
        return "data"
    return "network"  # a benchmark name or a BIF file


def check_source(cfg: RunConfig) -> None:
    """Fail early on an unknown network name, or a network, data or score file that is missing,
    a directory or unreadable."""
    if cfg.network is not None:
        if is_network_file(cfg.network) and Path(cfg.network).exists():
            check_readable("--network", Path(cfg.network))
        try:
            check_network(cfg.network)
        except UnknownNetworkError as exc:
            raise ConfigError(str(exc)) from None
    elif cfg.data is not None:
        if not Path(str(cfg.data)).exists():
            raise ConfigError(f"data file not found: {cfg.data}")
        check_readable("--data", Path(str(cfg.data)))
    elif cfg.scores is not None:
        if not Path(str(cfg.scores)).exists():
            raise ConfigError(f"--scores: file not found: {cfg.scores}")
        check_readable("--scores", Path(str(cfg.scores)))


def check_whole_network_stage(cfg: RunConfig, stage: str) -> None:
    """The bootstrap and the selection learn whole networks: they need the solve stage."""
    for option, given in (("--bootstrap", cfg.bootstrap), ("--select", cfg.select)):
        if given is not None and STAGES.index(stage) < STAGES.index("solve"):
            raise ConfigError(f"{option} learns whole networks: it needs --stage solve or evaluate, not {stage}")


def run_config(
    cfg: RunConfig,
    cache: StageCache,
    stage: str = "evaluate",
    progress: bool = False,
    n_jobs: int = 1,
    frame: pd.DataFrame | None = None,
    score_executor=None,
    score_groups: int = 1,
) -> LearnResult:
    """Run the stages of a validated configuration (the shared core of the API and the CLI);
    with ``cfg.select`` first the cross-validation that chooses the setting
    (:mod:`pipeline.apps.selection`), with ``cfg.bootstrap`` also the bootstrap networks
    (:mod:`pipeline.apps.bootstrap`), each in a pool of ``n_jobs`` processes or on ``score_executor``."""
    cfg, selection = select_config(cfg, cache, frame, jobs=n_jobs, executor=score_executor, progress=progress)
    artifacts = run_stages(cache, cfg, upto=stage, progress=progress, n_jobs=n_jobs,
                           score_executor=score_executor, score_groups=score_groups, frame=frame)
    boot = None
    if cfg.bootstrap is not None and "solve" in artifacts:
        boot = run_bootstrap(cfg, cache, artifacts["data"], jobs=n_jobs, executor=score_executor, progress=progress)
    return LearnResult(cfg, artifacts, boot, selection)
