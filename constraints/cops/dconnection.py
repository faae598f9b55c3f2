"""d-connection in a DAG on two-word node sets, for the engine's exact oracle.

The closed form of ``graphs.dsep.DSeparation.connected_bits`` in numba kernels: per conditioning
set z, :func:`condition_on` builds the tables once, then :func:`connected` answers one source
against a set of targets.  The DAG is :func:`dag_rows` of a ``DSeparation``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from constraints.cops.node_words import ONE, ZERO, bit, has, lowest, to_words, union_rows
from graphs.dsep import DSeparation
from hybridbn.word_bits import trailing_zeros


def dag_rows(ds: DSeparation) -> np.ndarray:
    """(3, n, 2) uint64: parents, children and ancestors (the node included) of every node."""
    rows = (ds.parent_masks, ds.child_masks, ds.ancestor_masks)
    return np.array([[to_words(m) for m in masks] for masks in rows],
                    dtype=np.uint64).reshape(3, ds.n, 2)


@njit(cache=True)
def condition_on(dag, zl, zh, comp_id, comp_sets):
    """Tables of d-connection given z (Koller & Friedman Alg. 3.1 in closed form; see ``graphs.dsep``).

    Returns A = An(z) (z included) and fills, for every node e of A \\ z, ``comp_id[e]`` and
    ``comp_sets[c] = (component lo, hi, children lo, hi)``: the connected components of the graph
    on A \\ z with the DAG's edges and the pairs of parents of a common child in z.
    """
    pa, ch, anc = dag[0], dag[1], dag[2]
    al, ah = union_rows(anc, zl, zh)
    il, ih = al & ~zl, ah & ~zh
    rl, rh = il, ih
    n_comps = 0
    while rl | rh:
        e = lowest(rl, rh)
        cl, chh = bit(e)
        fl, fh = cl, chh
        kl = kh = wl = wh = ZERO
        while fl | fh:
            ul, uh = union_rows(pa, fl, fh)
            dl, dh = union_rows(ch, fl, fh)
            kl |= dl
            kh |= dh
            sl, sh = dl & zl & ~wl, dh & zh & ~wh  # children in z not met yet: marry their parents
            wl |= sl
            wh |= sh
            pl, ph = union_rows(pa, sl, sh)
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
            v = lowest(ml, mh)
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
def connected(dag, x, tl, th, al, ah, zl, zh, comp_id, comp_sets):
    """The targets (tl, th) d-connected to node x given z (tables from :func:`condition_on`)."""
    pa, ch, anc = dag[0], dag[1], dag[2]
    il, ih = al & ~zl, ah & ~zh
    if has(il, ih, x):
        c = comp_id[x]
        rl, rh, kl, kh = comp_sets[c, 0], comp_sets[c, 1], comp_sets[c, 2], comp_sets[c, 3]
    else:  # x outside A: its ancestors outside A, then the components they have parents in
        rl, rh = anc[x, 0] & ~al, anc[x, 1] & ~ah
        el, eh = union_rows(pa, rl, rh)
        kl, kh = union_rows(ch, rl, rh)
        el &= il
        eh &= ih
        while el | eh:
            c = comp_id[lowest(el, eh)]
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
