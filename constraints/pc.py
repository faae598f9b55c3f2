"""PC skeleton (PC_SL, Su 2023 section 5.4), PC-stable, and full PC giving a CPDAG.

Skeleton (Spirtes, Glymour & Scheines 2000; stable variant: Colombo & Maathuis 2014,
Algorithm 4.1): start from the complete graph; at order ``l = 0, 1, ...`` and for every
adjacent pair ``u < v`` (lexicographic), test ``u _||_ v | S`` for ``S`` in
``itertools.combinations(sorted(adj(u) - {v}), l)`` and then the same from ``v``'s side;
remove the edge at the first ``p > alpha``.  With ``stable=True`` the adjacency sets are frozen
at the start of each level (order-independent skeleton); ``stable=False`` is the original PC
using the live adjacencies.  The level loop stops when no adjacent pair has ``l`` other
neighbours on either side, or after ``max_order``, or at a passed ``deadline``: checked before
each pair (one test call at a time), each compiled batch of ``_BATCH_PAIRS`` pairs or each block
of rows of level 0's marginal screen (before a level on an executor); the pairs not yet reached
stay adjacent, and since every removal made is one the full run makes, the skeleton is a
superset of the full run's (status ``timeout``).

Records follow :mod:`constraints.restriction`: the largest p-value seen on each pair and its
set; for a removed edge that is exactly the separating set that removed it.

Orientation (``pc``): unshielded triples ``a - c - b`` (``a < b`` non-adjacent) are visited in
lexicographic order of ``(c, a, b)``; if ``c`` is not in ``sepset(a, b)`` the arcs ``a -> c`` and
``b -> c`` are set, except that an arc is never reversed or overwritten once set (first
orientation wins, so conflicting v-structures are resolved deterministically in favour of the
earlier triple).  Meek's rules (``graphs.pdag.meek_closure``) then complete the PDAG; with
an exact oracle the result is the CPDAG of the true DAG.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from itertools import combinations

import numpy as np
from tqdm import tqdm

from constraints.citest_batch import TestSettings, adjacency_lists, compute_threads, pc_level, pc_level_task
from constraints.citests import CITest
from constraints.restriction import PairLog, Restriction
from constraints.screening import MarginalScreen, block_pairs, marginal_rows_task, row_blocks
from graphs.pdag import meek_closure
from hybridbn.checks import check_significance
from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError

logger = logging.getLogger(__name__)

_BATCH_PAIRS = 20000  # pairs per compiled call (progress granularity)


class PCError(HybridBNError, ValueError):
    """Invalid argument to the PC algorithm."""


def check_alpha_order(alpha: float, max_order: int | None) -> None:
    """Validate the significance level and maximum conditioning-set size."""
    check_significance(alpha, PCError)
    if max_order is not None and (int(max_order) != max_order or max_order < 0):
        raise PCError(f"max_order must be a non-negative integer or None, got {max_order}")


def pc_skeleton(test, n_vars: int, alpha: float = 0.05, max_order: int | None = None,
                stable: bool = True, progress: bool = False, batched: bool = True,
                n_jobs: int = 1, keep: np.ndarray | None = None, executor=None,
                n_groups: int = 1, deadline: Deadline | None = None) -> Restriction:
    """PC skeleton search; returns the :class:`Restriction` (allowed = learned skeleton).

    PC-stable with a :class:`~constraints.citests.CITest` runs level 0 as the marginal screen of
    all pairs in blocks of rows (:mod:`constraints.screening`) and each later level in compiled
    batches on ``n_jobs`` threads (:func:`constraints.citest_batch.pc_level`), or, with ``executor``
    (``pipeline.executors``: a process pool or a Dask cluster), as ``n_groups`` tasks per level,
    each a slice of the level's pairs; ``batched=False``, ``stable=False`` or another test (an
    oracle) asks the test one call at a time.  All give the same skeleton, records and counts.
    The pairs of ``keep`` (symmetric) are never tested and stay adjacent
    (:class:`~constraints.restriction.PairLog`). A passed ``deadline`` stops the search (see the
    module docstring).
    """
    check_alpha_order(alpha, max_order)
    start = time.perf_counter()
    log = PairLog(test, n_vars, keep)
    adj = ~np.eye(n_vars, dtype=bool)
    if batched and stable and isinstance(test, CITest):
        settings = TestSettings(test)
        run_level = partial(_batched_level, settings=settings, executor=executor, n_groups=n_groups)
        first_level = partial(_screened_level, screen=MarginalScreen(settings), executor=executor,
                              n_groups=n_groups)
    else:
        run_level = first_level = partial(_level, stable=stable)
    level, status = 0, "ok"
    while max_order is None or level <= max_order:
        if not any(len(np.flatnonzero(adj[x])) - 1 >= level for x in range(n_vars)):
            break
        with compute_threads(n_jobs):
            finished = (first_level if level == 0 else run_level)(log, adj, level, alpha, progress=progress,
                                                                  deadline=deadline)
        logger.debug("PC order %d: %d edges left", level, int(np.triu(adj, 1).sum()))
        if not finished:
            status = "timeout"
            logger.debug("PC stopped by its deadline at order %d", level)
            break
        level += 1
    return log.build(adj, time.perf_counter() - start, "pc",
                     {"alpha": alpha, "max_order": max_order, "stable": stable}, status)


def _level(log: PairLog, adj: np.ndarray, level: int, alpha: float, progress: bool, stable: bool,
           deadline: Deadline | None) -> bool:
    """One level, one test call at a time (live adjacencies unless ``stable``); edits ``adj``.
    False when the deadline stopped it."""
    n_vars = adj.shape[0]
    frozen = [np.flatnonzero(adj[x]).tolist() for x in range(n_vars)] if stable else None
    edges = list(zip(*np.nonzero(np.triu(adj & ~log.keep, 1))))
    for u, v in tqdm(edges, desc=f"PC order {level}", disable=not progress, leave=False):
        if passed(deadline):
            return False
        for x, y in ((u, v), (v, u)):
            pool = frozen[x] if stable else np.flatnonzero(adj[x]).tolist()
            if len(pool) - 1 < level:
                continue
            sets = combinations([w for w in pool if w != y], level) if level else [()]
            if any(log(x, y, S) > alpha for S in sets):
                adj[u, v] = adj[v, u] = False
                break
    return True


def _batched_level(log: PairLog, adj: np.ndarray, level: int, alpha: float, progress: bool,
                   settings: TestSettings, executor, n_groups: int, deadline: Deadline | None) -> bool:
    """One PC-stable level in compiled batches of pairs (same tests, records and counts), here
    or as ``n_groups`` tasks on ``executor``; the results are applied in pair order.  False when
    the deadline stopped it (the batches not run leave their pairs adjacent)."""
    lists = adjacency_lists(adj)
    us, vs = np.nonzero(np.triu(adj & ~log.keep, 1))
    size = _BATCH_PAIRS if executor is None else max(1, -(-len(us) // max(1, int(n_groups))))
    tasks = [(settings, lists, (us[lo:lo + size], vs[lo:lo + size]), level, alpha)
             for lo in range(0, len(us), size)]
    if executor is None:  # a batch at a time, none once the deadline passed
        outcomes = ((i, pc_level(*task), None) for i, task in enumerate(tasks) if not passed(deadline))
    elif passed(deadline):
        return False
    else:
        outcomes = executor.map_unordered(pc_level_task, tasks)
    results = {}
    with tqdm(total=len(us), desc=f"PC order {level}", disable=not progress, leave=False) as bar:
        for i, result, exc in outcomes:
            if exc is not None:
                raise exc
            results[i] = result
            bar.update(len(tasks[i][2][0]))
    for i in sorted(results):
        (pu, pv), (removed, n_tests, best_p, best_sets) = tasks[i][2], results[i]
        log.record_batch(pu, pv, {level: int(n_tests.sum())}, best_p, best_sets)
        adj[pu[removed], pv[removed]] = adj[pv[removed], pu[removed]] = False
    return len(results) == len(tasks)


def _screened_level(log: PairLog, adj: np.ndarray, level: int, alpha: float, progress: bool,
                    screen: MarginalScreen, executor, n_groups: int, deadline: Deadline | None) -> bool:
    """PC-stable's level 0 on the complete graph: the marginal test of every pair not in ``keep``
    (:mod:`constraints.screening`), in blocks of rows here or as ``n_groups`` tasks on
    ``executor``; the same tests, records and counts as :func:`_batched_level`. False when the
    deadline stopped it (the blocks not run leave their pairs adjacent)."""
    n_vars = adj.shape[0]
    if executor is None:
        blocks = row_blocks(n_vars)
        outcomes = ((i, screen.rows(*rows), None) for i, rows in enumerate(blocks) if not passed(deadline))
    elif passed(deadline):
        return False
    else:
        blocks = row_blocks(n_vars, max(1, -(-n_vars * (n_vars - 1) // 2 // max(1, int(n_groups)))))
        outcomes = executor.map_unordered(marginal_rows_task, [(screen, *rows) for rows in blocks])
    done = 0
    with tqdm(total=n_vars * (n_vars - 1) // 2, desc=f"PC order {level}", disable=not progress,
              leave=False) as bar:
        for i, result, exc in outcomes:
            if exc is not None:
                raise exc
            us, vs = block_pairs(n_vars, *blocks[i])
            p = result[0]
            tested = ~log.keep[us, vs]
            us, vs, p = us[tested], vs[tested], p[tested]
            log.record_batch(us, vs, {level: len(us)}, p, np.empty((len(us), 0), dtype=np.int64))
            removed = p > alpha
            adj[us[removed], vs[removed]] = adj[vs[removed], us[removed]] = False
            done += 1
            bar.update(len(tested))
    return done == len(blocks)


def orient_v_structures(skeleton: np.ndarray, sepsets: dict[tuple[int, int], list[int]]) -> np.ndarray:
    """PDAG from a skeleton by orienting unshielded colliders (first orientation wins; the
    cops' :func:`constraints.cops.postprocess.orient_v_structures_dropping_conflicts` instead
    drops both arcs of an edge two colliders orient opposite ways)."""
    A = np.asarray(skeleton, dtype=bool).copy()
    n = A.shape[0]
    U = A.copy()  # undirected skeleton, fixed while visiting triples
    for c in range(n):
        nb = np.flatnonzero(U[c]).tolist()
        for a, b in combinations(nb, 2):
            if U[a, b] or c in sepsets.get((a, b), ()):
                continue
            for p in (a, b):
                if A[p, c] and A[c, p]:  # still undirected: orient p -> c
                    A[c, p] = False
    return A


def pc(test, n_vars: int, alpha: float = 0.05, max_order: int | None = None,
       stable: bool = True, progress: bool = False, batched: bool = True,
       n_jobs: int = 1, executor=None, n_groups: int = 1) -> tuple[np.ndarray, Restriction]:
    """Full PC: skeleton, v-structures from separating sets, Meek rules -> (CPDAG, restriction)."""
    restriction = pc_skeleton(test, n_vars, alpha=alpha, max_order=max_order, stable=stable,
                              progress=progress, batched=batched, n_jobs=n_jobs,
                              executor=executor, n_groups=n_groups)
    rec = restriction.records
    removed = rec[~rec["allowed"]]
    sepsets = {(int(u), int(v)): list(s) for u, v, s in zip(removed["u"], removed["v"], removed["sepset"])}
    return meek_closure(orient_v_structures(restriction.allowed, sepsets)), restriction
