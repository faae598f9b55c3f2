"""Compiled, multithreaded evaluation of many G2 / X2 tests at once (no interpreter per test).

The table of counts of one test is :func:`constraints.citests._count_table`'s on the same
strata numbering (dense mixed-radix codes while the table is small, else the observed strata
ranked in code order), and :func:`constraints.citests._p_value` reads it, so statistics, degrees
of freedom and p-values are bit-identical to :class:`constraints.citests.CITest`. Tables that are
small next to the rows are counted from one-hot row bitsets (an AND and a popcount per word and
cell) instead of a pass over the rows; the counts, hence everything after them, are the same.
The p-value is scipy's ``chdtrc`` called from compiled code through its C entry point
(``scipy.special.cython_special``), passed as a first-class function so that the kernels stay
cacheable.

Three entry points:

* :func:`evaluate` — the p-values, statistics and dof of a batch of tests ``(x, y, S)``, all of
  one conditioning-set size, in parallel (``numba.prange``);
* :func:`evaluate_given` — the tests of one node against many under one conditioning set,
  whose strata are coded once, optionally in order up to the first test with ``p <= alpha``
  (the cops' batches: ``constraints.cops.data_oracle``);
* :func:`pc_level` — one level of PC-stable (Colombo & Maathuis 2014): every adjacent pair is a
  parallel task that walks its conditioning sets in PC's order, skips the sets the other side
  already tested, and stops at the first ``p > alpha``.

Threads: :func:`compute_threads` (the CLI's ``-j``).
"""

from __future__ import annotations

import os
import threading
import types
from contextlib import contextmanager
from functools import cached_property

import numba
import numpy as np
from numba import njit, prange

from constraints.citests import (
    CHDTRC, _INTERLEAVED_CELLS, _MAX_CODE, _count_table, _dense, _p_value,
)
from hybridbn.word_bits import popcount
from scores.counts import onehot_bitsets

BITSET_WORDS_PER_ROW = 8
"""A table is counted from row bitsets (one AND and popcount per word and cell) when
``cells * words <= BITSET_WORDS_PER_ROW * rows``, else by one pass over the rows. Of 2, 4, 8 and
16, 8 made PC order 1 on munin's 5000-row sample fastest (docs/benchmarks.md)."""


_threads = threading.local()  # kernel threads of the calling thread (1: the serial kernels)


def _current_threads() -> int:
    """The kernel threads that :func:`compute_threads` set for the calling thread (default 1)."""
    return getattr(_threads, "n", 1)


def thread_count(n_jobs: int) -> int:
    """The threads that ``n_jobs`` asks for: -1 all cores, capped by numba's pool."""
    wanted = (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)
    if wanted < 1:
        raise ValueError(f"n_jobs must be >= 1 or -1, got {n_jobs}")
    return min(wanted, numba.config.NUMBA_NUM_THREADS)


@contextmanager
def compute_threads(n_jobs: int):
    """Run the kernels inside on ``n_jobs`` threads (:func:`thread_count`).

    With one thread the serial kernels run and numba's threading layer is never started (a
    started OpenMP layer makes forked worker processes abort)."""
    wanted = thread_count(n_jobs)
    outer = _current_threads()
    _threads.n = wanted
    try:
        if wanted > 1:
            before = numba.get_num_threads()
            numba.set_num_threads(wanted)
            try:
                yield
            finally:
                numba.set_num_threads(before)
        else:
            yield
    finally:
        _threads.n = outer


class ThreadedKernel:
    """One kernel source compiled twice, with threads over its ``prange`` and on one thread (a
    worker's task, ``-j 1``); a call runs the one that :func:`compute_threads` asks for.

    numba's cache knows a kernel by its qualified name, signature and bytecode, not by
    ``parallel``: compiled from one function, the two would share one cache entry, so that
    whichever was compiled first served both (a threaded PC level ran on one thread). Each is
    therefore compiled from a copy of ``source`` under a name of its own."""

    def __init__(self, source):
        self.threads = njit(cache=True, parallel=True)(_renamed(source, "threads"))
        self.serial = njit(cache=True)(_renamed(source, "serial"))

    def __call__(self, *args):
        return (self.threads if _current_threads() > 1 else self.serial)(*args)


def _renamed(source, suffix: str):
    """A copy of the function ``source`` whose qualified name ends in ``__suffix``."""
    copy = types.FunctionType(source.__code__, source.__globals__, f"{source.__name__}__{suffix}",
                              source.__defaults__, source.__closure__)
    copy.__qualname__ = f"{source.__qualname__}__{suffix}"
    copy.__module__ = source.__module__
    return copy


class TestSettings:
    """The conventions of a :class:`CITest` as plain values for the kernels."""

    def __init__(self, test):
        self.cols = test._compact_cols()
        self.arities = test.arities
        self.varies = np.asarray(test.varies, dtype=np.bool_)
        self.pearson = test.statistic == "x2"
        self.adf = test.df_adjust == "adf"
        self.min_rows_per_df = test.min_rows_per_df
        self.dependent = test.insufficient == "dependent"
        self.zero_dof_alpha = test.alpha

    def args(self):
        return (*self.bitsets, self.cols, self.arities, self.varies, self.pearson, self.adf, self.min_rows_per_df,
                self.dependent, self.zero_dof_alpha, CHDTRC)

    @cached_property
    def bitsets(self) -> tuple[np.ndarray, np.ndarray]:
        """Row bitsets of every ``(variable, state)`` and their offsets (:func:`scores.counts.onehot_bitsets`)."""
        return onehot_bitsets(self.cols, self.arities)


@njit(cache=True)
def _ranks(key):
    """Rank of every code among the distinct codes (np.unique's inverse) and their number."""
    n = key.shape[0]
    if n == 0:
        return key.copy(), 1
    order = np.argsort(key, kind="mergesort")
    out = np.empty(n, dtype=np.int64)
    rank = 0
    out[order[0]] = 0
    for i in range(1, n):
        if key[order[i]] != key[order[i - 1]]:
            rank += 1
        out[order[i]] = rank
    return out, rank + 1


@njit(cache=True)
def _strata(cols, arities, S):
    """Stratum code of every row for the set ``S`` (as CITest._strata) and the code count."""
    n = cols.shape[1]
    key = np.zeros(n, dtype=np.int64)
    q = 1
    for j in range(S.shape[0]):
        r = arities[S[j]]
        if q * r > _MAX_CODE:
            key, q = _ranks(key)
        col = cols[S[j]]
        for i in range(n):
            key[i] = key[i] * r + col[i]
        q *= r
    return key, q


@njit(cache=True, inline="always")
def _by_bits(cells, n_words, n):
    """Whether a table of ``cells`` is counted from row bitsets (see :data:`BITSET_WORDS_PER_ROW`)."""
    return cells * n_words <= BITSET_WORDS_PER_ROW * n


@njit(cache=True)
def _pair_bits(bits, ox, oy, rx, ry):
    """Row bitsets of the pair's cells ``x * r_y + y`` (the cells of :func:`_pair_codes`)."""
    n_words = bits.shape[1]
    out = np.empty((rx * ry, n_words), dtype=bits.dtype)
    for a in range(rx):
        for b in range(ry):
            for w in range(n_words):
                out[a * ry + b, w] = bits[ox + a, w] & bits[oy + b, w]
    return out


@njit(cache=True)
def _bit_counts(pair, strata):
    """The ``(stratum, x, y)`` table, flat, from the bitsets of the pair's cells and of the strata."""
    cells, n_words = pair.shape
    counts = np.empty(strata.shape[0] * cells, dtype=np.int64)
    for c in range(strata.shape[0]):
        for ab in range(cells):
            total = 0
            for w in range(n_words):
                total += popcount(pair[ab, w] & strata[c, w])
            counts[c * cells + ab] = total
    return counts


@njit(cache=True)
def _strata_size(arities, S, cap):
    """The number of strata of ``S`` (``_strata``'s dense codes), or -1 once it exceeds ``cap``."""
    q = 1
    for j in range(S.shape[0]):
        q *= arities[S[j]]
        if q > cap:
            return -1
    return q if q <= cap else -1


@njit(cache=True)
def _strata_bits(bits, offsets, arities, S, q):
    """Row bitsets of the ``q`` strata of ``S`` in ``_strata``'s order (mixed radix, the last
    variable fastest); all ones for the one stratum of an empty ``S``; the variable's own rows
    (no copy) for one variable."""
    k = S.shape[0]
    if k == 1:
        return bits[offsets[S[0]]:offsets[S[0]] + q]
    out = np.empty((q, bits.shape[1]), dtype=bits.dtype)
    digit = np.zeros(k, dtype=np.int64)
    for code in range(q):
        rest = code
        for j in range(k - 1, -1, -1):
            digit[j] = rest % arities[S[j]]
            rest //= arities[S[j]]
        for w in range(bits.shape[1]):
            word = ~np.uint64(0)
            for j in range(k):
                word &= bits[offsets[S[j]] + digit[j], w]
            out[code, w] = word
    return out


@njit(cache=True)
def _bit_table(bits, offsets, arities, x, y, S, q):
    """The ``(q, x, y)`` table of ``x, y`` over the ``q`` strata of ``S``, from row bitsets, as
    ``_count_table`` counts it on the dense strata."""
    rx, ry = arities[x], arities[y]
    pair = _pair_bits(bits, offsets[x], offsets[y], rx, ry)
    return _bit_counts(pair, _strata_bits(bits, offsets, arities, S, q)).reshape((q, rx, ry))


@njit(cache=True)
def one_test(bits, offsets, cols, arities, varies, x, y, S, pearson, adf, min_rows_per_df, dependent,
             zero_dof_alpha, chdtrc):
    """(p, statistic, dof) of ``x _||_ y | S`` exactly as ``CITest._compute`` (x < y); a table
    small next to the rows is counted from the row bitsets ``bits``."""
    rx, ry = arities[x], arities[y]
    n = cols.shape[1]
    q = _strata_size(arities, S, BITSET_WORDS_PER_ROW * n)  # beyond it the rule fails whatever the pair
    if q > 0 and _by_bits(q * rx * ry, bits.shape[1], n):
        counts = _bit_table(bits, offsets, arities, x, y, S, q)
    elif S.shape[0] == 0:
        counts = _count_table(cols[x], cols[y], np.zeros(n, dtype=np.uint8), 1, rx, ry)
    elif S.shape[0] == 1 and _dense(arities[S[0]] * rx * ry, n):
        counts = _count_table(cols[x], cols[y], cols[S[0]], arities[S[0]], rx, ry)
    else:
        key, q = _strata(cols, arities, S)
        if not _dense(q * rx * ry, n):
            key, q = _ranks(key)
        counts = _count_table(cols[x], cols[y], key, q, rx, ry)
    return _p_value(counts, S, arities, n, varies[x] and varies[y], adf, min_rows_per_df, dependent,
                    zero_dof_alpha, pearson, chdtrc)


def _evaluate(xs, ys, sets, bits, offsets, cols, arities, varies, pearson, adf, min_rows_per_df, dependent,
              zero_dof_alpha, chdtrc):
    m = xs.shape[0]
    p = np.empty(m)
    stat = np.empty(m)
    dof = np.empty(m)
    for i in prange(m):
        p[i], stat[i], dof[i] = one_test(bits, offsets, cols, arities, varies, xs[i], ys[i], sets[i], pearson,
                                         adf, min_rows_per_df, dependent, zero_dof_alpha, chdtrc)
    return p, stat, dof


_evaluate_kernel = ThreadedKernel(_evaluate)


def evaluate(settings: TestSettings, xs, ys, sets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, statistic, dof) arrays of the tests ``xs[i] _||_ ys[i] | sets[i]`` (``xs < ys``;
    ``sets`` an (m, order) integer array of sorted sets), on :func:`compute_threads` threads."""
    xs = np.ascontiguousarray(xs, dtype=np.int64)
    sets = np.asarray(sets, dtype=np.int64)
    sets = np.ascontiguousarray(sets.reshape(len(xs), sets.size // len(xs) if len(xs) else 0))  # an empty batch too
    return _evaluate_kernel(xs, np.ascontiguousarray(ys, dtype=np.int64), sets, *settings.args())


def _evaluate_given(x, ys, S, alpha, stop, block, bits, offsets, cols, arities, varies, pearson, adf,
                    min_rows_per_df, dependent, zero_dof_alpha, chdtrc):
    m, n = ys.shape[0], cols.shape[1]
    p = np.empty(m)
    stat = np.empty(m)
    dof = np.empty(m)
    key, q = _strata(cols, arities, S)  # S's strata as one_test numbers them, coded once
    q_bits = _strata_size(arities, S, BITSET_WORDS_PER_ROW * n)
    least = arities[x] * (arities[ys].min() if m else 1)  # the smallest pair table of the batch
    if q_bits > 0 and not _by_bits(q_bits * least, bits.shape[1], n):
        q_bits = -1  # no test of the batch is counted from bitsets
    strata = _strata_bits(bits, offsets, arities, S, max(q_bits, 0))
    ranked, q_ranked = key, q
    for i in range(m):
        if not _dense(q * arities[x] * arities[ys[i]], n):
            ranked, q_ranked = _ranks(key)
            break
    if not stop:
        block = max(m, 1)
    start = 0
    while start < m:
        end = min(start + block, m)
        for i in prange(start, end):
            u, v = min(x, ys[i]), max(x, ys[i])
            ru, rv = arities[u], arities[v]
            if q_bits > 0 and _by_bits(q_bits * ru * rv, bits.shape[1], n):
                pair = _pair_bits(bits, offsets[u], offsets[v], ru, rv)
                counts = _bit_counts(pair, strata).reshape((q_bits, ru, rv))
            elif _dense(q * ru * rv, n):
                counts = _count_table(cols[u], cols[v], key, q, ru, rv)
            else:
                counts = _count_table(cols[u], cols[v], ranked, q_ranked, ru, rv)
            p[i], stat[i], dof[i] = _p_value(counts, S, arities, n, varies[u] and varies[v], adf, min_rows_per_df,
                                             dependent, zero_dof_alpha, pearson, chdtrc)
        if stop:
            for i in range(start, end):
                if not p[i] > alpha:
                    return p, stat, dof, i + 1
        start = end
    return p, stat, dof, m


_evaluate_given_kernel = ThreadedKernel(_evaluate_given)


def evaluate_given(settings: TestSettings, x: int, ys, S, alpha: float | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, statistic, dof) arrays of the tests ``min(x, y) _||_ max(x, y) | S`` for the ``y`` of
    ``ys`` (one sorted set ``S``, its strata coded once), as :func:`evaluate` gives them.

    With ``alpha``: the tests in order up to the first that is not independent (``not p >
    alpha``), the sequential test of a conjunction, that one last.  They run one per
    :func:`compute_threads` thread at a time, so at most threads - 1 tests past it are computed
    and none of those is returned."""
    ys = np.ascontiguousarray(ys, dtype=np.int64)
    S = np.ascontiguousarray(S, dtype=np.int64)
    stop = alpha is not None
    p, stat, dof, asked = _evaluate_given_kernel(int(x), ys, S, float(alpha) if stop else 0.0, stop,
                                                 _current_threads(), *settings.args())
    return p[:asked], stat[:asked], dof[:asked]


@njit(cache=True)
def _pair_codes(cols, arities, x, y):
    """``x * r_y + y`` of every row: the cell of the pair within a stratum's table."""
    ry = arities[y]
    cx, cy = cols[x], cols[y]
    code = np.empty(cx.shape[0], dtype=np.int32)
    for i in range(cx.shape[0]):
        code[i] = cx[i] * ry + cy[i]
    return code


@njit(cache=True)
def _order1_counts(code, zcol, rz, rx, ry):
    """The ``(z, x, y)`` table of one conditioning variable from the pair's cell codes, flat
    (two loads a row instead of three; four interleaved copies of the small table)."""
    cells = rx * ry
    flat = np.zeros(4 * rz * cells, dtype=np.int32)
    n = code.shape[0]
    n4 = n - n % 4
    block = rz * cells
    for i in range(0, n4, 4):
        flat[zcol[i] * cells + code[i]] += 1
        flat[block + zcol[i + 1] * cells + code[i + 1]] += 1
        flat[2 * block + zcol[i + 2] * cells + code[i + 2]] += 1
        flat[3 * block + zcol[i + 3] * cells + code[i + 3]] += 1
    for i in range(n4, n):
        flat[zcol[i] * cells + code[i]] += 1
    counts = np.empty(block, dtype=np.int64)
    for c in range(block):
        counts[c] = flat[c] + flat[block + c] + flat[2 * block + c] + flat[3 * block + c]
    return counts


@njit(cache=True)
def _contains(sorted_pool, start, stop, value):
    """Binary search of ``value`` in ``sorted_pool[start:stop]``."""
    lo, hi = start, stop
    while lo < hi:
        mid = (lo + hi) // 2
        if sorted_pool[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo < stop and sorted_pool[lo] == value


@njit(cache=True)
def _edge_level(u, v, level, alpha, indptr, indices, max_degree, out_set, bits, offsets, cols, arities,
                varies, pearson, adf, min_rows_per_df, dependent, zero_dof_alpha, chdtrc):
    """PC-stable's tests of the pair ``u < v`` at one level (see :func:`pc_level`).

    Returns (removed, n_tests, best p); the best test's set is written to ``out_set``.
    """
    n_tests = 0
    best = np.nan
    S = np.empty(level, dtype=np.int64)
    pool = np.empty(max_degree, dtype=np.int64)
    rx, ry, n = arities[u], arities[v], cols.shape[1]
    code = np.empty(0, dtype=np.int32)  # the pair's cells, by rows or as bitsets, made on first use
    pair = np.empty((0, bits.shape[1]), dtype=bits.dtype)
    first_side_ran = False
    for side in range(2):
        x, y = (u, v) if side == 0 else (v, u)
        start, stop = indptr[x], indptr[x + 1]
        if stop - start - 1 < level:
            continue
        k = 0
        for j in range(start, stop):
            if indices[j] != y:
                pool[k] = indices[j]
                k += 1
        pos = np.arange(level)  # indices into pool of the current combination
        while True:
            for j in range(level):
                S[j] = pool[pos[j]]
            fresh, p = True, 0.0
            if side == 1 and first_side_ran:  # tested already from u's side if S in adj(u) - v
                fresh = False
                for j in range(level):
                    if not _contains(indices, indptr[u], indptr[u + 1], S[j]):
                        fresh = True
                        break
            if fresh and level == 1 and arities[S[0]] * rx * ry <= _INTERLEAVED_CELLS:
                rz = arities[S[0]]
                if _by_bits(rz * rx * ry, bits.shape[1], n):
                    if pair.shape[0] == 0:
                        pair = _pair_bits(bits, offsets[u], offsets[v], rx, ry)
                    counts = _bit_counts(pair, _strata_bits(bits, offsets, arities, S, rz))
                else:
                    if code.shape[0] == 0:
                        code = _pair_codes(cols, arities, u, v)
                    counts = _order1_counts(code, cols[S[0]], rz, rx, ry)
                p = _p_value(counts.reshape((rz, rx, ry)), S, arities, n, varies[u] and varies[v], adf,
                             min_rows_per_df, dependent, zero_dof_alpha, pearson, chdtrc)[0]
            elif fresh:
                p = one_test(bits, offsets, cols, arities, varies, u, v, S, pearson, adf, min_rows_per_df, dependent,
                             zero_dof_alpha, chdtrc)[0]
            if fresh:
                n_tests += 1
                if not p <= best:
                    best = p
                    out_set[:level] = S
                if p > alpha:
                    return True, n_tests, best
            # next combination of ``level`` positions out of ``k`` (lexicographic)
            j = level - 1
            while j >= 0 and pos[j] == k - level + j:
                j -= 1
            if j < 0:
                break
            pos[j] += 1
            for t in range(j + 1, level):
                pos[t] = pos[t - 1] + 1
        first_side_ran = True
    return False, n_tests, best


def _pc_level(us, vs, level, alpha, indptr, indices, bits, offsets, cols, arities, varies, pearson, adf,
              min_rows_per_df, dependent, zero_dof_alpha, chdtrc):
    m = us.shape[0]
    removed = np.zeros(m, dtype=np.bool_)
    n_tests = np.zeros(m, dtype=np.int64)
    best = np.empty(m)
    best_sets = np.full((m, max(level, 1)), -1, dtype=np.int64)
    max_degree = np.max(indptr[1:] - indptr[:-1])  # (a loop from 0 also compiles _edge_level for a literal 0)
    for e in prange(m):
        removed[e], n_tests[e], best[e] = _edge_level(
            us[e], vs[e], level, alpha, indptr, indices, max_degree, best_sets[e], bits, offsets, cols,
            arities, varies, pearson, adf, min_rows_per_df, dependent, zero_dof_alpha, chdtrc)
    return removed, n_tests, best, best_sets[:, :level]


_pc_level_kernel = ThreadedKernel(_pc_level)


def adjacency_lists(adjacency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, indices)``: the sorted neighbours of each variable (compressed rows), made once
    per level (a pass over an ``n x n`` matrix: a second at 10,000 variables)."""
    A = np.asarray(adjacency, dtype=bool)
    indptr = np.concatenate([[0], np.cumsum(A.sum(1))]).astype(np.int64)
    return indptr, np.nonzero(A)[1].astype(np.int64)  # row-major: each row's neighbours sorted


def pc_level(settings: TestSettings, lists: tuple[np.ndarray, np.ndarray], pairs, level: int, alpha: float):
    """One level of PC-stable on the frozen adjacency ``lists`` (:func:`adjacency_lists`) for the
    given pairs ``(us, vs)``, ``us < vs`` adjacent in it: the tests ``u _||_ v | S``, ``S`` running
    over ``combinations(adj(u) - v, level)`` then the sets of ``combinations(adj(v) - u, level)``
    not already tested, until the first ``p > alpha``.

    Returns ``(removed, n_tests, best_p, best_sets)`` per pair: whether a separating set was
    found, how many distinct tests ran, and the first test with the largest p-value.
    """
    indptr, indices = lists
    us, vs = (np.ascontiguousarray(p, dtype=np.int64) for p in pairs)
    return _pc_level_kernel(us, vs, int(level), float(alpha), indptr, indices, *settings.args())


def pc_level_task(settings: TestSettings, lists: tuple[np.ndarray, np.ndarray], pairs, level: int, alpha: float):
    """:func:`pc_level` as one task of an executor (a worker thread or process): one thread."""
    with compute_threads(1):
        return pc_level(settings, lists, pairs, level, alpha)
