"""Candidate parent sets with exact pruning: the score-table stage's driver and the table's assembly.

For every child the parent sets drawn from its allowed parents (at most ``palim``) are enumerated
and pruned exactly, so that the kept sets are the non-dominated ones (``docs/references.md``,
exact pruning). The work is split by job:

* :mod:`scores.enumeration`: the kernel of one child, layer by layer (``child_kernel``);
* :mod:`scores.alive_sets`: the alive sets of a layer, their look-up and the kept sets;
* :mod:`scores.family_counting`: the counting path of each family and the prefix state it shares
  (the counting kernels themselves are ``scores.counts``);
* :mod:`scores.score_memo`: the memo tables of score terms;
* :mod:`scores.pruning`: the pruning rules (subset dominance, BDeu and penalty bounds,
  Theorem 1 of Scanagatta et al. 2016, the entropy rule) and their counters ``STATS``;
* this module: the arguments' checks, the data every kernel shares, the children run in
  parallel threads (the kernels release the GIL) and the :class:`ScoreTable` of their output.

Parents with one state never change a score (a tie), so they are dropped up front; a one-state
child keeps only the required set. Restrictions: ``allowed[p, c]`` (forbidden edges, black lists)
removes ``p`` from ``c``'s pool (R6). ``required[p, c]`` (white lists) adds ``p`` to *every*
candidate set of ``c``; enumeration and pruning then run over the remaining parents, conditioned
on the required ones, as pygobnilp does; ``palim`` counts the required parents too.
"""

from __future__ import annotations

import logging
import math
import os
import time
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np
from tqdm import tqdm

from hybridbn.checks import check_parent_limit
from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError
from hybridbn.memory import MB, headroom
from scores.counts import as_columns, onehot_bitsets, triple_counts
from scores.enumeration import (COMPLETE, MAX_BYTES, MEMORY_CUT, STOP, STOPPED, ChildTask, CountingData, ScoreRule,
                                child_kernel, new_control)
from scores.family_counting import CUBE_VARS
from scores.local import score_code
from scores.pruning import STATS
from scores.table import ScoreTable, offsets

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.1
"""How often the driver checks the deadline and a stop request while the kernels run."""
MIN_CHILD_BYTES = 4 * MB
"""Least buffer room a child is given under a memory limit; with less it keeps its required set."""


class CandidateError(HybridBNError, ValueError):
    """Invalid arguments for the score-table stage."""


def build_score_table(
    data: np.ndarray,
    arities: np.ndarray,
    score: str = "bdeu",
    ess: float = 1.0,
    palim: int | None = 3,
    allowed: np.ndarray | None = None,
    required: np.ndarray | None = None,
    names: list[str] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    prune: bool = True,
    deadline: Deadline | None = None,
    memory_limit: int | None = None,
) -> ScoreTable:
    """Score table of ``(data, arities)``: per child the parent sets that can be optimal.

    ``score`` is one of ``scores.local.SCORES`` (``ess`` is BDeu's equivalent sample size);
    ``palim`` bounds the parent-set size (``None``: no bound); ``allowed[p, c]`` says whether
    ``p`` may be a parent of ``c`` and ``required[p, c]`` whether it must be (see the module
    docstring). ``prune=False`` keeps every set within ``palim`` (for k-best use and tests).
    Children are scored in ``n_jobs`` threads (``-1``: all cores; the kernels release the GIL).
    ``table.meta`` holds the score parameters, ``counts`` (totals of every pruning counter,
    see ``STATS``, plus ``total`` sets within the limits and ``pruned_constant`` sets with a
    one-state parent, ``not_generated`` sets skipped because a subset was pruned) and ``time_s``.
    Once ``deadline`` has passed (checked before each child, and every ``POLL_SECONDS`` while a
    kernel runs), the running kernels stop at their next alive set, keeping the sets scored so
    far, and each child not yet started gets its required parent set only (empty without knowledge: one count, no
    enumeration), so the table still has a DAG. ``memory_limit`` (bytes; None: none) caps the
    process's memory: each child's buffers get a share of what it leaves (``_MemoryPlan``), and a
    child whose growth would pass its share stops the same way. ``meta["unscored"]`` lists the
    children that lost candidate sets either way (empty: complete), ``meta["memory_cut"]`` those
    the limit cut. A stop request raised by the deadline's check stops the kernels before it
    propagates.
    """
    start = time.perf_counter()
    code = score_code(score, ess)
    cols = as_columns(data, arities)
    arities = np.asarray(arities, dtype=np.int64)
    n_vars, n_rows = cols.shape
    if n_vars < 1:
        raise CandidateError("data has no variables")
    palim = check_parent_limit(palim, CandidateError)
    palim = n_vars - 1 if palim is None else min(palim, n_vars - 1)
    allowed = _matrix(allowed, "allowed", n_vars, default=True)
    required = _matrix(required, "required", n_vars, default=False)
    np.fill_diagonal(allowed, False)
    if required.diagonal().any():
        v = int(np.flatnonzero(required.diagonal())[0])
        raise CandidateError(f"required[{v}, {v}] is set: a variable cannot be its own parent")
    clash = np.argwhere(required & ~allowed)
    if clash.size:
        p, c = (int(t) for t in clash[0])
        raise CandidateError(f"edge {p} -> {c} is both required and not allowed ({len(clash)} such edge(s))")
    if names is not None and len(names) != n_vars:
        raise CandidateError(f"{len(names)} names for {n_vars} variables")
    n_req = required.sum(axis=0)
    if np.any(n_req > palim):
        c = int(np.argmax(n_req > palim))
        raise CandidateError(f"child {c} has {int(n_req[c])} required parents but palim is {palim}")
    n_jobs = (os.cpu_count() or 1) if n_jobs in (-1, None) else int(n_jobs)
    if n_jobs < 1:
        raise CandidateError(f"n_jobs must be >= 1 or -1, got {n_jobs}")

    shared, marginal_ll = counting_data(cols, arities)
    rule = ScoreRule(code=code, ess=float(ess), prune=prune)
    kept: list = [None] * n_vars  # per child: its kept sets (padded with -1) and their scores
    totals = dict.fromkeys(("total", "pruned_constant", "not_generated", *STATS), 0)

    budget = None if memory_limit is None else _MemoryPlan(int(memory_limit), n_jobs)
    halt = threading.Event()  # the deadline passed or the limit is reached: no child starts in full
    controls: dict[int, np.ndarray] = {}  # the control arrays of the children being scored

    def one(v: int):
        if not halt.is_set() and passed(deadline):  # (a stop request raises here: see below)
            halt.set()
        cap = 0 if budget is None else budget.child_cap()
        controls[v] = control = new_control(max(cap, 0))
        limited = palim > n_req[v] and bool((allowed[:, v] & ~required[:, v]).any())
        cut = limited and (halt.is_set() or cap < 0)
        pool = required[:, v] if cut else allowed[:, v]  # past the deadline or the limit: the required set only
        try:
            sets_scores, counts, status = _score_child(shared, v, pool, required[:, v], palim, rule, marginal_ll,
                                                       control)
        finally:
            del controls[v]
        if cut:
            status = STOPPED if halt.is_set() else MEMORY_CUT
        return v, status, sets_scores, counts

    unscored, memory_cut = [], []

    def take(v: int, status: int, sets_scores, counts) -> None:
        kept[v] = sets_scores
        if status != COMPLETE:
            unscored.append(v)
        if status == MEMORY_CUT:
            memory_cut.append(v)
        if budget is not None:
            budget.add(sets_scores)
        for name, value in counts.items():
            totals[name] += value

    with tqdm(total=n_vars, desc=f"scores ({score})", unit="child", disable=not progress) as bar:
        if deadline is None and n_jobs == 1:  # nothing to watch for: the kernels run in this thread
            for v in range(n_vars):
                take(*one(v))
                bar.update()
        else:
            _run_watched(one, n_vars, n_jobs, deadline, halt, controls, take, bar)
    if memory_cut:
        logger.warning("the memory plan (%d MB) cut the parent sets of %d of %d children: the table holds the "
                       "sets scored before; more memory or a smaller --palim scores all",
                       memory_limit // MB, len(memory_cut), n_vars)
    elapsed = time.perf_counter() - start
    meta = {
        "score": str(score).lower(), "ess": float(ess), "n_rows": int(n_rows), "palim": palim,
        "prune": bool(prune), "restricted": bool((~allowed).sum() > n_vars) or bool(required.any()),
        "counts": totals, "time_s": elapsed, "unscored": sorted(unscored),
        "memory_cut": sorted(memory_cut),
    }
    logger.info("scored %d children in %.2f s: %d of %d candidate sets kept", n_vars, elapsed,
                totals["kept"], totals["total"])
    return _table_of(kept, n_vars, names, meta)


def _table_of(kept: list, n_vars: int, names, meta) -> ScoreTable:
    """The score table of the kernel's output per child (padded sets, scores), with no per-family loop."""
    sets = [s for s, _ in kept]
    member = [s >= 0 for s in sets]
    parents = np.concatenate([s[m] for s, m in zip(sets, member)])
    sizes = np.concatenate([m.sum(axis=1) for m in member])
    child = np.repeat(np.arange(n_vars), [s.shape[0] for s in sets])
    score = np.concatenate([sc for _, sc in kept])
    return ScoreTable.from_columns(n_vars, child, offsets(sizes), parents, score, names, meta)


def counting_data(cols: np.ndarray, arities: np.ndarray) -> tuple[CountingData, np.ndarray]:
    """The data every child's kernel shares (of :func:`scores.counts.as_columns` ``cols``) and the
    log-likelihood of each variable without parents."""
    n_vars, n_rows = cols.shape
    bits, offsets = onehot_bitsets(cols, arities)
    marg = np.concatenate([np.bincount(cols[v], minlength=int(arities[v])) for v in range(n_vars)])
    marg = marg.astype(np.int64)
    binary = np.flatnonzero(arities == 2)
    cube_index = np.full(n_vars, -1, dtype=np.int64)
    if binary.size <= CUBE_VARS:
        cube = triple_counts(bits, offsets, binary)
        cube_index[binary] = np.arange(binary.size)
    else:
        cube = np.zeros((1, 1, 1), dtype=np.int32)
    shared = CountingData(cols=cols, arities=arities, bits=bits, offsets=offsets, marg=marg, cube=cube,
                          cube_index=cube_index)
    return shared, _marginal_ll(marg, offsets, n_rows)


def _run_watched(one, n_vars: int, n_jobs: int, deadline, halt, controls, take, bar) -> None:
    """``take(*one(v))`` for every child, ``one`` in ``n_jobs`` worker threads. Each child checks
    the deadline (and so a stop request) before it starts; this thread checks it too while a
    kernel has run for ``POLL_SECONDS``, and stops the kernels through their control arrays."""
    with ThreadPoolExecutor(max_workers=n_jobs) as workers:
        pending = {workers.submit(one, v) for v in range(n_vars)}
        try:
            while pending:
                done, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    take(*future.result())
                    bar.update()
                if not done and not halt.is_set() and passed(deadline):
                    _stop(halt, controls)
        except BaseException:  # a stop request (StageStopped) or an error: end the running kernels now
            _stop(halt, controls)
            for future in pending:
                future.cancel()
            raise


def _stop(halt: threading.Event, controls: dict[int, np.ndarray]) -> None:
    """No child starts in full from now on, and the running kernels stop at their next check."""
    halt.set()
    for control in list(controls.values()):
        control[STOP] = 1


class _MemoryPlan:
    """What each child's kernel may hold under a limit of ``limit`` bytes with ``n_jobs`` children
    at once: an equal share of the headroom left after the sets kept so far, counted twice (the
    table's assembly copies them)."""

    def __init__(self, limit: int, n_jobs: int):
        self.limit, self.n_jobs, self.kept = limit, n_jobs, 0

    def add(self, sets_scores) -> None:
        self.kept += sum(a.nbytes for a in sets_scores)

    def child_cap(self) -> int:
        """Bytes for the next child's buffers (-1: none left, the child keeps its required set)."""
        share = (headroom(self.limit) - 2 * self.kept) // self.n_jobs
        return share if share >= MIN_CHILD_BYTES else -1


def _score_child(data: CountingData, v, allowed_col, required_col, palim, rule: ScoreRule, marginal_ll, control):
    """``((sets, scores), counters, status)`` of child ``v`` (one kernel call; sets padded with -1;
    ``control``: the kernel's :attr:`~scores.enumeration.ChildTask.control`)."""
    arities, prune = data.arities, rule.prune
    req = np.flatnonzero(required_col).astype(np.int64)
    free = np.flatnonzero(allowed_col & ~required_col).astype(np.int64)
    kmax_all = min(palim - req.size, free.size)
    total = sum(math.comb(free.size, k) for k in range(kmax_all + 1))
    useful = free[arities[free] > 1] if prune else free
    kmax = min(kmax_all, useful.size)
    if prune and arities[v] == 1:  # every score ties with the required set's
        kmax = 0
        useful = useful[:0]
    w = -np.maximum(marginal_ll[v], marginal_ll[useful])
    sets, scores, stats, status = child_kernel(
        data, ChildTask(x=v, pool=useful, req=req, kmax=kmax, w=w, control=control), rule)
    counts = dict(zip(STATS, (int(s) for s in stats)))
    counts["total"] = total
    reachable = sum(math.comb(useful.size, k) for k in range(kmax + 1))
    counts["pruned_constant"] = total - reachable
    counts["not_generated"] = reachable - counts["generated"]
    return (sets, scores), counts, int(status)


def _marginal_ll(marg: np.ndarray, offsets: np.ndarray, n_rows: int) -> np.ndarray:
    """``LL(Y) = Σ_k n_k log(n_k / N)`` of every variable with no parents."""
    out = np.empty(offsets.size - 1)
    for v in range(out.size):
        counts = marg[offsets[v]: offsets[v + 1]].astype(np.float64)
        counts = counts[counts > 0]
        out[v] = float(np.sum(counts * np.log(counts / n_rows)))
    return out


def _matrix(value, what: str, n: int, default: bool) -> np.ndarray:
    if value is None:
        return np.full((n, n), default, dtype=bool)
    value = np.asarray(value)
    if value.shape != (n, n):
        raise CandidateError(f"{what} must be an ({n}, {n}) boolean matrix, got shape {value.shape}")
    if value.dtype != bool and not np.isin(value, (0, 1)).all():
        raise CandidateError(f"{what} must be boolean (or 0/1)")
    return value.astype(bool).copy()
