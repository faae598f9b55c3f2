"""Experiment grids: a TOML file of parameter lists, expanded into independent, cached jobs.

Grid file (every key optional except ``networks``; a scalar means a one-element list)::

    name = "alpha-sweep"          # results go to <output-dir>/grid-<name>/ (default: file stem)
    networks = ["asia", "alarm"]  # benchmark names, or BIF files (relative to the grid file)
    data = ["a.csv", "b.parquet"] # your data files (CSV, parquet, feather; relative to the grid file)
    rows = [1000, 5000]           # sample sizes
    seeds = [0]
    methods = ["pc"]              # none | pc | pmms | mmpc | cops | candidates
    tests = ["g2"]                # g2 | x2
    alphas = [0.01, 0.05]
    max_orders = [1]              # CI orders; "none" = unbounded
    candidates = [16]             # with methods = ["candidates"]: candidate parents per child
    scores = ["bdeu", "x.jkl"]    # score names, and .jkl score files solved as they are (as --scores)
    structure_priors = ["none"]   # expected parents per node of the arc prior; "none" = uniform
    ess = [1.0]
    palims = [3]                  # "none" = no parent limit
    solvers = ["ilp"]             # ilp | kg | kastar | hc | tabu | ges | sges
    treewidths = ["none"]         # treewidth bound (needed by kg, kastar; optional for ilp)
    within_bags = [false]         # ilp inside the cops tree decomposition (methods = ["cops"])
    sges_bounds = ["parents:3"]   # SGES property bounds
    ktrees = 200                  # s2 / s2plus: stop after this many k-trees (omit: at the time limit)
    restart = 0                   # hc / tabu: random restarts (bnlearn's restart), each after
    perturb = 1                   #   this many random arc moves (perturb)
    max_iter = 10000              #   at most this many arc moves in all (omit: none)
    tabu = 10                     # tabu: length of the tabu list (bnlearn's tabu)
    max_tabu = 10                 #   non-improving moves since the last new best (omit: = tabu)
    time_limit = 600              # seconds per solve (omit: none)
    memory_limit = 6000           # megabytes SCIP may hold per ILP solve (omit: none)
    cops_time_limit = 600         # seconds per cops-and-robbers restriction (omit: none)
    budget = 900                  # seconds per job for restriction + scoring + solving (omit: none)
    required = "required.csv"     # expert knowledge for every job (CSV files relative to the grid file;
    forbidden = "forbidden.csv"   #   see pipeline.core.knowledge); cached by content
    tiers = "tiers.csv"
    baseline = true               # also solve without restriction: F1 vs G_score (Su 2023, 6.1)
    score_groups = 1              # on Dask: score each job's children as this many tasks
    bootstrap = 50                # also learn 50 networks from resamples: averaged network's SHD, F1
    threshold = 0.5               #   at this strength threshold (omit: estimated, as bnlearn)
    select = "method=none; score=qnml"  # learn with the candidate of best held-out log-likelihood
    folds = 5                     #   over this many folds (columns selected, cv_log_likelihood)

At least one source is needed: a network, a data file or a score file; each is checked as
``--network``, ``--data`` and ``--scores`` are (:func:`pipeline.apps.learn.check_source`, the same
messages), and the sources are one axis (networks, then data files, then score files); a row's
``dataset`` names its source (the network's name, the file's stem). Jobs are the cartesian
product in the order of the keys above (so job ids are deterministic); parameters a job does not
use (rows and seeds of a data file; everything before the solve of a score file; alpha/test/order
when ``method`` is ``"none"`` or ``"candidates"``, ESS for non-BDeu scores, the SGES bound for
other solvers, the candidate count for other methods) are normalised and the duplicates dropped.
A data or score file enters a job's key by its content. A job is a pure function of its parameters: its stages
go through the shared stage cache, and its results row is cached as a ``job`` artifact, so a
finished job is never recomputed and an interrupted grid resumes where it stopped.
A failing job is recorded with its error and the grid goes on. A job that a stop request ended
(Ctrl-C, SIGTERM: :mod:`hybridbn.interrupt`) is recorded with status ``interrupted`` (with the
objective, bound and gap its solve reached, or what it had learned before its bootstrap), never
cached; the grid then starts no other job (with ``-j N`` the jobs running in the workers stop at
their safe points and are recorded the same way), lists the jobs it did not run as ``missing``,
writes its results table and exits with 130 or 143.

Without ``--quiet`` the grid shows its progress (:mod:`pipeline.apps.grid_progress`). A failed
job's row is kept apart (:func:`record_failure`), so that ``--collect`` (which runs nothing) lists
it with its error, like a Slurm array task's; it and every run exit 1 when a job failed or did not
run and print their ids as ``sbatch --array`` takes them (:func:`grid_summary`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import logging
import re
import signal
import sys
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from bayesnet.catalog import is_network_file
from constraints.methods import RESTRICTION, TEST
from hybridbn.errors import HybridBNError
from hybridbn.interrupt import catching_signals, exit_code, stop_requested
from hybridbn.options import FILE, SECONDS, Choice, Param
from hybridbn.progress import ProgressDisplay
from pipeline.apps.bootstrap import run_bootstrap
from pipeline.apps.grid_progress import GridProgress, array_ranges, duration
from pipeline.apps.learn import check_source, source_kind
from pipeline.apps.selection import auto_reference, chosen_needs_learning, select_config
from pipeline.core.atomic import replace_file, write_error
from pipeline.core.cache import Artifact, StageCache, StageInterrupted, file_sha256, stage_key
from pipeline.core.config import RunConfig
from pipeline.core.declarations import (CHOICES, DATA, NETWORK, OPTIONS, PARAM_COLUMNS, SCORE_FILE, SOURCE_OPTIONS,
                                        SOURCES, ConfigError)
from pipeline.core.executors import STOPPED, DaskExecutor, LocalExecutor, connect_scheduler, start_cluster
from pipeline.core.knowledge import knowledge_of
from pipeline.core.preflight import check_writable_folder
from pipeline.core.stages import VERSIONS, compare, dag_of, run_stages
from pipeline.core.stopping import StageStopped
from scores.methods import PALIM, SCORE

logger = logging.getLogger(__name__)

JOB_VERSION = "2"

_GRID_OPTIONS = [o for o in OPTIONS if o.grid is not None]
#: grid key -> RunConfig field, in expansion order (the declarations' order,
#: :data:`pipeline.core.declarations.OPTIONS`)
LIST_KEYS = {o.grid: o.name for o in _GRID_OPTIONS if isinstance(o, Choice) or o.axis}
KNOWLEDGE_KEYS = tuple(o.grid for o in _GRID_OPTIONS if isinstance(o, Param) and o.kind == FILE)
"""Grid keys naming an expert-knowledge file (relative to the grid file) for every job."""
RUN_SCALAR_KEYS = tuple(o.grid for o in _GRID_OPTIONS if isinstance(o, Param) and not o.axis
                        and o.grid not in KNOWLEDGE_KEYS)
"""Grid keys that set one :class:`RunConfig` field of the same name for every job."""
DATA_KEY = DATA.name
"""The grid key of the user's data files; score files are listed with the score names (:data:`SCORE`'s
grid key), told apart by their suffix as ``--scores`` tells them."""
SCALAR_KEYS = {"name", "baseline", "score_groups", *RUN_SCALAR_KEYS, *KNOWLEDGE_KEYS}
NONE_KEYS = tuple(o.grid for o in _GRID_OPTIONS if isinstance(o, Param) and o.none)
"""List keys whose values may be "none" (no bound)."""
SAMPLING = tuple(p for p in SOURCES if p.grid is not None and p not in SOURCE_OPTIONS)
"""The options of sampling from a network (rows, seed): unused with a data or score file."""
BEFORE_THE_SOLVE = (*SAMPLING, RESTRICTION, TEST, *RESTRICTION.method_params, SCORE, *SCORE.params,
                    *SCORE.method_params, PALIM)
"""The options of the stages a score file skips (sampling, restriction, scoring)."""
UNUSED_BY_SOURCE = {DATA.name: SAMPLING, SCORE_FILE.name: BEFORE_THE_SOLVE}
LIMIT_COLUMNS = tuple(o.name for o in _GRID_OPTIONS if isinstance(o, Param) and o.kind == SECONDS)
"""Time limits: the same for every job of a grid as a rule, left out of ``--list-tasks``."""

RESULT_COLUMNS = [
    "job", "dataset", *PARAM_COLUMNS, "status", "error",
    "t_data", "t_restrict", "t_score", "t_solve", "t_hybrid", "t_unrestricted", "reduction",
    "n_tests", "n_allowed", "n_pairs", "n_candidates", "objective", "dual_bound", "gap",
    "shd", "precision", "recall", "f1", "added", "missing", "reversed",
    "f1_vs_unrestricted", "shd_vs_unrestricted", "n_candidates_unrestricted", "status_unrestricted",
    "gap_unrestricted", "key",
]


class GridError(HybridBNError, ValueError):
    """An invalid grid file (unknown key, bad value); the message names the key."""


@dataclass(frozen=True)
class Grid:
    name: str
    configs: tuple[RunConfig, ...]
    baseline: bool = True
    score_groups: int = 1


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _as_list(key: str, value: Any) -> list[Any]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise GridError(f"grid key {key!r} is an empty list")
    return [None if isinstance(v, str) and v.lower() == "none" and key in NONE_KEYS
            else v for v in values]


def parse_grid(text: str, name: str = "grid", base_dir: str | Path = ".") -> Grid:
    """A :class:`Grid` from TOML text; unknown keys and invalid values raise :class:`GridError`.

    Networks given as BIF files, data and score files are taken relative to ``base_dir`` (the grid
    file's folder) and stored as absolute paths, so the jobs do not depend on the working directory.
    """
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"grid file is not valid TOML: {exc}") from None
    unknown = sorted(set(spec) - set(LIST_KEYS) - SCALAR_KEYS - {DATA_KEY})
    if unknown:
        known = ", ".join([*LIST_KEYS, DATA_KEY, *sorted(SCALAR_KEYS)])
        raise GridError(f"unknown grid key {unknown[0]!r} (known keys: {known})")
    sources = _sources(spec, Path(base_dir))
    defaults = RunConfig()
    axes = [("_source", sources)] + [
        (field, _as_list(key, spec[key]) if key in spec else [getattr(defaults, field)])
        for key, field in LIST_KEYS.items() if field != NETWORK.name
    ]
    knowledge = {key: str(Path(base_dir, spec[key]).resolve()) if isinstance(spec[key], str) else spec[key]
                 for key in KNOWLEDGE_KEYS if key in spec}
    base = RunConfig(**{key: spec[key] for key in RUN_SCALAR_KEYS if key in spec}, **knowledge)
    configs: list[RunConfig] = []
    seen: set[RunConfig] = set()
    for source, *combo in itertools.product(*(values for _, values in axes)):
        try:
            cfg = replace(base, **source, **{field: value for (field, _), value in zip(axes[1:], combo)})
            cfg = _source_defaults(_scalars_where_they_apply(cfg)).validated()
        except ValueError as exc:
            raise GridError(f"grid value rejected: {exc}") from None
        cfg = _normalise(cfg)
        if cfg not in seen:
            seen.add(cfg)
            configs.append(cfg)
    baseline = spec.get("baseline", True)
    if not isinstance(baseline, bool):
        raise GridError(f"grid key 'baseline' must be true or false, got {baseline!r}")
    groups = spec.get("score_groups", 1)
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise GridError(f"grid key 'score_groups' must be a positive integer, got {groups!r}")
    grid_name = spec.get("name", re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "grid")
    if not isinstance(grid_name, str) or not _NAME.fullmatch(grid_name):
        raise GridError(f"grid key 'name' must be letters, digits, '.', '_' or '-' (it names the results "
                        f"folder grid-<name>), got {grid_name!r}")
    return Grid(name=grid_name, configs=tuple(configs), baseline=baseline, score_groups=groups)


def _sources(spec: dict[str, Any], base_dir: Path) -> list[dict[str, str]]:
    """The sources of a grid's jobs, each as the :class:`RunConfig` field it sets: the networks,
    the data files, the score files (among the score names, which stay in ``spec``), each checked
    as the command line checks it; files as absolute paths."""
    def located(value: Any) -> Any:
        return str((base_dir / value).resolve()) if isinstance(value, str) else value

    def listed(key: str) -> list[Any]:
        return _as_list(key, spec[key]) if key in spec else []

    sources: list[tuple[str, str, Any]] = []  # (grid key, field, value)
    for net in listed(NETWORK.grid):
        kind = source_kind(str(net))
        if kind != NETWORK.name:
            key = DATA_KEY if kind == DATA.name else SCORE.grid
            raise GridError(f"in grid key {NETWORK.grid!r}: {net} is a {kind.replace('scores', 'score')} file; "
                            f"list it under {key} = [...]")
        sources.append((NETWORK.grid, NETWORK.name, located(net) if is_network_file(str(net)) else net))
    sources += [(DATA_KEY, DATA.name, located(f)) for f in listed(DATA_KEY)]
    if SCORE.grid in spec:
        scores = listed(SCORE.grid)
        files = [f for f in scores if isinstance(f, str) and source_kind(f) == SCORE_FILE.name]
        sources += [(SCORE.grid, SCORE_FILE.name, located(f)) for f in files]
        names = [v for v in scores if v not in files]
        if names:
            spec[SCORE.grid] = names
        else:
            del spec[SCORE.grid]
    if not sources:
        raise GridError(f"grid file must name at least one source: {NETWORK.grid} = [\"asia\", ...], "
                        f"{DATA_KEY} = [\"my-data.csv\", ...] or {SCORE.grid} = [\"my-scores.jkl\", ...]")
    for key, field, value in sources:
        try:
            check_source(RunConfig(**{field: value}))
        except ConfigError as exc:
            raise GridError(f"in grid key {key!r}: {exc}") from None
    return [{field: value} for _, field, value in sources]


def _unused_by_source(cfg: RunConfig) -> tuple[Param | Choice, ...]:
    """The options the run's source does not use (:data:`UNUSED_BY_SOURCE`)."""
    return next((params for name, params in UNUSED_BY_SOURCE.items() if getattr(cfg, name) is not None), ())


def _source_defaults(cfg: RunConfig) -> RunConfig:
    """The options its source does not use at their defaults (before validation, which decides
    what a default means there: ``--score auto`` on a score file is BDeu's table, as read)."""
    return replace(cfg, **{o.name: o.default for o in _unused_by_source(cfg)})


def load_grid(path: str | Path) -> Grid:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"grid file not found: {path}")
    return parse_grid(path.read_text(), name=path.stem, base_dir=path.parent)


def _inapplicable(cfg: RunConfig) -> list[str]:
    """The options a validated run does not use: the parameters of the methods it did not select,
    and a choice without a stage of its own (the CI test) that no selected method uses."""
    selected = cfg.methods()
    used = {use.name for method in selected.values() for use in method.uses}
    out = [c.name for c in CHOICES.values() if c.stage is None and c.name not in used]
    for name, choice in CHOICES.items():
        out += [p.name for p in choice.method_params if p not in selected[name].params]
    return out + [o.name for o in _unused_by_source(cfg)]


def _scalars_where_they_apply(cfg: RunConfig) -> RunConfig:
    """A scalar grid key sets every job: a strict method parameter among them (e.g. the cops'
    time limit) is reset in the jobs of the methods it does not apply to."""
    reset = {}
    for name, choice in CHOICES.items():
        method = choice.by_name.get(str(getattr(cfg, name)).lower())
        for param in choice.method_params:
            if method is not None and param.strict and not param.axis and param not in method.params:
                reset[param.name] = param.default
    return replace(cfg, **reset)


def _normalise(cfg: RunConfig) -> RunConfig:
    """Reset parameters the run does not use, so equivalent jobs coincide (those its source does not
    use were reset before validation: :func:`_source_defaults`)."""
    defaults = RunConfig()
    by_source = {o.name for o in _unused_by_source(cfg)}
    return replace(cfg, **{name: getattr(defaults, name) for name in _inapplicable(cfg) if name not in by_source})


def job_key(cfg: RunConfig, baseline: bool) -> str:
    config = cfg.as_dict()
    for key in KNOWLEDGE_KEYS:  # files are keyed by content; no key change without knowledge (grid key = field)
        config.pop(key)
    if cfg.has_knowledge:
        config["knowledge"] = knowledge_of(cfg).digest()
    for source in (DATA, SCORE_FILE):  # keyed by content and name (the row's dataset), not by path
        if config[source.name] is not None:
            config[source.name] = {"sha256": _content_digest(Path(config[source.name])), "name": cfg.source_name}
    return stage_key("job", JOB_VERSION, {"config": config, "baseline": baseline}, VERSIONS)


def _content_digest(path: Path) -> str:
    """The SHA-256 of a data or score file, computed once per version of the file (its size and
    modification time) in this process."""
    stat = path.stat()
    return _digest(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


# ----------------------------------------------------------------------------------- one job

def _param_columns(cfg: RunConfig) -> dict[str, Any]:
    """The run parameters of a results row; those the run does not use are empty."""
    params = cfg.as_dict()
    row = {"dataset": cfg.source_name, **{k: params[k] for k in PARAM_COLUMNS}}
    row.update((name, None) for name in _inapplicable(cfg) if name in row)
    return row


def job_row(arts: dict[str, Artifact], base: dict[str, Artifact] | None) -> dict[str, Any]:
    """The results row of a finished job (metrics of its stages and of the unrestricted baseline)."""
    res = arts["solve"].meta["result"]
    rest = arts["restrict"].meta if "restrict" in arts else {}  # (a score file has no data, no restriction)
    ev = arts["evaluate"].meta if "evaluate" in arts else {}
    row = {
        "status": res.get("status"),
        "t_data": _seconds(arts, "data"),
        "t_restrict": _seconds(arts, "restrict"),
        "t_score": _seconds(arts, "scores"),
        "t_solve": arts["solve"].seconds,
        "n_tests": rest.get("n_tests", 0) if rest else None,
        "n_allowed": rest.get("n_allowed"),
        "n_pairs": rest.get("n_pairs"),
        "n_candidates": _candidates(arts),
        "objective": res.get("objective"),
        "dual_bound": res.get("dual_bound"),
        "gap": res.get("gap"),
        **{k: ev.get(k) for k in ("shd", "precision", "recall", "f1", "added", "missing", "reversed")},
    }
    row["t_hybrid"] = row["t_restrict"] + row["t_score"] + row["t_solve"]
    if base is not None:
        vs = compare(dag_of(arts["solve"]), dag_of(base["solve"]))
        t_base = _seconds(base, "scores") + base["solve"].seconds
        row.update(
            t_unrestricted=t_base,
            reduction=(1.0 - row["t_hybrid"] / t_base) if t_base > 0 else None,
            f1_vs_unrestricted=vs["f1"],
            shd_vs_unrestricted=vs["shd"],
            n_candidates_unrestricted=_candidates(base),
            status_unrestricted=base["solve"].meta["result"].get("status"),
            gap_unrestricted=base["solve"].meta["result"].get("gap"),
        )
    return row


def _seconds(arts: dict[str, Artifact], stage: str) -> float:
    """Time of a stage, 0 when the run skipped it (GES/SGES score inside the solve stage; a score
    file has no data and no restriction)."""
    return arts[stage].seconds if stage in arts else 0.0


def _candidates(arts: dict[str, Artifact]) -> int | None:
    return arts["scores"].meta["n_candidates"] if "scores" in arts else None


def error_text(exc: BaseException, limit: int = 300) -> str:
    """An exception as one line for the results table (type, message with whitespace collapsed)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _in_dask_worker() -> bool:
    try:
        from distributed import get_worker  # deferred: dask is optional

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


def run_job(
    cfg: RunConfig, cache_root: str, cache_enabled: bool, baseline: bool, score_groups: int = 1
) -> dict[str, Any]:
    """Run one grid job (all stages, plus the unrestricted baseline) and return its results row.

    Never raises for a failing job: the row then has ``status = "error"`` and the message.
    The row of a successful job is cached, so a re-run of the grid skips it. A job that a stop
    request ended has ``status = "interrupted"`` (the objective, bound and gap of its run's
    solve, or its run's row when its bootstrap was stopped) and is not cached. On a Dask worker
    with ``score_groups > 1`` the score stage is spread over the cluster as that many tasks.
    """
    cache = StageCache(cache_root, enabled=cache_enabled)
    key = job_key(cfg, baseline)
    hit = cache.load("job", key)
    if hit is not None:
        return cached_row(hit, cfg)
    row: dict[str, Any] = {**_param_columns(cfg), "key": key}
    start = time.perf_counter()
    phase = "selection"
    try:
        with contextlib.ExitStack() as stack:
            split: dict[str, Any] = {}
            if score_groups > 1 and _in_dask_worker():
                from distributed import worker_client  # deferred: dask is optional

                client = stack.enter_context(worker_client())
                split = {"score_executor": DaskExecutor(client), "score_groups": score_groups}
            reference = auto_reference(cfg)
            if reference is not None:  # --score auto: BDeu's run first, as a single run's
                phase = "run"
                arts = run_stages(cache, reference, **split)
                phase = "selection"
            chosen, selection = select_config(cfg, cache)
            if chosen_needs_learning(reference, selection):
                phase = "run"
                arts = run_stages(cache, chosen, **split)
            phase = "baseline"
            base = run_stages(cache, chosen.unrestricted(), upto="solve", **split) if baseline else None
        row.update(job_row(arts, base), **({} if selection is None else selection.columns()))
        if cfg.bootstrap is not None:
            phase = "bootstrap"
            row.update(run_bootstrap(chosen, cache, arts["data"]).columns())
    except (StageInterrupted, StageStopped) as exc:  # recorded, never cached; the grid stops
        if phase == "run" and isinstance(exc, StageInterrupted):  # the run's solve: not a fold's, the baseline's
            solved = exc.artifact.meta["result"]
            row.update({k: solved.get(k) for k in ("objective", "dual_bound", "gap")})
        row.update(status="interrupted")
        return {**row, "cached": False}
    except Exception as exc:  # recorded, the grid goes on
        logger.debug("job failed", exc_info=True)
        row.update(status="error", error=error_text(exc))
        record_failure(cache, key, row, cfg, baseline)
        return {**row, "cached": False}
    frame = pd.DataFrame([row])
    cache.store(Artifact("job", key, {"row": frame}, {}, time.perf_counter() - start),
                {"config": cfg.as_dict(), "baseline": baseline}, {}, JOB_VERSION)
    return {**row, "cached": False}


def cached_row(hit: Artifact, cfg: RunConfig) -> dict[str, Any]:
    """The results row of a finished job from the cache (its ``dataset`` filled in for a row
    cached before rows named it)."""
    return {"dataset": cfg.source_name, **hit.frames["row"].iloc[0].to_dict(), "cached": True}


FAILED_STAGE = "job_failed"
"""Where a failed job's row is kept for ``--collect`` (a Slurm array task's failure is seen by no
other process); a rerun retries the job all the same, its finished row then taking precedence."""


def record_failure(cache: StageCache, key: str, row: dict[str, Any], cfg: RunConfig, baseline: bool) -> None:
    """Keep a failed job's row (its error) for ``--collect``; a cache that cannot take it only warns."""
    try:
        cache.store(Artifact(FAILED_STAGE, key, {"row": pd.DataFrame([row])}, {}),
                    {"config": cfg.as_dict(), "baseline": baseline}, {}, JOB_VERSION)
    except OSError as exc:
        logger.warning("the failure of job %s is not recorded for --collect: %s", key[:10], exc)


# ---------------------------------------------------------------------------------- the grid

def run_grid(
    grid: Grid,
    cache: StageCache,
    executor=None,
    progress: bool = False,
    indices: Sequence[int] | None = None,
    collect_only: bool = False,
) -> pd.DataFrame:
    """Run the jobs of ``grid`` (all, or those in ``indices``) and return the results table.

    Finished jobs found in the cache are read, not re-run; with ``collect_only`` the others are
    not run either but listed with the error of their last failure (status ``error``, kept by
    :func:`record_failure`) or with status ``missing``. ``progress`` shows the jobs done / running /
    failed / left with the time elapsed and left (:mod:`pipeline.apps.grid_progress`) on stderr
    (a callable receives the records instead). After a stop request no further job starts
    (:class:`pipeline.core.executors.LocalExecutor`; elsewhere after a job recorded as
    ``interrupted``), the running ones are recorded as they end and those not run are listed as
    ``missing``. On a ``KeyboardInterrupt`` (a second signal, or Ctrl-C where no stop request is
    caught) the executor is shut down, its workers killed, and it propagates; every artifact
    written so far stays valid.
    """
    executor = executor or LocalExecutor(1)
    selected = list(range(len(grid.configs))) if indices is None else list(indices)
    rows: dict[int, dict[str, Any]] = {}
    todo = []
    for i in selected:
        hit = cache.load("job", job_key(grid.configs[i], grid.baseline))
        if hit is not None:
            rows[i] = cached_row(hit, grid.configs[i])
        else:
            todo.append(i)
    logger.info("grid %s: %d jobs, %d cached, %d to run", grid.name, len(selected), len(rows), len(todo))
    if collect_only:
        rows.update({i: _not_run(cache, grid, i) for i in todo})
        return results_frame(rows)
    root = str(cache.root.resolve())  # workers on other nodes may start in another directory
    args = [(grid.configs[i], root, cache.enabled, grid.baseline, grid.score_groups) for i in todo]
    display = ProgressDisplay() if progress is True else None
    count = GridProgress(display or progress or None, grid.name, len(selected), len(rows), _slots(executor))
    stopped = False
    try:
        for pos, result, exc in executor.map_unordered(run_job, args):
            i = todo[pos]
            if isinstance(exc, STOPPED):  # not started after a stop request: listed as missing
                continue
            if isinstance(exc, KeyboardInterrupt):  # a second signal reached a worker: quit at once
                raise exc
            if exc is not None:  # the worker itself died (e.g. out of memory)
                result = {**_param_columns(grid.configs[i]), "status": "error",
                          "error": error_text(exc), "cached": False}
            rows[i] = result
            if result.get("status") == "error":
                logger.warning("job %d failed: %s", i, result.get("error"))
            if result.get("status") != "interrupted":
                count.job_ended(failed=result.get("status") == "error")
            if result.get("status") == "interrupted" and stop_requested() is None:  # stopped on its own
                stopped = True  # (a Dask worker, a signal to one worker process): start nothing more
                break
        count.finish("interrupted" if stopped or stop_requested() is not None else "done")
    except KeyboardInterrupt:
        executor.close(cancel=True)
        raise
    finally:
        if display is not None:
            display.close()
    executor.close(cancel=stopped or stop_requested() is not None)
    rows.update({i: {**_param_columns(grid.configs[i]), "status": "missing", "cached": False}
                 for i in todo if i not in rows})
    return results_frame(rows)


def _not_run(cache: StageCache, grid: Grid, i: int) -> dict[str, Any]:
    """The row of a job not in the cache: its last failure's, else ``missing``."""
    failed = cache.load(FAILED_STAGE, job_key(grid.configs[i], grid.baseline))
    if failed is not None:
        return {**failed.frames["row"].iloc[0].to_dict(), "cached": False}
    return {**_param_columns(grid.configs[i]), "status": "missing", "cached": False}


def _slots(executor) -> int:
    """How many jobs the executor runs at once: ``-j N``, or a Dask cluster's threads (at least 1)."""
    if isinstance(executor, LocalExecutor):
        return executor.jobs
    return max(1, sum(executor.client.nthreads().values()))


def results_frame(rows: dict[int, dict[str, Any]]) -> pd.DataFrame:
    """Rows by job index as a table with the standard columns first."""
    records = [{**row, "job": i} for i, row in sorted(rows.items())]
    frame = pd.DataFrame(records)
    extra = [c for c in frame.columns if c not in RESULT_COLUMNS]
    return frame.reindex(columns=RESULT_COLUMNS + extra)


def write_results(frame: pd.DataFrame, folder: Path) -> Path:
    """Write ``results.parquet`` and ``results.csv`` into ``folder``, each atomically (a failed
    write leaves the previous table intact); returns the parquet path."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(exc, folder) from None
    replace_file(folder / "results.parquet", lambda p: frame.to_parquet(p, index=False))
    replace_file(folder / "results.csv", lambda p: frame.to_csv(p, index=False))
    return folder / "results.parquet"


# ---------------------------------------------------------------------------------------- CLI

def add_grid_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grid_file", metavar="FILE", help="grid file (TOML), see docs/hpc.md")
    sel = parser.add_argument_group("job selection")
    sel.add_argument("--task", type=int, metavar="I", help="run only job I (0-based; for Slurm job arrays)")
    sel.add_argument("--list-tasks", action="store_true", help="print the number of jobs and their ids")
    sel.add_argument("--collect", action="store_true",
                     help="run nothing: write the results table of the jobs already in the cache (the others with "
                          "their last error or as missing); exit 1 with their ids as sbatch --array takes them")
    eng = parser.add_argument_group("execution engine (default: local process pool of --jobs workers)")
    eng.add_argument("--scheduler", metavar="ADDRESS", help="run on a Dask scheduler, e.g. tcp://host:8786")
    eng.add_argument("--cluster", choices=("slurm", "pbs"), help="start a Dask cluster via dask-jobqueue")
    eng.add_argument("--workers", type=int, default=4, help="--cluster: batch jobs (Dask workers) (default 4)")
    eng.add_argument("--cluster-cores", type=int, default=1, help="--cluster: cores per batch job (default 1)")
    eng.add_argument("--cluster-memory", default="4GB", help="--cluster: memory per batch job (default 4GB)")
    eng.add_argument("--walltime", default="01:00:00", help="--cluster: walltime per batch job")
    eng.add_argument("--queue", help="--cluster: partition/queue")
    eng.add_argument("--account", help="--cluster: account to charge")


def describe_job(i: int, cfg: RunConfig) -> str:
    p = _param_columns(cfg)
    parts = [f"{k}={v}" for k, v in p.items() if v is not None and k not in LIMIT_COLUMNS]
    return f"{i:>4}  " + " ".join(parts)


def _executor(args: argparse.Namespace):
    if args.scheduler:
        return connect_scheduler(args.scheduler)
    if args.cluster:
        return start_cluster(args.cluster, args.workers, args.cluster_cores, args.cluster_memory,
                             args.walltime, args.queue, args.account)
    return LocalExecutor(args.jobs)


def command_grid(args: argparse.Namespace, cache: StageCache, progress: bool) -> int:
    """``run.py grid FILE``: run (or list, or run one task of) a grid; writes the results table.
    When its jobs run on this machine (in this process or in ``-j N`` worker processes), SIGINT
    and SIGTERM are stop requests (:func:`hybridbn.interrupt.catching_signals`): no job starts
    after one, the running jobs stop at their safe points (a solve with its best DAG) and are
    recorded as interrupted, and the exit status is 130 or 143."""
    local = args.task is not None or args.collect or not (args.scheduler or args.cluster)
    with catching_signals() if local else contextlib.nullcontext():
        return _command_grid(args, cache, progress)


def _interrupted() -> int:
    """Say that a job was interrupted; the exit status of the signal (SIGINT when none was recorded:
    SCIP caught a worker's Ctrl-C itself)."""
    print("interrupted: the interrupted job is recorded as such, not cached; rerun the same command to resume",
          file=sys.stderr)
    return exit_code(stop_requested() or signal.SIGINT)


def _command_grid(args: argparse.Namespace, cache: StageCache, progress: bool) -> int:
    grid = load_grid(args.grid_file)
    n = len(grid.configs)
    if args.list_tasks:
        print(f"{n} jobs in grid {grid.name} (use --task I with I in 0..{n - 1})")
        for i, cfg in enumerate(grid.configs):
            print(describe_job(i, cfg))
        return 0
    if args.task is not None:
        if not 0 <= args.task < n:
            raise GridError(f"--task must be in 0..{n - 1} for this grid, got {args.task}")
        frame = run_grid(grid, cache, LocalExecutor(1), progress, indices=[args.task])
        row = frame.iloc[0]
        print(describe_job(args.task, grid.configs[args.task]))
        print(f"status {row['status']}" + (f": {row['error']}" if row.get("status") == "error" else ""))
        collected = run_grid(grid, cache, collect_only=True)  # the array's progress, in each task's log
        print(f"grid {grid.name}: " + grid_summary(collected, collected=True)[0])
        if row["status"] == "interrupted":
            return _interrupted()
        return 1 if row["status"] == "error" else 0
    folder = Path(args.output_dir) / f"grid-{grid.name}"
    check_writable_folder("--output-dir", folder)
    executor = LocalExecutor(1) if args.collect else _executor(args)
    frame = run_grid(grid, cache, executor, progress, collect_only=args.collect)
    path = write_results(frame, folder)
    print("\n".join(grid_summary(frame, collected=args.collect)) + f"\nresults in {path} and results.csv")
    if (frame["status"] == "interrupted").any():
        return _interrupted()
    return 1 if frame["status"].isin(["error", "missing"]).any() else 0


def grid_summary(frame: pd.DataFrame, collected: bool = False) -> list[str]:
    """What a grid's results table holds, as lines: the jobs done, failed, interrupted and not run
    (for ``--collect``, with the job time spent and the time the jobs not run would take at the mean
    time of those done), and the job ids to run again in the form ``sbatch --array`` takes."""
    status = frame["status"]
    n, failed, missing = len(frame), frame.index[status == "error"], frame.index[status == "missing"]
    interrupted = frame.index[status == "interrupted"]
    done = n - len(failed) - len(missing) - len(interrupted)
    lines = [f"{n} jobs: {done} done ({int(frame['cached'].sum())} from cache), {len(failed)} failed, "
             f"{len(interrupted)} interrupted, {len(missing)} not run"
             + (" (running, or not started)" if collected and len(missing) else "")]
    left = len(missing) + len(failed) + len(interrupted)
    if collected and done:
        spent = _stage_seconds(frame[~status.isin(["error", "missing", "interrupted"])])
        lines.append(f"stage time of the jobs done {duration(spent.sum())}" + (
            f"; the {left} left take about {duration(spent.mean() * left)} more at their mean "
            f"({duration(spent.mean())} a job), shared among the tasks that run at once" if left else ""))
    for what, index in (("failed", failed), ("interrupted", interrupted), ("not run", missing)):
        if len(index):
            lines.append(f"{what}: jobs {array_ranges(frame.loc[index, 'job'].astype(int).tolist())}")
    if left:
        again = frame.loc[status.isin(["error", "missing", "interrupted"]), "job"].astype(int).tolist()
        lines.append(f"to run them again: sbatch --array={array_ranges(again)} SCRIPT (a Slurm array), "
                     "or the same command without --collect")
    return lines


def _stage_seconds(frame: pd.DataFrame) -> pd.Series:
    """Seconds of each job's stages: data, the hybrid run and its unrestricted baseline (which
    jobs of the same data may share)."""
    columns = ["t_data", "t_hybrid", "t_unrestricted"]
    return frame[columns].apply(pd.to_numeric, errors="coerce").fillna(0.0).sum(axis=1)
