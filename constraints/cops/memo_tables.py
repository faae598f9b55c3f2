"""The PRESOLVE and EXTRACTCOMPONENT memo tables of the engine's search (numba kernels).

Open-addressing hash tables in numpy arrays: PRESOLVE(C, R) keyed by the four words of (C, R),
its value 1 (false) or 2 (true), 0 marking a free slot; EXTRACTCOMPONENT(C, r0) keyed by C and
``r0 + 1`` (0 marking a free slot), its value the component's two words.  The entry counts are
fields of the solver's meta array ``sm`` (``constraints.cops.engine_state``).

PRESOLVE and EXTRACTCOMPONENT values are deterministic functions of their keys, and every query
made to compute one again was made (and counted) when it was first computed, so forgetting
an entry changes neither results nor counts, only the time.  The tables therefore grow up to
a capacity limit and then become caches: a key probes a window of WINDOW slots and, when all
are taken, overwrites one of them (rare below a load of one half).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from constraints.cops.engine_state import EX_COUNT, PRE_COUNT
from constraints.cops.node_words import ONE, mix

WINDOW = 32
#: Slots a memo table may always grow to, however small the memory budget (about 5 MB).
MIN_MEMO_ENTRIES = 1 << 16


@njit(inline="always")
def _presolve_slot(pre_keys, pre_val, cl, chh, rl, rh):
    mask = np.uint64(pre_keys.shape[0] - 1)
    h = mix(cl ^ rh, chh, rl)
    i = h & mask
    for _ in range(WINDOW):
        if not pre_val[i]:
            return i, False
        if pre_keys[i, 0] == cl and pre_keys[i, 1] == chh and pre_keys[i, 2] == rl and pre_keys[i, 3] == rh:
            return i, True
        i = (i + ONE) & mask
    return (h + (h >> np.uint64(59))) & mask, False


@njit(cache=True)
def presolve_value(pre_keys, pre_val, cl, chh, rl, rh):
    """0 if PRESOLVE(C, R) is not in the table, 1 if it is false, 2 if true."""
    i, found = _presolve_slot(pre_keys, pre_val, cl, chh, rl, rh)
    return pre_val[i] if found else 0


@njit(inline="always")
def presolve_store(pre_keys, pre_val, sm, cl, chh, rl, rh, value):
    i, found = _presolve_slot(pre_keys, pre_val, cl, chh, rl, rh)
    if not pre_val[i]:
        sm[PRE_COUNT] += 1
    pre_keys[i, 0] = cl
    pre_keys[i, 1] = chh
    pre_keys[i, 2] = rl
    pre_keys[i, 3] = rh
    pre_val[i] = value


@njit(cache=True)
def grow_presolve(pre_keys, pre_val, new_keys, new_val, sm):
    sm[PRE_COUNT] = 0
    for i in range(pre_keys.shape[0]):
        if pre_val[i]:
            presolve_store(new_keys, new_val, sm, pre_keys[i, 0], pre_keys[i, 1], pre_keys[i, 2],
                            pre_keys[i, 3], pre_val[i])


@njit(inline="always")
def extract_slot(ex_keys, cl, chh, tag):
    """Slot of EXTRACTCOMPONENT(C, r0), ``tag = r0 + 1`` (0 marks a free slot)."""
    mask = np.uint64(ex_keys.shape[0] - 1)
    h = mix(cl, chh, tag)
    i = h & mask
    for _ in range(WINDOW):
        if not ex_keys[i, 2]:
            return i, False
        if ex_keys[i, 0] == cl and ex_keys[i, 1] == chh and ex_keys[i, 2] == tag:
            return i, True
        i = (i + ONE) & mask
    return (h + (h >> np.uint64(59))) & mask, False


@njit(inline="always")
def extract_store(ex_keys, ex_val, sm, i, cl, chh, tag, bl, bh):
    if not ex_keys[i, 2]:
        sm[EX_COUNT] += 1
    ex_keys[i, 0] = cl
    ex_keys[i, 1] = chh
    ex_keys[i, 2] = tag
    ex_val[i, 0] = bl
    ex_val[i, 1] = bh


@njit(cache=True)
def grow_extract(ex_keys, ex_val, new_keys, new_val, sm):
    sm[EX_COUNT] = 0
    for i in range(ex_keys.shape[0]):
        if ex_keys[i, 2]:
            j, _ = extract_slot(new_keys, ex_keys[i, 0], ex_keys[i, 1], ex_keys[i, 2])
            extract_store(new_keys, new_val, sm, j, ex_keys[i, 0], ex_keys[i, 1], ex_keys[i, 2],
                           ex_val[i, 0], ex_val[i, 1])
