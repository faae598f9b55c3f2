"""Greedy Equivalence Search (GES) over CPDAGs.

D. M. Chickering, "Optimal structure identification with greedy search", JMLR 3 (2002):
forward equivalence search (FES) greedily applies the best valid ``Insert`` operator until none
improves the score, then backward equivalence search (BES) greedily applies the best ``Delete``
operator until none improves it (Chickering & Meek 2015, Figure 1). Operators, validity
conditions and score differences are in :mod:`search.ges_ops`.

The score is any decomposable, score-equivalent local score ``local_score(child, parents)``
(parents a sorted tuple), memoised by :class:`search.score_cache.LocalScoreCache`; the result
reports the number of distinct local-score evaluations. Ties between operators with equal score
difference are broken by a fixed enumeration order (child ``Y`` ascending, then ``X``, then the
subset enumeration order), so runs are deterministic.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from graphs.pdag import pdag_to_dag
from graphs.bitsets import bits, to_tuple
from hybridbn.checks import check_parent_limit
from hybridbn.errors import HybridBNError
from hybridbn.interrupt import stop_requested
from hybridbn.progress import REPORT_INTERVAL, Callback, Throttle, check_callback, progress_record
from search.ges_ops import (
    CPDAGMasks,
    all_delete_subsets,
    apply_delete,
    apply_insert,
    complete_pdag,
    deletable_pairs,
    delete_deltas,
    insert_candidates,
    insertable_pairs,
)
from search.score_cache import LocalScore, LocalScoreCache

logger = logging.getLogger(__name__)

DeleteGenerator = Callable[[CPDAGMasks, int, int], Sequence[int]]


class GESError(HybridBNError, ValueError):
    """Bad arguments for GES / SGES."""


@dataclass(frozen=True)
class GESResult:
    """Outcome of GES or SGES.

    ``cpdag`` is the learned equivalence class, ``dag`` a consistent extension of it, ``score``
    the (score-equivalent) score of both; ``n_score_evaluations`` the number of distinct local
    scores computed in total and ``n_evaluations_forward`` those computed by the forward phase;
    ``status`` is ``"converged"``, or ``"userinterrupt"`` when a stop request
    (:mod:`hybridbn.interrupt`) ended the search early with the CPDAG reached so far.
    """

    cpdag: np.ndarray
    dag: np.ndarray
    score: float
    n_score_evaluations: int
    n_evaluations_forward: int
    n_inserts: int
    n_deletes: int
    status: str = "converged"


class Monitor:
    """The stop check and progress records of a GES / SGES search of ``solver`` on ``cache``.

    The searches call :meth:`poll` before scoring each pair and :meth:`applied` after each
    operator; ``progress`` (a callable or ``None``) receives a record (:mod:`hybridbn.progress`: the
    current score as ``primal``, the ``phase``, its ``steps``, the distinct local-score
    ``evaluations``) about once a second. The running score starts from the start CPDAG's, computed
    only when there is someone to report to.
    """

    def __init__(self, solver: str, cache: LocalScoreCache, start: np.ndarray, progress: Callback | None = None):
        self.solver = solver
        self.cache = cache
        self.progress = check_callback(progress)
        self.score = cache.dag_score(pdag_to_dag(start)) if self.progress is not None else math.nan
        self.stopped = False
        self._start = time.perf_counter()
        self._throttle = Throttle(REPORT_INTERVAL, time.perf_counter)

    def _report(self, score: float, **extra) -> None:
        self.progress(progress_record("solve", self.solver, time.perf_counter() - self._start, primal=score,
                                      evaluations=self.cache.n_evaluations, **extra))

    def poll(self, phase: str, steps: int) -> bool:
        """Report if one is due; whether a stop was requested (then the search returns)."""
        if self.progress is not None and self._throttle.ready():
            self._report(self.score, phase=phase, steps=steps)
        self.stopped = stop_requested() is not None
        return self.stopped

    def applied(self, delta: float) -> None:
        self.score += delta

    def finish(self, result: GESResult) -> None:
        """The last record, with the result's score and ``status``."""
        if self.progress is not None:
            self._report(result.score, status=result.status)


def check_allowed(allowed, n_vars: int) -> np.ndarray | None:
    """Symmetric adjacency restriction from a directional ``allowed[p, c]`` matrix (or None).

    Search over equivalence classes cannot honour edge directions, so a pair may become adjacent
    iff at least one direction is allowed (``allowed | allowed.T``).
    """
    if allowed is None:
        return None
    a = np.asarray(allowed)
    if a.shape != (n_vars, n_vars):
        raise GESError(f"allowed must have shape ({n_vars}, {n_vars}), got {a.shape}")
    if a.dtype != bool:
        raise GESError(f"allowed must be a boolean matrix, got dtype {a.dtype}")
    adj = a | a.T
    np.fill_diagonal(adj, False)
    return adj


def check_palim(palim) -> int | None:
    """Validate the optional forward-phase parent limit."""
    return check_parent_limit(palim, GESError)


def as_cache(local_score: LocalScore | LocalScoreCache, n_vars: int) -> LocalScoreCache:
    """Wrap a local-score callable in a fresh cache (an existing cache is used as is)."""
    if isinstance(local_score, LocalScoreCache):
        if local_score.n_vars != n_vars:
            raise GESError(f"score cache is for {local_score.n_vars} variables, not {n_vars}")
        return local_score
    return LocalScoreCache(local_score, n_vars)


def forward_search(
    cache: LocalScoreCache,
    P: np.ndarray,
    *,
    adjacency_allowed: np.ndarray | None = None,
    palim: int | None = None,
    monitor: Monitor | None = None,
) -> tuple[np.ndarray, int]:
    """FES: apply the best valid positive ``Insert`` until none exists; returns (CPDAG, #inserts).

    Only valid operators are scored (validity is checked first), so the distinct-evaluation
    count is that of the operators GES can actually apply. With a ``monitor``, a stop request
    returns the CPDAG reached so far.
    """
    steps = 0
    while True:
        m = CPDAGMasks.of(P)
        best: tuple[float, int, int, int] | None = None
        for x, y in insertable_pairs(m, adjacency_allowed):
            if monitor is not None and monitor.poll("forward", steps):
                return P, steps
            for delta, t in insert_candidates(cache, m, x, y, palim):
                if delta > 0 and (best is None or delta > best[0]):
                    best = (delta, x, y, t)
        if best is None:
            return P, steps
        delta, x, y, t = best
        logger.debug("FES step %d: Insert(%d, %d, %s) delta=%.6g", steps, x, y, to_tuple(t), delta)
        P = apply_insert(P, x, y, bits(t))
        steps += 1
        if monitor is not None:
            monitor.applied(delta)


def backward_search(
    cache: LocalScoreCache, P: np.ndarray, generate: DeleteGenerator = all_delete_subsets,
    monitor: Monitor | None = None,
) -> tuple[np.ndarray, int]:
    """BES: apply the best positive ``Delete`` among those ``generate`` yields; returns (CPDAG, #deletes).

    ``generate(masks, x, y)`` returns the candidate ``H`` bitmasks for the edge ``x -> y`` /
    ``x - y`` (all valid ones for BES, a selective subset for SBES); it must depend only on
    ``NA_{Y,X}`` and the adjacencies inside it, which, with ``Pa_Y \\ {X}``, is the memo key.
    With a ``monitor``, a stop request returns the CPDAG reached so far.
    """
    n_steps = 0
    memo: dict[tuple, tuple[float, int]] = {}
    while True:
        m = CPDAGMasks.of(P)
        best: tuple[float, int, int, int] | None = None
        for x, y in deletable_pairs(m):
            if monitor is not None and monitor.poll("backward", n_steps):
                return P, n_steps
            na = m.ne[y] & m.adj[x]
            key = (x, y, m.pa[y] & ~(1 << x), na, tuple(m.adj[v] & na for v in bits(na)))
            entry = memo.get(key)
            if entry is None:
                hs = generate(m, x, y)
                deltas = delete_deltas(cache, m, x, y, hs)
                if deltas:
                    i = int(np.argmax(deltas))  # first maximum: deterministic tie-break
                    entry = memo[key] = (deltas[i], hs[i])
                else:
                    entry = memo[key] = (-np.inf, 0)
            if entry[0] > 0 and (best is None or entry[0] > best[0]):
                best = (entry[0], x, y, entry[1])
        if best is None:
            return P, n_steps
        delta, x, y, h = best
        logger.debug("BES step %d: Delete(%d, %d, %s) delta=%.6g", n_steps, x, y, to_tuple(h), delta)
        P = apply_delete(P, x, y, bits(h))
        n_steps += 1
        if monitor is not None:
            monitor.applied(delta)


def complete_start(n_vars: int, adjacency_allowed: np.ndarray | None = None) -> np.ndarray:
    """The no-independence CPDAG (all pairs adjacent, undirected), poly-FES of SGES.

    With a restriction, the allowed adjacencies oriented by index order (a DAG) are completed
    to their CPDAG instead: the densest state the restriction permits.
    """
    if adjacency_allowed is None:
        P = np.ones((n_vars, n_vars), dtype=bool)
        np.fill_diagonal(P, False)
        return P
    return complete_pdag(np.triu(adjacency_allowed, k=1))


def finish(cache: LocalScoreCache, P: np.ndarray, n_forward_evals: int, n_inserts: int, n_deletes: int,
           monitor: Monitor) -> GESResult:
    """Package a final CPDAG with a consistent extension, its score and the search's status."""
    dag = pdag_to_dag(P)
    result = GESResult(
        cpdag=P,
        dag=dag,
        score=cache.dag_score(dag),
        n_score_evaluations=cache.n_evaluations,
        n_evaluations_forward=n_forward_evals,
        n_inserts=n_inserts,
        n_deletes=n_deletes,
        status="userinterrupt" if monitor.stopped else "converged",
    )
    monitor.finish(result)
    return result


def ges(
    local_score: LocalScore | LocalScoreCache,
    n_vars: int,
    *,
    allowed: np.ndarray | None = None,
    palim: int | None = None,
    start: np.ndarray | None = None,
    progress: Callback | None = None,
) -> GESResult:
    """Greedy equivalence search (Chickering 2002): FES from ``start`` (default: empty) then BES.

    ``allowed[p, c]`` (bool, n x n) restricts the adjacencies FES may create (a pair may become
    adjacent iff ``allowed[p, c] or allowed[c, p]``); ``palim`` bounds the parent count of
    the child of each insert in FES; ``start`` is an initial CPDAG. A stop request
    (:mod:`hybridbn.interrupt`) ends the search with the CPDAG reached so far (status
    ``"userinterrupt"``); ``progress`` receives progress records (:class:`Monitor`).
    """
    n_vars = int(n_vars)
    cache = as_cache(local_score, n_vars)
    adjacency_allowed = check_allowed(allowed, n_vars)
    palim = check_palim(palim)
    P = np.zeros((n_vars, n_vars), dtype=bool) if start is None else check_start(start, n_vars)
    monitor = Monitor("ges", cache, P, progress)
    P, n_ins = forward_search(cache, P, adjacency_allowed=adjacency_allowed, palim=palim, monitor=monitor)
    n_fwd = cache.n_evaluations
    P, n_del = backward_search(cache, P, monitor=monitor)
    logger.info("GES: %d inserts, %d deletes, %d distinct local scores", n_ins, n_del, cache.n_evaluations)
    return finish(cache, P, n_fwd, n_ins, n_del, monitor)


def check_start(start, n_vars: int) -> np.ndarray:
    """Validate a user-given initial CPDAG (boolean, right shape, completed)."""
    P = np.asarray(start)
    if P.shape != (n_vars, n_vars) or P.dtype != bool:
        raise GESError(f"start must be a boolean ({n_vars}, {n_vars}) CPDAG, got {P.dtype} {P.shape}")
    if P.diagonal().any():
        raise GESError("start has self-loops")
    try:
        completed = complete_pdag(P)
    except ValueError as exc:
        raise GESError(f"start is not a CPDAG: {exc}") from exc
    if not np.array_equal(completed, P):
        raise GESError("start is not a completed PDAG (CPDAG); pass graphs.pdag.dag_to_cpdag(dag)")
    return P.copy()
