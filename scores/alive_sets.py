"""The layers of the parent-set enumeration (``scores.enumeration``): alive sets, their look-up, kept sets.

A layer holds the *alive* sets of one size (those that may have useful supersets), as rows of
pool positions in lexicographic order, with their values (the columns below). A set of the next
layer is generated only when all its one-smaller subsets are alive (:func:`subset_bounds`). The
kept sets are the kernel's output. The functions marked ``inline="always"`` run in the family loop
and are written without calls or early exits (see the performance note of ``scores.enumeration``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from scores.pruning import entropy_excess, larger, smaller

BEST, BOUND, NLL, NBIG, NSMALL = range(5)
"""Columns of the values of an alive set (:class:`AliveSets`)."""

PAIR_COLUMNS = 3
"""The dense pair tables of :class:`PairLookup` hold the first three columns (``BEST``, ``BOUND``, ``NLL``)."""

INDEX2_MAX = 2048
"""Largest candidate pool with dense ``(m, m)`` tables of the alive parent pairs."""


class AliveSets(NamedTuple):
    """The alive sets of one layer, lexicographically sorted (rows of pool positions, ascending),
    with their values: columns ``BEST`` (best score of the set and its subsets), ``BOUND`` (bound on
    its proper supersets), ``NLL`` (``-LL = N H(X | set)``, for the entropy rule), and ``NBIG`` /
    ``NSMALL``, the sizes of its cells ``(configuration, child state)`` summarised as the bitset path's
    cost model counts them (``scores.family_counting.cell_stats``; -1: not known), so that the next
    layer knows the cost of counting on the bitsets of these cells (as a prefix) without building them."""

    sets: np.ndarray
    vals: np.ndarray
    n: int


class PairLookup(NamedTuple):
    """Dense look-up of the alive sets of size 1 (``index1``: their row, -1 if not alive) and 2
    (``pair_vals[a, b]``: their values, ``NaN`` if not alive; only for pools up to ``INDEX2_MAX``)."""

    index1: np.ndarray
    pair_vals: np.ndarray


class KeptSets(NamedTuple):
    """The kernel's output so far: sets (variable indices padded with -1) and scores."""

    sets: np.ndarray
    scores: np.ndarray
    n: int


@njit(cache=True, nogil=True, inline="always")
def subset_bounds(k, i, y, sets, vals, n_sets, index1, pair_vals, w, pool_ar, c, q_w, key):
    """``(ok, bss, lub, excess)`` of ``W ∪ {y}``, ``W`` the alive set ``i`` of ``sets``: whether every
    one-smaller subset is alive, the best score of its subsets, the smallest bound they give on it,
    and the largest excess of the entropy rule (``-inf`` when ``c`` is NaN: not BIC/AIC).

    Subsets are found in ``index1`` (size 1), ``pair_vals`` (size 2, dense tables, NaN: not alive)
    or by binary search in the lexicographically sorted ``sets``.
    """
    bss, lub = vals[i, BEST], vals[i, BOUND]
    excess = -np.inf if np.isnan(c) else entropy_excess(vals[i, NLL], w[y], pool_ar[y], c, q_w)
    ok = True
    for drop in range(k - 1):
        pos = 0
        for t in range(k - 1):
            if t != drop:
                key[pos] = sets[i, t]
                pos += 1
        key[pos] = y
        if k == 3 and pair_vals.shape[0] == pool_ar.shape[0]:  # dense pair tables
            a0, a1 = key[0], key[1]
            b, u, h_sub = pair_vals[a0, a1, BEST], pair_vals[a0, a1, BOUND], pair_vals[a0, a1, NLL]
            found = not np.isnan(b)
        else:
            j = index1[key[0]] if k == 2 else _search(sets, n_sets, key, k - 1)
            found = j >= 0
            j_found = j if found else 0
            b, u, h_sub = vals[j_found, BEST], vals[j_found, BOUND], vals[j_found, NLL]
        if ok and found:
            bss, lub = larger(bss, b), smaller(lub, u)
            if not np.isnan(c):
                y0 = sets[i, drop]
                excess = larger(excess, entropy_excess(h_sub, w[y0], pool_ar[y0], c, q_w))
        ok = ok and found
    return ok, bss, lub, excess


@njit(cache=True, nogil=True, inline="always")
def _search(rows, n_rows, key, width):
    """Row index of ``key[:width]`` among the first ``n_rows`` lexicographically sorted ``rows``, or -1."""
    lo, hi, found = 0, n_rows, -1
    for _ in range(64):  # binary search, written without early exit (see the performance note)
        if lo < hi:
            mid = (lo + hi) // 2
            order = 0
            for t in range(width):
                if order == 0 and rows[mid, t] != key[t]:
                    order = -1 if rows[mid, t] < key[t] else 1
            found = mid if order == 0 else found
            lo, hi = (mid + 1, hi) if order < 0 else (lo, mid) if order > 0 else (mid, mid)
    return found


@njit(cache=True, nogil=True, inline="always")
def keep(sets, scores, n_kept, req, pool, prev_sets, i, k, y, s):
    """Write the set of the required parents, ``prev_sets[i, :k - 1]`` and ``y`` (pool positions) in
    ascending variable order into row ``n_kept`` (room checked by the caller), with score ``s``."""
    nreq = req.shape[0]
    for size in range(nreq + k):
        if size < nreq:
            v = req[size]
        elif size < nreq + k - 1:
            v = pool[prev_sets[i, size - nreq]]
        else:
            v = pool[y]
        pos = size
        while pos > 0 and sets[n_kept, pos - 1] > v:  # insertion into the sorted row
            sets[n_kept, pos] = sets[n_kept, pos - 1]
            pos -= 1
        sets[n_kept, pos] = v
    scores[n_kept] = s
    return n_kept + 1


@njit(cache=True, nogil=True, inline="always")
def append_alive(sets, vals, n_sets, prev_sets, i, k, y, best, ub, h, n_big, n_small):
    """Write the set ``prev_sets[i, :k - 1] + (y,)`` and its values into row ``n_sets`` (room checked
    by the caller); returns the new count."""
    for t in range(k - 1):
        sets[n_sets, t] = prev_sets[i, t]
    sets[n_sets, k - 1] = y
    vals[n_sets, BEST] = best
    vals[n_sets, BOUND] = ub
    vals[n_sets, NLL] = h
    vals[n_sets, NBIG] = n_big
    vals[n_sets, NSMALL] = n_small
    return n_sets + 1


@njit(cache=True, nogil=True)
def grown_kept(sets, scores, need):
    """The kept sets and scores with room for ``need`` rows at least, twice as many as before
    (new rows padded with -1)."""
    cap = max(2 * sets.shape[0], need)
    grown = np.full((cap, sets.shape[1]), -1, dtype=np.int64)
    grown[: sets.shape[0]] = sets
    grown_scores = np.empty(cap)
    grown_scores[: scores.shape[0]] = scores
    return grown, grown_scores


@njit(cache=True, nogil=True)
def empty_layer(k, cap):
    """Room for ``cap`` alive sets of size ``k``."""
    return AliveSets(sets=np.empty((cap, k), dtype=np.int64), vals=np.empty((cap, 5)), n=0)


@njit(cache=True, nogil=True)
def grown_alive(sets, vals, need):
    """Alive sets and values with room for ``need`` rows at least, twice as many as before."""
    grown = empty_layer(sets.shape[1], max(2 * sets.shape[0], need))
    grown.sets[: sets.shape[0]] = sets
    grown.vals[: vals.shape[0]] = vals
    return grown.sets, grown.vals


@njit(cache=True, nogil=True)
def pair_lookup(m):
    """An empty :class:`PairLookup` for a pool of ``m`` (pair tables only up to ``INDEX2_MAX``)."""
    side = m if m <= INDEX2_MAX else 1
    return PairLookup(index1=np.full(m, -1, dtype=np.int64), pair_vals=np.full((side, side, PAIR_COLUMNS), np.nan))


@njit(cache=True, nogil=True)
def index_layer(k, layer, lookup):
    """Enter the alive sets of layer ``k`` (sizes 1 and 2 only) into ``lookup``."""
    for t in range(layer.n):
        if k == 1:
            lookup.index1[layer.sets[t, 0]] = t
        elif k == 2 and lookup.pair_vals.shape[0] == lookup.index1.shape[0]:
            lookup.pair_vals[layer.sets[t, 0], layer.sets[t, 1]] = layer.vals[t, :PAIR_COLUMNS]
