"""Execution engines for experiment grids: a local process pool and Dask distributed.

Both run the same picklable job function and yield results as jobs finish, so a grid runs
unchanged on a laptop (``--jobs N``), on a running Dask scheduler (``--scheduler ADDRESS``) or on
a batch cluster through dask-jobqueue (``--cluster slurm|pbs``). Dask and dask-jobqueue are
imported only when asked for, with a clear error when missing.
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

from hybridbn.errors import HybridBNError

logger = logging.getLogger(__name__)

#: (index into the argument list, result or None, exception or None)
Outcome = tuple[int, Any, BaseException | None]


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


def _worker_pool(jobs: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process (even after ``kill -9``).

    Workers are started fresh (``spawn``), not forked: a process that has run numba's parallel
    kernels holds a GNU OpenMP runtime, and a forked child of it aborts ("fork() called from a
    process already using GNU OpenMP").
    """
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=die_with_parent)


class LocalExecutor:
    """Runs jobs in this process (``jobs == 1``) or in a pool of ``jobs`` worker processes.

    Workers die with the process that started them (:func:`die_with_parent`), so killing the
    grid runner, even with ``kill -9``, leaves no orphaned worker computing on.
    At most ``jobs`` jobs are in flight.  A worker that dies breaks the whole pool; the jobs that
    were in flight are then run again one at a time in a fresh pool, so the job that killed its
    worker is recorded as failed (:class:`WorkerDied`) and every other job still runs.
    """

    def __init__(self, jobs: int = 1):
        self.jobs = max(1, int(jobs))
        self._pool: ProcessPoolExecutor | None = None

    def map_unordered(self, fn: Callable[..., Any], arg_list: Sequence[tuple]) -> Iterator[Outcome]:
        if self.jobs == 1:
            for i, args in enumerate(arg_list):
                try:
                    yield i, fn(*args), None
                except Exception as exc:  # recorded by the caller; the grid goes on
                    yield i, None, exc
            return
        todo = deque(enumerate(arg_list))
        alone: deque[tuple[int, tuple]] = deque()  # in flight when a worker died: one at a time
        running: dict[Future, tuple[int, tuple]] = {}
        self._pool = _worker_pool(self.jobs)
        while todo or alone or running:
            source, limit = (alone, 1) if alone else (todo, self.jobs)
            while source and len(running) < limit:
                i, args = source.popleft()
                running[self._pool.submit(fn, *args)] = (i, args)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            if any(isinstance(fut.exception(), BrokenProcessPool) for fut in done):
                broken = sorted(running.values())
                running.clear()
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = _worker_pool(self.jobs)
                if len(broken) == 1:
                    yield broken[0][0], None, WorkerDied(
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

    def close(self, cancel: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=not cancel, cancel_futures=cancel)
            self._pool = None


def map_tasks(fn: Callable[..., Any], tasks: Sequence[tuple], jobs: int = 1, executor=None,
              on_done: Callable[[], Any] | None = None) -> list[Any]:
    """``fn(*task)`` for every task, in task order: on ``executor`` (left open), else in a local
    pool of ``jobs`` processes (this process when 1; none started for no task). The first
    failure is raised; ``on_done`` is called as each task finishes (a progress bar's update)."""
    results: list[Any] = [None] * len(tasks)
    if not tasks:
        return results
    local = LocalExecutor(jobs) if executor is None else None
    try:
        for i, result, exc in (executor or local).map_unordered(fn, tasks):
            if exc is not None:
                raise exc
            results[i] = result
            if on_done is not None:
                on_done()
    finally:
        if local is not None:
            local.close()
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
