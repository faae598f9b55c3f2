"""Memo tables of the score terms of one child (``scores.local.memo_score`` / ``score_compact``).

A family's score is a sum of terms of its cell and configuration counts that depend on ``q`` (BDeu)
or not (the other scores); the tables of one ``q`` are kept in a slot, slots are taken round
robin, and a term is computed on a miss only (NaN: unknown). They hold up to ``TABLE_BUDGET``
entries per child, touched only as far as used.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from scores.local import QNML, family_penalty, memo_penalty, penalty_memo, term_tables

TABLE_LEN = 1 << 12
"""Longest memo table of score terms (counts up to ``N`` when ``N`` is below it)."""

TABLE_BUDGET = 1 << 22
"""Memo entries per child: ``min(1024, TABLE_BUDGET // length)`` tables (BDeu needs one per ``q``)."""


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


@njit(cache=True, nogil=True)
def score_memo(data, rule, const):
    """The :class:`ScoreMemo` of one child: memo tables sized to ``TABLE_LEN`` / ``TABLE_BUDGET``."""
    n = data.cols.shape[1]
    tab_len = min(n + 1, TABLE_LEN)
    n_slots = max(4, min(1024, TABLE_BUDGET // tab_len))
    quad_cell, quad_cfg = term_tables(rule.code, rule.ess, 8.0, 2, n if const.quad else 0)
    return ScoreMemo(slot_keys=np.full(n_slots, -1.0), cell_tabs=np.empty((n_slots, tab_len)),
                     cfg_tabs=np.empty((n_slots, tab_len)), clock=np.zeros(2, dtype=np.int64),
                     penalties=penalty_memo(), quad_cell=quad_cell, quad_cfg=quad_cfg,
                     quad_penalty=family_penalty(rule.code, 8.0, 2, n))


@njit(cache=True, nogil=True, inline="always")
def slot(key, slot_keys, clock):
    """``(slot, new)``: the memo tables of ``key``, or a slot taken for it (round robin, ``new``: to be
    cleared with :func:`clear_memo`). ``clock[0]`` is the next slot to take, ``clock[1]`` the slot
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
def clear_memo(cell_tabs, cfg_tabs, s):
    """Mark every term of the memo tables ``s`` unknown (NaN)."""
    cell_tabs[s] = np.nan
    cfg_tabs[s] = np.nan


@njit(cache=True, nogil=True)
def qnml_penalty(penalties, q, r, n):
    """qNML's penalty of a family (``memo_penalty``: ``O(N)`` to compute, so memoised)."""
    return memo_penalty(penalties, QNML, q, r, n)
