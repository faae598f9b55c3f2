"""Decomposable local scores of one family (child ``X`` with ``r`` states, parent set ``W``).

With ``n_ij`` the count of parent configuration ``j``, ``n_ijk`` the count of ``(j, X = k)``,
``q`` the number of parent configurations (product of parent arities) and ``N`` the rows:

* ``ll``   log-likelihood ``Σ_jk n_ijk log(n_ijk / n_ij)``;
* ``bic``  ``LL - (log N / 2)(r - 1) q`` (Schwarz 1978);
* ``aic``  ``LL - (r - 1) q`` (Akaike 1974);
* ``bdeu`` ``Σ_j [lgamma(α_j) - lgamma(α_j + n_ij) + Σ_k (lgamma(α_jk + n_ijk) - lgamma(α_jk))]``
  with ``α_j = ess / q``, ``α_jk = ess / (q r)`` (Heckerman, Geiger & Chickering 1995);
* ``k2``   the same with ``α_jk = 1``, ``α_j = r`` (Cooper & Herskovits 1992);
* ``qnml`` ``LL - [log C(r q, N) - log C(q, N)]``, the quotient normalised maximum likelihood of
  Silander, Leppä-aho, Jääsaari & Roos (2018): the NML code length of the family's joint
  configurations minus that of its parent configurations, with ``C(K, N)`` the normaliser of
  the NML distribution of one ``K``-valued variable over ``N`` rows (:func:`log_regret`). Like
  BDeu it is score equivalent; unlike BDeu it has no parameter to tune.

Every score has the form ``Σ_jk A(n_ijk) - Σ_j B(n_ij) - penalty(q, r)`` where ``A(0) = B(0) = 0``,
so unobserved configurations and empty cells contribute nothing and the compact counts of
``scores.counts`` suffice. The hot path memoises ``A`` and ``B`` per count in lazily filled
lookup tables (:func:`score_compact`); families whose ``q`` is fixed in advance use full tables
and the uncompacted counts (:func:`score_cells`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.typed import Dict

from hybridbn.errors import HybridBNError
from scores.counts import contingency
from scores.structure_prior import family_log_prior

LL, BIC, AIC, BDEU, K2, QNML = 0, 1, 2, 3, 4, 5
SCORES = {"ll": LL, "bic": BIC, "aic": AIC, "bdeu": BDEU, "k2": K2, "qnml": QNML}
"""Score names accepted by the score stage and their kernel codes."""


class ScoreError(HybridBNError, ValueError):
    """Unknown score or invalid score parameter."""


def score_code(score: str, ess: float = 1.0) -> int:
    """Kernel code of ``score`` (case-insensitive) after checking ``ess`` where it matters."""
    code = SCORES.get(str(score).lower())
    if code is None:
        raise ScoreError(f"unknown score {score!r}; choose one of {sorted(SCORES)}")
    if code == BDEU and not (np.isfinite(ess) and ess > 0):
        raise ScoreError(f"BDeu needs an equivalent sample size ess > 0, got {ess!r}")
    return code


@njit(cache=True, nogil=True)
def penalty_weight(code, n_rows):
    """``c`` with ``penalty = c (r - 1) q``: ``log(N)/2`` for BIC, 1 for AIC, else 0."""
    if code == BIC:
        return 0.5 * math.log(n_rows)
    if code == AIC:
        return 1.0
    return 0.0


@njit(cache=True, nogil=True)
def log_regret(k, n_rows):
    """``log C(K, N)``: log of the NML normaliser ``Σ_x max_θ P(x | θ)`` over all ``N``-row samples
    of one ``K``-valued variable (Kontkanen & Myllymäki 2007; ``C(1, N) = 1``), summed in log space
    in its finite form ``C(K, N) = Σ_{t=0..N} N! / ((N - t)! N^t) binom(K + t - 2, t)``. ``K`` may
    be a float beyond what ``int64`` holds (a product of many arities)."""
    if k <= 1.0 or n_rows <= 0:
        return 0.0
    top = -np.inf
    terms = np.empty(n_rows + 1)
    log_n = math.log(n_rows)
    const = math.lgamma(n_rows + 1.0) - math.lgamma(k - 1.0)
    for t in range(n_rows + 1):
        terms[t] = (const - math.lgamma(n_rows - t + 1.0) - t * log_n + math.lgamma(k + t - 1.0)
                    - math.lgamma(t + 1.0))
        top = max(top, terms[t])
    return top + math.log(np.sum(np.exp(terms - top)))


@njit(cache=True, nogil=True)
def family_penalty(code, q, r, n_rows):
    """``penalty(q, r)`` of a family with ``q`` parent configurations and an ``r``-state child."""
    if code == QNML:
        return log_regret(q * r, n_rows) - log_regret(q, n_rows)
    return penalty_weight(code, n_rows) * (r - 1) * q


_FAMILY_SHAPE = types.UniTuple(types.float64, 2)


@njit(cache=True, nogil=True)
def penalty_memo():
    """An empty memo for :func:`memo_penalty`, keyed by ``(q, r)``."""
    return Dict.empty(key_type=_FAMILY_SHAPE, value_type=types.float64)


@njit(cache=True, nogil=True, inline="always")
def memo_penalty(memo, code, q, r, n_rows):
    """:func:`family_penalty`, with qNML's (``O(N)`` each) kept in ``memo``."""
    if code != QNML:
        return family_penalty(code, q, r, n_rows)
    key = (float(q), float(r))
    if key not in memo:
        memo[key] = family_penalty(code, q, r, n_rows)
    return memo[key]


@njit(cache=True, nogil=True)
def cell_term(code, n, ess, q, r):
    """``A(n)`` for a cell count ``n >= 1``."""
    if code == BDEU:
        a = ess / (q * r)
        return math.lgamma(n + a) - math.lgamma(a)
    if code == K2:
        return math.lgamma(n + 1.0)
    return n * math.log(n)


@njit(cache=True, nogil=True)
def config_term(code, n, ess, q, r):
    """``B(n)`` for a configuration count ``n >= 1``."""
    if code == BDEU:
        a = ess / q
        return math.lgamma(n + a) - math.lgamma(a)
    if code == K2:
        return math.lgamma(n + r) - math.lgamma(r)
    return n * math.log(n)


@njit(cache=True, nogil=True, inline="always")
def score_compact(cells, n_cells, configs, n_cfg, cell_tabs, cfg_tabs, slot, code, ess, q, r, penalty):
    """Local score from compact counts (non-zero ``n_ijk`` and ``n_ij``) and the family's
    :func:`family_penalty`.

    ``cell_tabs[slot]`` and ``cfg_tabs[slot]`` memoise ``A(n)`` and ``B(n)`` for this
    ``(code, ess, q, r)``: NaN entries are computed and stored on first use; counts beyond the
    tables' length are evaluated directly.
    """
    if r == 1:  # every term cancels exactly: a one-state child scores 0 whatever its parents
        return 0.0
    top = cell_tabs.shape[1]
    total = 0.0
    for t in range(n_cells):
        n = cells[t]
        if n < top:
            v = cell_tabs[slot, n]
            if np.isnan(v):
                v = cell_term(code, n, ess, q, r)
                cell_tabs[slot, n] = v
        else:
            v = cell_term(code, n, ess, q, r)
        total += v
    for t in range(n_cfg):
        n = configs[t]
        if n < top:
            v = cfg_tabs[slot, n]
            if np.isnan(v):
                v = config_term(code, n, ess, q, r)
                cfg_tabs[slot, n] = v
        else:
            v = config_term(code, n, ess, q, r)
        total -= v
    return total - penalty


@njit(cache=True, nogil=True, inline="always")
def memo_score(cells, n_cells, configs, n_cfg, cell_tabs, cfg_tabs, slot, r, penalty):
    """:func:`score_compact` from the memo tables alone, or NaN when a term is not memoised yet.

    The same sum in the same order, with no call inside (and one exit), so that numba drops the
    reference counting of its arguments when it inlines it into a hot loop; the loop calls
    :func:`score_compact`, which fills the memo, only on NaN.
    """
    top = cell_tabs.shape[1]
    total = 0.0
    for t in range(n_cells):
        n = cells[t]
        total += cell_tabs[slot, n] if n < top else np.nan
    for t in range(n_cfg):
        n = configs[t]
        total -= cfg_tabs[slot, n] if n < top else np.nan
    return 0.0 if r == 1 else total - penalty


@njit(cache=True, nogil=True)
def term_tables(code, ess, q, r, n_rows):
    """``A(n)`` and ``B(n)`` for ``n = 0..n_rows`` (``A(0) = B(0) = 0``): full tables for :func:`score_cells`."""
    cell_tab = np.zeros(n_rows + 1)
    cfg_tab = np.zeros(n_rows + 1)
    for n in range(1, n_rows + 1):
        cell_tab[n] = cell_term(code, n, ess, q, r)
        cfg_tab[n] = config_term(code, n, ess, q, r)
    return cell_tab, cfg_tab


@njit(cache=True, nogil=True, inline="always")
def score_cells(cnt, n_cells, r_child, r_p, cell_tab, cfg_tab, penalty):
    """Local score and non-zero cells from the full count layout of ``scores.counts.compact_cells``.

    ``cnt[(j * r_child + l) * r_p + s]`` holds every cell, zeros included; ``cell_tab`` and
    ``cfg_tab`` are :func:`term_tables` of the family's ``q`` and ``r``, ``penalty`` its
    :func:`family_penalty`. Terms are added in the order of :func:`score_compact` on
    the compact counts (zero counts add exactly 0.0), so both give bit-identical scores.
    """
    total = 0.0
    nz = 0
    for j in range(n_cells // r_child):
        for s in range(r_p):
            for l in range(r_child):
                k = cnt[(j * r_child + l) * r_p + s]
                total += cell_tab[k]
                nz += k != 0
    for j in range(n_cells // r_child):
        for s in range(r_p):
            nj = 0
            for l in range(r_child):
                nj += cnt[(j * r_child + l) * r_p + s]
            total -= cfg_tab[nj]
    return total - penalty, nz


def score_from_counts(counts: np.ndarray, q: float, score: str = "bdeu", ess: float = 1.0) -> float:
    """Local score from a ``(configurations, r)`` count matrix (zero rows allowed).

    ``q`` is the number of parent configurations (product of parent arities), which may exceed
    the number of rows of ``counts`` since unobserved configurations contribute nothing.
    """
    code = score_code(score, ess)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[1] < 1:
        raise ScoreError(f"counts must be a (configurations, r) matrix, got shape {counts.shape}")
    if np.any(counts < 0):
        raise ScoreError("counts must be non-negative")
    cells = counts[counts > 0]
    configs = counts.sum(axis=1)
    configs = configs[configs > 0]
    n_rows = int(configs.sum())
    empty = np.zeros((1, 1))
    return float(
        score_compact(cells, cells.size, configs, configs.size, empty, empty, 0,
                      code, float(ess), float(q), counts.shape[1],
                      family_penalty(code, float(q), counts.shape[1], max(n_rows, 1)))
    )


def local_score(data: np.ndarray, arities: np.ndarray, child: int, parents=(), score: str = "bdeu",
                ess: float = 1.0) -> float:
    """Local score of ``child`` with parent set ``parents`` on ``(data, arities)``."""
    counts = contingency(data, arities, child, parents)
    q = float(np.prod([float(arities[p]) for p in parents])) if len(parents) else 1.0
    return score_from_counts(counts, q, score, ess)


def local_score_function(data: np.ndarray, arities: np.ndarray, score: str = "bdeu", ess: float = 1.0,
                         structure_prior: float | None = None):
    """``f(child, parents) -> float``: :func:`local_score` bound to one data set and score, plus
    the arc prior of :mod:`scores.structure_prior` when ``structure_prior`` (``E``) is given.

    The form the equivalence-class searches (``search.ges``, ``search.sges``) consume; the prior
    counts arcs, so it keeps the score equivalent.
    """
    score_code(score, ess)  # fail now on an unknown score or a bad ESS, not at the first call
    n_vars = data.shape[1]
    log_prior = np.zeros(n_vars) if structure_prior is None else family_log_prior(
        np.arange(n_vars), n_vars, structure_prior)  # by number of parents

    def f(child: int, parents: tuple[int, ...]) -> float:
        return local_score(data, arities, child, parents, score=score, ess=ess) + float(log_prior[len(parents)])

    return f
