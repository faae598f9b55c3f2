"""Algorithm 1 of Talvitie & Parviainen (section 3.1) as numba kernels on two-word node sets.

:func:`split` is EXTRACTCOMPONENT and the cop pruning of one PRESOLVE step, :func:`advance` the
PRESOLVE/SOLVE recursion as an explicit stack that runs a budget of steps and returns, so that
its driver (``constraints.cops.engine.EngineSolver``) can check the clock and grow the tables.
Same iteration orders and queries as ``constraints.cops.solver.CopsSolver``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from constraints.cops.dconnection import condition_on, connected
from constraints.cops.engine_state import (
    DONE,
    F_C,
    F_COMP,
    F_NEWC,
    F_R,
    F_TODO,
    GROW_EXTRACT,
    GROW_PRESOLVE,
    GROW_SETS,
    K,
    MEMO_CAP,
    PAUSED,
    PEND_TOP,
    PRE_COUNT,
    EX_COUNT,
    RESULT,
    RESUMING,
    RETURNED,
    SP,
    step_margin,
)
from constraints.cops.exact_oracle import oracle_all_independent
from constraints.cops.memo_tables import extract_slot, extract_store, presolve_store, presolve_value
from constraints.cops.node_words import ONE, bit, lowest, size
from constraints.cops.pair_bitmaps import SLOTS_USED, bitmap_row, count_in_slot


@njit(cache=True)
def split(dag, set_keys, set_slot, pool, counts, om, comp_id, comp_sets, ex_keys, ex_val, sm,
          verts, cl, chh, rl, rh):
    """R' = EXTRACTCOMPONENT(C, min R) & R and the cops C' left after pruning (Lemmas 2-3).

    EXTRACTCOMPONENT is memoised on (C, r0); its queue pops its minimum and each scan asks the
    non-cop vertices not yet robbers, given the full cop set.  Cops are pruned in index order,
    each tested given the shrinking set, stopping at the first adjacent robber.
    """
    r0 = lowest(rl, rh)
    tag = np.uint64(r0 + 1)
    i, found = extract_slot(ex_keys, cl, chh, tag)
    if found:
        bl, bh = ex_val[i, 0], ex_val[i, 1]
    else:
        al, ah = condition_on(dag, cl, chh, comp_id, comp_sets)
        fl, fh = verts[0] & ~cl, verts[1] & ~chh
        bl, bh = bit(r0)
        ql, qh = bl, bh
        slot = -2  # the bitmap row of C, looked up once, when the first query is asked
        while ql | qh:
            r1 = lowest(ql, qh)
            if r1 < 64:
                ql &= ql - ONE
            else:
                qh &= qh - ONE
            tl, th = fl & ~bl, fh & ~bh
            if tl | th:
                if slot == -2:
                    slot = bitmap_row(set_keys, set_slot, om, cl, chh)
                count_in_slot(pool, counts, om, slot, size(cl, chh), r1, tl, th)
                dl, dh = connected(dag, r1, tl, th, al, ah, cl, chh, comp_id, comp_sets)
                bl |= dl
                bh |= dh
                ql |= dl
                qh |= dh
        extract_store(ex_keys, ex_val, sm, i, cl, chh, tag, bl, bh)
    comp_l, comp_h = bl & rl, bh & rh  # the semi-invariant R' <- R' & R (section 4.2)
    nl, nh = cl, chh
    ml, mh = cl, chh
    while ml | mh:
        c = lowest(ml, mh)
        xl, xh = bit(c)
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
                    if size(nl, nh) == k1:  # no cop can be lifted
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
                a = lowest(tl, th)
                xl, xh = bit(a)
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
                presolve_store(pre_keys, pre_val, sm, pending[p, 0], pending[p, 1], pending[p, 2],
                                pending[p, 3], result + 1)
            sm[PEND_TOP] = frame_pending[f]
            sm[SP] = f
            if f == 0:
                sm[RESULT] = result
                return DONE
            sm[RETURNED] = result
            sm[RESUMING] = 1
    return PAUSED
