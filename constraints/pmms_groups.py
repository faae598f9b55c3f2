"""PMMS and MMPC over ranges of targets, on threads or as the tasks of an executor: one result.

PMMPC(T) and MMPC(T) (Brown, Tsamardinos & Aliferis 2005, Algorithm 1) of one target depend on
no other target; the memo of :mod:`constraints.pmms_compiled` only saves asking a test twice.  So
the targets are split into contiguous ranges, in target order, of about equal expected cost
(:func:`target_weights`), each run with its own
:class:`~constraints.pmms_compiled.Memo` over one shared
:class:`~constraints.pmms_compiled.Order0` (the order-0 batch, computed once), on ``n_jobs``
threads (a compiled target releases the GIL) or as ``n_groups`` tasks of an executor
(:mod:`pipeline.executors`: a process pool or a Dask cluster).  :func:`merge` gives the result
of the single run over all targets (one range):

* skeleton: each target's PC(T) is the same whatever else its range holds;
* records (:class:`~constraints.restriction.PairLog`: per pair the first test, in asking order,
  with the largest p-value): the single run asks the ranges' tests one range after the other, a
  test asked in an earlier range being a memo hit, so a pair's record is that of the first range
  whose best p-value is the largest: the ranges' records logged in target order under PairLog's
  rule;
* counts of distinct tests: ``(u, v, S)`` is asked only by targets ``u`` and ``v``, so only two
  ranges holding one end each can both ask it; those tests are compared on their keys and
  counted once (order 0: the union of the pairs asked).

Deadline: checked before the order-0 batch and, in each range, before each target; a range that
finds it passed stops, and its targets not finished (that target and the rest of its range)
keep every candidate, while the finished targets of every range count.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, NamedTuple

import numpy as np

from constraints.citest_batch import compute_threads, thread_count
from constraints.pmms_compiled import Memo, Order0, Tests, repeats
from constraints.restriction import PairLog
from hybridbn.deadline import Deadline, passed

logger = logging.getLogger(__name__)


class Group(NamedTuple):
    """A range of targets ``lo..hi-1``: ``member[t - lo, x]``: ``x`` in PC(t) (every variable
    for a target not finished), whether the deadline stopped them, their tests, the CPU seconds
    of the thread that ran them."""

    member: np.ndarray
    stopped: bool
    tests: Tests
    cpu: float


def run_targets(parents_children: Callable, lo: int, hi: int, n_vars: int,
                tick: Callable[[], object] | None = None) -> tuple[np.ndarray, bool]:
    """The member rows of targets ``lo..hi-1`` in order and whether one stopped: from the first
    target whose ``parents_children`` is None on, every variable."""
    member = np.zeros((hi - lo, n_vars), dtype=bool)
    for t in range(lo, hi):
        cpc = parents_children(t)
        if cpc is None:
            member[t - lo:] = True
            return member, True
        member[t - lo, cpc] = True
        if tick is not None:
            tick()
    return member, False


def run_group(order0: Order0, lo: int, hi: int, exact: bool, prune: bool, max_order: int | None,
              deadline: Deadline | None, tick: Callable[[], object] | None = None,
              cancel: threading.Event | None = None) -> Group:
    """PMMPC (MMPC if ``exact``) of the targets ``lo..hi-1`` with a memo of their own, stopped
    as by the deadline once ``cancel`` is set; also the task of an executor (then without
    ``tick`` and ``cancel``)."""
    cpu = time.thread_time()
    memo = Memo(order0)

    def parents_children(t):
        if passed(deadline) or (cancel is not None and cancel.is_set()):
            return None
        return memo.parents_children(t, exact, prune, max_order)

    member, stopped = run_targets(parents_children, lo, hi, len(order0.keep), tick)
    if stopped:
        logger.debug("targets %d-%d stopped by the deadline with %d not finished", lo, hi - 1,
                     int(member.all(axis=1).sum()))
    return Group(member, stopped, memo.tests(lo, hi), time.thread_time() - cpu)


def ranges(weights: np.ndarray, n_groups: int) -> list[tuple[int, int]]:
    """At most ``n_groups`` non-empty contiguous ranges of targets, cut where the cumulated
    ``weights`` (one per target, positive) cross multiples of their total over ``n_groups``."""
    cum = np.cumsum(weights, dtype=float)
    k = max(1, int(n_groups))
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, k) / k, side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [len(weights)]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def target_weights(order0: Order0) -> np.ndarray:
    """A target's expected cost: 1 + the square of its candidates dependent at order 0 (the
    forward phase asks each of them about sets drawn from a CPC that grows with their number;
    on link and munin2 the correlation with the measured seconds is 0.74 and 0.77)."""
    return 1.0 + (order0.a0 > 0).sum(axis=1) ** 2.0


def run_groups(test, log: PairLog, alpha: float, exact: bool, prune: bool, max_order: int | None,
               deadline: Deadline | None, n_jobs: int, executor, n_groups: int, bar) -> tuple[np.ndarray, bool]:
    """PMMPC / MMPC of every target on a :class:`~constraints.citests.CITest`, as
    ``thread_count(n_jobs)`` ranges on threads or ``n_groups`` tasks on ``executor``; logs the
    records and counts into ``log`` (holding no tests yet) and returns the membership matrix and
    whether the deadline stopped a range.  ``bar``: a tqdm bar over the targets."""
    n = log.n_vars
    if passed(deadline):
        return np.ones((n, n), dtype=bool), True
    cpu = time.process_time()
    with compute_threads(n_jobs):
        order0 = Order0(test, log.keep, alpha)
    logger.debug("order-0 batch: %.2f CPU s", time.process_time() - cpu)
    tasks = [(order0, lo, hi, exact, prune, max_order, deadline)
             for lo, hi in ranges(target_weights(order0), thread_count(n_jobs) if executor is None else n_groups)]
    if executor is None:
        cancel = threading.Event()  # set when this thread stops waiting (Ctrl-C): the ranges stop too
        with ThreadPoolExecutor(len(tasks)) as pool:
            futures = [pool.submit(run_group, *task, bar.update, cancel) for task in tasks]
            try:
                groups = [f.result() for f in futures]
            finally:
                cancel.set()
    else:
        groups = [None] * len(tasks)
        for i, group, exc in executor.map_unordered(run_group, tasks):
            if exc is not None:
                raise exc
            groups[i] = group
            bar.update(len(group.member))
    cpu = time.process_time()
    merged = merge(log, groups)
    logger.debug("%d target ranges: %s thread CPU s, %d tests of order >= 1 computed, %d distinct; merged in "
                 "%.2f CPU s", len(groups), " + ".join(f"{g.cpu:.2f}" for g in groups),
                 sum(g.tests.counts[1:].sum() for g in groups),
                 sum(c for k, c in log.tests_by_order.items() if k), time.process_time() - cpu)
    return merged


def merge(log: PairLog, groups: list[Group]) -> tuple[np.ndarray, bool]:
    """Log the ranges' records and counts (in target order) as the single run would, into a
    ``log`` holding no tests yet; returns the membership matrix and whether a range stopped."""
    counts = sum(g.tests.counts for g in groups)
    counts[0] = len(np.unique(np.concatenate([g.tests.asked0 for g in groups])))
    keys = [g.tests.shared[0] for g in groups]
    offsets = np.cumsum([0] + [len(k) for k in keys[:-1]])
    starts = np.concatenate([g.tests.shared[1] + o for g, o in zip(groups, offsets)])
    counts -= repeats(np.concatenate(keys), starts, len(counts))
    distinct = {k: int(c) for k, c in enumerate(counts) if c}
    for g in groups:
        us, vs, best_p, sets = g.tests.records
        log.record_batch(us, vs, distinct, best_p, sets)
        distinct = {}
    return np.concatenate([g.member for g in groups]), any(g.stopped for g in groups)
