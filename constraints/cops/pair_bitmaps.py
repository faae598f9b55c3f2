"""The distinct-test counts of the engine's exact oracle: one bitmap of asked pairs per conditioning set.

The pairs asked under one conditioning set S are one bit each in a triangular bitmap of S
(``n (n - 1) / 2`` bits; a run on hepar2 asks about 140 pairs per set), a row of ``pool`` found
through an open-addressing table keyed by S (``set_keys``, ``set_slot``).  Larger runs than
memory allows count in passes: pass ``p`` of ``P`` keeps the bitmaps of the sets S whose hash is
``p`` mod ``P`` only (``constraints.cops.exact_oracle``).  The oracle's state is the int64 array
``om`` (fields below).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from constraints.cops.node_words import ONE, ZERO, mix, size
from hybridbn.word_bits import popcount, trailing_zeros

# oracle meta fields (int64 array ``om``)
SLOTS_USED, PART, N_PARTS, CALLS = range(4)


@njit(inline="always")
def _in_pass(h, om):
    """Whether the conditioning set of hash h is counted in this pass (h >> 40 = PART mod N_PARTS)."""
    return om[N_PARTS] == 1 or np.int64((h >> np.uint64(40)) % np.uint64(om[N_PARTS])) == om[PART]


@njit(cache=True)
def bitmap_row(set_keys, set_slot, om, zl, zh):
    """Bitmap row of conditioning set z (a new one if z is new), or -1 if z belongs to another pass."""
    h = mix(zl, zh, ZERO)
    if not _in_pass(h, om):
        return -1
    mask = np.uint64(set_keys.shape[0] - 1)
    i = h & mask
    while True:
        slot = set_slot[i]
        if slot < 0:
            slot = om[SLOTS_USED]
            om[SLOTS_USED] = slot + 1
            set_keys[i, 0] = zl
            set_keys[i, 1] = zh
            set_slot[i] = slot
            return slot
        if set_keys[i, 0] == zl and set_keys[i, 1] == zh:
            return slot
        i = (i + ONE) & mask


@njit(cache=True)
def _record(pool, slot, x, tl, th):
    """Mark the pairs {x, t}, t in (tl, th), in bitmap row ``slot``; the number of new pairs."""
    new = 0
    row = pool[slot]
    for half in range(2):
        rest = tl if half == 0 else th
        base = 64 * half
        while rest:
            t = np.int64(trailing_zeros(rest)) + base
            rest &= rest - ONE
            a, b = (x, t) if x < t else (t, x)
            idx = b * (b - 1) // 2 + a
            m = ONE << np.uint64(idx & 63)
            if not row[idx >> 6] & m:
                row[idx >> 6] |= m
                new += 1
    return new


@njit(inline="always")
def count_in_slot(pool, counts, om, slot, order, x, tl, th):
    """Count the queries {x, t | z}, t in (tl, th), z the set of bitmap row ``slot`` (-1: not
    counted in this pass) and size ``order``: every one is a call, the new ones distinct tests."""
    om[CALLS] += size(tl, th)
    if slot >= 0:
        counts[order] += _record(pool, slot, x, tl, th)


@njit(cache=True)
def count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh):
    """:func:`count_in_slot` for the conditioning set z."""
    count_in_slot(pool, counts, om, bitmap_row(set_keys, set_slot, om, zl, zh), size(zl, zh), x, tl, th)


@njit(cache=True)
def rehash_set_table(set_keys, set_slot, new_keys, new_slot):
    """Rehash the conditioning-set table into the empty arrays ``new_*`` (rows ``set_slot < 0`` left out)."""
    mask = np.uint64(new_keys.shape[0] - 1)
    for i in range(set_keys.shape[0]):
        if set_slot[i] >= 0:
            j = mix(set_keys[i, 0], set_keys[i, 1], ZERO) & mask
            while new_slot[j] >= 0:
                j = (j + ONE) & mask
            new_keys[j, 0] = set_keys[i, 0]
            new_keys[j, 1] = set_keys[i, 1]
            new_slot[j] = set_slot[i]


@njit(cache=True)
def keep_pass_sets(set_keys, set_slot, pool, counts, om):
    """Keep only the bitmaps of the sets in pass PART of N_PARTS: the pool is compacted, the rows
    in ``set_slot`` renumbered (-1 for a dropped set; the table must then be rehashed) and the
    counts recomputed from the rows kept."""
    used = om[SLOTS_USED]
    keep = np.zeros(used, dtype=np.bool_)
    counts[:] = 0
    for i in range(set_slot.shape[0]):
        s = set_slot[i]
        if s >= 0 and _in_pass(mix(set_keys[i, 0], set_keys[i, 1], ZERO), om):
            keep[s] = True
            pairs = 0
            for w in range(pool.shape[1]):
                pairs += popcount(pool[s, w])
            counts[size(set_keys[i, 0], set_keys[i, 1])] += pairs
    renumber = np.full(used, -1, dtype=np.int64)
    kept = 0
    for s in range(used):
        if keep[s]:
            if kept != s:
                pool[kept, :] = pool[s, :]
            renumber[s] = kept
            kept += 1
    pool[kept:used, :] = 0
    for i in range(set_slot.shape[0]):
        if set_slot[i] >= 0:
            set_slot[i] = renumber[set_slot[i]]
    om[SLOTS_USED] = kept
