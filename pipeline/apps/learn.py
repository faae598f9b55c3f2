"""The Python API: one call runs the cached stages and returns a :class:`LearnResult`.

    >>> import hybridbn
    >>> result = hybridbn.learn("asia", rows=2000, seed=1)        # doctest: +SKIP
    >>> result.arcs, result.objective, result.evaluation["shd"]   # doctest: +SKIP

``learn(source, **options)`` takes a pandas DataFrame, a file (data: CSV, parquet, feather; a
network to sample from: ``.bif`` / ``.bif.gz``; a score table: ``.jkl`` / ``.jkl.gz``) or a
benchmark network name, and the options of ``run.py`` under their :class:`RunConfig` names
(``rows``, ``seed``, ``method``, ``alpha``, ``palim``, ``solver``, ``missing``, ``budget``...).
Expert knowledge may be given as files or as Python objects (``required=[("rain", "wet")]``,
``tiers={"season": 0, "rain": 1}``, DataFrames; :func:`pipeline.core.knowledge.knowledge_rows`),
checked as the files are. ``name`` names the learned network (``data`` for a DataFrame). Errors
name the options as keywords (``alpha must lie strictly between 0 and 1``), an unknown keyword
with the closest ones. The command line (:mod:`pipeline.apps.cli`) is a thin layer over
:func:`run_config`, which this function calls too, so both share the stage cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import warnings
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from bayesnet.catalog import UnknownNetworkError, check_network, is_network_file
from hybridbn.errors import HybridBNError
from hybridbn.interrupt import catching_signals
from hybridbn.options import TEXT, Param, keyword_spelling
from hybridbn.progress import Callback, reporting
from pipeline.apps.bootstrap import BootstrapStopped, run_bootstrap
from pipeline.apps.learned import LearnResult
from pipeline.apps.selection import UnfinishedSelection, auto_reference, chosen_needs_learning, select_config
from pipeline.core.cache import Artifact, StageCache, StageInterrupted
from pipeline.core.config import RunConfig
from pipeline.core.declarations import KNOWLEDGE, OPTIONS, SCORE_FILE_SUFFIXES, SOURCE_OPTIONS, STAGES, ConfigError
from pipeline.core.knowledge import knowledge_rows
from pipeline.core.preflight import check_columns, check_readable
from pipeline.core.stages import evaluate_stage, run_stages
from pipeline.core.stopping import StageStopped

#: learn() options that are not RunConfig fields
RUN_OPTIONS = ("cache_dir", "use_cache", "stage", "progress", "n_jobs")
DATA_SUFFIXES = (".csv", ".parquet", ".pq", ".feather")
STAGE = Param("stage", TEXT, STAGES[-1], "run up to this stage and print its counts and time", choices=STAGES)
"""``--stage`` of the command line, ``stage`` of :func:`learn`: not a field of :class:`RunConfig`."""
FRAME_NAME = "data"
"""The name of a network learned from a DataFrame when ``name`` is not given."""


def learn(
    source: pd.DataFrame | str | Path,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    stage: str = STAGE.default,
    progress: bool | Callback = False,
    n_jobs: int = 1,
    **options: Any,
) -> LearnResult:
    """Learn a Bayesian network from ``source`` (a DataFrame, a file or a benchmark name).

    ``options`` are the run parameters of :class:`RunConfig` (``rows``, ``seed``, ``method``,
    ``test``, ``alpha``, ``max_order``, ``score``, ``ess``, ``palim``, ``solver``, ``time_limit``,
    ``treewidth``, ``bootstrap``, ``threshold``, ...); ``stage`` stops after that stage; the
    stage cache lives in ``cache_dir`` (default as for ``run.py``) unless ``use_cache`` is false.
    With ``bootstrap=B`` the B networks are learned in ``n_jobs`` processes. Bad options raise
    :class:`ValueError` naming the option (as a keyword) before any work starts.

    ``progress``: ``True`` shows the stages' progress bars and the solver's progress (elapsed
    time, incumbent, bound, gap, nodes; the bootstrap's and the selection's networks) on stderr,
    a callable receives those records (:mod:`hybridbn.progress`), ``False`` shows nothing. Ctrl-C
    (or SIGTERM) during the solve returns the best network found so far with status
    ``interrupted``, its bound and gap, and a warning (it is not cached: the same call resumes
    from it); during the bootstrap it returns the network learned, with the bootstrap unfinished
    (:attr:`LearnResult.stopped_in`) and a warning; in another stage it raises
    ``KeyboardInterrupt`` with the stages finished cached.
    """
    with keyword_messages():
        stage = STAGE.validated(stage)
        cfg, frame = config_for(source, options)
        check_whole_network_stage(cfg, stage)
        cache = StageCache(cache_dir, enabled=use_cache)
        cache.check_writable()
        with reporting(progress) as report, catching_signals():
            result = run_config(cfg, cache, stage=stage, progress=progress is True, n_jobs=n_jobs, frame=frame,
                                report=report)
    if result.stopped_in == "solve":
        gap = "-" if result.gap is None else f"{result.gap:.4%}"
        warnings.warn(f"the solve was interrupted: this is its best network so far (objective {result.objective:.6g}, "
                      f"gap {gap}), not cached; the same call resumes from it", stacklevel=2)
    elif result.stopped_in == "bootstrap":
        boot = result.bootstrap
        warnings.warn(f"the bootstrap was interrupted after {boot.done} of {boot.replicates} resamples: this is the "
                      "network learned, without arc strengths; the same call goes on from the resamples learned",
                      stacklevel=2)
    elif result.stopped_in == "selection":
        warnings.warn(f"score='auto' was interrupted during {result.selection.during}: this is BDeu's network; the "
                      "same call goes on from the networks of the folds learned", stacklevel=2)
    return result


@contextlib.contextmanager
def keyword_messages() -> Iterator[None]:
    """The project's errors raised inside, their messages spelt for a Python caller: options as
    keywords (``alpha``, ``treewidth=K``), not flags (:func:`hybridbn.options.keyword_spelling`)."""
    try:
        yield
    except HybridBNError as exc:
        if len(exc.args) == 1 and isinstance(exc.args[0], str):
            exc.args = (keyword_spelling(exc.args[0], (*OPTIONS, STAGE)),)
        raise


def config_for(source: pd.DataFrame | str | Path, options: dict[str, Any]) -> tuple[RunConfig, pd.DataFrame | None]:
    """The validated configuration of ``learn(source, **options)`` and the DataFrame, if any."""
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    sources = {p.name for p in SOURCE_OPTIONS}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise ConfigError(unknown_option(unknown[0], sorted(fields - sources) + list(RUN_OPTIONS)))
    given = sorted(sources & set(options))
    if given:
        raise ConfigError(f"give the data as the first argument, not as {given[0]}=")
    options = {**options, **{p.name: knowledge_rows(options[p.name], p.name) for p in KNOWLEDGE
                             if options.get(p.name) is not None}}
    frame = None
    if isinstance(source, pd.DataFrame):
        frame, where = source, {"data": "DataFrame", "name": options.pop("name", None) or FRAME_NAME}
    elif isinstance(source, (str, Path)):
        where = {source_kind(str(source)): str(source)}
    else:
        raise ConfigError(f"source must be a DataFrame, a file or a network name, got {type(source).__name__}")
    cfg = RunConfig(**where, **options).validated()
    if frame is None:
        check_source(cfg)
    else:
        check_columns(cfg, frame)
    return cfg, frame


def unknown_option(name: str, accepted: list[str]) -> str:
    """The message for an unknown keyword: the closest accepted ones, or all when none is close."""
    close = difflib.get_close_matches(name, accepted, n=3)
    if close:
        return f"unknown option {name!r}; did you mean {' or '.join(map(repr, close))}?"
    return f"unknown option {name!r}; options are {', '.join(accepted)}"


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
    a directory or unreadable, or a data file whose header names no variable (an index column,
    :func:`pipeline.core.preflight.check_columns`)."""
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
        check_columns(cfg)
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
    report: Callback | None = None,
) -> LearnResult:
    """Run the stages of a validated configuration (the shared core of the API and the CLI);
    with ``cfg.select`` first the cross-validation that chooses the setting, with ``--score auto``
    after BDeu's network the one that decides the score (:mod:`pipeline.apps.selection`), with
    ``cfg.bootstrap`` also the bootstrap networks (:mod:`pipeline.apps.bootstrap`), each in a pool
    of ``n_jobs`` processes or on ``score_executor``.
    ``progress`` shows the stages' progress bars, ``report`` receives the progress records.

    An interrupted solve of the run (:class:`StageInterrupted`) gives the result of its best DAG
    (:attr:`LearnResult.stopped_in` ``"solve"``); a stopped bootstrap the result of the run's
    network, learned before it, with the bootstrap unfinished (``"bootstrap"``). ``--score auto``
    learns BDeu's network first and then cross-validates: a stop there gives BDeu's network
    (``"selection"``). A stop in a ``--select`` selection, which comes before the run's network,
    raises :class:`pipeline.core.stopping.StageStopped`, as a stop request in any other stage does."""
    stages = dict(progress=progress, n_jobs=n_jobs, score_executor=score_executor, score_groups=score_groups,
                  frame=frame, report=report)
    if STAGES.index(stage) < STAGES.index("solve"):  # no whole networks to cross-validate --score auto with
        cfg = cfg.undecided_score()
    reference = auto_reference(cfg)
    running, selection = cfg, None
    try:
        if reference is not None:  # BDeu's network first: a stop in the cross-validation keeps it
            running = reference
            artifacts = run_stages(cache, running, upto=stage, **stages)
        try:
            cfg, selection = select_config(cfg, cache, frame, jobs=n_jobs, executor=score_executor, report=report)
        except StageStopped as exc:
            if reference is None:
                raise
            return LearnResult(reference, artifacts, None, UnfinishedSelection(exc.during))
        if chosen_needs_learning(reference, selection):
            running = cfg
            artifacts = run_stages(cache, running, upto=stage, **stages)
    except StageInterrupted as exc:  # the best DAG so far, never cached, evaluated as a final one is
        return LearnResult(running, evaluated(running, cache, exc.artifacts, stage), None, selection)
    boot = None
    if cfg.bootstrap is not None and "solve" in artifacts:
        try:
            boot = run_bootstrap(cfg, cache, artifacts["data"], jobs=n_jobs, executor=score_executor, report=report)
        except BootstrapStopped as exc:  # the run's network stays: nothing learned is lost
            boot = exc.unfinished
    return LearnResult(cfg, artifacts, boot, selection)


def evaluated(cfg: RunConfig, cache: StageCache, artifacts: dict[str, Artifact], stage: str) -> dict[str, Artifact]:
    """The artifacts of a run whose solve a stop request ended, with the evaluation of its best DAG
    (against the truth, when there is one) when the run goes up to the evaluate stage."""
    if stage != "evaluate" or "data" not in artifacts or "solve" not in artifacts:
        return artifacts
    return {**artifacts, "evaluate": evaluate_stage(cache, cfg, artifacts["data"], artifacts["solve"])}
