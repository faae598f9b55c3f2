"""The exact pruning rules of the parent-set enumeration (``scores.enumeration``), as bounds.

Each generated set ``W`` carries ``bss`` (best score of all its proper subsets) and ``lub`` (the
smallest upper bound its subsets give on their supersets, hence on it). Rules, in order
(``docs/references.md``, exact pruning):

* R0 subset dominance (de Campos & Ji 2011, Lemma 1; GOBNILP / pygobnilp): ``W`` is kept only if
  its score is *strictly* greater than ``bss``; ties go to the subset. Dominance is not
  hereditary, so a dominated set stays alive and its supersets are still generated.
* inherited bound: skip ``W`` unscored when ``lub <= bss`` (then ``W`` and its supersets are
  dominated).
* R1 BDeu (de Campos & Ji 2011; GOBNILP's form ``BDeu(W') <= -q+(W') log r``, no ESS condition),
  tightened to ``BDeu(W') <= -nz(W') log r`` with ``nz`` the non-zero cells ``n_ijk``: in the
  sequential form of BDeu each row is predicted with probability ``(n_ijk^<t + a/r) / (t + a)``,
  at most ``1/r`` for the first row of each observed cell and at most 1 otherwise. ``nz`` (like
  ``q+ <= nz``) never decreases for supersets; so once counted, ``W`` is dropped with all
  supersets when ``-nz(W) log r <= bss``, and ``-nz(W) log r`` bounds every superset of ``W``.
* R3 penalty bound for BIC/AIC: ``LL <= 0`` gives ``s(W') <= -c (r-1) q(W')``, known before
  counting; ``W`` and all supersets are dropped when it is ``<= bss``, and ``-c (r-1) q(W) r_min``
  bounds the proper supersets of ``W``. With ``W = ∅`` this is the automatic ``O(log N)`` parent
  limit of Corollary 1 of Scanagatta et al. (NIPS 2016).
* Theorem 1 of Scanagatta et al. (NIPS 2016, section 2.1) for BIC/AIC: with
  ``Π = W \\ {y0}``, if ``w(y0) <= c (r-1) q(Π) (r_y0 - 1)`` and ``w(Y) <= c (r-1) q(Π) r_Y`` for
  every candidate ``Y``, then ``W`` and all its supersets score at most ``s(Π)``; checked before
  counting. We use ``w(X, Y) = -max(LL(X), LL(Y)) = N min(H(X), H(Y))``, which is the paper's
  ``w`` without its ``MI(X, Y) >= 0`` term: the same Lemma 2 argument holds since
  ``N I(X; Y | Π) <= N min(H(X), H(Y))``, so the bound is valid and tighter.
* entropy rule for BIC/AIC (de Campos, Scanagatta, Corani & Zaffalon 2018): adding ``Y`` to
  ``Π`` raises ``LL`` by ``N I(X; Y | Π) <= min(N H(X | Π), N min(H(X), H(Y)))`` and the
  penalty by ``c (r-1) q(Π) (r_Y - 1)``; when the penalty wins, ``Π ∪ {Y}`` is dominated by
  ``Π``, and so is every ``Π' ∪ {Y}`` with ``Π' ⊇ Π`` (conditional entropies only shrink, the
  penalty only grows). Checked before counting for every ``Y`` in ``W`` against its alive
  subset ``W \\ {Y}``, whose ``-LL = N H(X | W \\ {Y})`` the layer keeps; a pruned ``W`` is not
  kept alive, so none of its supersets is generated.

Every bound prunes only with a relative margin of ``TOL``, so the kept sets are exactly the
non-dominated sets of the full enumeration under the computed scores. The functions here are
inlined into the enumeration's family loop (``inline="always"``) and written without calls or
early exits (see the performance note of ``scores.enumeration``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from scores.local import AIC, BDEU, BIC, penalty_weight

TOL = 1e-9
"""Relative margin by which a bound must beat the best subset score to prune."""

STATS = ("generated", "scored", "kept", "pruned_dominated", "pruned_upper_bound",
         "pruned_penalty_bound", "pruned_theorem1", "pruned_entropy", "pruned_bdeu_bound", "not_expanded")
"""Kernel counters, in order. ``generated = scored + pruned_upper_bound + pruned_penalty_bound +
pruned_theorem1 + pruned_entropy + pruned_bdeu_bound`` and ``scored = kept + pruned_dominated``."""

GENERATED, SCORED, KEPT, DOMINATED = (STATS.index(s) for s in ("generated", "scored", "kept", "pruned_dominated"))
UPPER_BOUND, PENALTY_BOUND, THEOREM1, ENTROPY, BDEU_BOUND, NOT_EXPANDED = (
    STATS.index(s) for s in ("pruned_upper_bound", "pruned_penalty_bound", "pruned_theorem1", "pruned_entropy",
                             "pruned_bdeu_bound", "not_expanded"))
"""Positions of the counters in ``STATS`` (the kernel's ``stats`` array), looked up by name."""


class ChildConstants(NamedTuple):
    """What the bounds (and the counting paths) need of the child and its pool, built once per child."""

    r: int  # child arity
    log_r: float
    c: float  # penalty per parent configuration, ``penalty_weight * (r - 1)`` (0 unless BIC/AIC)
    penalised: bool  # BIC or AIC: the penalty bound, Theorem 1 and the entropy rule apply
    pool_ar: np.ndarray  # arity of each pool entry
    r_max: int
    r_min: int
    w_ratio_max: float  # largest ``w(X, Y) / r_Y`` over the pool (Theorem 1)
    q_req: float  # configurations of the required parents
    common: np.ndarray  # most frequent state of each pool entry (bitset counting)
    quad: bool  # binary child in the cube with room for three parents: full term tables of q = 8


@njit(cache=True, nogil=True)
def child_constants(data, task, rule):
    """The :class:`ChildConstants` of ``task`` (a ``scores.enumeration.ChildTask``) under ``rule``."""
    n = data.cols.shape[1]
    r = data.arities[task.x]
    m = task.pool.shape[0]
    pool_ar = np.empty(m, dtype=np.int64)
    common = np.empty(m, dtype=np.int64)
    r_max = 1
    r_min = 2
    w_ratio_max = 0.0
    for t in range(m):
        pool_ar[t] = data.arities[task.pool[t]]
        r_max = max(r_max, pool_ar[t])
        r_min = pool_ar[t] if t == 0 else min(r_min, pool_ar[t])
        w_ratio_max = max(w_ratio_max, task.w[t] / pool_ar[t])
        o = data.offsets[task.pool[t]]
        common[t] = np.argmax(data.marg[o: o + pool_ar[t]])
    q_req = 1.0
    for t in range(task.req.shape[0]):
        q_req *= data.arities[task.req[t]]
    quad = r == 2 and data.cube_index[task.x] >= 0 and task.req.shape[0] + task.kmax >= 3
    return ChildConstants(r=r, log_r=math.log(r), c=penalty_weight(rule.code, n) * (r - 1),
                          penalised=rule.code == BIC or rule.code == AIC, pool_ar=pool_ar, r_max=r_max, r_min=r_min,
                          w_ratio_max=w_ratio_max, q_req=q_req, common=common, quad=quad)


@njit(cache=True, nogil=True, inline="always")
def cut_before_counting(k, i, y, sets, w, pool_ar, c, penalised, w_ratio_max, q_w, bss, lub, excess):
    """The ``STATS`` index of the first bound that prunes ``W ∪ {y}`` (``W`` the alive set ``i`` of
    ``sets``) before counting, or -1: the inherited bound, then for BIC/AIC the penalty bound R3,
    Theorem 1 (for some ``y0`` in ``W ∪ {y}``, with ``Π = W ∪ {y} \\ {y0}``) and the entropy rule."""
    theorem1 = False
    for t in range(k if penalised else 0):
        y0 = sets[i, t] if t < k - 1 else y
        cq = c * q_w / pool_ar[y0]  # c (r-1) q(Π)
        theorem1 = theorem1 or (w_ratio_max * (1.0 + TOL) <= cq and w[y0] * (1.0 + TOL) <= cq * (pool_ar[y0] - 1))
    margin = TOL * (1.0 + abs(bss))
    cut = -1
    if lub < bss - margin:
        cut = UPPER_BOUND
    elif penalised and -c * q_w < bss - margin:
        cut = PENALTY_BOUND
    elif theorem1:
        cut = THEOREM1
    elif penalised and excess > margin:
        cut = ENTROPY
    return cut


@njit(cache=True, nogil=True, inline="always")
def bdeu_cut(nc, log_r, bss):
    """R1 after counting: ``-nc log r``, the BDeu bound of a family of ``nc`` non-zero cells and its
    supersets, is below the best subset score ``bss``."""
    return -nc * log_r < bss - TOL * (1.0 + abs(bss))


@njit(cache=True, nogil=True, inline="always")
def not_expanded(ub, best):
    """No superset can beat ``best`` (the set's own or a subset's score) under their bound ``ub``."""
    return ub < best - TOL * (1.0 + abs(best))


@njit(cache=True, nogil=True, inline="always")
def superset_bound(lub, nc, q_w, code, log_r, c, penalised, r_min):
    """The bound on the proper supersets of ``W ∪ {y}``: ``lub`` tightened by R1 (BDeu, ``nc``
    non-zero cells) or R3 (BIC/AIC)."""
    if code == BDEU:
        return smaller(lub, -nc * log_r)
    if penalised:
        return smaller(lub, -c * q_w * r_min)
    return lub


@njit(cache=True, nogil=True, inline="always")
def entropy_excess(h_sub, w_y, r_y, c, q_w):
    """Penalty increase minus the largest likelihood gain of adding ``Y`` to a subset ``Π``.

    ``h_sub = -LL(Π) = N H(X | Π)``, ``w_y >= N min(H(X), H(Y))`` and ``q_w = q(Π) r_Y``: the
    gain ``N I(X; Y | Π)`` is at most ``min(h_sub, w_y)`` and the penalty grows by
    ``c q(Π) (r_Y - 1)``; a positive result dominates ``Π ∪ {Y}`` and its supersets.
    """
    return c * (q_w / r_y) * (r_y - 1) - smaller(h_sub, w_y)


@njit(cache=True, nogil=True, inline="always")
def larger(a, b):
    """``max(a, b)`` (Python's choice on ties); the builtin is a function call in numba (see the note
    of ``scores.enumeration``)."""
    return b if b > a else a


@njit(cache=True, nogil=True, inline="always")
def smaller(a, b):
    """``min(a, b)`` (Python's choice on ties), inlined."""
    return b if b < a else a
