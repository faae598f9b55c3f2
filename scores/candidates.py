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
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy as np
from tqdm import tqdm

from hybridbn.checks import check_parent_limit
from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError
from scores.counts import as_columns, onehot_bitsets, triple_counts
from scores.enumeration import ChildTask, CountingData, ScoreRule, child_kernel
from scores.family_counting import CUBE_VARS
from scores.local import score_code
from scores.pruning import STATS
from scores.table import ScoreTable, offsets

logger = logging.getLogger(__name__)


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
    Once ``deadline`` has passed, each child not yet started gets its required parent set only
    (empty without knowledge: one count, no enumeration), so the table still has a DAG;
    ``meta["unscored"]`` lists the children that lost candidate sets that way (empty: complete).
    The check is made before each child's kernel call, never inside it.
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

    bits, offsets = onehot_bitsets(cols, arities)
    marg = np.concatenate([np.bincount(cols[v], minlength=int(arities[v])) for v in range(n_vars)])
    marg = marg.astype(np.int64)
    marginal_ll = _marginal_ll(marg, offsets, n_rows)
    binary = np.flatnonzero(arities == 2)
    cube_index = np.full(n_vars, -1, dtype=np.int64)
    if binary.size <= CUBE_VARS:
        cube = triple_counts(bits, offsets, binary)
        cube_index[binary] = np.arange(binary.size)
    else:
        cube = np.zeros((1, 1, 1), dtype=np.int32)
    shared = CountingData(cols=cols, arities=arities, bits=bits, offsets=offsets, marg=marg, cube=cube,
                          cube_index=cube_index)
    rule = ScoreRule(code=code, ess=float(ess), prune=prune)
    kept: list = [None] * n_vars  # per child: its kept sets (padded with -1) and their scores
    totals = dict.fromkeys(("total", "pruned_constant", "not_generated", *STATS), 0)

    unscored: list[int] = []

    def one(v: int):
        cut = passed(deadline) and palim > n_req[v] and bool((allowed[:, v] & ~required[:, v]).any())
        pool = required[:, v] if cut else allowed[:, v]  # past the deadline: the required set only
        return v, cut, _score_child(shared, v, pool, required[:, v], palim, rule, marginal_ll)

    with tqdm(total=n_vars, desc=f"scores ({score})", unit="child", disable=not progress) as bar:
        if n_jobs == 1:
            results = (one(v) for v in range(n_vars))
        else:
            pool = ThreadPoolExecutor(max_workers=n_jobs)
            results = (f.result() for f in as_completed([pool.submit(one, v) for v in range(n_vars)]))
        try:
            for v, cut, (sets_scores, counts) in results:
                kept[v] = sets_scores
                if cut:
                    unscored.append(v)
                for name, value in counts.items():
                    totals[name] += value
                bar.update()
        finally:
            if n_jobs > 1:
                pool.shutdown(wait=True, cancel_futures=True)
    elapsed = time.perf_counter() - start
    meta = {
        "score": str(score).lower(), "ess": float(ess), "n_rows": int(n_rows), "palim": palim,
        "prune": bool(prune), "restricted": bool((~allowed).sum() > n_vars) or bool(required.any()),
        "counts": totals, "time_s": elapsed, "unscored": sorted(unscored),
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


def _score_child(data: CountingData, v, allowed_col, required_col, palim, rule: ScoreRule, marginal_ll):
    """``((sets, scores), counters)`` of child ``v`` (one kernel call; sets padded with -1)."""
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
    sets, scores, stats = child_kernel(data, ChildTask(x=v, pool=useful, req=req, kmax=kmax, w=w), rule)
    counts = dict(zip(STATS, (int(s) for s in stats)))
    counts["total"] = total
    reachable = sum(math.comb(useful.size, k) for k in range(kmax + 1))
    counts["pruned_constant"] = total - reachable
    counts["not_generated"] = reachable - counts["generated"]
    return (sets, scores), counts


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
