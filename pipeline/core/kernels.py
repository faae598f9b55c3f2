"""Compile the numba kernels once per installation, in one go, and say so.

numba caches compiled kernels on disk (``cache=True``, next to the sources or under
``NUMBA_CACHE_DIR``), but the first run compiles them silently for tens of seconds. The first
stage that needs kernels calls :func:`ensure_compiled`: when the stamp file says this set of
kernels was not yet compiled by this installation, it prints one line, compiles every kernel the run
will use by running the same pipeline on bundled data (so argument types are exactly those of a
real run), prints how long that took and writes the stamp. Later processes read the
stamp (one small file) and go on.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path
from typing import Callable

from hybridbn.options import defaults
from ilp.methods import WITHIN_BAGS
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.declarations import BUDGET, KNOWLEDGE, SOURCES

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]

RunStages = Callable[..., object]
"""The stage driver :func:`pipeline.core.stages.run_stages` (``(cache, cfg, upto=, n_jobs=)``),
which the stages hand to :func:`ensure_compiled`."""

RESET = (*SOURCES, *KNOWLEDGE, BUDGET, WITHIN_BAGS)
"""Options a warm-up takes at their declared defaults: the user's data, files and budget (the
bundled data has none of them) and the cops bags (the solver's warm-up runs without the cops)."""


def warm_up_configs(cfg: RunConfig) -> list[RunConfig]:
    """The runs that compile ``cfg``'s kernels: ``cfg`` on the default data (alarm, 5000 rows), on
    which the ILP reaches all its cut separators; CI order at most 1, at most 3 parents, the ILP
    stopped after 20 s and the anytime solvers after 2 s; no expert knowledge (it names the user's
    variables). Where alarm would be slow, two runs: the cops' restriction on asia (500 rows), and
    the solver on alarm without restriction at 2 parents (asia alone would leave the ILP's kernels
    to the real solve, since the exact DP solves such small tables)."""
    alarm = replace(cfg, **{**defaults(RESET), "network": "alarm"},
                    time_limit=20.0 if cfg.solver == "ilp" else 2.0,
                    max_order=1 if cfg.max_order is None else min(cfg.max_order, 1),
                    palim=3 if cfg.palim is None else min(cfg.palim, 3), cops_time_limit=10.0)
    if cfg.method not in ("cops", "none"):
        return [alarm]
    solver = replace(alarm, method="none", palim=min(alarm.palim, 2))
    return [solver] if cfg.method == "none" else [replace(alarm, network="asia", rows=500), solver]


_checked: set[str] = set()  # kernel sets checked in this process


def stamp_path() -> Path:
    """Beside numba's cache: ``$NUMBA_CACHE_DIR``, else the package's ``__pycache__``."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    return Path(base) / "hybridbn-kernels.json" if base else ROOT / "pipeline" / "__pycache__" / "hybridbn-kernels.json"


def stamp_key() -> str:
    """Python and numba versions and where the package lives (deleting the ``__pycache__``
    folders, or ``$NUMBA_CACHE_DIR``, deletes the stamp with numba's cache). An edited kernel is
    left to numba, which recompiles it silently."""
    return f"{sys.version.split()[0]}|numba {version('numba')}|{ROOT}"


def kernel_set(cfg: RunConfig, threaded: bool = False) -> str:
    """The options that decide which kernels a run compiles; ``threaded``: the threaded variants
    of the CI kernels too (``-j`` above 1, :class:`constraints.citest_batch.ThreadedKernel`)."""
    kinds = "/".join(str(x) for x in (cfg.method, cfg.test, cfg.score, cfg.solver, cfg.treewidth is not None))
    return f"{kinds}/threads" if threaded else kinds


def ensure_compiled(cfg: RunConfig, run_stages: RunStages, n_jobs: int = 1) -> None:
    """Compile the kernels of ``cfg``'s run on ``n_jobs`` threads once, announced on stderr (see
    the module docstring); ``run_stages`` runs the warm-ups."""
    warm_ups = {kernel_set(cfg): lambda: _warm_up(cfg, run_stages)}
    if n_jobs != 1:
        warm_ups[kernel_set(cfg, threaded=True)] = lambda: _warm_up_threads(cfg, run_stages, n_jobs)
    wanted = [kinds for kinds in warm_ups if kinds not in _checked]
    if not wanted:
        return
    _checked.update(wanted)
    path, key = stamp_path(), stamp_key()
    stamp = _read(path)
    compiled = stamp.get("compiled", []) if stamp.get("key") == key else []
    missing = [kinds for kinds in wanted if kinds not in compiled]
    if not missing:
        return
    print("compiling the numba kernels for this kind of run once (they are cached for later runs)...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    for kinds in missing:
        warm_ups[kinds]()
    print(f"kernels compiled in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    _write(path, {"key": key, "compiled": sorted({*compiled, *missing})})


def _warm_up(cfg: RunConfig, run_stages: RunStages) -> None:
    """The run's pipeline on the warm-up data, cached nowhere; a failure is left to the real run."""
    _run_warm_ups(cfg, run_stages, "evaluate", 1)


def _warm_up_threads(cfg: RunConfig, run_stages: RunStages, n_jobs: int) -> None:
    """The warm-up's restriction on ``n_jobs`` threads: the threaded variants of the CI kernels
    (numba caches them apart from the serial ones)."""
    _run_warm_ups(cfg, run_stages, "restrict", n_jobs)


def _run_warm_ups(cfg: RunConfig, run_stages: RunStages, upto: str, n_jobs: int) -> None:
    for run in warm_up_configs(cfg):
        try:
            run_stages(StageCache(None, enabled=False), run, upto=upto, n_jobs=n_jobs)
        except Exception as exc:  # noqa: BLE001 - the real run reports its own errors
            logger.debug("kernel warm-up stopped: %s", exc)


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write(path: Path, stamp: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stamp))
    except OSError as exc:  # a read-only installation: the line shows again next time
        logger.debug("kernel stamp not written: %s", exc)
