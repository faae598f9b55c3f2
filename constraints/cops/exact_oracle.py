"""The exact counting oracle of the engine: d-separation answers, counts in compiled tables.

Only the counts need a memo of the oracle: the exact oracle (d-separation,
``constraints.cops.dconnection``) is recomputed, one call per batch of pairs, and the pairs asked
are recorded in one bitmap per conditioning set (``constraints.cops.pair_bitmaps``).  Larger runs
than memory allows count in passes: pass ``p`` of ``P`` keeps the bitmaps of the sets S whose
hash is ``p`` mod ``P`` only, and the search, which does not depend on the counts, is repeated.
A pass whose bitmaps fill the memory budget drops half of its sets (``p + P`` mod ``2P``) and
goes on counting the other half (``p`` mod ``2P``), whose bitmaps are complete; the dropped
half is left to a later pass, so no work is thrown away.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from numba import njit

from hybridbn.deadline import Deadline, passed

from constraints.cops.dconnection import condition_on, connected, dag_rows
from constraints.cops.engine_state import step_margin
from constraints.cops.memo_tables import MIN_MEMO_ENTRIES
from constraints.cops.node_words import MAX_ENGINE_VARS, ZERO, from_words, lowest, to_words, up_to
from constraints.cops.oracle import OracleTimeout
from constraints.cops.pair_bitmaps import (
    CALLS,
    N_PARTS,
    PART,
    SLOTS_USED,
    count_pairs,
    keep_pass_sets,
    rehash_set_table,
)
from graphs.dsep import DSeparation

logger = logging.getLogger(__name__)

#: Most counting passes a run may split into (each repeats the search).
MAX_PASSES = 64


@njit(cache=True)
def oracle_dependents(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
                      x, tl, th, zl, zh):
    """``CountingOracle.dependents``: the targets dependent on x given z, every pair counted."""
    if not (tl | th):
        return ZERO, ZERO
    count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh)
    al, ah = condition_on(dag, zl, zh, comp_id, comp_sets)
    return connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets)


@njit(cache=True)
def oracle_all_independent(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
                           x, tl, th, zl, zh):
    """``CountingOracle.all_independent``: the queries up to the first dependent target are counted."""
    al, ah = condition_on(dag, zl, zh, comp_id, comp_sets)
    dl, dh = connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets)
    if dl | dh:
        tl, th = up_to(tl, th, lowest(dl, dh))
    count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh)
    return not (dl | dh)


def _power_of_two(n: int) -> int:
    return 1 << max(4, int(n - 1).bit_length())


def default_memory_budget() -> int:
    """Bytes the engine's tables may take by default: 60 % of the memory available now (Linux)."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 * 3 // 5
    except OSError:  # pragma: no cover - not Linux
        pass
    return 4 << 30  # pragma: no cover


class ExactCountingOracle:
    """:class:`constraints.cops.oracle.CountingOracle` for the exact oracle, in compiled tables.

    Counts exactly as ``CountingOracle(ds)`` for ``ds = graphs.dsep.DSeparation(dag)`` (one bitmap
    of asked pairs per conditioning set) and answers by d-separation in the DAG, recomputed on
    every call.  With ``n_parts > 1`` only the conditioning sets of pass ``part`` are counted
    (module notes).  ``memory_budget`` (bytes) bounds the engine's tables: two fifths for the memo
    tables of each solver (``memo_entries`` slots each), the rest for the bitmaps, allocated as
    they are touched.  When those are full the pass halves its share of the sets and appends the
    other half, ``(part, n_parts)``, to ``later_passes``; a ``MemoryError`` when that would take
    more than ``MAX_PASSES`` passes.  Past ``limit_at`` (``time.monotonic()``) or ``deadline``
    (a :class:`hybridbn.deadline.Deadline`) the calls raise :class:`constraints.cops.oracle.OracleTimeout`.
    """

    def __init__(self, ds: DSeparation, *, part: int = 0, n_parts: int = 1, memory_budget: int | None = None,
                 limit_at: float | None = None, deadline: Deadline | None = None) -> None:
        n = ds.n
        if not 1 <= n <= MAX_ENGINE_VARS:
            raise ValueError(f"the compiled engine takes 1..{MAX_ENGINE_VARS} nodes, got {n}")
        if not 0 <= part < n_parts:
            raise ValueError(f"pass {part} of {n_parts} does not exist")
        self.n = n
        self.dag = dag_rows(ds)
        words = max(1, (n * (n - 1) // 2 + 63) // 64)
        budget = default_memory_budget() if memory_budget is None else int(memory_budget)
        # two fifths for the two memo tables of a solver (73 bytes a slot; forgotten positions are
        # searched again, which can cost much more than a counting pass), the rest for the bitmaps
        # and their index (24 bytes a slot, kept at a load of 1/4 to 1/2: at most 96 bytes a set)
        self.memo_entries = max(MIN_MEMO_ENTRIES, _power_of_two(budget * 2 // 5 // 73 + 1) // 2)
        slots = max(2 * step_margin(n), budget * 3 // 5 // (8 * words + 96))
        self.pool = np.zeros((slots, words), dtype=np.uint64)  # pages are touched as sets arrive
        self.set_keys = np.zeros((1 << 12, 2), dtype=np.uint64)
        self.set_slot = np.full(1 << 12, -1, dtype=np.int64)
        self.counts = np.zeros(n + 1, dtype=np.int64)
        self.om = np.array([0, part, n_parts, 0], dtype=np.int64)
        self.later_passes: list[tuple[int, int]] = []
        self.comp_id = np.zeros(n, dtype=np.int64)
        self.comp_sets = np.zeros((n, 4), dtype=np.uint64)
        self.limit_at = limit_at
        self.deadline = deadline

    def tables(self) -> tuple[np.ndarray, ...]:
        """The arrays every oracle kernel takes first: DAG rows, set table, bitmaps, counts, meta."""
        return (self.dag, self.set_keys, self.set_slot, self.pool, self.counts, self.om,
                self.comp_id, self.comp_sets)

    def ensure_room(self, margin: int) -> None:
        """Make room for ``margin`` new sets: grow the set table, and halve this pass's share of
        the sets while their bitmaps would not fit."""
        while self.om[SLOTS_USED] + margin > self.pool.shape[0]:
            self._halve_share()
        if 2 * (self.om[SLOTS_USED] + margin) > self.set_keys.shape[0]:
            self._rehash_sets(_power_of_two(2 * (self.om[SLOTS_USED] + margin)))

    def _halve_share(self) -> None:
        """Count only half of this pass's sets from now on; the other half goes to a later pass."""
        used, part, n_parts = (int(v) for v in self.om[[SLOTS_USED, PART, N_PARTS]])
        if 2 * n_parts > MAX_PASSES:
            raise MemoryError(f"{used} conditioning sets fill the memory budget of one counting pass "
                              f"even in {MAX_PASSES} passes; raise memory_budget")
        self.om[N_PARTS] = 2 * n_parts
        self.later_passes.append((part + n_parts, 2 * n_parts))
        keep_pass_sets(self.set_keys, self.set_slot, self.pool, self.counts, self.om)
        self._rehash_sets(self.set_keys.shape[0])
        logger.info("%d conditioning sets fill the memory budget: this pass keeps counting the %d "
                    "whose hash is %d mod %d, and leaves the rest to a later pass",
                    used, self.om[SLOTS_USED], part, 2 * n_parts)

    def _rehash_sets(self, capacity: int) -> None:
        keys = np.zeros((capacity, 2), dtype=np.uint64)
        slot = np.full(capacity, -1, dtype=np.int64)
        rehash_set_table(self.set_keys, self.set_slot, keys, slot)
        self.set_keys, self.set_slot = keys, slot

    def check_clock(self) -> None:
        """:class:`OracleTimeout` once the time limit or the deadline has passed."""
        if (self.limit_at is not None and time.monotonic() > self.limit_at) or passed(self.deadline):
            raise OracleTimeout(f"time limit reached after {self.n_calls} oracle calls")

    def dependents(self, x: int, ys: int, cond: int) -> int:
        self.ensure_room(1)
        hits = oracle_dependents(*self.tables(), x, *to_words(ys), *to_words(cond))
        self.check_clock()
        return from_words(*hits)

    def all_independent(self, x: int, ys: int, cond: int) -> bool:
        self.ensure_room(1)
        out = bool(oracle_all_independent(*self.tables(), x, *to_words(ys), *to_words(cond)))
        self.check_clock()
        return out

    def __call__(self, a: int, b: int, cond: int) -> bool:
        return self.all_independent(a, 1 << b, cond)

    @property
    def tests_by_order(self) -> list[int]:
        return np.trim_zeros(self.counts, "b").tolist()

    @property
    def n_distinct(self) -> int:
        return int(self.counts.sum())

    @property
    def n_calls(self) -> int:
        return int(self.om[CALLS])
