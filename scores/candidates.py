"""Candidate parent sets with exact pruning: the score-table stage.

For every child ``X`` the parent sets ``W`` (drawn from the allowed parents, at most ``palim``)
are enumerated layer by layer, ``|W| = 0, 1, 2, ...``, in lexicographic order. A set is
*generated* only when all its one-smaller subsets are *alive* (may have useful supersets). Each
generated set carries ``bss`` (best score of all its proper subsets) and ``lub`` (the smallest
upper bound its subsets give on their supersets, hence on it). Rules, in order
(``docs/references.md``, exact pruning):

* R0 subset dominance (de Campos & Ji 2011, Lemma 1; GOBNILP / pygobnilp): ``W`` is kept only if
  its score is *strictly* greater than ``bss``; ties go to the subset. Dominance is not
  hereditary, so a dominated set stays alive and its supersets are still generated.
* inherited bound: skip ``W`` unscored when ``lub <= bss`` (then ``W`` and its supersets are
  dominated).
* R1 BDeu (de Campos & Ji 2011; GOBNILP's form ``BDeu(W') <= -q+(W') log r``, no ESS condition),
  tightened to ``BDeu(W') <= -nz(W') log r`` with ``nz`` the non-zero cells ``n_ijk``: in the
  sequential form of BDeu each row is predicted with probability ``(n_ijk^<t + a/r) / (t + a)``,
  at most ``1/r`` for the first row of each observed cell and at most 1 otherwise. ``nz`` (like
  ``q+ <= nz``) never decreases for supersets; so once counted, ``W`` is dropped with all
  supersets when ``-nz(W) log r <= bss``, and ``-nz(W) log r`` bounds every superset of ``W``.
* R3 penalty bound for BIC/AIC: ``LL <= 0`` gives ``s(W') <= -c (r-1) q(W')``, known before
  counting; ``W`` and all supersets are dropped when it is ``<= bss``, and ``-c (r-1) q(W) r_min``
  bounds the proper supersets of ``W``. With ``W = ∅`` this is the automatic ``O(log N)`` parent
  limit of Corollary 1 of Scanagatta et al. (NIPS 2016).
* Theorem 1 of Scanagatta et al. (NIPS 2016, section 2.1) for BIC/AIC: with
  ``Π = W \\ {y0}``, if ``w(y0) <= c (r-1) q(Π) (r_y0 - 1)`` and ``w(Y) <= c (r-1) q(Π) r_Y`` for
  every candidate ``Y``, then ``W`` and all its supersets score at most ``s(Π)``; checked before
  counting. We use ``w(X, Y) = -max(LL(X), LL(Y)) = N min(H(X), H(Y))``, which is the paper's
  ``w`` without its ``MI(X, Y) >= 0`` term: the same Lemma 2 argument holds since
  ``N I(X; Y | Π) <= N min(H(X), H(Y))``, so the bound is valid and tighter.

* entropy rule for BIC/AIC (de Campos, Scanagatta, Corani & Zaffalon 2018): adding ``Y`` to
  ``Π`` raises ``LL`` by ``N I(X; Y | Π) <= min(N H(X | Π), N min(H(X), H(Y)))`` and the
  penalty by ``c (r-1) q(Π) (r_Y - 1)``; when the penalty wins, ``Π ∪ {Y}`` is dominated by
  ``Π``, and so is every ``Π' ∪ {Y}`` with ``Π' ⊇ Π`` (conditional entropies only shrink, the
  penalty only grows). Checked before counting for every ``Y`` in ``W`` against its alive
  subset ``W \\ {Y}``, whose ``-LL = N H(X | W \\ {Y})`` the layer keeps; a pruned ``W`` is not
  kept alive, so none of its supersets is generated.

Every bound prunes only with a relative margin of ``1e-9``, so the kept sets are exactly the
non-dominated sets of the full enumeration under the computed scores. Parents with one state
never change a score (a tie), so they are dropped up front; a one-state child keeps only the
required set.

Restrictions: ``allowed[p, c]`` (forbidden edges, black lists) removes ``p`` from ``c``'s pool
(R6). ``required[p, c]`` (white lists) adds ``p`` to *every* candidate set of ``c``; enumeration
and pruning then run over the remaining parents, conditioned on the required ones, as pygobnilp
does; ``palim`` counts the required parents too.

Execution: one numba kernel per child (:func:`child_kernel`, ``nogil``) holds the whole
enumeration, so children run in parallel *threads* that share the data and its bitsets (no
per-worker copies or pickling, no start-up cost; memory per thread is up to about 100 MB of
scratch, mostly memo tables of score terms touched only as far as used, plus two layers of
alive sets, ``C(m, palim - 1)`` entries, e.g. 25k for andes at palim 3). Counting picks, per
family, the cheapest path of ``scores.counts``: Möbius inversion of the shared triple counts of
the binary variables (at most ``CUBE_VARS``; one popcount per family of four binary variables)
when the family is binary with at most three parents, else bitsets for small cell spaces and
histograms otherwise. Binary families of three parents (the bulk of a binary network at palim 3)
are scored straight from their 16 cells on full tables of the score terms for ``q = 8``
(``scores.local.score_cells``, bit-identical to the memo path), with no compaction or memo
look-up. Compiled kernels are cached on disk by numba (``cache=True``); numba checks only the
timestamp of the file defining the cached function, so after editing ``scores/counts.py`` or
``scores/local.py`` delete ``scores/__pycache__/*.nb?``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy as np
from numba import njit
from tqdm import tqdm

from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError
from scores.counts import (MARK_LIMIT, as_columns, binary_cells, binary_prefix_cells, count_binary, count_bitset,
                           count_dense, count_grouped, count_touched, encode, group_rows, onehot_bitsets,
                           prefix_cells, triple_counts)
from scores.local import (AIC, BDEU, BIC, family_penalty, memo_penalty, penalty_memo, penalty_weight, score_cells,
                          score_code, score_compact, term_tables)
from scores.table import ScoreTable, offsets

logger = logging.getLogger(__name__)

TOL = 1e-9
"""Relative margin by which a bound must beat the best subset score to prune."""

TABLE_LEN = 1 << 12
"""Longest memo table of score terms (counts up to ``N`` when ``N`` is below it)."""

TABLE_BUDGET = 1 << 22
"""Memo entries per child: ``min(1024, TABLE_BUDGET // length)`` tables (BDeu needs one per ``q``)."""

CELL_WORDS = 1 << 16
"""Scratch budget (uint64 words) for the prefix-cell bitsets of the bitset counting path."""

DENSE_CELLS = 1 << 18
"""Largest histogram of the dense counting paths (scanned up to ``N`` cells, touched-list above)."""

INDEX2_MAX = 2048
"""Largest candidate pool with dense ``(m, m)`` tables of the alive parent pairs."""

CUBE_VARS = 320
"""Most binary variables for the table of their triple counts (``CUBE_VARS^3`` int32 entries)."""

ROW_COST, WORD_COST = 6.0, 1.0
"""Relative costs of one row of the histogram paths and one popcount word (measured)."""

STATS = ("generated", "scored", "kept", "pruned_dominated", "pruned_upper_bound",
         "pruned_penalty_bound", "pruned_theorem1", "pruned_entropy", "pruned_bdeu_bound", "not_expanded")
"""Kernel counters, in order. ``generated = scored + pruned_upper_bound + pruned_penalty_bound +
pruned_theorem1 + pruned_entropy + pruned_bdeu_bound`` and ``scored = kept + pruned_dominated``."""

(_GEN, _SCORED, _KEPT, _DOM, _UB, _PEN, _THM1, _ENT, _BDEU, _STOP) = range(len(STATS))


class CandidateError(HybridBNError, ValueError):
    """Invalid arguments for the score-table stage."""


# ----------------------------------------------------------------------------------- kernel
@njit(cache=True, nogil=True, inline="always")
def _slot(key, slot_keys, cell_tabs, cfg_tabs, clock):
    """Index of the memo tables for ``key`` (cleared to NaN on a miss, round-robin replacement).

    ``clock[1]`` remembers the slot found last, which is nearly always the one asked for next.
    """
    if slot_keys[clock[1]] == key:
        return clock[1]
    for s in range(slot_keys.shape[0]):
        if slot_keys[s] == key:
            clock[1] = s
            return s
    s = clock[0]
    clock[0] = (s + 1) % slot_keys.shape[0]
    clock[1] = s
    slot_keys[s] = key
    cell_tabs[s, :] = np.nan
    cfg_tabs[s, :] = np.nan
    return s


@njit(cache=True, nogil=True)
def _find(rows, n_rows, key, width):
    """Row index of ``key`` among the first ``n_rows`` lexicographically sorted rows, or -1."""
    lo, hi = 0, n_rows
    while lo < hi:
        mid = (lo + hi) // 2
        c = 0
        for t in range(width):
            a, b = rows[mid, t], key[t]
            if a != b:
                c = -1 if a < b else 1
                break
        if c == 0:
            return mid
        if c < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


@njit(cache=True, nogil=True, inline="always")
def _theorem1(members, k, pool_ar, w, w_ratio_max, c, q_w):
    """Theorem 1 of Scanagatta et al. for ``W`` (pool positions ``members[:k]``, ``q(W) = q_w``)."""
    for t in range(k):
        r0 = pool_ar[members[t]]
        cq = c * q_w / r0  # c (r-1) q(Π) with Π = W \\ {y0}
        if w_ratio_max * (1.0 + TOL) <= cq and w[members[t]] * (1.0 + TOL) <= cq * (r0 - 1):
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _entropy_excess(h_sub, w_y, r_y, c, q_w):
    """Penalty increase minus the largest likelihood gain of adding ``Y`` to a subset ``Π``.

    ``h_sub = -LL(Π) = N H(X | Π)``, ``w_y >= N min(H(X), H(Y))`` and ``q_w = q(Π) r_Y``: the
    gain ``N I(X; Y | Π)`` is at most ``min(h_sub, w_y)`` and the penalty grows by
    ``c q(Π) (r_Y - 1)``; a positive result dominates ``Π ∪ {Y}`` and its supersets.
    """
    return c * (q_w / r_y) * (r_y - 1) - min(h_sub, w_y)


@njit(cache=True, nogil=True)
def child_kernel(cols, arities, bits, offsets, marg, cube, cube_index, x, pool, req, kmax, code, ess, w, prune):
    """Enumerate and prune the parent sets of child ``x``; see the module docstring.

    ``bits``/``offsets`` are the one-hot row bitsets of ``scores.counts.onehot_bitsets`` and
    ``marg`` the state counts in the same layout; ``cube`` the triple counts of
    ``scores.counts.triple_counts`` over the variables with ``cube_index >= 0``. ``pool`` are the
    candidate parents (sorted), ``req`` the required ones, ``kmax`` the most pool parents per set, ``w`` Theorem 1's
    ``w(X, Y)`` per pool entry. Returns the kept sets
    (rows of variable indices padded with -1), their scores and the ``STATS`` counters.
    """
    n = cols.shape[1]
    r = arities[x]
    xcol = cols[x]
    m = pool.shape[0]
    nreq = req.shape[0]
    width = nreq + kmax
    stats = np.zeros(len(STATS), dtype=np.int64)
    penalised = code == BIC or code == AIC
    c = penalty_weight(code, n) * (r - 1)
    log_r = math.log(r)
    pool_ar = np.empty(m, dtype=np.int64)
    r_max = 1
    r_min = 2
    for t in range(m):
        pool_ar[t] = arities[pool[t]]
        r_max = max(r_max, pool_ar[t])
        r_min = pool_ar[t] if t == 0 else min(r_min, pool_ar[t])
    w_ratio_max = 0.0
    for t in range(m):
        w_ratio_max = max(w_ratio_max, w[t] / pool_ar[t])
    q_req = 1.0
    for t in range(nreq):
        q_req *= arities[req[t]]

    # scratch
    mark = np.full(MARK_LIMIT, -1, dtype=np.int32)
    codes = np.empty(n, dtype=np.int64)
    base = np.empty(n, dtype=np.int64)
    dense_cap = max(n, DENSE_CELLS)
    hist = np.zeros(dense_cap, dtype=np.int32)
    cfg_hist = np.zeros(dense_cap, dtype=np.int64)
    touched_rows = np.empty(n, dtype=np.int64)
    cells = np.empty(n + 1, dtype=np.int64)
    configs = np.empty(n + 1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    starts = np.empty(n + 1, dtype=np.int64)
    gscratch = np.zeros(r_max * (r + 1), dtype=np.int64)
    touched = np.empty(r_max * (r + 1), dtype=np.int64)
    zero_col = np.zeros(n, dtype=cols.dtype)
    tab_len = min(n + 1, TABLE_LEN)
    n_slots = max(4, min(1024, TABLE_BUDGET // tab_len))
    slot_keys = np.full(n_slots, -1.0)
    cell_tabs = np.empty((n_slots, tab_len))
    cfg_tabs = np.empty((n_slots, tab_len))
    clock = np.zeros(2, dtype=np.int64)
    prefix_vars = np.empty(width, dtype=np.int64)
    index1 = np.full(m, -1, dtype=np.int64)
    use_index2 = m <= INDEX2_MAX
    best2 = np.full((m, m) if use_index2 else (1, 1), np.nan)  # alive pairs: best, bound, -LL
    ub2 = np.full((m, m) if use_index2 else (1, 1), np.nan)
    h2 = np.full((m, m) if use_index2 else (1, 1), np.nan)
    n_words = bits.shape[1]
    cell_cap = CELL_WORDS // n_words
    levels = np.empty((2, max(cell_cap, 1), n_words), dtype=np.uint64)
    cell_bits = levels[1]
    cell_size = np.empty(max(cell_cap, 1), dtype=np.int64)
    small_start = np.empty(max(cell_cap, 1) + 1, dtype=np.int64)
    small_rows = np.empty(n, dtype=np.int64)
    small_max = max(n_words // 4, 1)
    cnt = np.empty(max(cell_cap, 1) * r_max, dtype=np.int64)
    common = np.empty(m, dtype=np.int64)
    for t in range(m):
        o = offsets[pool[t]]
        common[t] = np.argmax(marg[o: o + pool_ar[t]])
    key = np.empty(max(kmax, 1), dtype=np.int64)
    prefix_bin = np.empty(3, dtype=np.int64)
    lut = np.empty((8, 2), dtype=np.int64)
    ones = np.empty(n_words, dtype=np.uint64)
    h = np.empty(8, dtype=np.int64)
    binary_prefix = False
    # binary families of three parents (the cube path's bulk): full term tables of q = 8, r = 2
    quad = r == 2 and cube_index[x] >= 0 and nreq + kmax >= 3
    quad_cell, quad_cfg = term_tables(code, ess, 8.0, 2, n if quad else 0)
    quad_penalty = family_penalty(code, 8.0, 2, n)
    penalties = penalty_memo()

    # output
    out_cap = 64
    out_sets = np.full((out_cap, width), -1, dtype=np.int64)
    out_scores = np.empty(out_cap)
    n_out = 0

    # layer 0: the required parents alone
    q0 = encode(cols, req, arities, codes, mark)
    for i in range(n):
        base[i] = codes[i] * r + xcol[i]
    s_key = q_req if code == BDEU else 1.0
    sl = _slot(s_key, slot_keys, cell_tabs, cfg_tabs, clock)
    if q0 * r <= dense_cap:
        nc, nq = count_dense(base, q0 * r, zero_col, 1, r, hist, cells, configs)
    else:
        group_rows(codes, q0, order, starts)
        nc, nq = count_grouped(order, starts, q0, zero_col, xcol, r, gscratch, touched, cells, configs)
    s0 = score_compact(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, code, ess, q_req, r,
                       memo_penalty(penalties, code, q_req, r, n))
    stats[_GEN] += 1
    stats[_SCORED] += 1
    stats[_KEPT] += 1
    out_sets[0, :nreq] = req
    out_scores[0] = s0
    n_out = 1
    if code == BDEU:
        ub0 = -nc * log_r
    elif penalised:
        ub0 = -c * q_req * r_min
    else:
        ub0 = np.inf

    prev_sets = np.zeros((1, 1), dtype=np.int64)  # alive sets of the last layer (pool positions)
    prev_best = np.array([s0])  # best score of the set and its subsets
    prev_ub = np.array([ub0])  # upper bound on the set's proper supersets
    prev_h = np.array([-(s0 + c * q_req)])  # -LL of the set: N H(X | set), for the entropy rule
    n_prev = 1
    for k in range(1, kmax + 1):
        store = k < kmax
        cap = 1024
        new_sets = np.empty((cap, k), dtype=np.int64)
        new_best = np.empty(cap)
        new_ub = np.empty(cap)
        new_h = np.empty(cap)
        n_new = 0
        for i in range(n_prev):
            last = prev_sets[i, k - 2] if k > 1 else -1
            prefix_ready = False
            bits_ready = False
            rows_ready = False
            grouped_ready = False
            n_cells = dominant = n_big = n_small = nv = 0
            q_s_full = q_req
            for t in range(k - 1):
                q_s_full *= pool_ar[prev_sets[i, t]]
            q_s = 0
            for y in range(last + 1, m):
                # subsets W \ {s} for s in S must be alive in the previous layer
                q_w = q_s_full * pool_ar[y]
                bss = prev_best[i]
                lub = prev_ub[i]
                # entropy rule: the largest excess of the penalty increase over the gain bound
                if penalised:
                    excess = _entropy_excess(prev_h[i], w[y], pool_ar[y], c, q_w)
                else:
                    excess = -np.inf
                ok = True
                for drop in range(k - 1):
                    pos = 0
                    for t in range(k - 1):
                        if t != drop:
                            key[pos] = prev_sets[i, t]
                            pos += 1
                    key[pos] = y
                    if k == 3 and use_index2:  # dense pair tables: sequential in y
                        b = best2[key[0], key[1]]
                        if np.isnan(b):
                            ok = False
                            break
                        bss = max(bss, b)
                        lub = min(lub, ub2[key[0], key[1]])
                        if penalised:
                            y0 = prev_sets[i, drop]
                            excess = max(excess, _entropy_excess(h2[key[0], key[1]], w[y0], pool_ar[y0], c, q_w))
                        continue
                    j = index1[key[0]] if k == 2 else _find(prev_sets, n_prev, key, k - 1)
                    if j < 0:
                        ok = False
                        break
                    bss = max(bss, prev_best[j])
                    lub = min(lub, prev_ub[j])
                    if penalised:
                        y0 = prev_sets[i, drop]
                        excess = max(excess, _entropy_excess(prev_h[j], w[y0], pool_ar[y0], c, q_w))
                if not ok:
                    continue
                stats[_GEN] += 1
                margin = TOL * (1.0 + abs(bss))
                if prune:
                    if lub < bss - margin:
                        stats[_UB] += 1
                        continue
                    if penalised:
                        if -c * q_w < bss - margin:
                            stats[_PEN] += 1
                            continue
                        key[: k - 1] = prev_sets[i, : k - 1]
                        key[k - 1] = y
                        if _theorem1(key, k, pool_ar, w, w_ratio_max, c, q_w):
                            stats[_THM1] += 1
                            continue
                        if excess > margin:
                            stats[_ENT] += 1
                            continue
                if not prefix_ready:
                    nv = 0
                    for t in range(nreq):
                        prefix_vars[nv] = req[t]
                        nv += 1
                    for t in range(k - 1):
                        prefix_vars[nv] = pool[prev_sets[i, t]]
                        nv += 1
                    # bitset prefix only if it can beat the row paths (a big cell has > small_max rows)
                    max_big = min(q_s_full * r - 1, n // (small_max + 1))
                    bits_ready = q_s_full * r <= cell_cap and WORD_COST * max_big * n_words <= ROW_COST * n
                    cells_ready = False
                    # prefix_bin holds 3 cube indices; cell_size and cnt must hold the 2^(nv+2) cells
                    binary_prefix = nv <= 2 and (4 << nv) <= cell_cap and cube_index[x] >= 0
                    if binary_prefix:
                        for t in range(nv):
                            prefix_bin[t] = cube_index[prefix_vars[t]]
                            binary_prefix = binary_prefix and prefix_bin[t] >= 0
                        prefix_bin[nv] = cube_index[x]
                    if binary_prefix:
                        binary_prefix_cells(cube, bits, offsets, prefix_vars[:nv], x, prefix_bin, n, lut, cell_size,
                                            ones)
                    rows_ready = False
                    grouped_ready = False
                    prefix_ready = True
                r_y = pool_ar[y]
                fast = quad and binary_prefix and nv == 2 and cube_index[pool[y]] >= 0
                s = 0.0
                if fast:  # counted and scored without compaction or memo look-ups
                    o = offsets[pool[y]] + 1
                    binary_cells(cube, lut, 3, cube_index[pool[y]], ones, cell_size, bits, o, marg[o], h, cnt)
                    s, nc = score_cells(cnt, 8, 2, 2, quad_cell, quad_cfg, quad_penalty)
                elif binary_prefix and cube_index[pool[y]] >= 0:
                    o = offsets[pool[y]] + 1
                    nc, nq = count_binary(cube, lut, nv + 1, cube_index[pool[y]], ones, cell_size, bits, o, marg[o],
                                          h, cnt, cells, configs)
                else:
                    if bits_ready and not cells_ready:
                        n_cells, dominant = prefix_cells(bits, offsets, arities, prefix_vars[:nv], x, levels,
                                                         cell_size, small_start, small_rows, small_max)
                        n_big = 0
                        for t in range(n_cells):
                            if t != dominant and cell_size[t] > small_max:
                                n_big += 1
                        n_small = small_start[n_cells]
                        cells_ready = True
                    bits_cost = WORD_COST * (n_big * n_words * (r_y - 1) + n_cells * r_y) + ROW_COST * n_small
                    if bits_ready and bits_cost <= ROW_COST * n:
                        nc, nq = count_bitset(cell_bits, cell_size, n_cells, dominant, small_start, small_rows,
                                              small_max, r, bits, offsets, marg, cols, pool[y], r_y, common[y],
                                              cnt, cells, configs)
                    else:
                        if not rows_ready:
                            q_s = encode(cols, prefix_vars[:nv], arities, codes, mark)
                            for t in range(n):
                                base[t] = codes[t] * r + xcol[t]
                            rows_ready = True
                        if q_s * r * r_y <= n:
                            nc, nq = count_dense(base, q_s * r, cols[pool[y]], r_y, r, hist, cells, configs)
                        elif q_s * r * r_y <= dense_cap:
                            nc, nq = count_touched(base, q_s * r, cols[pool[y]], r, hist, cfg_hist, touched_rows,
                                                   cells, configs)
                        else:
                            if not grouped_ready:
                                group_rows(codes, q_s, order, starts)
                                grouped_ready = True
                            nc, nq = count_grouped(order, starts, q_s, cols[pool[y]], xcol, r, gscratch, touched,
                                                   cells, configs)
                if prune and code == BDEU and -nc * log_r < bss - margin:
                    stats[_BDEU] += 1
                    continue
                if not fast:
                    s_key = q_w if code == BDEU else 1.0
                    sl = _slot(s_key, slot_keys, cell_tabs, cfg_tabs, clock)
                    s = score_compact(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, code, ess, q_w, r,
                                      memo_penalty(penalties, code, q_w, r, n))
                stats[_SCORED] += 1
                if s > bss or not prune:
                    if n_out == out_cap:
                        out_cap *= 2
                        grown = np.full((out_cap, width), -1, dtype=np.int64)
                        grown[:n_out] = out_sets[:n_out]
                        out_sets = grown
                        grown_s = np.empty(out_cap)
                        grown_s[:n_out] = out_scores[:n_out]
                        out_scores = grown_s
                    for t in range(nreq):
                        out_sets[n_out, t] = req[t]
                    for t in range(k - 1):
                        out_sets[n_out, nreq + t] = pool[prev_sets[i, t]]
                    out_sets[n_out, nreq + k - 1] = pool[y]
                    out_sets[n_out, : nreq + k] = np.sort(out_sets[n_out, : nreq + k])
                    out_scores[n_out] = s
                    n_out += 1
                    stats[_KEPT] += 1
                else:
                    stats[_DOM] += 1
                if not store:
                    continue
                best = max(s, bss)
                ub = lub
                if code == BDEU:
                    ub = min(ub, -nc * log_r)
                elif penalised:
                    ub = min(ub, -c * q_w * r_min)
                if prune and ub < best - TOL * (1.0 + abs(best)):
                    stats[_STOP] += 1
                    continue
                if n_new == cap:
                    cap *= 2
                    grown_sets = np.empty((cap, k), dtype=np.int64)
                    grown_sets[:n_new] = new_sets[:n_new]
                    new_sets = grown_sets
                    grown_b = np.empty(cap)
                    grown_b[:n_new] = new_best[:n_new]
                    new_best = grown_b
                    grown_u = np.empty(cap)
                    grown_u[:n_new] = new_ub[:n_new]
                    new_ub = grown_u
                    grown_h = np.empty(cap)
                    grown_h[:n_new] = new_h[:n_new]
                    new_h = grown_h
                new_sets[n_new, : k - 1] = prev_sets[i, : k - 1]
                new_sets[n_new, k - 1] = y
                new_best[n_new] = best
                new_ub[n_new] = ub
                new_h[n_new] = -(s + c * q_w)
                n_new += 1
        if not store or n_new == 0:
            break
        prev_sets, prev_best, prev_ub, prev_h, n_prev = new_sets, new_best, new_ub, new_h, n_new
        for t in range(n_prev):  # dense lookup of the alive sets of size 1 and 2
            if k == 1:
                index1[prev_sets[t, 0]] = t
            elif k == 2 and use_index2:
                best2[prev_sets[t, 0], prev_sets[t, 1]] = prev_best[t]
                ub2[prev_sets[t, 0], prev_sets[t, 1]] = prev_ub[t]
                h2[prev_sets[t, 0], prev_sets[t, 1]] = prev_h[t]
    return out_sets[:n_out], out_scores[:n_out], stats


# ------------------------------------------------------------------------------- driver
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
    if palim is not None and (isinstance(palim, bool) or not isinstance(palim, (int, np.integer)) or palim < 0):
        raise CandidateError(f"palim must be a non-negative integer or None, got {palim!r}")
    palim = n_vars - 1 if palim is None else min(int(palim), n_vars - 1)
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
    kept: list = [None] * n_vars  # per child: its kept sets (padded with -1) and their scores
    totals = dict.fromkeys(("total", "pruned_constant", "not_generated", *STATS), 0)

    unscored: list[int] = []

    def one(v: int):
        cut = passed(deadline) and palim > n_req[v] and bool((allowed[:, v] & ~required[:, v]).any())
        pool = required[:, v] if cut else allowed[:, v]  # past the deadline: the required set only
        return v, cut, _score_child(cols, arities, (bits, offsets, marg, cube, cube_index), v, pool, required[:, v],
                                    palim, code, float(ess), marginal_ll, prune)

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


def _score_child(cols, arities, bitsets, v, allowed_col, required_col, palim, code, ess, marginal_ll, prune):
    """``((sets, scores), counters)`` of child ``v`` (one kernel call; sets padded with -1)."""
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
    sets, scores, stats = child_kernel(cols, arities, *bitsets, v, useful, req, kmax, code, ess, w, prune)
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
