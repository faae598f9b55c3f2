"""PMMS and MMPC on a :class:`~constraints.citests.CITest`, one compiled call per target.

The algorithm is that of :mod:`constraints.pmms` (Brown, Tsamardinos & Aliferis 2005,
Algorithm 1; its module docstring states the semantics: greedy or exact min-association, ties
towards the smaller index, ``-log p`` with the underflow tail, ``inf`` for untrusted tests and
``keep`` pairs, ``prune``, ``max_order``), with the forward and backward phases of a target in
compiled code, so that asking a test again costs a look-up instead of an interpreter call chain:

* order 0: the tests of all pairs are computed up front on
  :func:`~constraints.citest_batch.compute_threads` threads by the marginal screen
  (:mod:`constraints.screening`; :class:`Order0`, shared by every memo);
* larger sets: a memo of every test asked so far, hashed on ``(u, v, S)`` into typed containers
  (the statistic is :func:`~constraints.citest_batch.one_test`, bit-identical to ``CITest``),
  with a per-target table in front of it for the single-variable sets.

Counts and records are those of :class:`~constraints.restriction.PairLog`: a test counts the
first time the algorithm asks it, and a pair keeps the first test, in asking order, with the
largest p-value; both are kept in arrays here and handed over once the targets of a memo are
done (:meth:`Memo.tests`), to be merged over the ranges of targets and logged
(:func:`constraints.pmms_groups.merge`).  The compiled target releases the GIL, so that ranges
run on threads.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.typed import Dict, List

from constraints.citest_batch import TestSettings, one_test
from constraints.screening import MarginalScreen, block_pairs, row_blocks

# A p-value that chdtrc returns as 0.0 has -log p above ~708 (the smallest normal double).
UNDERFLOW = 700.0


@njit(cache=True)
def log_chi2_sf_tail(stat, dof):
    """log P(chi2_dof > stat) far in the tail, where the p-value underflows.

    Asymptotic expansion of the regularised upper incomplete gamma function Q(a, z) with
    a = dof / 2, z = stat / 2: log Q = (a - 1) log z - z - lgamma(a) + log(sum_k (a-1)_k / z^k),
    (a-1)_k the falling factorial; terms are summed while they shrink.
    """
    a, z = dof / 2.0, stat / 2.0
    total, term = 1.0, 1.0
    for k in range(1, 50):
        nxt = term * (a - k) / z
        if abs(nxt) >= abs(term) or nxt == 0.0:
            break
        term = nxt
        total += term
    return (a - 1.0) * math.log(z) - z - math.lgamma(a) + math.log(max(total, 1e-300))


@njit(cache=True)
def association(p, stat, dof, alpha):
    """Assoc of a test's outcome (module docstring of :mod:`constraints.pmms`): 0 for
    ``p > alpha``, ``-log p``, the tail's ``-log p`` where ``p`` underflowed, else ``inf``."""
    if p > alpha:
        return 0.0
    if p > 0.0:
        return -math.log(p)
    if dof > 0 and math.isfinite(stat):
        minus_log_p = -log_chi2_sf_tail(stat, dof)
        if minus_log_p > UNDERFLOW:
            return minus_log_p
    return math.inf  # oracle dependence, or p = 0 imposed by the minimum-sample rule


@njit(cache=True)
def _associations(p, stat, dof, alpha):
    out = np.empty(p.shape[0])
    for i in range(p.shape[0]):
        out[i] = association(p[i], stat[i], dof[i], alpha)
    return out


@njit(cache=True)
def _hash(u, v, S, k):
    h = (u * 1000003 + v) * 1000003 + k
    for j in range(k):
        h = (h ^ S[j]) * 1099511628211
    return h ^ (h >> 29)


@njit(cache=True, inline="always")
def _find(index, keys, starts, u, v, S, k):
    """Where the test ``(u, v, S[:k])`` is in a hash index with linear probing over flattened
    keys ``u, v, k, S`` (``starts[e]``: entry ``e``'s first key): (its entry or -1, its slot)."""
    h = _hash(u, v, S, k)
    while h in index:
        e = index[h]
        o = starts[e]
        same = keys[o] == u and keys[o + 1] == v and keys[o + 2] == k
        for j in range(k):
            same = same and keys[o + 3 + j] == S[j]
        if same:
            return e, h
        h += 1
    return -1, h


class MemoArrays(NamedTuple):
    """The tests a run over targets has asked (:class:`Memo`), shared by its targets."""

    p0: np.ndarray  # order 0: p-value and Assoc of every pair (:class:`Order0`, read-only) ...
    a0: np.ndarray
    asked0: np.ndarray  # ... and whether asked yet
    val1: np.ndarray  # Assoc(x; t | {s}) of the target ``stamp1[x, s]``
    stamp1: np.ndarray
    index: Dict  # order >= 1: hash -> test (:func:`_find`), the flattened keys ``u, v, k, S``, each test's first key
    keys: List
    starts: List
    pvals: List  # ... p-value and Assoc of each test
    avals: List
    best_p: np.ndarray  # per pair its record (PairLog): the largest p-value, its test (-1: order 0)
    best_e: np.ndarray
    counts: np.ndarray  # distinct tests by order


class TestContext(NamedTuple):
    """What asking a test needs: the pairs never tested, alpha, and the arguments of
    :func:`~constraints.citest_batch.one_test` (:meth:`~constraints.citest_batch.TestSettings.args`)."""

    keep: np.ndarray
    alpha: float
    bits: np.ndarray
    offsets: np.ndarray
    cols: np.ndarray
    arities: np.ndarray
    varies: np.ndarray
    pearson: bool
    adf: bool
    min_rows_per_df: float
    dependent: bool
    zero_dof_alpha: float
    chdtrc: object


# The steps of a target that ask no test: pure functions of the kernel's arrays, inlined into it
# (taking arrays, not the named tuples above; see the note before the kernel).
@njit(cache=True, nogil=True, inline="always")
def _record(best_p, best_e, u, v, p, entry):
    """PairLog's record of pair ``(u, v)``: the first test, in asking order, with the largest p-value."""
    if not p <= best_p[u, v]:  # also true while best_p is NaN
        best_p[u, v] = p
        best_e[u, v] = entry


@njit(cache=True, nogil=True, inline="always")
def _append_key(keys, starts, u, v, S, k):
    """Append the key of the test ``(u, v, S[:k])`` to the flattened ``keys`` (``u, v, k, S``) and its start."""
    starts.append(len(keys))
    keys.append(u)
    keys.append(v)
    keys.append(k)
    for j in range(k):
        keys.append(S[j])


@njit(cache=True, nogil=True, inline="always")
def _with_member(out, members, m, y):
    """out[:m + 1] = the sorted ``members[:m]`` with ``y`` inserted in order (``out`` may be ``members``)."""
    j = m
    while j > 0 and members[j - 1] > y:
        out[j] = members[j - 1]
        j -= 1
    out[j] = y
    for i in range(j):
        out[i] = members[i]


@njit(cache=True, nogil=True, inline="always")
def _remove_value(items, m, y):
    """Remove ``y`` from ``items[:m]``, keeping the order of the others; returns ``m - 1``."""
    i = 0
    while items[i] != y:
        i += 1
    for i in range(i, m - 1):
        items[i] = items[i + 1]
    return m - 1


@njit(cache=True, nogil=True, inline="always")
def _first_min(vals, m):
    """The index of the first minimum of ``vals[:m]`` (``m >= 1``)."""
    best = 0
    for i in range(1, m):
        if vals[i] < vals[best]:
            best = i
    return best


@njit(cache=True, nogil=True, inline="always")
def _sorted_without(items, m, skip, out):
    """out = sorted(items[:m] minus ``skip``); returns its size."""
    size = 0
    for i in range(m):
        if items[i] != skip:
            _with_member(out, out, size, items[i])
            size += 1
    return size


@njit(cache=True, nogil=True, inline="always")
def _next_combination(pos, which, r, m):
    """Advance ``pos[which, :r]`` to the next ``r``-combination of ``range(m)`` in lexicographic
    order (``itertools.combinations``); False after the last one."""
    j = r - 1
    while j >= 0 and pos[which, j] == m - r + j:
        j -= 1
    if j < 0:
        return False
    pos[which, j] += 1
    for i in range(j + 1, r):
        pos[which, i] = pos[which, i - 1] + 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _split_covered(cover, x, m, zs, nz, mark, old, new):
    """Whether the ``m`` members of ``cover[x]`` (``m < 0``: none yet) all lie in Z = zs[:nz]; if so
    old = them and new = Z minus them, else old = {} and new = Z.  Returns (the size of old or -1, that of new);
    ``mark`` is all False before and after."""
    for i in range(nz):
        mark[zs[i]] = True
    within = m >= 0
    for i in range(max(m, 0)):
        within = within and mark[cover[x, i]]
    for i in range(nz):
        mark[zs[i]] = False
    n_old = m if within else 0
    for i in range(n_old):
        old[i] = cover[x, i]
        mark[old[i]] = True
    n_new = 0
    for i in range(nz):
        if not mark[zs[i]]:
            new[n_new] = zs[i]
            n_new += 1
    for i in range(n_old):
        mark[old[i]] = False
    return n_old if within else -1, n_new


# The steps that ask a test are inner functions of the kernel, sharing the memo's arrays: numba
# inlines them at no cost, whereas a top-level step taking the memo and the test's arguments (named
# tuples of some 20 arrays and containers) pays a reference count per member on every call. Split
# that way (each step a top-level function of MemoArrays, TestContext and a tuple of the scratch
# arrays), the targets of andes ran 2.7x slower inlined and 5x slower as calls.
@njit(cache=True, nogil=True)
def _parents_children(t, exact, prune, max_order, memo, ctx):
    """PMMPC(T) or (``exact``) MMPC(T) as ``pmms._parents_children`` with ``pmms.greedy_min_assoc``
    or ``pmms._ExactMinAssoc``: the same tests asked in the same order.  ``memo`` is a
    :class:`MemoArrays`, ``ctx`` a :class:`TestContext`; returns CPC(T) in entry order."""
    p0, a0, asked0, val1, stamp1, index, keys, starts, pvals, avals, best_p, best_e, counts = memo
    (keep, alpha, bits, offsets, cols, arities, varies, pearson, adf, min_rows_per_df, dependent, zero_dof_alpha,
     chdtrc) = ctx
    n = keep.shape[0]
    S, zs, rest, minarg = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    vals, old, new, pos = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64), np.empty((2, n), np.int64)
    # MINASSOC's subsets covered at x's previous call: cover[x, :cover_len[x]] (sorted; -1: none)
    cover, cover_len = np.empty((n if exact else 0, n), np.int64), np.full(n, -1, np.int64)
    cover_best, mark = np.empty(n), np.zeros(n, np.bool_)

    def ask_memo(u, v, k):
        """Assoc(u; v | S[:k]), k >= 1, from the memo or computed, stored, counted and recorded."""
        e, h = _find(index, keys, starts, u, v, S, k)
        if e >= 0:
            return avals[e]
        p, stat, dof = one_test(bits, offsets, cols, arities, varies, u, v, S[:k].copy(), pearson, adf,
                                min_rows_per_df, dependent, zero_dof_alpha, chdtrc)
        a = association(p, stat, dof, alpha)
        index[h] = len(pvals)
        _append_key(keys, starts, u, v, S, k)
        _record(best_p, best_e, u, v, p, len(pvals))
        pvals.append(p)
        avals.append(a)
        counts[k] += 1
        return a

    def ask(x, k):
        """Assoc(x; t | S[:k]), counted and recorded when first asked (order 0 from Order0; a
        single-variable set through the table of this target; a ``keep`` pair never tested)."""
        if keep[x, t]:
            return math.inf
        u, v = (x, t) if x < t else (t, x)
        if k == 0:
            if not asked0[u, v]:
                asked0[u, v] = True
                counts[0] += 1
                _record(best_p, best_e, u, v, p0[u, v], -1)
            return a0[u, v]
        if k > 1:
            return ask_memo(u, v, k)
        if stamp1[x, S[0]] != t:
            stamp1[x, S[0]] = t
            val1[x, S[0]] = ask_memo(u, v, k)
        return val1[x, S[0]]

    def greedy_min_assoc(x, nz):
        """GREEDYMINASSOC(X; T; Z; Assoc(X; T | {}); {}) (Algorithm 1, lines 14-20), Z = zs[:nz]:
        add to minarg (sorted) the member of the rest of Z lowering Assoc the most, while it does."""
        for i in range(nz):
            rest[i] = zs[i]
        nr, nm = nz, 0
        minval = ask(x, 0)
        while minval > 0.0 and nr > 0 and (max_order < 0 or nm < max_order):
            for i in range(nr):
                _with_member(S, minarg, nm, rest[i])
                vals[i] = ask(x, nm + 1)
            best = _first_min(vals, nr)
            if not vals[best] < minval:
                break
            minval = vals[best]
            _with_member(minarg, minarg, nm, rest[best])
            nm += 1
            nr = _remove_value(rest, nr, rest[best])
        return minval

    def subsets_min(x, n_old, n_new, best):
        """Minimum of ``best`` and Assoc over the subsets of old + new with one of new or more, in
        the order of ``_ExactMinAssoc._subsets_min``, stopping at 0."""
        cap = n_old + n_new if max_order < 0 else max_order
        for k in range(1, min(n_new, cap) + 1):
            for i in range(k):
                pos[0, i] = i
            while True:
                for j in range(min(n_old, cap - k) + 1):
                    for i in range(j):
                        pos[1, i] = i
                    while True:
                        if best == 0.0:
                            return best
                        a = b = 0  # S = the picks of new and old, merged
                        while a < k or b < j:
                            if b == j or (a < k and new[pos[0, a]] < old[pos[1, b]]):
                                S[a + b] = new[pos[0, a]]
                                a += 1
                            else:
                                S[a + b] = old[pos[1, b]]
                                b += 1
                        best = min(best, ask(x, k + j))
                        if not _next_combination(pos, 1, j, n_old):
                            break
                if not _next_combination(pos, 0, k, n_new):
                    break
        return best

    def min_assoc(x, nz):
        """GREEDYMINASSOC, or (``exact``) MINASSOC(X; T | Z) from the subsets covered at x's
        previous call when they lie in Z = zs[:nz]."""
        if not exact:
            return greedy_min_assoc(x, nz)
        n_old, n_new = _split_covered(cover, x, cover_len[x], zs, nz, mark, old, new)
        best = cover_best[x] if n_old >= 0 else ask(x, 0)
        best = subsets_min(x, max(n_old, 0), n_new, best)
        for i in range(nz):
            cover[x, i] = zs[i]
        cover_len[x], cover_best[x] = nz, best
        return best

    cpc, candidates, nc, m = np.empty(n, np.int64), np.empty(n, np.int64), 0, 0  # cpc in entry order
    for x in range(n):
        if x != t:
            candidates[m], m = x, m + 1
    while True:  # forward phase: add the candidate of largest min-association while it is > 0
        nz = _sorted_without(cpc, nc, -1, zs)
        best, best_x, kept = 0.0, -1, 0
        for i in range(m):
            x = candidates[i]
            val = min_assoc(x, nz)
            if val > best:
                best, best_x = val, x
            if val > 0.0 or not prune:
                candidates[kept], kept = x, kept + 1
        m = kept
        if best_x < 0:
            break
        cpc[nc], nc = best_x, nc + 1
        m = _remove_value(candidates, m, best_x)
    for x in cpc[:nc].copy():  # backward phase, in entry order
        if min_assoc(x, _sorted_without(cpc, nc, x, zs)) == 0.0:
            nc = _remove_value(cpc, nc, x)
    return cpc[:nc].copy()


@njit(cache=True)
def _best_sets(best_e, starts, keys):
    """The pairs whose record is a test of order >= 1, and those tests' sets (padded with -1)."""
    us, vs = np.nonzero(best_e >= 0)
    width = 0
    for i in range(us.shape[0]):
        width = max(width, keys[starts[best_e[us[i], vs[i]]] + 2])
    sets = np.full((us.shape[0], width), -1, dtype=np.int64)
    for i in range(us.shape[0]):
        o = starts[best_e[us[i], vs[i]]]
        for j in range(keys[o + 2]):
            sets[i, j] = keys[o + 3 + j]
    return us, vs, sets


@njit(cache=True)
def _shared_tests(keys, starts, lo, hi):
    """The flattened keys and starts of the tests on a pair with an end outside ``lo..hi-1``."""
    m = size = 0
    for e in range(len(starts)):
        o = starts[e]
        if not (lo <= keys[o] < hi and lo <= keys[o + 1] < hi):
            m += 1
            size += 3 + keys[o + 2]
    out_keys, out_starts = np.empty(size, dtype=np.int64), np.empty(m, dtype=np.int64)
    m = size = 0
    for e in range(len(starts)):
        o = starts[e]
        if not (lo <= keys[o] < hi and lo <= keys[o + 1] < hi):
            out_starts[m] = size
            m += 1
            for j in range(3 + keys[o + 2]):
                out_keys[size] = keys[o + j]
                size += 1
    return out_keys, out_starts


@njit(cache=True)
def repeats(keys, starts, n_orders):
    """Per order, the tests of flattened ``keys`` / ``starts`` equal to an earlier one."""
    index = Dict.empty(types.int64, types.int64)
    out = np.zeros(n_orders, dtype=np.int64)
    for e in range(starts.shape[0]):
        o = starts[e]
        k = keys[o + 2]
        found, h = _find(index, keys, starts, keys[o], keys[o + 1], keys[o + 3:o + 3 + k], k)
        if found >= 0:
            out[k] += 1
        else:
            index[h] = e
    return out


class Order0:
    """The order-0 tests of every pair outside ``keep``, computed once by the marginal screen
    (:mod:`constraints.screening`, in blocks of rows) on
    :func:`~constraints.citest_batch.compute_threads` threads and shared read-only by the memos."""

    def __init__(self, test, keep: np.ndarray, alpha: float):
        n = len(keep)
        self.settings = TestSettings(test)
        self.keep = np.asarray(keep, dtype=np.bool_)
        self.alpha = float(alpha)
        screen = MarginalScreen(self.settings)
        self.p0, self.a0 = np.zeros((n, n)), np.zeros((n, n))
        for lo, hi in row_blocks(n):
            us, vs = block_pairs(n, lo, hi)
            tested = ~self.keep[us, vs]
            us, vs = us[tested], vs[tested]
            p, stat, dof = (values[tested] for values in screen.rows(lo, hi))
            self.p0[us, vs] = p
            self.a0[us, vs] = self.a0[vs, us] = _associations(p, stat, dof, self.alpha)


class Tests(NamedTuple):
    """What a memo asked, for the merge of several (:mod:`constraints.pmms_groups`): the order-0
    pairs ``u * n + v``; the distinct tests by order; the keys and starts of those another range
    of targets may also ask; per pair the first test with the largest p-value (``us``, ``vs``,
    ``p``, ``sets``)."""

    asked0: np.ndarray
    counts: np.ndarray
    shared: tuple[np.ndarray, np.ndarray]
    records: tuple[np.ndarray, np.ndarray, np.ndarray, list]


class Memo:
    """The tests asked so far by one run over targets (order 0 from :class:`Order0`), their
    counts and the pair records."""

    def __init__(self, order0: Order0):
        n = len(order0.keep)
        self.arrays = MemoArrays(
            order0.p0, order0.a0, np.zeros((n, n), dtype=np.bool_),
            np.empty((n, n)), np.full((n, n), -1, dtype=np.int64),
            Dict.empty(types.int64, types.int64), List.empty_list(types.int64), List.empty_list(types.int64),
            List.empty_list(types.float64), List.empty_list(types.float64),
            np.full((n, n), np.nan), np.full((n, n), -1, dtype=np.int64),
            np.zeros(n + 1, dtype=np.int64),
        )
        self.context = TestContext(order0.keep, order0.alpha, *order0.settings.args())

    def parents_children(self, t: int, exact: bool, prune: bool, max_order: int | None) -> np.ndarray:
        """PMMPC(T) (``exact=False``) or MMPC(T) of target ``t`` (the GIL released)."""
        return _parents_children(t, exact, prune, -1 if max_order is None else int(max_order),
                                 self.arrays, self.context)

    def tests(self, lo: int, hi: int) -> Tests:
        """The :class:`Tests` of a run over the targets ``lo..hi-1``."""
        memo = self.arrays
        us, vs = np.nonzero(~np.isnan(memo.best_p))
        where = np.zeros(memo.best_p.shape, dtype=np.int64)
        where[us, vs] = np.arange(len(us))
        sets = [()] * len(us)
        su, sv, padded = _best_sets(memo.best_e, memo.starts, memo.keys)
        for i, S in zip(where[su, sv].tolist(), padded.tolist()):
            sets[i] = tuple(s for s in S if s >= 0)
        return Tests(np.flatnonzero(memo.asked0), memo.counts.copy(), _shared_tests(memo.keys, memo.starts, lo, hi),
                     (us, vs, memo.best_p[us, vs], sets))
