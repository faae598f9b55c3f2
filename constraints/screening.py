"""Order-0 screening: the marginal G2 / X2 test of every pair ``u < v``, in blocks of rows.

PC's level 0 (Spirtes, Glymour & Scheines 2000) tests ``u _||_ v`` for all ``n (n - 1) / 2``
pairs; at thousands of variables that is tens of millions of tests, each a ``(1, r_u, r_v)``
table. Here the table of a pair is counted from the one-hot row bitsets
(:func:`scores.counts.onehot_bitsets`) with ``(r_u - 1)(r_v - 1)`` AND-popcounts over the
words; its last row and column follow from the state counts of ``u`` and ``v`` (every row holds
one state of each variable). The table is the one :class:`constraints.citests.CITest` counts,
and :func:`constraints.citests._p_value` reads it, so every p-value is bit-identical to
``CITest(u, v)``'s under the same settings (statistic, df adjustment, minimum-sample rule).

A block of rows ``u in [lo, hi)`` against every ``v > u`` is one compiled call, its pairs in
tiles of :data:`TILE_VARS` columns, one ``numba.prange`` task each (the bitsets of a tile stay
in cache while the block's rows pass over it); the caller checks its deadline between blocks.
Counting all tables at once as the Gram matrix of the one-hot data (BLAS, float32) costs more:
0.50 CPU s for the 3,000 one-hot columns of 1,000 variables at 5000 rows, before any p-value,
against 0.26 CPU s for this whole screen. Memory: the bitsets (``sum(arities) * rows / 8`` bytes) and one block's results (p-value,
statistic and dof: 48 MB at :data:`PAIRS_PER_BLOCK`). Used by PC-stable's level 0
(:func:`constraints.pc.pc_skeleton`) and the order-0 tests of PMMS/MMPC
(:class:`constraints.pmms_compiled.Order0`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from constraints.citest_batch import TestSettings, ThreadedKernel, compute_threads
from constraints.citests import _p_value
from hybridbn.word_bits import popcount

TILE_VARS = 256
"""Columns ``v`` of one parallel task of a block (their bitsets: ~0.5 MB at 3 states, 5000 rows)."""

PAIRS_PER_BLOCK = 2_000_000
"""Pairs of one compiled call (about a CPU second at 5000 rows: 0.53 us a pair,
docs/benchmarks.md): the granularity of the deadline and the progress bar."""


@njit(cache=True)
def _state_counts(bits):
    """Rows in each ``(variable, state)``: the popcount of its bitset."""
    out = np.empty(bits.shape[0], dtype=np.int64)
    for c in range(bits.shape[0]):
        total = 0
        for w in range(bits.shape[1]):
            total += popcount(bits[c, w])
        out[c] = total
    return out


@njit(cache=True)
def _pair_table(bits, offsets, margins, u, v, ru, rv, n, flat):
    """The ``(1, r_u, r_v)`` table of ``u, v`` in ``flat`` (popcounts for all but the last row and
    column, which the state counts ``margins`` complete)."""
    ou, ov = offsets[u], offsets[v]
    for a in range(ru):
        flat[a * rv + rv - 1] = margins[ou + a]
    for b in range(rv):
        flat[(ru - 1) * rv + b] = margins[ov + b]
    corner = n  # rows in neither u's nor v's other states
    for a in range(ru - 1):
        corner -= margins[ou + a]
    for b in range(rv - 1):
        corner -= margins[ov + b]
    flat[ru * rv - 1] = corner
    for a in range(ru - 1):
        for b in range(rv - 1):
            total = 0
            for w in range(bits.shape[1]):
                total += popcount(bits[ou + a, w] & bits[ov + b, w])
            flat[a * rv + b] = total
            flat[a * rv + rv - 1] -= total
            flat[(ru - 1) * rv + b] -= total
            flat[ru * rv - 1] += total
    return flat[:ru * rv].reshape((1, ru, rv))


def _marginal_rows(lo, hi, margins, bits, offsets, cols, arities, varies, pearson, adf, min_rows_per_df,
                   dependent, zero_dof_alpha, chdtrc):
    n_vars, n = arities.shape[0], cols.shape[1]
    starts = np.empty(hi - lo + 1, dtype=np.int64)  # the first pair of each row, triu order
    starts[0] = 0
    for u in range(lo, hi):
        starts[u - lo + 1] = starts[u - lo] + n_vars - 1 - u
    p = np.empty(starts[hi - lo])
    stat = np.empty(starts[hi - lo])
    dof = np.empty(starts[hi - lo])
    top = np.max(arities) if n_vars else 1
    first = lo + 1
    n_tiles = max(0, -(-(n_vars - first) // TILE_VARS))
    no_set = np.empty(0, dtype=np.int64)
    for t in prange(n_tiles):
        flat = np.empty(top * top, dtype=np.int64)
        v0 = first + t * TILE_VARS
        v1 = min(v0 + TILE_VARS, n_vars)
        for u in range(lo, min(hi, v1 - 1)):
            ru = arities[u]
            for v in range(max(v0, u + 1), v1):
                table = _pair_table(bits, offsets, margins, u, v, ru, arities[v], n, flat)
                i = starts[u - lo] + v - u - 1
                p[i], stat[i], dof[i] = _p_value(table, no_set, arities, n, varies[u] and varies[v], adf,
                                                 min_rows_per_df, dependent, zero_dof_alpha, pearson, chdtrc)
    return p, stat, dof


_marginal_rows_kernel = ThreadedKernel(_marginal_rows)


def row_blocks(n_vars: int, pairs_per_block: int = PAIRS_PER_BLOCK) -> list[tuple[int, int]]:
    """Consecutive row ranges ``[lo, hi)`` of the pairs ``u < v``, each about ``pairs_per_block``
    pairs (at least one row), covering ``0 .. n_vars - 1``."""
    blocks, lo, size = [], 0, 0
    for u in range(n_vars - 1):
        size += n_vars - 1 - u
        if size >= pairs_per_block or u == n_vars - 2:
            blocks.append((lo, u + 1))
            lo, size = u + 1, 0
    return blocks


def block_pairs(n_vars: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(us, vs)``, ``u in [lo, hi)`` and ``v > u``, in the order of ``np.triu_indices``."""
    rows = np.arange(lo, hi, dtype=np.int64)
    lengths = n_vars - 1 - rows
    us = np.repeat(rows, lengths)
    first = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return us, np.arange(len(us), dtype=np.int64) - first + us + 1


class MarginalScreen:
    """The marginal tests of a :class:`CITest`'s variables (the bitsets and state counts made once)."""

    def __init__(self, settings: TestSettings):
        self.settings = settings
        self.margins = _state_counts(settings.bitsets[0])

    def rows(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(p, statistic, dof) arrays of ``u _||_ v`` for the pairs of :func:`block_pairs`
        ``(lo, hi)``, in that order, on :func:`compute_threads` threads."""
        return _marginal_rows_kernel(int(lo), int(hi), self.margins, *self.settings.args())


def marginal_rows_task(screen: MarginalScreen, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`MarginalScreen.rows` as one task of an executor (a worker thread or process): one thread."""
    with compute_threads(1):
        return screen.rows(lo, hi)
