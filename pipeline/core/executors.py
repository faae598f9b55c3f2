"""Execution engines for experiment grids: a local process pool and Dask distributed.

Both run the same picklable job function and yield results as jobs finish, so a grid runs
unchanged on a laptop (``--jobs N``), on a running Dask scheduler (``--scheduler ADDRESS``) or on
a batch cluster through dask-jobqueue (``--cluster slurm|pbs``). Dask and dask-jobqueue are
imported only when asked for, with a clear error when missing.

A stop request (Ctrl-C, SIGTERM: :mod:`hybridbn.interrupt`) stops the local pool between jobs:
no job starts after it (each is yielded with :class:`pipeline.core.stopping.StageStopped`, stage
``"tasks"``, so that every job has its outcome), and the jobs running in the workers, which take
their parent's stop requests as their own, end at their safe points (a solve with its best DAG)
and are yielded as usual; a second signal kills the workers. A pool made with ``kill_at_stop``
(the first-run compilation of :mod:`pipeline.core.kernels`, whose jobs have no safe point inside
numba's compiler) kills its workers at the first request instead.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

from hybridbn import interrupt
from hybridbn.errors import HybridBNError
from pipeline.core.cache import NotCached, StageInterrupted
from pipeline.core.stopping import StageStopped

logger = logging.getLogger(__name__)

Outcome = tuple[int, Any, BaseException | None]
"""A finished job: its index into the argument list, its result or None, its exception or None."""

STOPPED = (StageStopped, StageInterrupted)
"""The exceptions of a job that a stop request ended at one of its safe points: the outcome of a
stopped job, not a failure."""

STOP_POLL = 0.2
"""Seconds between two looks of the local pool at the stop request while its jobs run."""


class ExecutorError(HybridBNError, RuntimeError):
    """An execution engine that cannot be started (missing package, bad address)."""


class WorkerDied(HybridBNError, RuntimeError):
    """The worker process running a job ended abruptly (killed, out of memory, a crash in compiled code)."""


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def die_with_parent() -> None:
    """Pool initializer: end this worker when the process that started it dies.

    On Linux the kernel sends SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``);
    elsewhere a daemon thread polls the parent id.
    """
    parent = os.getppid()
    if parent == 1:  # orphaned already: the parent died while this worker started
        os._exit(1)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before prctl took effect
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def start_worker(stop) -> None:
    """Pool initializer: end this worker with its parent (:func:`die_with_parent`), and take the
    parent's stop requests (``stop``: a shared signal number, 0 while there is none) and its own
    SIGINT and SIGTERM as stop requests of the job it runs (:func:`hybridbn.interrupt.follow`)."""
    die_with_parent()
    interrupt.follow(lambda: stop.value or None)


_SPAWN = multiprocessing.get_context("spawn")


def spawn_runs_main_again() -> bool:
    """Whether a worker started here runs this process's ``__main__`` again, as ``__mp_main__``
    (Python's spawn start method does so for a script run by its path and a module run by ``-m``,
    not for a package's ``__main__``, ``-c`` code or an interactive session): a script without an
    ``if __name__ == "__main__"`` guard would then run once more in each worker."""
    main = sys.modules["__main__"]
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return not (spec.name == "__main__" or spec.name.endswith(".__main__"))
    return getattr(main, "__file__", None) is not None


def _worker_pool(jobs: int, stop) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process (even after ``kill -9``) and follow its
    stop requests through ``stop`` (:func:`start_worker`).

    Workers are started fresh (``spawn``), not forked: a process that has run numba's parallel
    kernels holds a GNU OpenMP runtime, and a forked child of it aborts ("fork() called from a
    process already using GNU OpenMP").
    """
    return ProcessPoolExecutor(max_workers=jobs, mp_context=_SPAWN, initializer=start_worker, initargs=(stop,))


def _not_started(signum: int | None) -> StageStopped:
    """The outcome of a job that a stop request kept from starting (or killed: ``kill_at_stop``)."""
    return StageStopped("tasks", signum or signal.SIGINT)


def _in_this_process(fn: Callable[..., Any], arg_list: Sequence[tuple]) -> Iterator[Outcome]:
    """The jobs one after the other in this process; none starts after a stop request or a job
    that one stopped."""
    stopped = False
    for i, args in enumerate(arg_list):
        signum = interrupt.stop_requested()
        if stopped or signum is not None:
            yield i, None, _not_started(signum)
            continue
        try:
            yield i, fn(*args), None
        except STOPPED as exc:
            stopped = True
            yield i, None, exc
        except Exception as exc:  # recorded by the caller; the grid goes on
            yield i, None, exc


class LocalExecutor:
    """Runs jobs in this process (``jobs == 1``) or in a pool of ``jobs`` worker processes.

    Workers die with the process that started them (:func:`die_with_parent`), so killing the
    grid runner, even with ``kill -9``, leaves no orphaned worker computing on.
    At most ``jobs`` jobs are in flight.  A worker that dies breaks the whole pool; the jobs that
    were in flight are then run again one at a time in a fresh pool, so the job that killed its
    worker is recorded as failed (:class:`WorkerDied`) and every other job still runs.
    After a stop request no job starts, the workers are told to stop and the running jobs are
    yielded as they end (see the module docstring), or, with ``kill_at_stop``, are killed and
    yielded as stopped at once; an exception here (a second signal) kills them.
    """

    def __init__(self, jobs: int = 1, kill_at_stop: bool = False):
        self.jobs = max(1, int(jobs))
        self.kill_at_stop = kill_at_stop
        self._pool: ProcessPoolExecutor | None = None
        self._stop = _SPAWN.RawValue("i", 0) if self.jobs > 1 else None  # the workers' stop request

    def _stopping(self) -> bool:
        """Whether a stop was requested; the workers are told so."""
        signum = interrupt.stop_requested()
        if signum is not None:
            self._stop.value = signum
        return signum is not None

    def map_unordered(self, fn: Callable[..., Any], arg_list: Sequence[tuple]) -> Iterator[Outcome]:
        if self.jobs == 1:
            yield from _in_this_process(fn, arg_list)
            return
        todo = deque(enumerate(arg_list))
        alone: deque[tuple[int, tuple]] = deque()  # in flight when a worker died: one at a time
        running: dict[Future, tuple[int, tuple]] = {}
        self._pool = _worker_pool(self.jobs, self._stop)
        try:
            while todo or alone or running:
                if self._stopping():
                    if self.kill_at_stop:
                        self.close(cancel=True)
                        for i, _ in sorted([*running.values(), *alone, *todo]):
                            yield i, None, _not_started(interrupt.stop_requested())
                        return
                    for i, _ in [*alone, *todo]:
                        yield i, None, _not_started(interrupt.stop_requested())
                    alone.clear()
                    todo.clear()
                source, limit = (alone, 1) if alone else (todo, self.jobs)
                while source and len(running) < limit:
                    i, args = source.popleft()
                    running[self._pool.submit(fn, *args)] = (i, args)
                if not running:
                    continue
                done, _ = wait(running, timeout=STOP_POLL, return_when=FIRST_COMPLETED)
                if any(isinstance(fut.exception(), BrokenProcessPool) for fut in done):
                    broken = sorted(running.values())
                    running.clear()
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = _worker_pool(self.jobs, self._stop)
                    if len(broken) == 1 or interrupt.stop_requested() is not None:
                        for i, _ in broken:
                            yield i, None, WorkerDied(
                                "the worker process running this job died (killed, out of memory, or a crash "
                                "in compiled code)")
                    else:
                        logger.warning("a worker process died; re-running its %d jobs one at a time", len(broken))
                        alone.extend(broken)
                    continue
                for fut in done:
                    i, _ = running.pop(fut)
                    exc = fut.exception()
                    yield i, (None if exc else fut.result()), exc
        except BaseException:
            self.close(cancel=True)
            raise

    def close(self, cancel: bool = False) -> None:
        """Shut the pool down: wait for the running jobs, or with ``cancel`` kill their workers."""
        if self._pool is not None:
            if cancel:
                for process in list((self._pool._processes or {}).values()):  # no public way
                    process.kill()
            self._pool.shutdown(wait=not cancel, cancel_futures=cancel)
            self._pool = None


def cached_results(fn: Callable[..., Any], tasks: Sequence[tuple]) -> dict[int, Any]:
    """``fn(*task, read_only=True)`` of each task whose stages are all in the cache, by position,
    read in this process, so that a rerun starts no worker process (the others raise
    :class:`pipeline.core.cache.NotCached` and are left to :func:`map_tasks`)."""
    found = {}
    for i, task in enumerate(tasks):
        try:
            found[i] = fn(*task, read_only=True)
        except NotCached:
            pass
    return found


def map_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], jobs: int = 1, executor=None,
              on_done: Callable[[], Any] | None = None) -> list[Any]:
    """``fn(*task)`` for every task, in task order: on ``executor`` (left open), else in a local
    pool of ``jobs`` processes (this process when 1; none started for no task). The first
    failure is raised; ``on_done`` is called as each task finishes (a progress bar's update).
    A stop request ends it, once the running tasks have stopped at their safe points or finished,
    with :class:`StageStopped` (stage ``"tasks"``: the caller names its own); the tasks finished
    have had their ``on_done``."""
    results: list[Any] = [None] * len(tasks)
    if not tasks:
        return results
    local = LocalExecutor(jobs) if executor is None else None
    stopped = False
    try:
        for i, result, exc in (executor or local).map_unordered(fn, tasks):
            if isinstance(exc, STOPPED):
                stopped = True
            elif exc is not None:
                raise exc
            else:
                results[i] = result
                if on_done is not None:
                    on_done()
    finally:
        if local is not None:
            local.close()
    if stopped:
        raise StageStopped("tasks", interrupt.stop_requested() or signal.SIGINT)
    return results


class DaskExecutor:
    """Runs jobs as tasks of a ``distributed.Client`` (closed on :meth:`close` if we created it)."""

    def __init__(self, client, owned: Sequence[Any] = ()):
        self.client = client
        self._owned = list(owned)
        self._futures: list[Any] = []

    def map_unordered(self, fn: Callable[..., Any], arg_list: Sequence[tuple]) -> Iterator[Outcome]:
        from distributed import as_completed  # deferred: Dask is optional

        # pure=False: a job reads/writes the shared cache, so never deduplicate by arguments
        futures = [self.client.submit(fn, *args, pure=False) for args in arg_list]
        index = {f.key: i for i, f in enumerate(futures)}
        self._futures = futures
        for fut in as_completed(futures):
            i = index[fut.key]
            if fut.status == "error":
                yield i, None, fut.exception()
            else:
                yield i, fut.result(), None

    def close(self, cancel: bool = False) -> None:
        if cancel and self._futures:
            self.client.cancel(self._futures)
        for obj in reversed(self._owned):
            obj.close()


def _import_distributed():
    try:
        import distributed  # deferred: Dask is optional
    except ImportError:
        raise ExecutorError(
            "Dask distributed is not installed: pip install 'hybridbn[dask]' (or 'dask[distributed]')"
        ) from None
    return distributed


def connect_scheduler(address: str) -> DaskExecutor:
    """A :class:`DaskExecutor` on the running scheduler at ``address`` (e.g. ``tcp://host:8786``)."""
    distributed = _import_distributed()
    try:
        client = distributed.Client(address, timeout="30s")
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(f"cannot connect to Dask scheduler {address}: {exc}") from None
    return DaskExecutor(client, owned=[client])


def start_cluster(
    kind: str,
    workers: int,
    cores: int = 1,
    memory: str = "4GB",
    walltime: str = "01:00:00",
    queue: str | None = None,
    account: str | None = None,
) -> DaskExecutor:
    """Start a dask-jobqueue cluster (``slurm`` or ``pbs``) of ``workers`` batch jobs.

    Each batch job runs one Dask worker with ``cores`` threads-worth of processes; the
    scheduler runs in this process, so run the grid command on a login or head node.
    """
    distributed = _import_distributed()
    try:
        import dask_jobqueue  # deferred: dask-jobqueue is optional
    except ImportError:
        raise ExecutorError(
            "--cluster needs dask-jobqueue: pip install 'hybridbn[dask]' (or 'dask-jobqueue')"
        ) from None
    classes = {"slurm": "SLURMCluster", "pbs": "PBSCluster"}
    if kind not in classes:
        raise ExecutorError(f"--cluster must be one of {', '.join(classes)}; got {kind!r}")
    cluster = getattr(dask_jobqueue, classes[kind])(
        cores=cores, processes=cores, memory=memory, walltime=walltime, queue=queue, account=account
    )
    cluster.scale(jobs=workers)
    client = distributed.Client(cluster)
    return DaskExecutor(client, owned=[cluster, client])
