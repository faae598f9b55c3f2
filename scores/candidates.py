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
alive sets, ``C(m, palim - 1)`` entries, e.g. 25k for andes at palim 3). The kernel takes three
named tuples (:class:`CountingData`, :class:`ChildTask`, :class:`ScoreRule`) and runs one layer at
a time (:func:`_expand_layer`); the per-family steps of a layer are small functions inlined into
its loop, written so that numba adds no reference counting there (see the note above
:func:`_expand_layer`). Counting picks, per family, the cheapest path of ``scores.counts``:
Möbius inversion of the shared triple counts of the binary variables (at most ``CUBE_VARS``; one
popcount per family of four binary variables) when the family is binary with at most three
parents, else bitsets of the prefix cells when their cost model (their construction included,
and known before it from the prefix's own counts in the previous layer) beats the row
histograms. The choice depends only on the prefix and the new parent, so a family's terms are
summed in the same order whatever was pruned. Binary families of three parents (the bulk of a
binary network at palim 3) are scored straight from their 16 cells on full tables of the score
terms for ``q = 8`` (``scores.local.score_cells``, bit-identical to the memo path), with no
compaction or memo look-up. Compiled kernels are cached on disk by numba (``cache=True``); numba
checks only the timestamp of the file defining the cached function, so after editing
``scores/counts.py`` or ``scores/local.py`` delete ``scores/__pycache__/*.nb?``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import NamedTuple

import numpy as np
from numba import njit
from tqdm import tqdm

from hybridbn.checks import check_parent_limit
from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError
from scores.counts import (MARK_LIMIT, as_columns, binary_cells, binary_prefix_cells, count_binary, count_bitset,
                           count_dense, count_grouped, count_touched, encode, group_rows, onehot_bitsets,
                           prefix_cells, triple_counts)
from scores.local import (AIC, BDEU, BIC, QNML, family_penalty, memo_penalty, memo_score, penalty_memo, penalty_weight,
                          score_cells, score_code, score_compact, term_tables)
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

ROW_COST, WORD_COST, PREP_SHARE = 6.0, 1.0, 0.25
"""Relative costs of one row of the histogram paths and one popcount word (measured), and the share
of building a prefix's cell bitsets (about two words per cell and row word) charged to each family."""

STATS = ("generated", "scored", "kept", "pruned_dominated", "pruned_upper_bound",
         "pruned_penalty_bound", "pruned_theorem1", "pruned_entropy", "pruned_bdeu_bound", "not_expanded")
"""Kernel counters, in order. ``generated = scored + pruned_upper_bound + pruned_penalty_bound +
pruned_theorem1 + pruned_entropy + pruned_bdeu_bound`` and ``scored = kept + pruned_dominated``."""

(_GEN, _SCORED, _KEPT, _DOM, _UB, _PEN, _THM1, _ENT, _BDEU, _STOP) = range(len(STATS))

_QUAD, _CUBE, _BITSET, _DENSE, _TOUCHED, _GROUPED, _NEED_CELLS, _NEED_ROWS = range(8)
"""Counting paths of a family, see :func:`_count_path`."""

_BEST, _BOUND, _NLL, _NBIG, _NSMALL = range(5)
"""Columns of the values of an alive set (:class:`AliveSets`)."""


class CandidateError(HybridBNError, ValueError):
    """Invalid arguments for the score-table stage."""


# ----------------------------------------------------------------------------------- kernel
class CountingData(NamedTuple):
    """The data as every child's kernel reads it, shared and read-only (``scores.counts``)."""

    cols: np.ndarray  # (n_vars, n_rows) state codes of ``as_columns``
    arities: np.ndarray
    bits: np.ndarray  # one-hot row bitsets of ``onehot_bitsets`` (row ``offsets[v] + state``)
    offsets: np.ndarray
    marg: np.ndarray  # state counts in the layout of ``bits``
    cube: np.ndarray  # ``triple_counts`` of the variables with ``cube_index >= 0``
    cube_index: np.ndarray


class ChildTask(NamedTuple):
    """One child's enumeration: child ``x``, its candidate parents ``pool`` (sorted), its required
    parents ``req``, the most pool parents per set ``kmax`` and Theorem 1's ``w(X, Y)`` per pool entry."""

    x: int
    pool: np.ndarray
    req: np.ndarray
    kmax: int
    w: np.ndarray


class ScoreRule(NamedTuple):
    """The score's kernel code (``scores.local``), BDeu's ``ess`` and whether to prune."""

    code: int
    ess: float
    prune: bool


class ChildConstants(NamedTuple):
    """What the bounds need of the child and its pool (built once per child)."""

    r: int  # child arity
    log_r: float
    c: float  # penalty per parent configuration, ``penalty_weight * (r - 1)`` (0 unless BIC/AIC)
    penalised: bool  # BIC or AIC: the penalty bound, Theorem 1 and the entropy rule apply
    pool_ar: np.ndarray  # arity of each pool entry
    r_max: int
    r_min: int
    w_ratio_max: float  # largest ``w(X, Y) / r_Y`` over the pool (Theorem 1)
    q_req: float  # configurations of the required parents
    common: np.ndarray  # most frequent state of each pool entry (bitset counting)
    quad: bool  # binary child in the cube with room for three parents: full term tables of q = 8


class CountScratch(NamedTuple):
    """Scratch of the counting paths of ``scores.counts`` (one per child, reused by every family)."""

    mark: np.ndarray
    codes: np.ndarray  # dense configuration code of the prefix, per row
    base: np.ndarray  # ``codes * r + child``, per row
    hist: np.ndarray
    cfg_hist: np.ndarray
    touched_rows: np.ndarray
    touched_cfg: np.ndarray
    cells: np.ndarray  # compact counts of the family being scored
    configs: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    gscratch: np.ndarray
    touched: np.ndarray
    zero_col: np.ndarray
    levels: np.ndarray  # prefix-cell bitsets (``levels[1]``)
    cell_size: np.ndarray
    small_start: np.ndarray
    small_rows: np.ndarray
    cnt: np.ndarray
    prefix_vars: np.ndarray
    prefix_bin: np.ndarray
    lut: np.ndarray
    ones: np.ndarray
    h: np.ndarray
    key: np.ndarray  # a subset of the set being generated (pool positions)
    dense_cap: int
    cell_cap: int
    small_max: int


class ScoreMemo(NamedTuple):
    """Memo tables of score terms (``scores.local.score_compact``), one per ``q``, round robin."""

    slot_keys: np.ndarray
    cell_tabs: np.ndarray
    cfg_tabs: np.ndarray
    clock: np.ndarray  # next slot to replace, last slot found
    penalties: object  # ``penalty_memo``
    quad_cell: np.ndarray  # full term tables of binary families with three binary parents
    quad_cfg: np.ndarray
    quad_penalty: float


class AliveSets(NamedTuple):
    """The alive sets of one layer, lexicographically sorted (rows of pool positions, ascending),
    with their values: columns ``_BEST`` (best score of the set and its subsets), ``_BOUND`` (bound on
    its proper supersets), ``_NLL`` (``-LL = N H(X | set)``, for the entropy rule), and ``_NBIG`` /
    ``_NSMALL``, the sizes of its cells ``(configuration, child state)`` summarised as the bitset path's
    cost model counts them (:func:`_cell_stats`; -1: not known), so that the next layer knows the cost
    of counting on the bitsets of these cells (as a prefix) without building them."""

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


class Prefix(NamedTuple):
    """Counting state of a prefix (the required parents plus an alive set ``W``), shared by the
    families ``W ∪ {y}``; each part is built on first use."""

    ready: bool  # ``prefix_vars``, the flags below and the binary prefix cells are set
    nv: int  # variables of the prefix, ``scratch.prefix_vars[:nv]``
    q_full: float  # product of their arities
    binary: bool  # cube path: at most two binary variables and a binary child
    bits_ok: bool  # few enough prefix cells for the bitset path (``cell_cap``)
    cells: bool  # prefix-cell bitsets built (``prefix_cells``)
    n_cells: int  # prefix cells (built) and the largest of them
    dominant: int
    n_big: int  # cells of more than ``small_max`` rows but the largest, and the rows of the others:
    n_small: int  # the bitset path's cost (from the previous layer's counts; -1: not known yet)
    rows: bool  # row codes built (``encode``)
    q_s: int  # observed configurations of the prefix
    grouped: bool  # rows grouped by configuration (``group_rows``)


@njit(cache=True, nogil=True)
def child_kernel(data, task, rule):
    """Enumerate and prune the parent sets of child ``task.x``, layer by layer; see the module docstring.

    ``data`` is a :class:`CountingData`, ``task`` a :class:`ChildTask`, ``rule`` a :class:`ScoreRule`.
    Returns the kept sets (rows of variable indices padded with -1), their scores and the ``STATS``
    counters.
    """
    const = _child_constants(data, task, rule)
    scratch = _counting_scratch(data, task, const)
    memo = _score_memo(data, rule, const)
    stats = np.zeros(len(STATS), dtype=np.int64)
    out, layer = _score_required(data, task, rule, const, scratch, memo, stats)
    lookup = _pair_lookup(task.pool.shape[0])
    for k in range(1, task.kmax + 1):
        layer, out = _expand_layer(k, layer, lookup, data, task, rule, const, scratch, memo, out, stats)
        if k == task.kmax or layer.n == 0:
            break
        _index_layer(k, layer, lookup)
    return out.sets[: out.n], out.scores[: out.n], stats


# Performance note. The family loop of :func:`_expand_layer` runs once per candidate set (400
# million times on andes). Numba counts the references to every array bound to a parameter of a
# function it inlines, and LLVM removes the counting only when the inlined body has one exit for
# each array, no function call (builtin ``min`` / ``max`` included) and no exception path. So the
# loop unpacks the tuples once per layer, keeps its own buffers in local arrays (grown per prefix,
# never in the family loop), passes its per-family steps (those after :func:`_expand_layer`) local
# arrays rather than tuples, and makes the calls itself: building a prefix's state, filling the
# memo. Against the counting these rules avoid, the loop ran 3x slower.
@njit(cache=True, nogil=True, error_model="numpy")
def _expand_layer(k, prev, lookup, data, task, rule, const, scratch, memo, out, stats):
    """Layer ``k``: each set ``W ∪ {y}`` of an alive set ``W`` of layer ``k - 1`` and a later pool
    entry ``y`` whose one-smaller subsets are all alive is bounded, counted, scored and kept or not.

    Returns the alive sets of layer ``k`` (none for the last layer) and the kept sets.
    """
    cols, arities, bits, offsets, marg, cube, cube_index = data
    x, pool, req, kmax, w = task
    r, log_r, c, penalised, pool_ar, r_max, r_min, w_ratio_max, q_req, common, quad = const
    (mark, codes, base, hist, cfg_hist, touched_rows, touched_cfg, cells, configs, order, starts, gscratch, touched,
     zero_col, levels, cell_size, small_start, small_rows, cnt, prefix_vars, prefix_bin, lut, ones, h, key, dense_cap,
     cell_cap, small_max) = scratch
    slot_keys, cell_tabs, cfg_tabs, clock, penalties, quad_cell, quad_cfg, quad_penalty = memo
    prev_sets, prev_vals, n_prev = prev
    index1, pair_vals = lookup
    out_sets, out_scores, n_out = out
    store, m, n, n_words, cell_bits, xcol = k < kmax, pool.shape[0], cols.shape[1], bits.shape[1], levels[1], cols[x]
    new_sets, new_vals, n_new = _empty_layer(k, 1024 if store else 1)
    c_entropy = c if penalised else np.nan  # no conditional expression among call arguments: it copies them
    for i in range(n_prev):
        prefix = _unprepared(k, i, prev_sets, pool_ar, q_req)
        first = prev_sets[i, k - 2] + 1 if k > 1 else 0
        if n_out + m > out_sets.shape[0]:  # room for every family of this prefix
            out_sets, out_scores = _grown_kept(out_sets, out_scores, n_out + m)
        if store and n_new + m > new_sets.shape[0]:
            new_sets, new_vals = _grown_alive(new_sets, new_vals, n_new + m)
        for y in range(first, m):
            p, r_y, q_w = pool[y], pool_ar[y], prefix.q_full * pool_ar[y]
            ok, bss, lub, excess = _subset_bounds(k, i, y, prev_sets, prev_vals, n_prev, index1, pair_vals, w,
                                                  pool_ar, c_entropy, q_w, key)
            if not ok:
                continue
            stats[_GEN] += 1
            cut = _cut_before_counting(k, i, y, prev_sets, w, pool_ar, c, penalised, w_ratio_max, q_w, bss, lub,
                                       excess)
            if rule.prune and cut >= 0:
                stats[cut] += 1
                continue
            if not prefix.ready:
                prefix = _prefix_state(k, i, prev_sets, prev_vals, req, pool, cube_index, x, prefix_vars, prefix_bin,
                                       prefix.q_full, r, cell_cap)
                if prefix.binary:
                    binary_prefix_cells(cube, bits, offsets, prefix_vars[: prefix.nv], x, prefix_bin, n, lut,
                                        cell_size, ones)
            path = _count_path(prefix, cube_index[p] >= 0, quad, r_y, r, n, n_words)
            if path >= _NEED_CELLS or path == _GROUPED and not prefix.grouped:  # at most thrice per prefix
                prefix, path = _built(prefix, path, r_y, data, task, const, scratch)
            o = offsets[p] + 1
            if path == _QUAD:  # binary families of three binary parents: full term tables, no compaction
                binary_cells(cube, lut, 3, cube_index[p], ones, cell_size, bits, o, marg[o], h, cnt)
                s, nc = score_cells(cnt, 8, 2, 2, quad_cell, quad_cfg, quad_penalty)
            elif path == _CUBE:
                nc, nq = count_binary(cube, lut, prefix.nv + 1, cube_index[p], ones, cell_size, bits, o, marg[o], h,
                                      cnt, cells, configs)
            elif path == _BITSET:
                nc, nq = count_bitset(cell_bits, cell_size, prefix.n_cells, prefix.dominant, small_start, small_rows,
                                      small_max, r, bits, offsets, marg, cols, p, r_y, common[y], cnt, cells, configs)
            elif path == _DENSE:
                nc, nq = count_dense(base, prefix.q_s * r, cols[p], r_y, r, hist, cells, configs)
            elif path == _TOUCHED:
                nc, nq = count_touched(base, codes, prefix.q_s, cols[p], r, hist, cfg_hist, touched_rows, touched_cfg,
                                       cells, configs)
            else:
                nc, nq = count_grouped(order, starts, prefix.q_s, cols[p], xcol, r, gscratch, touched, cells, configs)
            if rule.prune and rule.code == BDEU and -nc * log_r < bss - TOL * (1.0 + abs(bss)):
                stats[_BDEU] += 1
                continue
            if path != _QUAD:  # from the memo of q_w's score terms, filled on a miss
                penalty = c * q_w if rule.code != QNML else _memo_penalty(penalties, q_w, r, n)
                sl, new_slot = _slot(q_w if rule.code == BDEU else 1.0, slot_keys, clock)
                if new_slot:
                    _clear_memo(cell_tabs, cfg_tabs, sl)
                s = memo_score(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, r, penalty)
                if np.isnan(s):
                    s = score_compact(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, rule.code, rule.ess, q_w, r,
                                      penalty)
            stats[_SCORED] += 1
            kept = s > bss or not rule.prune
            if kept:
                n_out = _keep(out_sets, out_scores, n_out, req, pool, prev_sets, i, k, y, s)
            stats[_KEPT if kept else _DOM] += 1
            best, ub = _larger(s, bss), _superset_bound(lub, nc, q_w, rule.code, log_r, c, penalised, r_min)
            if store and rule.prune and ub < best - TOL * (1.0 + abs(best)):
                stats[_STOP] += 1
            elif store:
                nc_compact = nc if path != _QUAD else -1  # the quad path leaves no compact counts
                n_big, n_small = _cell_stats(cells, nc_compact, small_max)
                n_new = _append_alive(new_sets, new_vals, n_new, prev_sets, i, k, y, best, ub, -(s + c * q_w), n_big,
                                      n_small)
    return AliveSets(new_sets, new_vals, n_new), KeptSets(out_sets, out_scores, n_out)


@njit(cache=True, nogil=True, inline="always")
def _subset_bounds(k, i, y, sets, vals, n_sets, index1, pair_vals, w, pool_ar, c, q_w, key):
    """``(ok, bss, lub, excess)`` of ``W ∪ {y}``, ``W`` the alive set ``i`` of ``sets``: whether every
    one-smaller subset is alive, the best score of its subsets, the smallest bound they give on it,
    and the largest excess of the entropy rule (``-inf`` when ``c`` is NaN: not BIC/AIC).

    Subsets are found in ``index1`` (size 1), ``pair_vals`` (size 2, dense tables, NaN: not alive)
    or by binary search in the lexicographically sorted ``sets``.
    """
    bss, lub = vals[i, _BEST], vals[i, _BOUND]
    excess = -np.inf if np.isnan(c) else _entropy_excess(vals[i, _NLL], w[y], pool_ar[y], c, q_w)
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
            b, u, h_sub = pair_vals[a0, a1, _BEST], pair_vals[a0, a1, _BOUND], pair_vals[a0, a1, _NLL]
            found = not np.isnan(b)
        else:
            j = index1[key[0]] if k == 2 else _search(sets, n_sets, key, k - 1)
            found = j >= 0
            j_found = j if found else 0
            b, u, h_sub = vals[j_found, _BEST], vals[j_found, _BOUND], vals[j_found, _NLL]
        if ok and found:
            bss, lub = _larger(bss, b), _smaller(lub, u)
            if not np.isnan(c):
                y0 = sets[i, drop]
                excess = _larger(excess, _entropy_excess(h_sub, w[y0], pool_ar[y0], c, q_w))
        ok = ok and found
    return ok, bss, lub, excess


@njit(cache=True, nogil=True, inline="always")
def _cut_before_counting(k, i, y, sets, w, pool_ar, c, penalised, w_ratio_max, q_w, bss, lub, excess):
    """The ``STATS`` index of the first bound that prunes ``W ∪ {y}`` before counting, or -1:
    the inherited bound, then for BIC/AIC the penalty bound R3, Theorem 1 (for some ``y0`` in
    ``W ∪ {y}``, with ``Π = W ∪ {y} \\ {y0}``) and the entropy rule."""
    theorem1 = False
    for t in range(k if penalised else 0):
        y0 = sets[i, t] if t < k - 1 else y
        cq = c * q_w / pool_ar[y0]  # c (r-1) q(Π)
        theorem1 = theorem1 or (w_ratio_max * (1.0 + TOL) <= cq and w[y0] * (1.0 + TOL) <= cq * (pool_ar[y0] - 1))
    margin = TOL * (1.0 + abs(bss))
    cut = -1
    if lub < bss - margin:
        cut = _UB
    elif penalised and -c * q_w < bss - margin:
        cut = _PEN
    elif theorem1:
        cut = _THM1
    elif penalised and excess > margin:
        cut = _ENT
    return cut


@njit(cache=True, nogil=True, inline="always")
def _count_path(prefix, y_in_cube, quad, r_y, r, n, n_words):
    """How to count the family of the prefix plus a pool entry of ``r_y`` states: ``_QUAD`` /
    ``_CUBE`` (binary families from triple counts), ``_BITSET`` (prefix cells, when the cost model
    prefers them, their construction included) or a row histogram (``_DENSE``, ``_TOUCHED``,
    ``_GROUPED``); ``_NEED_CELLS`` / ``_NEED_ROWS`` while the prefix state it needs is not built.

    The choice depends on the prefix and ``r_y`` only (never on which families came before), so a
    family is counted, and its terms summed, in the same order whatever the pruning.
    """
    if prefix.binary and y_in_cube:
        return _QUAD if quad and prefix.nv == 2 else _CUBE
    if prefix.bits_ok and prefix.n_big < 0 and not prefix.cells:
        return _NEED_CELLS  # cell sizes not known: build the cells to learn them
    n_cells = prefix.q_full * r
    bits_cost = (WORD_COST * (prefix.n_big * n_words * (r_y - 1) + n_cells * r_y + PREP_SHARE * n_cells * n_words)
                 + ROW_COST * prefix.n_small)
    if prefix.bits_ok and bits_cost <= ROW_COST * n:
        return _BITSET if prefix.cells else _NEED_CELLS
    if not prefix.rows:
        return _NEED_ROWS
    span = prefix.q_s * r * r_y
    if span <= n:
        return _DENSE
    return _TOUCHED if span <= DENSE_CELLS else _GROUPED


@njit(cache=True, nogil=True, inline="always")
def _superset_bound(lub, nc, q_w, code, log_r, c, penalised, r_min):
    """The bound on the proper supersets of ``W ∪ {y}``: ``lub`` tightened by R1 (BDeu, ``nc``
    non-zero cells) or R3 (BIC/AIC)."""
    if code == BDEU:
        return _smaller(lub, -nc * log_r)
    if penalised:
        return _smaller(lub, -c * q_w * r_min)
    return lub


@njit(cache=True, nogil=True, inline="always")
def _keep(sets, scores, n_kept, req, pool, prev_sets, i, k, y, s):
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
def _append_alive(sets, vals, n_sets, prev_sets, i, k, y, best, ub, h, n_big, n_small):
    """Write the set ``prev_sets[i, :k - 1] + (y,)`` and its values into row ``n_sets`` (room checked
    by the caller); returns the new count."""
    for t in range(k - 1):
        sets[n_sets, t] = prev_sets[i, t]
    sets[n_sets, k - 1] = y
    vals[n_sets, _BEST] = best
    vals[n_sets, _BOUND] = ub
    vals[n_sets, _NLL] = h
    vals[n_sets, _NBIG] = n_big
    vals[n_sets, _NSMALL] = n_small
    return n_sets + 1


@njit(cache=True, nogil=True, inline="always")
def _cell_stats(cells, nc, small_max):
    """``(n_big, n_small)`` of the compact cell counts ``cells[:nc]`` (``nc < 0``: not known, -1 each):
    the cells with more than ``small_max`` rows but the largest, and the rows of the others."""
    n_big, n_small, largest = -1 if nc < 0 else 0, -1 if nc < 0 else 0, 0
    for t in range(nc):
        size = cells[t]
        n_big += size > small_max
        n_small += size if size <= small_max else 0
        largest = size if size > largest else largest
    return n_big - (largest > small_max), n_small


@njit(cache=True, nogil=True)
def _grown_kept(sets, scores, need):
    """The kept sets and scores with room for ``need`` rows at least, twice as many as before
    (new rows padded with -1)."""
    cap = max(2 * sets.shape[0], need)
    grown = np.full((cap, sets.shape[1]), -1, dtype=np.int64)
    grown[: sets.shape[0]] = sets
    grown_scores = np.empty(cap)
    grown_scores[: scores.shape[0]] = scores
    return grown, grown_scores


@njit(cache=True, nogil=True)
def _empty_layer(k, cap):
    """Room for ``cap`` alive sets of size ``k``."""
    return AliveSets(np.empty((cap, k), dtype=np.int64), np.empty((cap, 5)), 0)


@njit(cache=True, nogil=True)
def _grown_alive(sets, vals, need):
    """Alive sets and values with room for ``need`` rows at least, twice as many as before."""
    grown = _empty_layer(sets.shape[1], max(2 * sets.shape[0], need))
    grown.sets[: sets.shape[0]] = sets
    grown.vals[: vals.shape[0]] = vals
    return grown.sets, grown.vals


@njit(cache=True, nogil=True)
def _memo_penalty(penalties, q, r, n):
    """qNML's penalty of a family (``memo_penalty``: ``O(N)`` to compute, so memoised)."""
    return memo_penalty(penalties, QNML, q, r, n)


@njit(cache=True, nogil=True, inline="always")
def _unprepared(k, i, prev_sets, pool_ar, q_req):
    """The :class:`Prefix` of the alive set ``i`` before its state is built: only ``q_full``."""
    q_full = q_req
    for t in range(k - 1):
        q_full *= pool_ar[prev_sets[i, t]]
    return Prefix(False, 0, q_full, False, False, False, 0, 0, 0, 0, False, 0, False)


@njit(cache=True, nogil=True, inline="always")
def _prefix_state(k, i, prev_sets, prev_vals, req, pool, cube_index, x, prefix_vars, prefix_bin, q_full, r, cell_cap):
    """The :class:`Prefix` of the required parents and the alive set ``i``: writes its variables into
    ``prefix_vars`` (and, for the cube path, their cube indices then the child's into ``prefix_bin``),
    says which counting paths it allows and takes its cell statistics from ``prev_vals``."""
    nv = 0
    for t in range(req.shape[0] + k - 1):
        prefix_vars[t] = req[t] if t < req.shape[0] else pool[prev_sets[i, t - req.shape[0]]]
        nv += 1
    # prefix_bin holds 3 cube indices; cell_size and cnt must hold the 2^(nv+2) cells
    binary = nv <= 2 and (4 << nv) <= cell_cap and cube_index[x] >= 0
    for t in range(nv + 1 if binary else 0):
        prefix_bin[t] = cube_index[prefix_vars[t] if t < nv else x]
        binary = binary and prefix_bin[t] >= 0
    return Prefix(True, nv, q_full, binary, q_full * r <= cell_cap, False, 0, 0, int(prev_vals[i, _NBIG]),
                  int(prev_vals[i, _NSMALL]), False, 0, False)


@njit(cache=True, nogil=True)
def _built(prefix, path, r_y, data, task, const, scratch):
    """``(prefix, path)`` once the prefix state that ``path`` asks for is built (the prefix cells,
    the row codes, the rows grouped by configuration, as needed) and the path decided."""
    n, n_words = data.cols.shape[1], data.bits.shape[1]
    while path >= _NEED_CELLS or path == _GROUPED and not prefix.grouped:
        if path == _NEED_CELLS:
            prefix = _with_prefix_cells(prefix, data.bits, data.offsets, data.arities, scratch.prefix_vars, task.x,
                                        scratch.levels, scratch.cell_size, scratch.small_start, scratch.small_rows,
                                        scratch.small_max)
        elif path == _NEED_ROWS:
            prefix = _with_rows(prefix, data.cols, data.arities, scratch.prefix_vars, data.cols[task.x], const.r,
                                scratch.codes, scratch.base, scratch.mark)
        else:
            prefix = _with_groups(prefix, scratch.codes, scratch.order, scratch.starts)
        path = _count_path(prefix, False, const.quad, r_y, const.r, n, n_words)  # not a cube path here
    return prefix, path


@njit(cache=True, nogil=True)
def _with_prefix_cells(prefix, bits, offsets, arities, prefix_vars, x, levels, cell_size, small_start, small_rows,
                       small_max):
    """``prefix`` with its cell bitsets built (``prefix_cells``) and their sizes summarised."""
    n_cells, dominant = prefix_cells(bits, offsets, arities, prefix_vars[: prefix.nv], x, levels, cell_size,
                                     small_start, small_rows, small_max)
    n_big = 0
    for t in range(n_cells):
        if t != dominant and cell_size[t] > small_max:
            n_big += 1
    return Prefix(prefix.ready, prefix.nv, prefix.q_full, prefix.binary, prefix.bits_ok, True, n_cells, dominant,
                  n_big, small_start[n_cells], prefix.rows, prefix.q_s, prefix.grouped)


@njit(cache=True, nogil=True)
def _with_rows(prefix, cols, arities, prefix_vars, xcol, r, codes, base, mark):
    """``prefix`` with the dense configuration code of every row (``codes``) and ``base = code * r + child``."""
    q_s = encode(cols, prefix_vars[: prefix.nv], arities, codes, mark)
    for t in range(xcol.shape[0]):
        base[t] = codes[t] * r + xcol[t]
    return Prefix(prefix.ready, prefix.nv, prefix.q_full, prefix.binary, prefix.bits_ok, prefix.cells,
                  prefix.n_cells, prefix.dominant, prefix.n_big, prefix.n_small, True, q_s, prefix.grouped)


@njit(cache=True, nogil=True)
def _with_groups(prefix, codes, order, starts):
    """``prefix`` with its rows grouped by configuration (``group_rows``)."""
    group_rows(codes, prefix.q_s, order, starts)
    return Prefix(prefix.ready, prefix.nv, prefix.q_full, prefix.binary, prefix.bits_ok, prefix.cells,
                  prefix.n_cells, prefix.dominant, prefix.n_big, prefix.n_small, prefix.rows, prefix.q_s, True)


@njit(cache=True, nogil=True)
def _score_required(data, task, rule, const, scratch, memo, stats):
    """Layer 0, the required parents alone: the first kept set and the only alive set."""
    n = data.cols.shape[1]
    r = const.r
    xcol = data.cols[task.x]
    q0 = encode(data.cols, task.req, data.arities, scratch.codes, scratch.mark)
    for i in range(n):
        scratch.base[i] = scratch.codes[i] * r + xcol[i]
    if q0 * r <= scratch.dense_cap:
        nc, nq = count_dense(scratch.base, q0 * r, scratch.zero_col, 1, r, scratch.hist, scratch.cells,
                             scratch.configs)
    else:
        group_rows(scratch.codes, q0, scratch.order, scratch.starts)
        nc, nq = count_grouped(scratch.order, scratch.starts, q0, scratch.zero_col, xcol, r, scratch.gscratch,
                               scratch.touched, scratch.cells, scratch.configs)
    penalty = const.c * const.q_req if rule.code != QNML else _memo_penalty(memo.penalties, const.q_req, r, n)
    sl, new_slot = _slot(const.q_req if rule.code == BDEU else 1.0, memo.slot_keys, memo.clock)
    if new_slot:
        _clear_memo(memo.cell_tabs, memo.cfg_tabs, sl)
    s0 = score_compact(scratch.cells, nc, scratch.configs, nq, memo.cell_tabs, memo.cfg_tabs, sl, rule.code, rule.ess,
                       const.q_req, r, penalty)
    stats[_GEN] += 1
    stats[_SCORED] += 1
    stats[_KEPT] += 1
    nreq = task.req.shape[0]
    out = KeptSets(np.full((64, nreq + task.kmax), -1, dtype=np.int64), np.empty(64), 1)
    out.sets[0, :nreq] = task.req
    out.scores[0] = s0
    if rule.code == BDEU:
        ub0 = -nc * const.log_r
    elif const.penalised:
        ub0 = -const.c * const.q_req * const.r_min
    else:
        ub0 = np.inf
    alive = _empty_layer(1, 1)
    alive.sets[0, 0] = 0
    alive.vals[0, _BEST], alive.vals[0, _BOUND], alive.vals[0, _NLL] = s0, ub0, -(s0 + const.c * const.q_req)
    alive.vals[0, _NBIG], alive.vals[0, _NSMALL] = _cell_stats(scratch.cells, nc, scratch.small_max)
    alive = AliveSets(alive.sets, alive.vals, 1)
    return out, alive


@njit(cache=True, nogil=True)
def _child_constants(data, task, rule):
    """The :class:`ChildConstants` of ``task``."""
    n = data.cols.shape[1]
    r = data.arities[task.x]
    m = task.pool.shape[0]
    pool_ar = np.empty(m, dtype=np.int64)
    common = np.empty(m, dtype=np.int64)
    r_max = 1
    r_min = 2
    w_ratio_max = 0.0
    for t in range(m):
        pool_ar[t] = data.arities[task.pool[t]]
        r_max = max(r_max, pool_ar[t])
        r_min = pool_ar[t] if t == 0 else min(r_min, pool_ar[t])
        w_ratio_max = max(w_ratio_max, task.w[t] / pool_ar[t])
        o = data.offsets[task.pool[t]]
        common[t] = np.argmax(data.marg[o: o + pool_ar[t]])
    q_req = 1.0
    for t in range(task.req.shape[0]):
        q_req *= data.arities[task.req[t]]
    quad = r == 2 and data.cube_index[task.x] >= 0 and task.req.shape[0] + task.kmax >= 3
    return ChildConstants(r, math.log(r), penalty_weight(rule.code, n) * (r - 1), rule.code == BIC or rule.code == AIC,
                          pool_ar, r_max, r_min, w_ratio_max, q_req, common, quad)


@njit(cache=True, nogil=True)
def _counting_scratch(data, task, const):
    """The :class:`CountScratch` of one child."""
    n = data.cols.shape[1]
    r, r_max = const.r, const.r_max
    n_words = data.bits.shape[1]
    dense_cap = max(n, DENSE_CELLS)
    cell_cap = CELL_WORDS // n_words
    room = max(cell_cap, 1)
    return CountScratch(
        mark=np.full(MARK_LIMIT, -1, dtype=np.int32), codes=np.empty(n, dtype=np.int64),
        base=np.empty(n, dtype=np.int64), hist=np.zeros(dense_cap, dtype=np.int32),
        cfg_hist=np.zeros(dense_cap, dtype=np.int64), touched_rows=np.empty(n, dtype=np.int64),
        touched_cfg=np.empty(n, dtype=np.int64),
        cells=np.empty(n + 1, dtype=np.int64), configs=np.empty(n + 1, dtype=np.int64),
        order=np.empty(n, dtype=np.int64), starts=np.empty(n + 1, dtype=np.int64),
        gscratch=np.zeros(r_max * (r + 1), dtype=np.int64), touched=np.empty(r_max * (r + 1), dtype=np.int64),
        zero_col=np.zeros(n, dtype=data.cols.dtype), levels=np.empty((2, room, n_words), dtype=np.uint64),
        cell_size=np.empty(room, dtype=np.int64), small_start=np.empty(room + 1, dtype=np.int64),
        small_rows=np.empty(n, dtype=np.int64), cnt=np.empty(room * r_max, dtype=np.int64),
        prefix_vars=np.empty(task.req.shape[0] + task.kmax, dtype=np.int64), prefix_bin=np.empty(3, dtype=np.int64),
        lut=np.empty((8, 2), dtype=np.int64), ones=np.empty(n_words, dtype=np.uint64), h=np.empty(8, dtype=np.int64),
        key=np.empty(max(task.kmax, 1), dtype=np.int64), dense_cap=dense_cap, cell_cap=cell_cap,
        small_max=max(n_words // 4, 1))


@njit(cache=True, nogil=True)
def _score_memo(data, rule, const):
    """The :class:`ScoreMemo` of one child: memo tables sized to ``TABLE_LEN`` / ``TABLE_BUDGET``."""
    n = data.cols.shape[1]
    tab_len = min(n + 1, TABLE_LEN)
    n_slots = max(4, min(1024, TABLE_BUDGET // tab_len))
    quad_cell, quad_cfg = term_tables(rule.code, rule.ess, 8.0, 2, n if const.quad else 0)
    return ScoreMemo(np.full(n_slots, -1.0), np.empty((n_slots, tab_len)), np.empty((n_slots, tab_len)),
                     np.zeros(2, dtype=np.int64), penalty_memo(), quad_cell, quad_cfg,
                     family_penalty(rule.code, 8.0, 2, n))


@njit(cache=True, nogil=True)
def _pair_lookup(m):
    """An empty :class:`PairLookup` for a pool of ``m`` (pair tables only up to ``INDEX2_MAX``)."""
    side = m if m <= INDEX2_MAX else 1
    return PairLookup(np.full(m, -1, dtype=np.int64), np.full((side, side, 3), np.nan))


@njit(cache=True, nogil=True)
def _index_layer(k, layer, lookup):
    """Enter the alive sets of layer ``k`` (sizes 1 and 2 only) into ``lookup``."""
    for t in range(layer.n):
        if k == 1:
            lookup.index1[layer.sets[t, 0]] = t
        elif k == 2 and lookup.pair_vals.shape[0] == lookup.index1.shape[0]:
            lookup.pair_vals[layer.sets[t, 0], layer.sets[t, 1]] = layer.vals[t, :3]


@njit(cache=True, nogil=True, inline="always")
def _slot(key, slot_keys, clock):
    """``(slot, new)``: the memo tables of ``key``, or a slot taken for it (round robin, ``new``: to be
    cleared with :func:`_clear_memo`). ``clock[0]`` is the next slot to take, ``clock[1]`` the slot
    found last, which is nearly always the one asked for next."""
    n_slots = slot_keys.shape[0]
    hit = slot_keys[clock[1]] == key
    t = 0
    while not hit and t < n_slots and slot_keys[t] != key:
        t += 1
    new = not hit and t == n_slots
    s = clock[1] if hit else clock[0] if new else t
    clock[0] = (clock[0] + 1) % n_slots if new else clock[0]
    slot_keys[s] = key
    clock[1] = s
    return s, new


@njit(cache=True, nogil=True)
def _clear_memo(cell_tabs, cfg_tabs, s):
    """Mark every term of the memo tables ``s`` unknown (NaN)."""
    cell_tabs[s] = np.nan
    cfg_tabs[s] = np.nan


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
def _larger(a, b):
    """``max(a, b)`` (Python's choice on ties); the builtin is a function call in numba (see the note)."""
    return b if b > a else a


@njit(cache=True, nogil=True, inline="always")
def _smaller(a, b):
    """``min(a, b)`` (Python's choice on ties), inlined."""
    return b if b < a else a


@njit(cache=True, nogil=True, inline="always")
def _entropy_excess(h_sub, w_y, r_y, c, q_w):
    """Penalty increase minus the largest likelihood gain of adding ``Y`` to a subset ``Π``.

    ``h_sub = -LL(Π) = N H(X | Π)``, ``w_y >= N min(H(X), H(Y))`` and ``q_w = q(Π) r_Y``: the
    gain ``N I(X; Y | Π)`` is at most ``min(h_sub, w_y)`` and the penalty grows by
    ``c q(Π) (r_Y - 1)``; a positive result dominates ``Π ∪ {Y}`` and its supersets.
    """
    return c * (q_w / r_y) * (r_y - 1) - _smaller(h_sub, w_y)


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
    sets, scores, stats = child_kernel(CountingData(cols, arities, *bitsets), ChildTask(v, useful, req, kmax, w),
                                       ScoreRule(code, ess, prune))
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
