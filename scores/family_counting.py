"""How each family of the enumeration is counted: the counting path, the prefix state it shares, scratch.

The families ``W ∪ {y}`` of one alive set ``W`` share a *prefix* (the required parents plus
``W``). Counting picks, per family, the cheapest path of ``scores.counts`` (:func:`count_path`):
Möbius inversion of the shared triple counts of the binary variables (at most ``CUBE_VARS``; one
popcount per family of four binary variables) when the family is binary with at most three
parents, else bitsets of the prefix cells when their cost model (their construction included,
and known before it from the prefix's own counts in the previous layer) beats the row
histograms. The choice depends only on the prefix and the new parent, so a family's terms are
summed in the same order whatever was pruned. Binary families of three parents (the bulk of a
binary network at palim 3) are scored straight from their 16 cells on full tables of the score
terms for ``q = 8`` (``scores.local.score_cells``), with no compaction or memo look-up. The
prefix state (:class:`Prefix`) is built on first use, part by part (:func:`built`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from scores.alive_sets import NBIG, NSMALL
from scores.counts import MARK_LIMIT, encode, group_rows, prefix_cells

CELL_WORDS = 1 << 16
"""Scratch budget (uint64 words) for the prefix-cell bitsets of the bitset counting path."""

DENSE_CELLS = 1 << 18
"""Largest histogram of the dense counting paths (scanned up to ``N`` cells, touched-list above)."""

CUBE_VARS = 320
"""Most binary variables for the table of their triple counts (``CUBE_VARS^3`` int32 entries)."""

ROW_COST, WORD_COST, PREP_SHARE = 6.0, 1.0, 0.25
"""Relative costs of one row of the histogram paths and one popcount word (measured), and the share
of building a prefix's cell bitsets (about two words per cell and row word) charged to each family."""

QUAD, CUBE, BITSET, DENSE, TOUCHED, GROUPED, NEED_CELLS, NEED_ROWS = range(8)
"""Counting paths of a family, see :func:`count_path` (the two ``NEED_*`` codes come last)."""


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
def counting_scratch(data, task, const):
    """The :class:`CountScratch` of one child (``scores.enumeration`` inputs, ``scores.pruning.ChildConstants``)."""
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


@njit(cache=True, nogil=True, inline="always")
def count_path(prefix, y_in_cube, quad, r_y, r, n, n_words):
    """How to count the family of the prefix plus a pool entry of ``r_y`` states: ``QUAD`` /
    ``CUBE`` (binary families from triple counts), ``BITSET`` (prefix cells, when the cost model
    prefers them, their construction included) or a row histogram (``DENSE``, ``TOUCHED``,
    ``GROUPED``); ``NEED_CELLS`` / ``NEED_ROWS`` while the prefix state it needs is not built.

    The choice depends on the prefix and ``r_y`` only (never on which families came before), so a
    family is counted, and its terms summed, in the same order whatever the pruning.
    """
    if prefix.binary and y_in_cube:
        return QUAD if quad and prefix.nv == 2 else CUBE
    if prefix.bits_ok and prefix.n_big < 0 and not prefix.cells:
        return NEED_CELLS  # cell sizes not known: build the cells to learn them
    n_cells = prefix.q_full * r
    bits_cost = (WORD_COST * (prefix.n_big * n_words * (r_y - 1) + n_cells * r_y + PREP_SHARE * n_cells * n_words)
                 + ROW_COST * prefix.n_small)
    if prefix.bits_ok and bits_cost <= ROW_COST * n:
        return BITSET if prefix.cells else NEED_CELLS
    if not prefix.rows:
        return NEED_ROWS
    span = prefix.q_s * r * r_y
    if span <= n:
        return DENSE
    return TOUCHED if span <= DENSE_CELLS else GROUPED


@njit(cache=True, nogil=True, inline="always")
def cell_stats(cells, nc, small_max):
    """``(n_big, n_small)`` of the compact cell counts ``cells[:nc]`` (``nc < 0``: not known, -1 each):
    the cells with more than ``small_max`` rows but the largest, and the rows of the others."""
    n_big, n_small, largest = -1 if nc < 0 else 0, -1 if nc < 0 else 0, 0
    for t in range(nc):
        size = cells[t]
        n_big += size > small_max
        n_small += size if size <= small_max else 0
        largest = size if size > largest else largest
    return n_big - (largest > small_max), n_small


@njit(cache=True, nogil=True, inline="always")
def unprepared(k, i, prev_sets, pool_ar, q_req):
    """The :class:`Prefix` of the alive set ``i`` before its state is built: only ``q_full``."""
    q_full = q_req
    for t in range(k - 1):
        q_full *= pool_ar[prev_sets[i, t]]
    return Prefix(ready=False, nv=0, q_full=q_full, binary=False, bits_ok=False, cells=False, n_cells=0, dominant=0,
                  n_big=0, n_small=0, rows=False, q_s=0, grouped=False)


@njit(cache=True, nogil=True, inline="always")
def prefix_state(k, i, prev_sets, prev_vals, req, pool, cube_index, x, prefix_vars, prefix_bin, q_full, r, cell_cap):
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
    return Prefix(ready=True, nv=nv, q_full=q_full, binary=binary, bits_ok=q_full * r <= cell_cap, cells=False,
                  n_cells=0, dominant=0, n_big=int(prev_vals[i, NBIG]), n_small=int(prev_vals[i, NSMALL]), rows=False,
                  q_s=0, grouped=False)


@njit(cache=True, nogil=True)
def built(prefix, path, r_y, data, task, const, scratch):
    """``(prefix, path)`` once the prefix state that ``path`` asks for is built (the prefix cells,
    the row codes, the rows grouped by configuration, as needed) and the path decided."""
    n, n_words = data.cols.shape[1], data.bits.shape[1]
    while path >= NEED_CELLS or path == GROUPED and not prefix.grouped:
        if path == NEED_CELLS:
            prefix = _with_prefix_cells(prefix, data.bits, data.offsets, data.arities, scratch.prefix_vars, task.x,
                                        scratch.levels, scratch.cell_size, scratch.small_start, scratch.small_rows,
                                        scratch.small_max)
        elif path == NEED_ROWS:
            prefix = _with_rows(prefix, data.cols, data.arities, scratch.prefix_vars, data.cols[task.x], const.r,
                                scratch.codes, scratch.base, scratch.mark)
        else:
            prefix = _with_groups(prefix, scratch.codes, scratch.order, scratch.starts)
        path = count_path(prefix, False, const.quad, r_y, const.r, n, n_words)  # not a cube path here
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
    return Prefix(ready=prefix.ready, nv=prefix.nv, q_full=prefix.q_full, binary=prefix.binary,
                  bits_ok=prefix.bits_ok, cells=True, n_cells=n_cells, dominant=dominant, n_big=n_big,
                  n_small=small_start[n_cells], rows=prefix.rows, q_s=prefix.q_s, grouped=prefix.grouped)


@njit(cache=True, nogil=True)
def _with_rows(prefix, cols, arities, prefix_vars, xcol, r, codes, base, mark):
    """``prefix`` with the dense configuration code of every row (``codes``) and ``base = code * r + child``."""
    q_s = encode(cols, prefix_vars[: prefix.nv], arities, codes, mark)
    for t in range(xcol.shape[0]):
        base[t] = codes[t] * r + xcol[t]
    return Prefix(ready=prefix.ready, nv=prefix.nv, q_full=prefix.q_full, binary=prefix.binary,
                  bits_ok=prefix.bits_ok, cells=prefix.cells, n_cells=prefix.n_cells, dominant=prefix.dominant,
                  n_big=prefix.n_big, n_small=prefix.n_small, rows=True, q_s=q_s, grouped=prefix.grouped)


@njit(cache=True, nogil=True)
def _with_groups(prefix, codes, order, starts):
    """``prefix`` with its rows grouped by configuration (``group_rows``)."""
    group_rows(codes, prefix.q_s, order, starts)
    return Prefix(ready=prefix.ready, nv=prefix.nv, q_full=prefix.q_full, binary=prefix.binary,
                  bits_ok=prefix.bits_ok, cells=prefix.cells, n_cells=prefix.n_cells, dominant=prefix.dominant,
                  n_big=prefix.n_big, n_small=prefix.n_small, rows=prefix.rows, q_s=prefix.q_s, grouped=True)
