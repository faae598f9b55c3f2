"""Exact structure learning by dynamic programming over variable subsets.

Silander & Myllymäki (UAI 2006), "A simple approach for finding the globally optimal Bayesian
network structure": (1) for every child ``v`` and every set ``C`` of other variables, the best
local score ``bps_v(C) = max {s(v, W) : W ⊆ C, W a candidate}``; (2) the best network over a
variable set ``S`` has some sink ``v`` whose parents come from ``S \\ {v}``, so
``best(S) = max_{v ∈ S} best(S \\ {v}) + bps_v(S \\ {v})`` (the best sink recursion); (3) the
optimal DAG is read back by following the chosen sinks from the full set.

Time and memory grow as ``n · 2^n``, so this is the small-``n`` reference optimiser used by the
exactness tests of the ILP, not a production solver. Tables whose children have restricted
candidate lists (no empty parent set, forbidden parents) are handled: sets with no admissible
parent set score ``-inf`` and can never be chosen.
"""

from __future__ import annotations

import logging

import numpy as np

from hybridbn.errors import HybridBNError
from scores.table import ParentSet, ScoreTable

logger = logging.getLogger(__name__)

MAX_VARS = 20
"""Default largest number of variables accepted (memory ~ 12 · n · 2^n bytes)."""


class ExactDPError(HybridBNError, ValueError):
    """The exact dynamic programme cannot be run on this input."""


def _drop_bit(masks: np.ndarray, v: int) -> np.ndarray:
    """Compress full-width masks that do not contain ``v`` into ``n - 1`` bits (bit ``v`` removed)."""
    low = masks & ((1 << v) - 1)
    return ((masks >> (v + 1)) << v) | low


def _parent_masks(table: ScoreTable) -> np.ndarray:
    """The parent set of every row of ``table`` as a bit mask."""
    masks = np.zeros(table.n_candidates, dtype=np.int64)
    np.add.at(masks, table.member_row, np.left_shift(1, table.parents.astype(np.int64)))  # distinct bits
    return masks


def _best_parent_scores(table: ScoreTable, masks: np.ndarray, v: int) -> np.ndarray:
    """``bps_v`` over the ``2^(n-1)`` subsets of the other variables (step 1 of Silander & Myllymäki)."""
    n = table.n_vars
    arr = np.full(1 << (n - 1), -np.inf)
    rows = slice(table.child_ptr[v], table.child_ptr[v + 1])
    np.maximum.at(arr, _drop_bit(masks[rows], v), table.score[rows])
    # Max-zeta transform: after processing bit i, arr[m] is the best over subsets differing in bits <= i.
    for i in range(n - 1):
        view = arr.reshape(-1, 2, 1 << i)
        np.maximum(view[:, 1, :], view[:, 0, :], out=view[:, 1, :])
    return arr


def exact_optimum(table: ScoreTable, *, max_vars: int = MAX_VARS) -> tuple[float, list[ParentSet]]:
    """Best score and one optimal DAG (one parent set per child) for a score table.

    Implements the best-sink dynamic programme of Silander & Myllymäki (2006). Raises
    :class:`ExactDPError` if ``table.n_vars > max_vars`` or if no acyclic choice of candidate
    parent sets exists (possible when candidate lists are restricted), and
    :class:`scores.table.ScoreTableError` if the table is malformed.
    """
    table.validate()
    n = table.n_vars
    if n > max_vars:
        raise ExactDPError(
            f"exact DP needs memory ~ n·2^n: n_vars={n} exceeds max_vars={max_vars}"
        )
    parent_masks = _parent_masks(table)
    bps = [_best_parent_scores(table, parent_masks, v) for v in range(n)]

    full = (1 << n) - 1
    masks = np.arange(1 << n, dtype=np.int64)
    best = np.full(1 << n, -np.inf)
    best[0] = 0.0
    sink = np.full(1 << n, -1, dtype=np.int8)
    size = np.bitwise_count(masks)
    order = np.argsort(size, kind="stable")
    bounds = np.searchsorted(size[order], np.arange(n + 2))
    for k in range(1, n + 1):
        layer = order[bounds[k]:bounds[k + 1]]
        layer_best = np.full(layer.size, -np.inf)
        layer_sink = np.full(layer.size, -1, dtype=np.int8)
        for v in range(n):
            has_v = (layer >> v) & 1 == 1
            rest = layer[has_v] ^ (1 << v)
            cand = best[rest] + bps[v][_drop_bit(rest, v)]
            current = layer_best[has_v]
            better = cand > current
            current[better] = cand[better]
            layer_best[has_v] = current
            chosen = layer_sink[has_v]
            chosen[better] = v
            layer_sink[has_v] = chosen
        best[layer] = layer_best
        sink[layer] = layer_sink

    if not np.isfinite(best[full]):
        raise ExactDPError("no acyclic choice of candidate parent sets exists for this table")

    parent_sets: list[ParentSet] = [()] * n
    remaining = full
    while remaining:
        v = int(sink[remaining])
        remaining ^= 1 << v
        target = bps[v][int(_drop_bit(np.array([remaining], dtype=np.int64), v)[0])]
        rows = np.arange(table.child_ptr[v], table.child_ptr[v + 1])
        f = rows[(table.score[rows] == target) & (parent_masks[rows] & ~remaining == 0)][0]  # the first in table order
        parent_sets[v] = tuple(table.parents[table.parent_ptr[f]:table.parent_ptr[f + 1]].tolist())
    score = float(best[full])
    logger.debug("exact DP over %d variables: optimum %.6f", n, score)
    return score, parent_sets
