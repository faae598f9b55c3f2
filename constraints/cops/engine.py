"""Compiled cops-and-robbers search with the exact d-separation oracle (networks of up to 128 nodes).

Talvitie & Parviainen, section 3.1, Algorithm 1 (PRESOLVE, SOLVE, EXTRACTCOMPONENT) as
:class:`constraints.cops.solver.CopsSolver` runs it, with the same iteration orders, the same
queries and the same distinct-test counts (``docs/references.md``, cops-and-robbers test counting),
but in numba kernels: node sets are two ``uint64`` words (``node_words``), the exact oracle counts
in compiled tables (``exact_oracle``, ``pair_bitmaps``, ``dconnection``), the memo tables are
open-addressing hash tables in numpy arrays (``memo_tables``), and the PRESOLVE/SOLVE recursion
is an explicit stack (``compiled_search``, its state laid out in ``engine_state``), so a search
can be paused after a budget of steps (for the time limit and for growing the tables) and
resumed.  This module is the driver.  Tested to give the Python solver's results and counts
exactly (``tests/test_cops_engine.py``); hepar2, which the Python solver could not finish in 100
minutes, takes about 11 minutes a pass.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from constraints.cops.compiled_search import advance, split
from constraints.cops.engine_state import (
    DONE,
    EX_COUNT,
    F_C,
    F_R,
    GROW_EXTRACT,
    GROW_PRESOLVE,
    GROW_SETS,
    K,
    MEMO_CAP,
    PEND_TOP,
    PRE_COUNT,
    RESULT,
    RESUMING,
    SP,
    step_margin,
)
from constraints.cops.exact_oracle import ExactCountingOracle
from constraints.cops.memo_tables import grow_extract, grow_presolve, presolve_value
from constraints.cops.node_words import from_words, to_words
from constraints.cops.pair_bitmaps import SLOTS_USED
from constraints.cops.solver import DecompositionReplay

logger = logging.getLogger(__name__)


class EngineSolver(DecompositionReplay):
    """Algorithm 1 for one component and width bound k, compiled (same interface as ``CopsSolver``).

    The PRESOLVE and EXTRACTCOMPONENT tables grow up to ``oracle.memo_entries`` slots each and
    are caches beyond (``constraints.cops.memo_tables``); a position missing from them when the
    decomposition is replayed is searched again, which makes no new query.
    """

    STEPS = 1 << 15  # steps between clock checks
    REPORT_EVERY = 60.0  # seconds between progress lines (logging, INFO)

    def __init__(self, oracle: ExactCountingOracle, verts: int, k: int) -> None:
        if k < 1:
            raise ValueError(f"the width bound k must be >= 1, got {k}")
        n = oracle.n
        self.oracle = oracle
        self.k = k
        self.verts = verts
        self.verts_words = np.array(to_words(verts), dtype=np.uint64)
        start = min(1 << 12, oracle.memo_entries)
        self.pre_keys = np.zeros((start, 4), dtype=np.uint64)
        self.pre_val = np.zeros(start, dtype=np.uint8)
        self.ex_keys = np.zeros((start, 3), dtype=np.uint64)
        self.ex_val = np.zeros((start, 2), dtype=np.uint64)
        self.frames = np.zeros((n + 2, 10), dtype=np.uint64)
        self.frame_pending = np.zeros(n + 2, dtype=np.int64)
        self.pending = np.zeros(((n + 2) * (n + 1), 4), dtype=np.uint64)
        self.sm = np.zeros(9, dtype=np.int64)
        self.sm[K] = k
        self.sm[MEMO_CAP] = oracle.memo_entries
        self._next_report = time.monotonic() + self.REPORT_EVERY
        self._full_warned = False

    def run(self) -> bool:
        """True iff k + 1 cops win from the initial position (PRESOLVE({v0}, verts \\ {v0}))."""
        return self._search(*self._start())

    def _search(self, cops: int, robbers: int) -> bool:
        """PRESOLVE(C, R), stepping the compiled recursion and growing its tables between steps."""
        self.frames[0, F_C:F_C + 2] = to_words(cops)
        self.frames[0, F_R:F_R + 2] = to_words(robbers)
        self.frame_pending[0] = 0
        self.sm[SP] = 1
        self.sm[PEND_TOP] = self.sm[RESUMING] = 0
        o = self.oracle
        while True:
            status = advance(*o.tables(), self.pre_keys, self.pre_val, self.ex_keys, self.ex_val,
                             self.frames, self.frame_pending, self.pending, self.sm,
                             self.verts_words, self.STEPS)
            if status == DONE:
                return bool(self.sm[RESULT])
            if status == GROW_SETS:
                o.ensure_room(step_margin(o.n))
            elif status == GROW_PRESOLVE:
                self.pre_keys, self.pre_val = self._doubled(self.pre_keys, self.pre_val, grow_presolve)
            elif status == GROW_EXTRACT:
                self.ex_keys, self.ex_val = self._doubled(self.ex_keys, self.ex_val, grow_extract)
            elif not self._full_warned and max(self.sm[PRE_COUNT], self.sm[EX_COUNT]) * 2 > self.sm[MEMO_CAP]:
                self._full_warned = True
                logger.warning("k=%d: a memo table is half full at its size limit (%d slots): positions "
                               "may be forgotten and searched again; a larger memory_budget may be faster",
                               self.k, self.sm[MEMO_CAP])
            o.check_clock()
            now = time.monotonic()
            if now > self._next_report:
                self._next_report = now + self.REPORT_EVERY
                logger.info("k=%d: %d distinct tests, %d conditioning sets, %d + %d memo entries",
                            self.k, o.n_distinct, o.om[SLOTS_USED], self.sm[PRE_COUNT], self.sm[EX_COUNT])

    def _doubled(self, keys: np.ndarray, values: np.ndarray, rehash) -> tuple[np.ndarray, np.ndarray]:
        """A memo table of twice the slots, holding the entries of ``(keys, values)``."""
        bigger = (2 * keys.shape[0],)
        new_keys = np.zeros(bigger + keys.shape[1:], dtype=keys.dtype)
        new_values = np.zeros(bigger + values.shape[1:], dtype=values.dtype)
        rehash(keys, values, new_keys, new_values, self.sm)
        return new_keys, new_values

    def _split(self, cops: int, robbers: int) -> tuple[int, int]:
        o = self.oracle
        o.ensure_room(step_margin(o.n))
        cl, chh, nl, nh = split(*o.tables(), self.ex_keys, self.ex_val, self.sm, self.verts_words,
                                *to_words(cops), *to_words(robbers))
        return from_words(cl, chh), from_words(nl, nh)

    def presolve(self, cops: int, robbers: int) -> bool:
        """PRESOLVE(C, R) after :meth:`run`: from the table, or searched again if it was dropped."""
        if not robbers:
            return True
        v = presolve_value(self.pre_keys, self.pre_val, *to_words(cops), *to_words(robbers))
        return v == 2 if v else self._search(cops, robbers)
