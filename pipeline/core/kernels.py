"""The warm-up of the numba kernels: compiled once per installation, in parallel groups, and
loaded before each stage's clock starts.

numba caches compiled kernels on disk (``cache=True``, next to the sources or under
``NUMBA_CACHE_DIR``), but the first run compiles them for tens of seconds. Each stage that needs
kernels calls :func:`prepare_kernels` before its clock starts, which calls :func:`ensure_compiled`
and then loads the stage's kernels into this process by a call on a tiny slice of the run's data.
When the stamp file says some kernels of this kind of
run were not yet compiled by this installation, it prints one line and compiles them by running
the pipeline's own stages on bundled data (so argument types are exactly those of a real run),
in independent groups (:func:`kernel_groups`): the restriction's CI-test kernels, the score
table's, the solver's (on a bundled score table, so that they need no score kernel) and, for
``-j`` above 1, the threaded CI kernels. The groups compile at once, as the jobs of a
:class:`pipeline.core.executors.LocalExecutor` of one process per idle core (one under a script
of the caller's, which its processes would run again); numba's cache on disk is shared, so the run
and its bootstrap or selection workers then
load them. Each group's line is printed as it ends, then the total; the stamp records the groups,
so later processes read one small file and go on, and a run of another kind compiles only the
groups it adds; its key holds a digest of the kernels' sources, so an edited source file clears
numba's cache first (numba rechecks only the file that defines a kernel, not its callees in other
files). A stop request (Ctrl-C, SIGTERM: :mod:`hybridbn.interrupt`) ends the warm-ups:
their processes are killed (one in this process stops at its stages' next safe point) and the
run stops with :class:`CompileStopped`; the stamp keeps the groups that finished before it.

On alarm (CPU seconds of each group, in its own process): the score table's 21 (the enumeration
kernel ``scores.enumeration.child_kernel`` alone 10), the restriction's 12, the ILP's 6, so two
processes take the first, and the second and the third; the groups share one kernel, of one
signature (``scores.counts.onehot_bitsets``), so two processes never write two specialisations of
a function into numba's cache at once (its index is rewritten unlocked).
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import signal
import sys
import sysconfig
import time
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Callable

import numpy as np

from constraints.methods import RESTRICTION, TEST, ci_test
from hybridbn.interrupt import stop_requested
from hybridbn.options import defaults
from hybridbn.solving import EXACT_BOUND
from ilp.methods import WITHIN_BAGS
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.declarations import BUDGET, KNOWLEDGE, SOLVER, SOURCES, TABLE_SOLVERS
from pipeline.core.executors import STOPPED, LocalExecutor, spawn_runs_main_again
from pipeline.core.polish import polishes
from pipeline.core.stopping import StageStopped
from scores.methods import SCORE
from search.methods import RESTART

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]

RunStages = Callable[..., object]
"""The stage driver :func:`pipeline.core.stages.run_stages` (``(cache, cfg, upto=, n_jobs=)``),
which the stages hand to :func:`ensure_compiled`."""

RESET = (*SOURCES, *KNOWLEDGE, BUDGET, WITHIN_BAGS)
"""Options a warm-up takes at their declared defaults: the user's data, files and budget (the
bundled data has none of them) and the cops bags (the solver's warm-up runs without the cops)."""

WARM_UP_TABLE = Path(__file__).resolve().parent / "warm_up" / "alarm.jkl.gz"
"""alarm's BDeu table (5000 rows, seed 0, PC at order 1, 3 parents: 520 sets), on which the ILP
reaches all its cut separators; the solver's kernels compile on it while the score kernels compile
in another process."""

WARM_UP_ILP_LIMIT = 120.0
"""Seconds for the warm-up ILP: its cut kernels compile inside the solve, on the solve's clock,
which a loaded machine stretches (20 s cut it before the convex-hull cuts); solved, alarm's table
takes a second, so only a ``--treewidth`` solve, which may not finish, runs to it."""


@dataclass(frozen=True)
class KernelGroup:
    """Kernels compiled by running the stages of ``run`` up to ``upto`` on ``n_jobs`` threads;
    ``key`` names them in the stamp, ``weight`` is their relative compile time."""

    key: str
    run: RunConfig
    upto: str
    n_jobs: int = 1
    weight: float = 1.0


def kernel_groups(cfg: RunConfig, n_jobs: int = 1) -> list[KernelGroup]:
    """The groups of kernels of ``cfg``'s run on ``n_jobs`` threads, heaviest first.

    All run on alarm's 5000 default rows, with CI order at most 1, at most 3 parents, the ILP
    stopped after :data:`WARM_UP_ILP_LIMIT` and the other solvers after 2 s, hill climbing and
    tabu search with a restart and no move limit (so that the perturbation kernel compiles too),
    and the options of :data:`RESET` at their defaults (expert knowledge names the user's
    variables): the score table without restriction at 2 parents; the restriction (on asia's 500
    rows for the cops, slow on alarm), also on ``n_jobs`` threads when above 1 (the threaded
    variants of the CI kernels, which numba caches apart); the table solvers on
    :data:`WARM_UP_TABLE`, GES and SGES on alarm's data as the score table's group; the tabu
    search too where the exact ILP may stop at a limit (:func:`may_polish`)."""
    cfg = cfg.undecided_score()  # --score auto: qNML's own kernels compile, in a second or so, if it is tried
    alarm = replace(replace(cfg, **defaults(RESET)), network="alarm",
                    time_limit=WARM_UP_ILP_LIMIT if EXACT_BOUND in SOLVER[cfg.solver].tags else 2.0,
                    max_order=1 if cfg.max_order is None else min(cfg.max_order, 1),
                    palim=3 if cfg.palim is None else min(cfg.palim, 3), cops_time_limit=10.0)
    if RESTART in SOLVER[cfg.solver].params:
        alarm = replace(alarm, restart=max(cfg.restart, 1), max_iter=None)
    unrestricted = replace(alarm, method="none", palim=min(alarm.palim, 2))
    method = RESTRICTION[cfg.method]
    groups = []
    if cfg.scores is None and cfg.solver in TABLE_SOLVERS:
        groups.append(KernelGroup(f"scores/{cfg.score}", unrestricted, "scores", weight=2.0))
    if cfg.scores is None and method.run is not None:
        restrict = replace(alarm, network="asia", rows=500) if cfg.method == "cops" else alarm
        tests = TEST in method.uses
        kinds = f"restriction/{cfg.method}" + (f"/{cfg.test}" if tests else "") + (
            "/candidates" if cfg.add_candidates else "")
        groups.append(KernelGroup(kinds, restrict, "restrict"))
        if n_jobs != 1 and tests:
            groups.append(KernelGroup(f"{kinds}/threads", restrict, "restrict", n_jobs))
    solver = f"solver/{cfg.solver}" + ("/treewidth" if cfg.treewidth is not None else "")
    on_table = replace(alarm, network=None, scores=str(WARM_UP_TABLE))
    if cfg.solver in TABLE_SOLVERS:
        groups.append(KernelGroup(solver, on_table, "solve"))
    else:  # GES, SGES score the data themselves
        groups.append(KernelGroup(solver, unrestricted, "solve"))
    if may_polish(cfg):
        groups.append(KernelGroup("solver/tabu", replace(on_table, solver="tabu", time_limit=2.0, restart=1,
                                                         max_iter=None), "solve"))
    return groups


def may_polish(cfg: RunConfig) -> bool:
    """Whether ``cfg``'s exact ILP may stop at a limit and hand its incumbent to the tabu search
    (:mod:`pipeline.core.polish`), whose kernels then compile with the run's."""
    limited = cfg.time_limit is not None or cfg.memory_limit is not None or cfg.budget is not None
    return polishes(cfg) and limited


_checked: set[str] = set()  # groups checked in this process
_compiling = False  # this process runs a warm-up: the stages inside it compile what they meet


def stamp_path() -> Path:
    """Beside numba's cache: ``$NUMBA_CACHE_DIR``, else the package's ``__pycache__``."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    return Path(base) / "hybridbn-kernels.json" if base else ROOT / "pipeline" / "__pycache__" / "hybridbn-kernels.json"


KERNEL_PACKAGES = ("constraints", "hybridbn", "ilp", "scores", "search")
"""The packages that hold numba kernels or the intrinsics they call."""


def stamp_key() -> str:
    """Python and numba versions, where the package lives and :func:`sources_digest` (deleting
    the ``__pycache__`` folders, or ``$NUMBA_CACHE_DIR``, deletes the stamp with numba's cache)."""
    return f"{sys.version.split()[0]}|numba {version('numba')}|{ROOT}|{sources_digest()}"


def sources_digest() -> str:
    """A hash of the size and modification time of every source file of :data:`KERNEL_PACKAGES`.
    numba checks only the file that defines a cached kernel, so a kernel whose callee in another
    file changed (``constraints.citest_batch`` calling ``constraints.citests._p_value``) would
    keep its old machine code; a changed digest makes :func:`ensure_compiled` drop numba's cache."""
    files = sorted(f for package in KERNEL_PACKAGES for f in (ROOT / package).rglob("*.py"))
    entries = [(str(f.relative_to(ROOT)), stat.st_size, stat.st_mtime_ns) for f in files for stat in [f.stat()]]
    return hashlib.sha256(repr(entries).encode()).hexdigest()[:16]


def drop_numba_cache() -> None:
    """Delete numba's cached kernels (index ``.nbi`` and code ``.nbc`` files) of this installation:
    under ``$NUMBA_CACHE_DIR``, else in the ``__pycache__`` folders of :data:`KERNEL_PACKAGES`."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    roots = [Path(base)] if base else [ROOT / package for package in KERNEL_PACKAGES]
    for root in roots:
        for path in (*root.rglob("*.nbi"), *root.rglob("*.nbc")):
            path.unlink(missing_ok=True)


def ensure_compiled(*configs: RunConfig, run_stages: RunStages, n_jobs: int = 1) -> None:
    """Compile the kernels of the runs of ``configs`` on ``n_jobs`` threads once, announced on
    stderr (see the module docstring); ``run_stages`` runs the warm-ups. The bootstrap and the
    selection call it before starting their workers, which then only load them."""
    if _compiling:
        return
    groups = {g.key: g for cfg in configs for g in kernel_groups(cfg, n_jobs) if g.key not in _checked}
    if not groups:
        return
    _checked.update(groups)
    path, key = stamp_path(), stamp_key()
    stamp = _read(path)
    if stamp and stamp.get("key") != key:  # edited sources or another numba: no stale kernel survives
        drop_numba_cache()
    compiled = stamp.get("compiled", []) if stamp.get("key") == key else []
    missing = sorted((g for k, g in groups.items() if k not in compiled), key=lambda g: -g.weight)
    if not missing:
        return
    processes = _processes(len(missing))
    print(f"compiling the numba kernels for this kind of run once, in {processes} process"
          f"{'es' if processes > 1 else ''} (first run only: they are cached for later runs)...",
          file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        done = compile_groups(missing, run_stages, processes)
    except CompileStopped as stopped:  # the stamp keeps the groups finished before the stop
        if stopped.done:
            _write(path, {"key": key, "compiled": sorted({*compiled, *stopped.done})})
        raise
    print(f"kernels compiled in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    _write(path, {"key": key, "compiled": sorted({*compiled, *done})})


def prepare_kernels(stage: str, cfg: RunConfig, run_stages: RunStages, dataset=None, n_jobs: int = 1) -> None:
    """The kernels of ``cfg``'s ``stage`` made ready before the stage's clock starts: compiled once
    per installation (:func:`ensure_compiled`, on ``n_jobs`` threads), then, for the restriction
    and the score table, loaded into this process from numba's cache by a call on a tiny slice
    of ``dataset``, the run's own data (same dtype, so the same signatures): the stage's time
    leaves out numba's first-call load."""
    ensure_compiled(cfg, run_stages=run_stages, n_jobs=n_jobs)
    if dataset is None:
        return
    data, arities = np.ascontiguousarray(dataset.data[:50, :3]), np.asarray(dataset.arities[:3])
    method = RESTRICTION[cfg.method]
    if stage == "scores":
        SCORE[cfg.score].run(data, arities, replace(cfg, palim=None if cfg.palim is None else min(cfg.palim, 2)))
    elif stage == "restrict" and method.run is not None:
        if TEST not in method.uses:  # a tiny candidate search
            method.run(data, arities, replace(cfg, candidates=1))
        elif data.shape[1] >= 3:  # two tiny CI tests
            test = ci_test(data, arities, cfg)
            test(0, 1, ())
            test(0, 1, (2,))


COMPILE = "the first-run compilation of the numba kernels"
"""What a stop request interrupts in :func:`ensure_compiled` (the one line of a stopped run)."""


class CompileStopped(StageStopped):
    """A stop request (signal ``signum``) ended the warm-ups; ``done``: the groups finished before."""

    def __init__(self, signum: int, done: list[str]):
        super().__init__("compile", signum, during=COMPILE)
        self.done = list(done)

    def __reduce__(self):
        return type(self), (self.signum, self.done)


def compile_groups(groups: list[KernelGroup], run_stages: RunStages, processes: int = 1) -> list[str]:
    """Run the warm-ups of ``groups`` by ``run_stages`` as the jobs of a
    :class:`pipeline.core.executors.LocalExecutor` of ``processes`` (this process when 1), handed
    out in order as the processes free; print each group's time as it ends and return their keys
    (a failed warm-up is left to the real run, which compiles what it lacks). A stop request kills
    the processes and raises :class:`CompileStopped` (see the module docstring)."""
    done: list[str] = []
    executor = LocalExecutor(processes, kill_at_stop=True)
    try:
        for i, seconds, failure in executor.map_unordered(warm_up, [(group, run_stages) for group in groups]):
            if isinstance(failure, STOPPED):
                raise CompileStopped(getattr(failure, "signum", None) or stop_requested() or signal.SIGINT, done)
            if failure is None:
                print(f"  {groups[i].key}: {seconds:.1f} s", file=sys.stderr, flush=True)
            else:
                logger.debug("kernel warm-up %s stopped: %s", groups[i].key, failure)
            done.append(groups[i].key)
    except BaseException:
        executor.close(cancel=True)
        raise
    executor.close()
    return done


def warm_up(group: KernelGroup, run_stages: RunStages) -> float:
    """The group's stages on its warm-up data, cached nowhere, and the seconds they took; the
    stages inside do not ask for kernels again. In this process a stop request stops it at its
    stages' next safe point (:class:`StageStopped`)."""
    global _compiling
    start = time.perf_counter()
    _compiling = True
    try:
        run_stages(StageCache(None, enabled=False), group.run, upto=group.upto, n_jobs=group.n_jobs)
    except KeyboardInterrupt:  # a stop in the warm-up's own stages (not the run's) or a second signal
        raise StageStopped("compile", stop_requested() or signal.SIGINT) from None
    finally:
        _compiling = False
    return time.perf_counter() - start


def _processes(n_groups: int) -> int:
    """One process per idle core, at most one per group; one in a worker process (of a bootstrap,
    a selection or a grid), whose siblings compile too, and under a script of the caller's
    (:func:`_runs_callers_script`)."""
    most = min(n_groups, _cores())
    if most == 1 or multiprocessing.parent_process() is not None or _runs_callers_script():
        return 1
    return min(most, max(1, round(_idle_cores())))


def _runs_callers_script() -> bool:
    """Whether the warm-up's processes would run a script of the caller's once more
    (:func:`pipeline.core.executors.spawn_runs_main_again`): one calling :func:`hybridbn.learn`
    without an ``if __name__ == "__main__"`` guard would learn again in each. The scripts of this
    repository (``run.py``, ``bench``) and the installed commands (``hybridbn``) have the guard."""
    path = getattr(sys.modules["__main__"], "__file__", None)
    if not spawn_runs_main_again() or path is None:
        return False
    return not any(Path(path).resolve().is_relative_to(folder)
                   for folder in (ROOT, Path(sysconfig.get_path("scripts")).resolve()))


def _cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _idle_cores(seconds: float = 0.2) -> float:
    """Cores idle over the next ``seconds`` (Linux ``/proc/stat``; elsewhere all of them).

    The warm-up compiles in parallel only on idle cores: on a busy machine the scheduler gives
    the run no more CPU for more processes (measured: alarm's first run at a load of 3.5 on two
    cores, 68 s in two processes against 59 s for the one-process warm-up before them), and each
    process costs a second to start."""
    def ticks() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return values[3] + values[4], sum(values)  # idle + iowait, all

    try:
        idle, total = ticks()
        time.sleep(seconds)
        idle_after, total_after = ticks()
    except (OSError, ValueError, IndexError):
        return float(_cores())
    return (os.cpu_count() or 1) * (idle_after - idle) / max(total_after - total, 1)


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
