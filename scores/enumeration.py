"""The enumeration kernel of one child: its candidate parent sets, layer by layer, with exact pruning.

For a child ``X`` the parent sets ``W`` (drawn from the allowed parents, at most ``palim``) are
enumerated layer by layer, ``|W| = 0, 1, 2, ...``, in lexicographic order. A set is *generated*
only when all its one-smaller subsets are *alive* (may have useful supersets;
``scores.alive_sets``); each is bounded before counting, counted (``scores.family_counting``),
scored from the memo of score terms (``scores.score_memo``), bounded again and kept or not, by
the rules of ``scores.pruning``. ``required`` parents are in every set: the enumeration runs over
the remaining ones, conditioned on them, as pygobnilp does.

One numba kernel per child (:func:`child_kernel`, ``nogil``) holds the whole enumeration, so
children run in parallel *threads* that share the data and its bitsets (memory per thread is up
to about 100 MB of scratch, mostly memo tables of score terms touched only as far as used, plus
two layers of alive sets, ``C(m, palim - 1)`` entries, e.g. 25k for andes at palim 3). The kernel
takes three named tuples (:class:`CountingData`, :class:`ChildTask`, :class:`ScoreRule`) and runs
one layer at a time (:func:`expand_layer`). The state tuples are only ever read by field name and
built by keyword, so the order of their fields labels nothing. Compiled kernels are cached on
disk by numba (``cache=True``); numba checks only the timestamp of the file defining the cached
function, not of the modules it inlines or calls, so after editing another module of the kernel
delete ``scores/__pycache__/*.nb?`` (the pipeline's warm-up, ``pipeline.core.kernels``, does so
when any source changes).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from scores.alive_sets import (BEST, BOUND, NBIG, NLL, NSMALL, AliveSets, KeptSets, append_alive, empty_layer,
                               grown_alive, grown_kept, index_layer, keep, pair_lookup, subset_bounds)
from scores.counts import (binary_cells, binary_prefix_cells, count_binary, count_bitset, count_dense, count_grouped,
                           count_touched, encode, group_rows)
from scores.family_counting import (BITSET, CUBE, DENSE, GROUPED, NEED_CELLS, QUAD, TOUCHED, built, cell_stats,
                                    count_path, counting_scratch, prefix_state, unprepared)
from scores.local import BDEU, QNML, memo_score, score_cells, score_compact
from scores.pruning import (DOMINATED, GENERATED, KEPT, NOT_EXPANDED, SCORED, STATS, BDEU_BOUND, bdeu_cut,
                            child_constants, cut_before_counting, larger, not_expanded, superset_bound)
from scores.score_memo import clear_memo, qnml_penalty, score_memo, slot


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
    parents ``req``, the most pool parents per set ``kmax``, Theorem 1's ``w(X, Y)`` per pool entry
    and the ``control`` array another thread writes while the kernel runs: ``control[STOP]``
    nonzero asks it to stop, ``control[MAX_BYTES]`` (positive) caps the bytes its buffers of kept
    and alive sets may grow to."""

    x: int
    pool: np.ndarray
    req: np.ndarray
    kmax: int
    w: np.ndarray
    control: np.ndarray


STOP, MAX_BYTES = 0, 1
"""Positions in :attr:`ChildTask.control`."""
COMPLETE, STOPPED, MEMORY_CUT = 0, 1, 2
"""How a child's enumeration ended (the kernel's last value): all layers, stopped by
``control[STOP]``, or stopped before a growth past ``control[MAX_BYTES]``. The sets kept before
a stop are scored exactly, but the child may lack better ones."""


def new_control(max_bytes: int = 0) -> np.ndarray:
    """A :attr:`ChildTask.control` array: not stopped, buffers capped at ``max_bytes`` (0: no cap)."""
    control = np.zeros(2, dtype=np.int64)
    control[MAX_BYTES] = max_bytes
    return control


class ScoreRule(NamedTuple):
    """The score's kernel code (``scores.local``), BDeu's ``ess`` and whether to prune."""

    code: int
    ess: float
    prune: bool


@njit(cache=True, nogil=True)
def child_kernel(data, task, rule):
    """Enumerate and prune the parent sets of child ``task.x``, layer by layer; see the module docstring.

    ``data`` is a :class:`CountingData`, ``task`` a :class:`ChildTask`, ``rule`` a :class:`ScoreRule`.
    Returns the kept sets (rows of variable indices padded with -1), their scores, the ``STATS``
    counters and how it ended (``COMPLETE``, ``STOPPED`` or ``MEMORY_CUT``): ``task.control`` is
    read before each layer and each alive set of a layer is expanded.
    """
    const = child_constants(data, task, rule)
    scratch = counting_scratch(data, task, const)
    memo = score_memo(data, rule, const)
    stats = np.zeros(len(STATS), dtype=np.int64)
    out, layer = _score_required(data, task, rule, const, scratch, memo, stats)
    lookup = pair_lookup(task.pool.shape[0])
    status = COMPLETE
    for k in range(1, task.kmax + 1):
        if task.control[STOP] != 0:
            status = STOPPED
            break
        layer, out, status = expand_layer(k, layer, lookup, data, task, rule, const, scratch, memo, out, stats)
        if status != COMPLETE or k == task.kmax or layer.n == 0:
            break
        index_layer(k, layer, lookup)
    return out.sets[: out.n], out.scores[: out.n], stats, status


# Performance note. The family loop of :func:`expand_layer` runs once per candidate set (400
# million times on andes). Numba counts the references to every array bound to a parameter of a
# function it inlines, and LLVM removes the counting only when the inlined body has one exit for
# each array, no function call (builtin ``min`` / ``max`` included) and no exception path. So the
# loop reads the fields it needs out of the tuples once per layer (by name), keeps its own buffers
# in local arrays (grown per prefix, never in the family loop), passes its per-family steps (the
# ``inline="always"`` functions of the other modules) local arrays rather than tuples, and makes
# the calls itself: building a prefix's state, filling the memo. Against the counting these rules
# avoid, the loop ran 3x slower.
@njit(cache=True, nogil=True, error_model="numpy")
def expand_layer(k, prev, lookup, data, task, rule, const, scratch, memo, out, stats):
    """Layer ``k``: each set ``W ∪ {y}`` of an alive set ``W`` of layer ``k - 1`` and a later pool
    entry ``y`` whose one-smaller subsets are all alive is bounded, counted, scored and kept or not.

    Returns the alive sets of layer ``k`` (none for the last layer), the kept sets and how the
    layer ended: ``STOPPED`` when ``task.control[STOP]`` is set before an alive set's expansion,
    ``MEMORY_CUT`` when growing a buffer for it would pass ``task.control[MAX_BYTES]``.
    """
    cols, arities, bits, offsets, marg = data.cols, data.arities, data.bits, data.offsets, data.marg
    cube, cube_index = data.cube, data.cube_index
    x, pool, req, kmax, w, control = task.x, task.pool, task.req, task.kmax, task.w, task.control
    r, log_r, c, penalised, pool_ar = const.r, const.log_r, const.c, const.penalised, const.pool_ar
    r_min, w_ratio_max, q_req, common, quad = const.r_min, const.w_ratio_max, const.q_req, const.common, const.quad
    codes, base, hist, cfg_hist = scratch.codes, scratch.base, scratch.hist, scratch.cfg_hist
    touched_rows, touched_cfg = scratch.touched_rows, scratch.touched_cfg
    cells, configs, order, starts = scratch.cells, scratch.configs, scratch.order, scratch.starts
    gscratch, touched, levels, cell_size = scratch.gscratch, scratch.touched, scratch.levels, scratch.cell_size
    small_start, small_rows = scratch.small_start, scratch.small_rows
    cnt, prefix_vars, prefix_bin, lut = scratch.cnt, scratch.prefix_vars, scratch.prefix_bin, scratch.lut
    ones, h, key, cell_cap, small_max = scratch.ones, scratch.h, scratch.key, scratch.cell_cap, scratch.small_max
    slot_keys, cell_tabs, cfg_tabs, clock = memo.slot_keys, memo.cell_tabs, memo.cfg_tabs, memo.clock
    penalties, quad_cell, quad_cfg, quad_penalty = memo.penalties, memo.quad_cell, memo.quad_cfg, memo.quad_penalty
    prev_sets, prev_vals, n_prev = prev.sets, prev.vals, prev.n
    index1, pair_vals = lookup.index1, lookup.pair_vals
    out_sets, out_scores, n_out = out.sets, out.scores, out.n
    store, m, n, n_words, cell_bits, xcol = k < kmax, pool.shape[0], cols.shape[1], bits.shape[1], levels[1], cols[x]
    new_layer = empty_layer(k, 1024 if store else 1)
    new_sets, new_vals, n_new = new_layer.sets, new_layer.vals, 0
    c_entropy = c if penalised else np.nan  # no conditional expression among call arguments: it copies them
    status, max_bytes, fixed_bytes = COMPLETE, control[MAX_BYTES], prev_sets.nbytes + prev_vals.nbytes
    for i in range(n_prev):
        if control[STOP] != 0:
            status = STOPPED
            break
        grow_out, grow_new = n_out + m > out_sets.shape[0], store and n_new + m > new_sets.shape[0]
        if max_bytes > 0 and (grow_out or grow_new):  # the buffers after this prefix's growth, if any
            out_rows = max(2 * out_sets.shape[0], n_out + m) if grow_out else out_sets.shape[0]
            new_rows = max(2 * new_sets.shape[0], n_new + m) if grow_new else new_sets.shape[0]
            held = fixed_bytes + out_rows * 8 * (out_sets.shape[1] + 1) + new_rows * 8 * (k + new_vals.shape[1])
            if held > max_bytes:
                status = MEMORY_CUT
                break
        prefix = unprepared(k, i, prev_sets, pool_ar, q_req)
        first = prev_sets[i, k - 2] + 1 if k > 1 else 0
        if grow_out:  # room for every family of this prefix
            out_sets, out_scores = grown_kept(out_sets, out_scores, n_out + m)
        if grow_new:
            new_sets, new_vals = grown_alive(new_sets, new_vals, n_new + m)
        for y in range(first, m):
            p, r_y, q_w = pool[y], pool_ar[y], prefix.q_full * pool_ar[y]
            ok, bss, lub, excess = subset_bounds(k, i, y, prev_sets, prev_vals, n_prev, index1, pair_vals, w,
                                                 pool_ar, c_entropy, q_w, key)
            if not ok:
                continue
            stats[GENERATED] += 1
            cut = cut_before_counting(k, i, y, prev_sets, w, pool_ar, c, penalised, w_ratio_max, q_w, bss, lub,
                                      excess)
            if rule.prune and cut >= 0:
                stats[cut] += 1
                continue
            if not prefix.ready:
                prefix = prefix_state(k, i, prev_sets, prev_vals, req, pool, cube_index, x, prefix_vars, prefix_bin,
                                      prefix.q_full, r, cell_cap)
                if prefix.binary:
                    binary_prefix_cells(cube, bits, offsets, prefix_vars[: prefix.nv], x, prefix_bin, n, lut,
                                        cell_size, ones)
            path = count_path(prefix, cube_index[p] >= 0, quad, r_y, r, n, n_words)
            if path >= NEED_CELLS or path == GROUPED and not prefix.grouped:  # at most thrice per prefix
                prefix, path = built(prefix, path, r_y, data, task, const, scratch)
            o = offsets[p] + 1
            if path == QUAD:  # binary families of three binary parents: full term tables, no compaction
                binary_cells(cube, lut, 3, cube_index[p], ones, cell_size, bits, o, marg[o], h, cnt)
                s, nc = score_cells(cnt, 8, 2, 2, quad_cell, quad_cfg, quad_penalty)
            elif path == CUBE:
                nc, nq = count_binary(cube, lut, prefix.nv + 1, cube_index[p], ones, cell_size, bits, o, marg[o], h,
                                      cnt, cells, configs)
            elif path == BITSET:
                nc, nq = count_bitset(cell_bits, cell_size, prefix.n_cells, prefix.dominant, small_start, small_rows,
                                      small_max, r, bits, offsets, marg, cols, p, r_y, common[y], cnt, cells, configs)
            elif path == DENSE:
                nc, nq = count_dense(base, prefix.q_s * r, cols[p], r_y, r, hist, cells, configs)
            elif path == TOUCHED:
                nc, nq = count_touched(base, codes, prefix.q_s, cols[p], r, hist, cfg_hist, touched_rows, touched_cfg,
                                       cells, configs)
            else:
                nc, nq = count_grouped(order, starts, prefix.q_s, cols[p], xcol, r, gscratch, touched, cells, configs)
            if rule.prune and rule.code == BDEU and bdeu_cut(nc, log_r, bss):
                stats[BDEU_BOUND] += 1
                continue
            if path != QUAD:  # from the memo of q_w's score terms, filled on a miss
                penalty = c * q_w if rule.code != QNML else qnml_penalty(penalties, q_w, r, n)
                sl, new_slot = slot(q_w if rule.code == BDEU else 1.0, slot_keys, clock)
                if new_slot:
                    clear_memo(cell_tabs, cfg_tabs, sl)
                s = memo_score(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, r, penalty)
                if np.isnan(s):
                    s = score_compact(cells, nc, configs, nq, cell_tabs, cfg_tabs, sl, rule.code, rule.ess, q_w, r,
                                      penalty)
            stats[SCORED] += 1
            kept = s > bss or not rule.prune
            if kept:
                n_out = keep(out_sets, out_scores, n_out, req, pool, prev_sets, i, k, y, s)
            stats[KEPT if kept else DOMINATED] += 1
            best, ub = larger(s, bss), superset_bound(lub, nc, q_w, rule.code, log_r, c, penalised, r_min)
            if store and rule.prune and not_expanded(ub, best):
                stats[NOT_EXPANDED] += 1
            elif store:
                nc_compact = nc if path != QUAD else -1  # the quad path leaves no compact counts
                n_big, n_small = cell_stats(cells, nc_compact, small_max)
                n_new = append_alive(new_sets, new_vals, n_new, prev_sets, i, k, y, best, ub, -(s + c * q_w), n_big,
                                     n_small)
    return AliveSets(sets=new_sets, vals=new_vals, n=n_new), KeptSets(sets=out_sets, scores=out_scores, n=n_out), status


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
    penalty = const.c * const.q_req if rule.code != QNML else qnml_penalty(memo.penalties, const.q_req, r, n)
    sl, new_slot = slot(const.q_req if rule.code == BDEU else 1.0, memo.slot_keys, memo.clock)
    if new_slot:
        clear_memo(memo.cell_tabs, memo.cfg_tabs, sl)
    s0 = score_compact(scratch.cells, nc, scratch.configs, nq, memo.cell_tabs, memo.cfg_tabs, sl, rule.code, rule.ess,
                       const.q_req, r, penalty)
    stats[GENERATED] += 1
    stats[SCORED] += 1
    stats[KEPT] += 1
    nreq = task.req.shape[0]
    out = KeptSets(sets=np.full((64, nreq + task.kmax), -1, dtype=np.int64), scores=np.empty(64), n=1)
    out.sets[0, :nreq] = task.req
    out.scores[0] = s0
    ub0 = superset_bound(np.inf, nc, const.q_req, rule.code, const.log_r, const.c, const.penalised, const.r_min)
    alive = empty_layer(1, 1)  # the empty set (its row is never read)
    alive.sets[0, 0] = 0
    alive.vals[0, BEST], alive.vals[0, BOUND], alive.vals[0, NLL] = s0, ub0, -(s0 + const.c * const.q_req)
    alive.vals[0, NBIG], alive.vals[0, NSMALL] = cell_stats(scratch.cells, nc, scratch.small_max)
    return out, AliveSets(sets=alive.sets, vals=alive.vals, n=1)
