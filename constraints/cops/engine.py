"""Compiled cops-and-robbers search with the exact d-separation oracle (networks of up to 128 nodes).

Talvitie & Parviainen, section 3.1, Algorithm 1 (PRESOLVE, SOLVE, EXTRACTCOMPONENT) as
:class:`constraints.cops.solver.CopsSolver` runs it, with the same iteration orders, the same
queries and the same distinct-test counts (``docs/references.md``, cops-and-robbers test counting),
but in numba kernels: node sets are two ``uint64`` words, the memo tables are open-addressing hash
tables in numpy arrays, and the PRESOLVE/SOLVE recursion is an explicit stack, so a search can be
paused after a budget of steps (for the time limit and for growing the tables) and resumed.  Tested
to give the Python solver's results and counts exactly (``tests/test_cops_engine.py``); hepar2,
which the Python solver could not finish in 100 minutes, takes about 11 minutes a pass.

Only the counts need a memo of the oracle: the exact oracle (d-separation,
``graphs.dsep.DSeparation.connected_bits`` in closed form) is recomputed, one call per batch of
pairs.  The distinct pairs asked under one conditioning set S are one bit each in a triangular
bitmap of S (``n (n - 1) / 2`` bits); a run on hepar2 asks about 140 pairs per set.  Larger runs
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

from constraints.cops.oracle import OracleTimeout
from constraints.cops.solver import DecompositionReplay
from graphs.dsep import DSeparation
from graphs.word_bits import popcount, trailing_zeros

logger = logging.getLogger(__name__)

#: Largest network the engine takes (node sets are two 64-bit words).
MAX_ENGINE_VARS = 128
#: Most counting passes a run may split into (each repeats the search).
MAX_PASSES = 64

ZERO = np.uint64(0)
ONE = np.uint64(1)

# kernel status codes
DONE, PAUSED, GROW_SETS, GROW_PRESOLVE, GROW_EXTRACT = range(5)

# solver meta fields (int64 array ``sm``)
SP, PEND_TOP, RESUMING, RETURNED, K, RESULT, PRE_COUNT, EX_COUNT, MEMO_CAP = range(9)
# oracle meta fields (int64 array ``om``)
SLOTS_USED, PART, N_PARTS, CALLS = range(4)
# frame columns (uint64 array ``frames``): cops, robbers, pruned cops, component, untried advancements
F_C, F_R, F_NEWC, F_COMP, F_TODO = 0, 2, 4, 6, 8


# --------------------------------------------------------------------------- two-word node sets

@njit(inline="always")
def _bit(v):
    if v < 64:
        return ONE << np.uint64(v), ZERO
    return ZERO, ONE << np.uint64(v - 64)


@njit(inline="always")
def _lowest(lo, hi):
    """Index of the smallest node of a non-empty set."""
    if lo:
        return np.int64(trailing_zeros(lo))
    return np.int64(64 + trailing_zeros(hi))


@njit(inline="always")
def _size(lo, hi):
    return np.int64(popcount(lo) + popcount(hi))


@njit(inline="always")
def _has(lo, hi, v):
    if v < 64:
        return (lo >> np.uint64(v)) & ONE
    return (hi >> np.uint64(v - 64)) & ONE


@njit(inline="always")
def _up_to(lo, hi, v):
    """The nodes of (lo, hi) with index <= v."""
    if v < 63:
        return lo & ((ONE << np.uint64(v + 1)) - ONE), ZERO
    if v == 63:
        return lo, ZERO
    if v < 127:
        return lo, hi & ((ONE << np.uint64(v - 63)) - ONE)
    return lo, hi


@njit(inline="always")
def _union_rows(rows, lo, hi):
    """Union of ``rows[v]`` over the nodes v of (lo, hi)."""
    ol = ZERO
    oh = ZERO
    while lo:
        v = trailing_zeros(lo)
        ol |= rows[v, 0]
        oh |= rows[v, 1]
        lo &= lo - ONE
    while hi:
        v = trailing_zeros(hi) + np.uint64(64)
        ol |= rows[v, 0]
        oh |= rows[v, 1]
        hi &= hi - ONE
    return ol, oh


@njit(inline="always")
def step_margin(n):
    """Table entries one step of the search may add (an EXTRACTCOMPONENT set, k + 1 pruning sets,
    a frame's pending PRESOLVE keys): the tables are grown before a step when fewer are free."""
    return 2 * n + 8


@njit(inline="always")
def _mix(a, b, c):
    """64-bit hash of up to three words (splitmix64 finaliser)."""
    h = a * np.uint64(0x9E3779B97F4A7C15) ^ (b + np.uint64(0x632BE59BD9B4E019)) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= c * np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return h


# --------------------------------------------------------------------------- exact oracle

@njit(cache=True)
def _condition_on(dag, zl, zh, comp_id, comp_sets):
    """Tables of d-connection given z (Koller & Friedman Alg. 3.1 in closed form; see ``graphs.dsep``).

    Returns A = An(z) (z included) and fills, for every node e of A \\ z, ``comp_id[e]`` and
    ``comp_sets[c] = (component lo, hi, children lo, hi)``: the connected components of the graph
    on A \\ z with the DAG's edges and the pairs of parents of a common child in z.
    """
    pa, ch, anc = dag[0], dag[1], dag[2]
    al, ah = _union_rows(anc, zl, zh)
    il, ih = al & ~zl, ah & ~zh
    rl, rh = il, ih
    n_comps = 0
    while rl | rh:
        e = _lowest(rl, rh)
        cl, chh = _bit(e)
        fl, fh = cl, chh
        kl = kh = wl = wh = ZERO
        while fl | fh:
            ul, uh = _union_rows(pa, fl, fh)
            dl, dh = _union_rows(ch, fl, fh)
            kl |= dl
            kh |= dh
            sl, sh = dl & zl & ~wl, dh & zh & ~wh  # children in z not met yet: marry their parents
            wl |= sl
            wh |= sh
            pl, ph = _union_rows(pa, sl, sh)
            fl = (ul | dl | pl) & il & ~cl
            fh = (uh | dh | ph) & ih & ~chh
            cl |= fl
            chh |= fh
        comp_sets[n_comps, 0] = cl
        comp_sets[n_comps, 1] = chh
        comp_sets[n_comps, 2] = kl
        comp_sets[n_comps, 3] = kh
        ml, mh = cl, chh
        while ml | mh:
            v = _lowest(ml, mh)
            comp_id[v] = n_comps
            if v < 64:
                ml &= ml - ONE
            else:
                mh &= mh - ONE
        n_comps += 1
        rl &= ~cl
        rh &= ~chh
    return al, ah


@njit(cache=True)
def _connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets):
    """The targets (tl, th) d-connected to node x given z (tables from :func:`_condition_on`)."""
    pa, ch, anc = dag[0], dag[1], dag[2]
    il, ih = al & ~zl, ah & ~zh
    if _has(il, ih, x):
        c = comp_id[x]
        rl, rh, kl, kh = comp_sets[c, 0], comp_sets[c, 1], comp_sets[c, 2], comp_sets[c, 3]
    else:  # x outside A: its ancestors outside A, then the components they have parents in
        rl, rh = anc[x, 0] & ~al, anc[x, 1] & ~ah
        el, eh = _union_rows(pa, rl, rh)
        kl, kh = _union_rows(ch, rl, rh)
        el &= il
        eh &= ih
        while el | eh:
            c = comp_id[_lowest(el, eh)]
            rl |= comp_sets[c, 0]
            rh |= comp_sets[c, 1]
            kl |= comp_sets[c, 2]
            kh |= comp_sets[c, 3]
            el &= ~comp_sets[c, 0]
            eh &= ~comp_sets[c, 1]
    hl, hh = tl & rl, th & rh
    ql, qh = tl & ~rl & ~al, th & ~rh & ~ah
    if ql | qh:  # below the nodes where the ball leaves A moving down
        kl &= ~al & ~rl
        kh &= ~ah & ~rh
        while ql:
            v = trailing_zeros(ql)
            if anc[v, 0] & kl or anc[v, 1] & kh:
                hl |= ONE << v
            ql &= ql - ONE
        while qh:
            v = trailing_zeros(qh)
            if anc[v + np.uint64(64), 0] & kl or anc[v + np.uint64(64), 1] & kh:
                hh |= ONE << v
            qh &= qh - ONE
    return hl, hh


# --------------------------------------------------------------------------- distinct-test counting

@njit(inline="always")
def _in_pass(h, om):
    """Whether the conditioning set of hash h is counted in this pass (h >> 40 = PART mod N_PARTS)."""
    return om[N_PARTS] == 1 or np.int64((h >> np.uint64(40)) % np.uint64(om[N_PARTS])) == om[PART]


@njit(cache=True)
def _set_slot(set_keys, set_slot, om, zl, zh):
    """Bitmap row of conditioning set z (a new one if z is new), or -1 if z belongs to another pass."""
    h = _mix(zl, zh, ZERO)
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
def _count_in_slot(pool, counts, om, slot, order, x, tl, th):
    """Count the queries {x, t | z}, t in (tl, th), z the set of bitmap row ``slot`` (-1: not
    counted in this pass) and size ``order``: every one is a call, the new ones distinct tests."""
    om[CALLS] += _size(tl, th)
    if slot >= 0:
        counts[order] += _record(pool, slot, x, tl, th)


@njit(cache=True)
def _count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh):
    """:func:`_count_in_slot` for the conditioning set z."""
    _count_in_slot(pool, counts, om, _set_slot(set_keys, set_slot, om, zl, zh), _size(zl, zh), x, tl, th)


@njit(cache=True)
def _rehash_set_table(set_keys, set_slot, new_keys, new_slot):
    """Rehash the conditioning-set table into the empty arrays ``new_*`` (rows ``set_slot < 0`` left out)."""
    mask = np.uint64(new_keys.shape[0] - 1)
    for i in range(set_keys.shape[0]):
        if set_slot[i] >= 0:
            j = _mix(set_keys[i, 0], set_keys[i, 1], ZERO) & mask
            while new_slot[j] >= 0:
                j = (j + ONE) & mask
            new_keys[j, 0] = set_keys[i, 0]
            new_keys[j, 1] = set_keys[i, 1]
            new_slot[j] = set_slot[i]


@njit(cache=True)
def _keep_pass_sets(set_keys, set_slot, pool, counts, om):
    """Keep only the bitmaps of the sets in pass PART of N_PARTS: the pool is compacted, the rows
    in ``set_slot`` renumbered (-1 for a dropped set; the table must then be rehashed) and the
    counts recomputed from the rows kept."""
    used = om[SLOTS_USED]
    keep = np.zeros(used, dtype=np.bool_)
    counts[:] = 0
    for i in range(set_slot.shape[0]):
        s = set_slot[i]
        if s >= 0 and _in_pass(_mix(set_keys[i, 0], set_keys[i, 1], ZERO), om):
            keep[s] = True
            pairs = 0
            for w in range(pool.shape[1]):
                pairs += popcount(pool[s, w])
            counts[_size(set_keys[i, 0], set_keys[i, 1])] += pairs
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


@njit(cache=True)
def oracle_dependents(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
                      x, tl, th, zl, zh):
    """``CountingOracle.dependents``: the targets dependent on x given z, every pair counted."""
    if not (tl | th):
        return ZERO, ZERO
    _count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh)
    al, ah = _condition_on(dag, zl, zh, comp_id, comp_sets)
    return _connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets)


@njit(cache=True)
def oracle_all_independent(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
                           x, tl, th, zl, zh):
    """``CountingOracle.all_independent``: the queries up to the first dependent target are counted."""
    al, ah = _condition_on(dag, zl, zh, comp_id, comp_sets)
    dl, dh = _connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets)
    if dl | dh:
        tl, th = _up_to(tl, th, _lowest(dl, dh))
    _count_pairs(set_keys, set_slot, pool, counts, om, x, tl, th, zl, zh)
    return not (dl | dh)


# --------------------------------------------------------------------------- solver memo tables
#
# PRESOLVE and EXTRACTCOMPONENT values are deterministic functions of their keys, and every query
# made to compute one again was made (and counted) when it was first computed, so forgetting
# an entry changes neither results nor counts, only the time.  The tables therefore grow up to
# a capacity limit and then become caches: a key probes a window of WINDOW slots and, when all
# are taken, overwrites one of them (rare below a load of one half).

WINDOW = 32
#: Slots a memo table may always grow to, however small the memory budget (about 5 MB).
MIN_MEMO_ENTRIES = 1 << 16


@njit(inline="always")
def _presolve_slot(pre_keys, pre_val, cl, chh, rl, rh):
    mask = np.uint64(pre_keys.shape[0] - 1)
    h = _mix(cl ^ rh, chh, rl)
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
def _presolve_store(pre_keys, pre_val, sm, cl, chh, rl, rh, value):
    i, found = _presolve_slot(pre_keys, pre_val, cl, chh, rl, rh)
    if not pre_val[i]:
        sm[PRE_COUNT] += 1
    pre_keys[i, 0] = cl
    pre_keys[i, 1] = chh
    pre_keys[i, 2] = rl
    pre_keys[i, 3] = rh
    pre_val[i] = value


@njit(cache=True)
def _grow_presolve(pre_keys, pre_val, new_keys, new_val, sm):
    sm[PRE_COUNT] = 0
    for i in range(pre_keys.shape[0]):
        if pre_val[i]:
            _presolve_store(new_keys, new_val, sm, pre_keys[i, 0], pre_keys[i, 1], pre_keys[i, 2],
                            pre_keys[i, 3], pre_val[i])


@njit(inline="always")
def _extract_slot(ex_keys, cl, chh, tag):
    """Slot of EXTRACTCOMPONENT(C, r0), ``tag = r0 + 1`` (0 marks a free slot)."""
    mask = np.uint64(ex_keys.shape[0] - 1)
    h = _mix(cl, chh, tag)
    i = h & mask
    for _ in range(WINDOW):
        if not ex_keys[i, 2]:
            return i, False
        if ex_keys[i, 0] == cl and ex_keys[i, 1] == chh and ex_keys[i, 2] == tag:
            return i, True
        i = (i + ONE) & mask
    return (h + (h >> np.uint64(59))) & mask, False


@njit(inline="always")
def _extract_store(ex_keys, ex_val, sm, i, cl, chh, tag, bl, bh):
    if not ex_keys[i, 2]:
        sm[EX_COUNT] += 1
    ex_keys[i, 0] = cl
    ex_keys[i, 1] = chh
    ex_keys[i, 2] = tag
    ex_val[i, 0] = bl
    ex_val[i, 1] = bh


@njit(cache=True)
def _grow_extract(ex_keys, ex_val, new_keys, new_val, sm):
    sm[EX_COUNT] = 0
    for i in range(ex_keys.shape[0]):
        if ex_keys[i, 2]:
            j, _ = _extract_slot(new_keys, ex_keys[i, 0], ex_keys[i, 1], ex_keys[i, 2])
            _extract_store(new_keys, new_val, sm, j, ex_keys[i, 0], ex_keys[i, 1], ex_keys[i, 2],
                           ex_val[i, 0], ex_val[i, 1])


# --------------------------------------------------------------------------- Algorithm 1

@njit(cache=True)
def split(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets, ex_keys, ex_val, sm,
          verts, cl, chh, rl, rh):
    """R' = EXTRACTCOMPONENT(C, min R) & R and the cops C' left after pruning (Lemmas 2-3).

    EXTRACTCOMPONENT is memoised on (C, r0); its queue pops its minimum and each scan asks the
    non-cop vertices not yet robbers, given the full cop set.  Cops are pruned in index order,
    each tested given the shrinking set, stopping at the first adjacent robber.
    """
    r0 = _lowest(rl, rh)
    tag = np.uint64(r0 + 1)
    i, found = _extract_slot(ex_keys, cl, chh, tag)
    if found:
        bl, bh = ex_val[i, 0], ex_val[i, 1]
    else:
        al, ah = _condition_on(dag, cl, chh, comp_id, comp_sets)
        fl, fh = verts[0] & ~cl, verts[1] & ~chh
        bl, bh = _bit(r0)
        ql, qh = bl, bh
        slot = -2  # the bitmap row of C, looked up once, when the first query is asked
        while ql | qh:
            r1 = _lowest(ql, qh)
            if r1 < 64:
                ql &= ql - ONE
            else:
                qh &= qh - ONE
            tl, th = fl & ~bl, fh & ~bh
            if tl | th:
                if slot == -2:
                    slot = _set_slot(set_keys, set_slot, om, cl, chh)
                _count_in_slot(pool, counts, om, slot, _size(cl, chh), r1, tl, th)
                dl, dh = _connected(dag, r1, tl, th, al, ah, cl, chh, comp_id, comp_sets)
                bl |= dl
                bh |= dh
                ql |= dl
                qh |= dh
        _extract_store(ex_keys, ex_val, sm, i, cl, chh, tag, bl, bh)
    comp_l, comp_h = bl & rl, bh & rh  # the semi-invariant R' <- R' & R (section 4.2)
    nl, nh = cl, chh
    ml, mh = cl, chh
    while ml | mh:
        c = _lowest(ml, mh)
        xl, xh = _bit(c)
        ml &= ~xl
        mh &= ~xh
        sl, sh = nl & ~xl, nh & ~xh
        if oracle_all_independent(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
                                  c, comp_l, comp_h, sl, sh):
            nl, nh = sl, sh
    return comp_l, comp_h, nl, nh


@njit(cache=True)
def advance(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets,
            pre_keys, pre_val, ex_keys, ex_val, frames, frame_pending, pending, sm, verts, budget):
    """Run the PRESOLVE/SOLVE recursion of the solver in ``sm``/``frames`` for up to ``budget`` steps.

    Frame f holds PRESOLVE(C, R) (the final call PRESOLVE(C, R \\ R') runs in the same frame, its
    (C, R) keys collected in ``pending`` and memoised with the frame's result), the pruned cops C',
    the component R' and the advancements of SOLVE(C', R') not tried yet.  Returns DONE (result
    in ``sm[RESULT]``), PAUSED, or a GROW_* code before a step that might overflow a table.
    """
    k1 = sm[K] + 1
    margin = step_margin(dag.shape[1])
    while budget > 0:
        budget -= 1
        if 2 * (om[SLOTS_USED] + margin) > set_keys.shape[0] or om[SLOTS_USED] + margin > pool.shape[0]:
            return GROW_SETS
        if 2 * (sm[PRE_COUNT] + margin) > pre_keys.shape[0] and pre_keys.shape[0] < sm[MEMO_CAP]:
            return GROW_PRESOLVE
        if 2 * (sm[EX_COUNT] + margin) > ex_keys.shape[0] and ex_keys.shape[0] < sm[MEMO_CAP]:
            return GROW_EXTRACT
        f = sm[SP] - 1
        result = -1
        try_next = False
        if sm[RESUMING]:  # a child PRESOLVE(C' + a, R' - a) returned sm[RETURNED]
            sm[RESUMING] = 0
            if sm[RETURNED]:  # SOLVE(C', R') won: PRESOLVE(C, R \ R') in the same frame
                frames[f, F_R] &= ~frames[f, F_COMP]
                frames[f, F_R + 1] &= ~frames[f, F_COMP + 1]
            else:
                try_next = True
        if not try_next:
            cl, chh = frames[f, F_C], frames[f, F_C + 1]
            rl, rh = frames[f, F_R], frames[f, F_R + 1]
            if not (rl | rh):
                result = 1
            else:
                v = presolve_value(pre_keys, pre_val, cl, chh, rl, rh)
                if v:
                    result = v - 1
                else:
                    p = sm[PEND_TOP]
                    pending[p, 0] = cl
                    pending[p, 1] = chh
                    pending[p, 2] = rl
                    pending[p, 3] = rh
                    sm[PEND_TOP] = p + 1
                    comp_l, comp_h, nl, nh = split(dag, set_keys, set_slot, pool, counts, om, comp_id,
                                                   comp_sets, ex_keys, ex_val, sm, verts, cl, chh, rl, rh)
                    if _size(nl, nh) == k1:  # no cop can be lifted
                        result = 0
                    else:
                        frames[f, F_NEWC] = nl
                        frames[f, F_NEWC + 1] = nh
                        frames[f, F_COMP] = comp_l
                        frames[f, F_COMP + 1] = comp_h
                        frames[f, F_TODO] = comp_l
                        frames[f, F_TODO + 1] = comp_h
                        try_next = True
        if try_next:  # SOLVE(C', R'): the next advancement a, in increasing order
            tl, th = frames[f, F_TODO], frames[f, F_TODO + 1]
            if not (tl | th):
                result = 0
            else:
                a = _lowest(tl, th)
                xl, xh = _bit(a)
                frames[f, F_TODO] = tl & ~xl
                frames[f, F_TODO + 1] = th & ~xh
                g = f + 1
                frames[g, F_C] = frames[f, F_NEWC] | xl
                frames[g, F_C + 1] = frames[f, F_NEWC + 1] | xh
                frames[g, F_R] = frames[f, F_COMP] & ~xl
                frames[g, F_R + 1] = frames[f, F_COMP + 1] & ~xh
                frame_pending[g] = sm[PEND_TOP]
                sm[SP] = g + 1
        if result >= 0:  # the frame's PRESOLVE chain is decided: memoise it and return to the parent
            for p in range(frame_pending[f], sm[PEND_TOP]):
                _presolve_store(pre_keys, pre_val, sm, pending[p, 0], pending[p, 1], pending[p, 2],
                                pending[p, 3], result + 1)
            sm[PEND_TOP] = frame_pending[f]
            sm[SP] = f
            if f == 0:
                sm[RESULT] = result
                return DONE
            sm[RETURNED] = result
            sm[RESUMING] = 1
    return PAUSED


# --------------------------------------------------------------------------- Python drivers

def _words(mask: int) -> tuple[np.uint64, np.uint64]:
    return np.uint64(mask & 0xFFFFFFFFFFFFFFFF), np.uint64(mask >> 64)


def _mask(lo, hi) -> int:
    return int(lo) | int(hi) << 64


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
    more than ``MAX_PASSES`` passes.  Past ``deadline``
    (``time.monotonic()``) the calls raise :class:`constraints.cops.oracle.OracleTimeout`.
    """

    def __init__(self, ds: DSeparation, *, part: int = 0, n_parts: int = 1,
                 memory_budget: int | None = None, deadline: float | None = None) -> None:
        n = ds.n
        if not 1 <= n <= MAX_ENGINE_VARS:
            raise ValueError(f"the compiled engine takes 1..{MAX_ENGINE_VARS} nodes, got {n}")
        if not 0 <= part < n_parts:
            raise ValueError(f"pass {part} of {n_parts} does not exist")
        self.n = n
        self.dag = _dag_rows(ds)
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
        self.deadline = deadline

    # -- the CountingOracle interface used by the Python parts of the run
    def _tables(self):
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
        _keep_pass_sets(self.set_keys, self.set_slot, self.pool, self.counts, self.om)
        self._rehash_sets(self.set_keys.shape[0])
        logger.info("%d conditioning sets fill the memory budget: this pass keeps counting the %d "
                    "whose hash is %d mod %d, and leaves the rest to a later pass",
                    used, self.om[SLOTS_USED], part, 2 * n_parts)

    def _rehash_sets(self, capacity: int) -> None:
        keys = np.zeros((capacity, 2), dtype=np.uint64)
        slot = np.full(capacity, -1, dtype=np.int64)
        _rehash_set_table(self.set_keys, self.set_slot, keys, slot)
        self.set_keys, self.set_slot = keys, slot

    def check_clock(self) -> None:
        """:class:`OracleTimeout` once the deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OracleTimeout(f"time limit reached after {self.n_calls} oracle calls")

    def dependents(self, x: int, ys: int, cond: int) -> int:
        self.ensure_room(1)
        hits = oracle_dependents(*self._tables(), x, *_words(ys), *_words(cond))
        self.check_clock()
        return _mask(*hits)

    def all_independent(self, x: int, ys: int, cond: int) -> bool:
        self.ensure_room(1)
        out = bool(oracle_all_independent(*self._tables(), x, *_words(ys), *_words(cond)))
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


def _dag_rows(ds: DSeparation) -> np.ndarray:
    """(3, n, 2) uint64: parents, children and ancestors (the node included) of every node."""
    rows = (ds.parent_masks, ds.child_masks, ds.ancestor_masks)
    return np.array([[_words(m) for m in masks] for masks in rows],
                    dtype=np.uint64).reshape(3, ds.n, 2)


class EngineSolver(DecompositionReplay):
    """Algorithm 1 for one component and width bound k, compiled (same interface as ``CopsSolver``).

    The PRESOLVE and EXTRACTCOMPONENT tables grow up to ``oracle.memo_entries`` slots each and
    are caches beyond (see the notes above ``WINDOW``); a position missing from them when the
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
        self.verts_words = np.array(_words(verts), dtype=np.uint64)
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
        self.frames[0, F_C:F_C + 2] = _words(cops)
        self.frames[0, F_R:F_R + 2] = _words(robbers)
        self.frame_pending[0] = 0
        self.sm[SP] = 1
        self.sm[PEND_TOP] = self.sm[RESUMING] = 0
        o = self.oracle
        while True:
            status = advance(*o._tables(), self.pre_keys, self.pre_val, self.ex_keys, self.ex_val,
                             self.frames, self.frame_pending, self.pending, self.sm,
                             self.verts_words, self.STEPS)
            if status == DONE:
                return bool(self.sm[RESULT])
            if status == GROW_SETS:
                o.ensure_room(step_margin(o.n))
            elif status == GROW_PRESOLVE:
                self.pre_keys, self.pre_val = self._doubled(self.pre_keys, self.pre_val, _grow_presolve)
            elif status == GROW_EXTRACT:
                self.ex_keys, self.ex_val = self._doubled(self.ex_keys, self.ex_val, _grow_extract)
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
        cl, chh, nl, nh = split(*o._tables(), self.ex_keys, self.ex_val, self.sm, self.verts_words,
                                *_words(cops), *_words(robbers))
        return _mask(cl, chh), _mask(nl, nh)

    def presolve(self, cops: int, robbers: int) -> bool:
        """PRESOLVE(C, R) after :meth:`run`: from the table, or searched again if it was dropped."""
        if not robbers:
            return True
        v = presolve_value(self.pre_keys, self.pre_val, *_words(cops), *_words(robbers))
        return v == 2 if v else self._search(cops, robbers)
