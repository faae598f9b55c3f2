"""Fast approximate parent-set identification: sparse candidate parents per child.

Exhaustive scoring of every parent set of up to ``palim`` parents costs ``Θ(N n^(palim+1))`` and
is out of reach for networks with a thousand variables (Scanagatta et al., NIPS 2016, section 2.1).
The *sparse candidate* idea of Friedman, Nachman & Pe'er (UAI 1999, "Learning Bayesian network
structure from massive datasets: the sparse candidate algorithm", section 3) restricts each child
``c`` to at most ``m`` candidate parents chosen by a cheap pairwise measure. We use their *score*
measure with the score of the table,

    ``gain[p, c] = s(c | {p}) - s(c | {})``

(for BIC: ``N · MI(p; c)`` minus the extra penalty ``log(N)/2 · (r_c - 1)(r_p - 1)``), without their
full loop of re-selections against the current network.
By default only parents with a positive gain are kept: for BIC a non-positive gain means the pair
alone does not pay for its parameters, so a child may get fewer than ``m`` candidates, or none. Such
a selection misses parents whose effect shows only jointly with another parent (no marginal
dependence). A second, *conditional* round (one step of Friedman et al.'s re-selection against the
current parents, here the child's best candidate ``p1``) adds up to ``conditional`` parents of
largest positive ``s(c | {p1, p}) - s(c | {p1})``.

All ``n (n - 1) / 2`` pairwise contingency tables come from one pass over the one-hot row bitsets
of :func:`scores.counts.onehot_bitsets`: cell ``(a, b)`` of the table of ``(p, c)`` is the popcount
of ``bits[p = a] & bits[c = b]``. The most frequent state of every variable is never counted; its
row and column follow from the state counts, which saves most of the work for binary variables.
Both directions (``c | p`` and ``p | c``) are scored from the same table with the terms of
:mod:`scores.local`, so the gains equal differences of :func:`scores.local.local_score` up to
rounding. Work is split over ``n_jobs`` threads (the kernel releases the GIL). Measured on munin
(1041 variables, 5000 rows): 1.0-1.9 CPU seconds for all 1.08 million ordered pairs, about 5 with
the conditional round.

Defaults (``m = 16``, ``conditional = 4``, positive gains only, not symmetric) were chosen by
measuring k-G on andes, link and munin (BIC, 5000 rows); the figures are in ``docs/treewidth.md``.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from hybridbn.word_bits import popcount
from hybridbn.errors import HybridBNError
from scores.counts import as_columns, onehot_bitsets
from scores.local import (BDEU, K2, cell_term, config_term, memo_penalty, penalty_memo, score_code,
                          score_from_counts)


class IdentificationError(HybridBNError, ValueError):
    """Invalid arguments for candidate-parent identification."""


@njit(cache=True, nogil=True)
def _xlogx_table(code, n_rows):
    """``(use_table, t log t for t = 0..n_rows)``: for LL/BIC/AIC the cell and configuration
    terms are ``A(n) = B(n) = n log n``; BDeu and K2 compute theirs (empty table)."""
    use_table = code != BDEU and code != K2
    xlogx = np.zeros(n_rows + 1 if use_table else 1)
    if use_table:
        for t in range(1, n_rows + 1):
            xlogx[t] = t * np.log(t)
    return use_table, xlogx


@njit(cache=True, nogil=True)
def _config_sum(marg, off, r_parent, r_child, code, ess, xlogx, use_table):
    """Sum of the configuration terms over the states of a single parent (marginals at ``off``)."""
    total = 0.0
    for a in range(r_parent):
        k = marg[off + a]
        if k > 0:
            total += xlogx[k] if use_table else config_term(code, k, ess, float(r_parent), r_child)
    return total


@njit(cache=True, nogil=True)
def _gains_kernel(bits, offsets, arities, marg, dominant, base, code, ess, n_rows, rows, out):
    """``out[p, c]`` and ``out[c, p]`` for every ``p`` in ``rows`` and ``c > p`` (see module docstring)."""
    n = arities.shape[0]
    n_words = bits.shape[1]
    r_max = max(1, arities.max())
    tab = np.zeros((r_max, r_max), dtype=np.int64)
    penalties = penalty_memo()
    use_table, xlogx = _xlogx_table(code, n_rows)
    for t in range(rows.shape[0]):
        p = rows[t]
        rp, op, dp = arities[p], offsets[p], dominant[p]
        for c in range(p + 1, n):
            rc, oc, dc = arities[c], offsets[c], dominant[c]
            for a in range(rp):
                if a == dp:
                    continue
                row_sum = 0
                for b in range(rc):
                    if b == dc:
                        continue
                    cnt = 0
                    for w in range(n_words):
                        cnt += popcount(bits[op + a, w] & bits[oc + b, w])
                    tab[a, b] = cnt
                    row_sum += cnt
                tab[a, dc] = marg[op + a] - row_sum
            col_total = 0
            for b in range(rc):
                if b == dc:
                    continue
                col_sum = 0
                for a in range(rp):
                    if a != dp:
                        col_sum += tab[a, b]
                tab[dp, b] = marg[oc + b] - col_sum
                col_total += tab[dp, b]
            tab[dp, dc] = marg[op + dp] - col_total
            # Σ_cells A(n) is the same in both directions (A depends on q r = r_p r_c only)
            cells = 0.0
            for a in range(rp):
                for b in range(rc):
                    k = tab[a, b]
                    if k > 0:
                        cells += xlogx[k] if use_table else cell_term(code, k, ess, float(rp), rc)
            if rc > 1:  # child c, parent p: configurations are p's states
                cfg = _config_sum(marg, op, rp, rc, code, ess, xlogx, use_table)
                out[p, c] = cells - cfg - memo_penalty(penalties, code, float(rp), rc, n_rows) - base[c]
            else:
                out[p, c] = 0.0
            if rp > 1:  # child p, parent c
                cfg = _config_sum(marg, oc, rc, rp, code, ess, xlogx, use_table)
                out[c, p] = cells - cfg - memo_penalty(penalties, code, float(rc), rp, n_rows) - base[p]
            else:
                out[c, p] = 0.0


def pairwise_gains(data: np.ndarray, arities: np.ndarray, score: str = "bic", ess: float = 1.0,
                   n_jobs: int = 1) -> np.ndarray:
    """``gain[p, c] = s(c | {p}) - s(c | {})`` for every ordered pair, diagonal ``-inf``.

    ``score`` and ``ess`` as in :func:`scores.local.local_score`. ``n_jobs`` threads (``-1``: all
    cores). A one-state parent or child has gain 0.
    """
    code = score_code(score, ess)
    cols = as_columns(data, arities)
    arities = np.asarray(arities, dtype=np.int64)
    n, n_rows = cols.shape
    n_jobs = _jobs(n_jobs)
    bits, offsets = onehot_bitsets(cols, arities)
    marg = np.concatenate([np.bincount(cols[v], minlength=int(arities[v])) for v in range(n)]).astype(np.int64)
    dominant = np.array([int(np.argmax(marg[offsets[v]: offsets[v + 1]])) for v in range(n)], dtype=np.int64)
    base = np.array([score_from_counts(marg[offsets[v]: offsets[v + 1]][None, :], 1.0, score, ess)
                     for v in range(n)])
    out = np.zeros((n, n))
    # interleaved rows balance the triangle: row p does n - 1 - p pairs
    blocks = [np.arange(j, n, max(n_jobs, 1), dtype=np.int64) for j in range(min(n_jobs, max(n, 1)))]
    args = (bits, offsets, arities, marg, dominant, base, code, float(ess), n_rows)
    if len(blocks) <= 1:
        _gains_kernel(*args, np.arange(n, dtype=np.int64), out)
    else:
        with ThreadPoolExecutor(max_workers=len(blocks)) as pool:
            for f in [pool.submit(_gains_kernel, *args, rows, out) for rows in blocks]:
                f.result()
    np.fill_diagonal(out, -np.inf)
    return out


@njit(cache=True, nogil=True)
def _conditional_kernel(cols, arities, first, dominant, row_ptr, row_idx, code, ess, n_rows, children, out):
    """``out[p, c] = s(c | {first[c], p}) - s(c | {first[c]})`` for ``c`` in ``children``.

    Only the rows where ``p`` is not in its most frequent state are visited (``row_idx[row_ptr[p]:
    row_ptr[p + 1]]``); the cells of that state follow from the ``(first[c], c)`` table.
    """
    n = arities.shape[0]
    penalties = penalty_memo()
    r_max = max(1, arities.max())
    hist = np.zeros(r_max * r_max * r_max, dtype=np.int64)
    tot = np.zeros(r_max * r_max, dtype=np.int64)
    z = np.empty(n_rows, dtype=np.int64)
    use_table, xlogx = _xlogx_table(code, n_rows)
    for t in range(children.shape[0]):
        c = children[t]
        p1 = first[c]
        rc, r1 = arities[c], arities[p1]
        span = r1 * rc
        for i in range(n_rows):
            z[i] = cols[p1, i] * rc + cols[c, i]
        # s(c | {p1}) from the (p1, c) table, summed with the same terms as scores.local
        tot[:span] = 0
        for i in range(n_rows):
            tot[z[i]] += 1
        base = 0.0
        for a in range(r1):
            na = 0
            for k in range(rc):
                x = tot[a * rc + k]
                na += x
                if x > 0:
                    base += cell_term(code, x, ess, float(r1), rc)
            if na > 0:
                base -= config_term(code, na, ess, float(r1), rc)
        base -= memo_penalty(penalties, code, float(r1), rc, n_rows)
        for p in range(n):
            if p == c or p == p1:
                continue
            rp, d = arities[p], dominant[p]
            q = r1 * rp
            hist[: q * rc] = 0
            col = cols[p]
            for j in range(row_ptr[p], row_ptr[p + 1]):  # cell (p1 = a, p = b, c = k) at b * span + a * rc + k
                i = row_idx[j]
                hist[col[i] * span + z[i]] += 1
            for zz in range(span):
                rest = 0
                for b in range(rp):
                    if b != d:
                        rest += hist[b * span + zz]
                hist[d * span + zz] = tot[zz] - rest
            total = 0.0
            for j in range(q):  # configuration (a, b) = j = b * r1 + a
                nj = 0
                for k in range(rc):
                    x = hist[j * rc + k]
                    nj += x
                    if x > 0:
                        total += xlogx[x] if use_table else cell_term(code, x, ess, float(q), rc)
                if nj > 0:
                    total -= xlogx[nj] if use_table else config_term(code, nj, ess, float(q), rc)
            out[p, c] = total - memo_penalty(penalties, code, float(q), rc, n_rows) - base


def conditional_gains(data: np.ndarray, arities: np.ndarray, first: np.ndarray, score: str = "bic",
                      ess: float = 1.0, n_jobs: int = 1) -> np.ndarray:
    """``gain[p, c] = s(c | {first[c], p}) - s(c | {first[c]})``: the gain of ``p`` given the parent
    ``first[c]`` (the second step of a greedy parent search; ``-inf`` where ``first[c] < 0``, on the
    diagonal and at ``p = first[c]``). Per pair one pass over the rows where ``p`` is not in its most
    frequent state: ``O(N n^2)`` at worst, about a tenth of it on munin."""
    code = score_code(score, ess)
    cols = as_columns(data, arities)
    arities = np.asarray(arities, dtype=np.int64)
    n, n_rows = cols.shape
    first = np.asarray(first, dtype=np.int64)
    if first.shape != (n,) or np.any(first >= n) or np.any(first == np.arange(n)):
        raise IdentificationError(f"first must hold one parent index (or -1) per variable, none its own, "
                                  f"for {n} variables")
    n_jobs = _jobs(n_jobs)
    dominant = np.array([int(np.argmax(np.bincount(cols[v], minlength=int(arities[v])))) for v in range(n)],
                        dtype=np.int64)
    rare = cols != dominant[:, None].astype(cols.dtype)  # rows outside each variable's commonest state
    row_ptr = np.concatenate([[0], np.cumsum(rare.sum(axis=1))]).astype(np.int64)
    row_idx = np.nonzero(rare)[1].astype(np.int64)
    out = np.full((n, n), -np.inf)
    children = np.flatnonzero((first >= 0) & (arities > 1)).astype(np.int64)
    out[:, first < 0] = -np.inf
    one_state = np.flatnonzero((first >= 0) & (arities == 1))
    out[:, one_state] = 0.0  # a one-state child scores 0 whatever its parents
    blocks = [children[j::n_jobs] for j in range(min(n_jobs, max(children.size, 1)))]
    args = (cols, arities, first, dominant, row_ptr, row_idx, code, float(ess), n_rows)
    if len(blocks) <= 1:
        _conditional_kernel(*args, children, out)
    else:
        with ThreadPoolExecutor(max_workers=len(blocks)) as pool:
            for f in [pool.submit(_conditional_kernel, *args, rows, out) for rows in blocks]:
                f.result()
    out[np.arange(n), np.arange(n)] = -np.inf
    has = first >= 0
    out[first[has], np.flatnonzero(has)] = -np.inf
    return out


def select_candidates(gains: np.ndarray, m: int, positive_only: bool = True, symmetric: bool = False) -> np.ndarray:
    """``allowed[p, c]``: ``p`` is among the ``m`` parents of largest ``gains[p, c]`` of child ``c``.

    Ties go to the smaller index. ``positive_only`` keeps only parents with ``gain > 0``;
    ``symmetric`` also allows ``c -> p`` whenever ``p -> c`` is allowed (at most ``2 m`` per child).
    The diagonal is never allowed.
    """
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise IdentificationError(f"m (candidates per child) must be an integer >= 1, got {m!r}")
    gains = np.asarray(gains, dtype=float)
    if gains.ndim != 2 or gains.shape[0] != gains.shape[1]:
        raise IdentificationError(f"gains must be a square (n, n) matrix, got shape {gains.shape}")
    n = gains.shape[0]
    g = gains.copy()
    np.fill_diagonal(g, -np.inf)
    g[np.isnan(g)] = -np.inf
    keep = min(int(m), max(n - 1, 0))
    # stable sort of -gain per column: largest gain first, ties by smaller index
    order = np.argsort(-g, axis=0, kind="stable")[:keep]
    allowed = np.zeros((n, n), dtype=bool)
    cols = np.broadcast_to(np.arange(n), order.shape)
    allowed[order, cols] = True
    allowed &= g > 0 if positive_only else np.isfinite(g)
    if symmetric:
        allowed |= allowed.T
    np.fill_diagonal(allowed, False)
    return allowed


def identify_candidates(data: np.ndarray, arities: np.ndarray, m: int = 16, score: str = "bic", ess: float = 1.0,
                        positive_only: bool = True, symmetric: bool = False, conditional: int = 4,
                        n_jobs: int = 1, excluded: np.ndarray | None = None) -> np.ndarray:
    """Sparse candidate restriction (Friedman, Nachman & Pe'er 1999): ``allowed[p, c]`` for
    ``scores.candidates.build_score_table(..., allowed=...)``; see :func:`pairwise_gains` and
    :func:`select_candidates`. With ``conditional > 0``, each child with a positive-gain candidate
    also gets up to ``conditional`` parents of largest positive gain given its best candidate
    (:func:`conditional_gains`), which finds parents that matter only jointly with it.
    ``excluded[p, c]`` (e.g. forbidden arcs) are never chosen, so they take no candidate's place."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise IdentificationError(f"m (candidates per child) must be an integer >= 1, got {m!r}")
    if isinstance(conditional, bool) or not isinstance(conditional, (int, np.integer)) or conditional < 0:
        raise IdentificationError(f"conditional must be an integer >= 0, got {conditional!r}")
    gains = pairwise_gains(data, arities, score=score, ess=ess, n_jobs=n_jobs)
    if excluded is not None:
        gains = np.where(excluded, -np.inf, gains)
    allowed = select_candidates(gains, m, positive_only=positive_only, symmetric=symmetric)
    if conditional:
        best = np.argmax(gains, axis=0)
        first = np.where(gains[best, np.arange(gains.shape[0])] > 0, best, -1)
        cond = conditional_gains(data, arities, first, score=score, ess=ess, n_jobs=n_jobs)
        if excluded is not None:
            cond = np.where(excluded, -np.inf, cond)
        allowed |= select_candidates(cond, int(conditional), positive_only=True)
    return allowed


def _jobs(n_jobs) -> int:
    n_jobs = (os.cpu_count() or 1) if n_jobs in (-1, None) else n_jobs
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise IdentificationError(f"n_jobs must be >= 1 or -1, got {n_jobs!r}")
    return int(n_jobs)
