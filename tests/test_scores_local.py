"""Counting kernel and local scores against explicit loops, score equivalence and pgmpy."""

import itertools
import math
import warnings

import numpy as np
import pytest

from scores.counts import CountsError, contingency, parent_configs
from scores.counts import compact_cells
from scores.local import (SCORES as CODES, ScoreError, family_penalty, local_score, log_regret, score_cells,
                          score_compact, score_from_counts, term_tables)

SCORES = ("ll", "bic", "aic", "bdeu", "k2", "qnml")


def _random_data(seed, n_rows=150, arities=(2, 3, 4, 2, 3)):
    rng = np.random.default_rng(seed)
    arities = np.asarray(arities, dtype=np.int64)
    data = np.stack([rng.integers(0, a, n_rows) for a in arities], axis=1).astype(np.uint8)
    data[:, 1] = (data[:, 0] + (rng.random(n_rows) < 0.3)) % arities[1]  # some dependence
    return data, arities


def _regret_by_recurrence(k, n_rows):
    """``log C(K, N)`` by Kontkanen & Myllymäki's (2007) recurrence ``C(K + 2) = C(K + 1) + N / K C(K)``
    from ``C(1) = 1`` and the binomial sum for ``C(2)``: another route than ``log_regret``'s sum."""
    c2 = sum(math.comb(n_rows, h) * (h / n_rows) ** h * ((n_rows - h) / n_rows) ** (n_rows - h)
             for h in range(n_rows + 1))
    logs = [0.0, 0.0, math.log(c2)]  # index K: log C(K), from K = 1
    for j in range(1, k - 1):
        logs.append(np.logaddexp(logs[j + 1], math.log(n_rows / j) + logs[j]))
    return logs[k]


def _explicit_score(data, arities, child, parents, score, ess=1.0):
    """Straightforward re-implementation: dictionaries of counts and per-cell loops."""
    n_rows = data.shape[0]
    r = int(arities[child])
    q = 1
    for p in parents:
        q *= int(arities[p])
    n_jk, n_j = {}, {}
    for row in data:
        j = tuple(int(row[p]) for p in parents)
        n_jk[j, int(row[child])] = n_jk.get((j, int(row[child])), 0) + 1
        n_j[j] = n_j.get(j, 0) + 1
    ll = sum(c * math.log(c / n_j[j]) for (j, _), c in n_jk.items())
    if score == "ll":
        return ll
    if score == "bic":
        return ll - 0.5 * math.log(n_rows) * (r - 1) * q
    if score == "aic":
        return ll - (r - 1) * q
    if score == "qnml":
        return ll - _regret_by_recurrence(q * r, n_rows) + _regret_by_recurrence(q, n_rows)
    if score == "bdeu":
        a_j, a_jk = ess / q, ess / (q * r)
        total = 0.0
        for j, c in n_j.items():
            total += math.lgamma(a_j) - math.lgamma(a_j + c)
            for k in range(r):
                total += math.lgamma(a_jk + n_jk.get((j, k), 0)) - math.lgamma(a_jk)
        return total
    if score == "k2":
        total = 0.0
        for j, c in n_j.items():
            total += math.lgamma(r) - math.lgamma(r + c)
            for k in range(r):
                total += math.lgamma(1 + n_jk.get((j, k), 0))
        return total
    raise AssertionError(score)


@pytest.mark.parametrize("score", SCORES)
def test_local_scores_match_explicit_loops(score):
    data, arities = _random_data(0)
    for child in range(data.shape[1]):
        others = [v for v in range(data.shape[1]) if v != child]
        for size in range(4):
            for parents in itertools.combinations(others, size):
                got = local_score(data, arities, child, parents, score, ess=2.5)
                want = _explicit_score(data, arities, child, parents, score, ess=2.5)
                assert got == pytest.approx(want, rel=1e-11, abs=1e-11), (child, parents)


@pytest.mark.parametrize("score", SCORES)
def test_full_tables_score_bit_identically_to_the_memo_path(score):
    """``score_cells`` on the full cell layout (zeros included) with ``term_tables`` equals
    ``score_compact`` on the compacted counts exactly, and the BDeu/K2 formula through scipy's
    ``gammaln`` to 1e-12; the binary three-parent families of ``scores.candidates`` use it."""
    from scipy.special import gammaln

    code, ess, n_rows, rng = CODES[score], 2.5, 700, np.random.default_rng(3)
    for r_child, r_p, q in ((2, 2, 8.0), (3, 2, 6.0), (2, 4, 16.0)):
        n_cells = int(q) // r_p * r_child
        cell_tab, cfg_tab = term_tables(code, ess, q, r_child, n_rows)
        penalty = family_penalty(code, q, r_child, n_rows)
        memo_cells, memo_cfgs = np.full((1, 64), np.nan), np.full((1, 64), np.nan)  # counts >= 64: direct
        for trial in range(50):
            cnt = rng.multinomial(n_rows, rng.dirichlet(np.full(n_cells * r_p, 0.3))).astype(np.int64)
            cells, configs = np.empty(cnt.size + 1, np.int64), np.empty(cnt.size + 1, np.int64)
            nc, nq = compact_cells(cnt, n_cells, r_child, r_p, cells, configs)
            got, nz = score_cells(cnt, n_cells, r_child, r_p, cell_tab, cfg_tab, penalty)
            want = score_compact(cells, nc, configs, nq, memo_cells, memo_cfgs, 0, code, ess, q, r_child, penalty)
            assert got == want and nz == np.count_nonzero(cnt)
            n_jk = cnt.reshape(-1, r_child, r_p).transpose(0, 2, 1).reshape(-1, r_child)  # (config, child state)
            if score == "bdeu":
                a_jk, a_j = ess / (q * r_child), ess / q
                ref = (gammaln(n_jk + a_jk) - gammaln(a_jk)).sum() - (gammaln(n_jk.sum(1) + a_j) - gammaln(a_j)).sum()
                assert got == pytest.approx(ref, rel=1e-12)
            elif score == "k2":
                ref = gammaln(n_jk + 1.0).sum() - (gammaln(n_jk.sum(1) + r_child) - gammaln(r_child)).sum()
                assert got == pytest.approx(ref, rel=1e-12)


def test_contingency_counts_observed_configurations_only():
    data, arities = _random_data(1, n_rows=40)
    counts = contingency(data, arities, 0, (1, 2, 4))
    assert counts.sum() == 40 and counts.shape[1] == arities[0]
    assert np.all(counts.sum(axis=1) > 0)  # no unobserved configuration rows
    observed = {tuple(row) for row in data[:, [1, 2, 4]]}
    assert counts.shape[0] == len(observed)
    want = sorted(
        tuple(int(((data[:, [1, 2, 4]] == cfg).all(axis=1) & (data[:, 0] == k)).sum()) for k in range(arities[0]))
        for cfg in observed
    )
    assert sorted(map(tuple, counts.tolist())) == want


def test_parent_configs_astronomical_q():
    rng = np.random.default_rng(2)
    arities = np.full(40, 250, dtype=np.int64)  # q = 250**40 overflows int64 many times over
    data = rng.integers(0, 250, size=(500, 40)).astype(np.uint8)
    codes, q_plus = parent_configs(data, arities, range(40))
    assert q_plus == len({tuple(r) for r in data}) == 500
    assert codes.min() == 0 and codes.max() == q_plus - 1
    value = local_score(data, arities, 0, tuple(range(1, 40)), "bdeu")
    assert np.isfinite(value)


def test_regret_equals_its_definition_on_small_samples():
    """``C(K, N)`` summed over every count vector of ``N`` rows on ``K`` values, each weighted by its
    multinomial coefficient and maximised likelihood ``prod (n_k / N)^n_k``."""
    for k in range(1, 5):
        for n_rows in range(1, 8):
            total = 0.0
            for counts in itertools.product(range(n_rows + 1), repeat=k):
                if sum(counts) == n_rows:
                    ways = math.factorial(n_rows) / math.prod(math.factorial(c) for c in counts)
                    total += ways * math.prod((c / n_rows) ** c for c in counts)
            assert log_regret(float(k), n_rows) == pytest.approx(math.log(total), rel=1e-12, abs=1e-14)


def test_regret_of_many_values_follows_the_recurrence():
    for k in (3, 17, 250):
        assert log_regret(float(k), 400) == pytest.approx(_regret_by_recurrence(k, 400), rel=1e-10)


def test_qnml_of_a_tiny_sample_by_hand():
    """X = (0, 0, 1): log-likelihood 2 log(2/3) + log(1/3), C(2, 3) = 1 + 4/9 + 4/9 + 1."""
    data, arities = np.array([[0], [0], [1]], dtype=np.uint8), np.array([2])
    want = 2 * math.log(2 / 3) + math.log(1 / 3) - math.log(26 / 9)
    assert local_score(data, arities, 0, (), "qnml") == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("score", ["bdeu", "bic", "qnml"])
def test_score_equivalence_on_markov_equivalent_dags(score):
    data, arities = _random_data(3, n_rows=400, arities=(3, 2, 4))
    s = lambda c, ps: local_score(data, arities, c, ps, score, ess=3.0)  # noqa: E731
    # a -> b versus b -> a
    assert s(0, ()) + s(1, (0,)) == pytest.approx(s(1, ()) + s(0, (1,)), rel=1e-12)
    # a -> b -> c versus a <- b <- c versus a <- b -> c
    chain = s(0, ()) + s(1, (0,)) + s(2, (1,))
    assert chain == pytest.approx(s(2, ()) + s(1, (2,)) + s(0, (1,)), rel=1e-12)
    assert chain == pytest.approx(s(1, ()) + s(0, (1,)) + s(2, (1,)), rel=1e-12)
    # the v-structure a -> b <- c is a different equivalence class
    collider = s(0, ()) + s(2, ()) + s(1, (0, 2))
    assert abs(collider - chain) > 1e-6


def test_k2_is_not_score_equivalent():
    data, arities = _random_data(4, n_rows=300, arities=(3, 2))
    s = lambda c, ps: local_score(data, arities, c, ps, "k2")  # noqa: E731
    assert abs(s(0, ()) + s(1, (0,)) - s(1, ()) - s(0, (1,))) > 1e-6


def test_score_from_counts_ignores_empty_configurations():
    counts = np.array([[3, 1], [0, 0], [2, 5]])
    q = 7.0  # unobserved configurations beyond the rows given
    assert score_from_counts(counts, q, "bdeu") == pytest.approx(score_from_counts(counts[[0, 2]], q, "bdeu"))


def test_bad_input():
    data, arities = _random_data(5, n_rows=10)
    with pytest.raises(ScoreError, match="unknown score"):
        local_score(data, arities, 0, (1,), "mdl2")
    with pytest.raises(ScoreError, match="ess > 0"):
        local_score(data, arities, 0, (1,), "bdeu", ess=0.0)
    with pytest.raises(CountsError, match="out of range"):
        local_score(data, arities, 0, (9,), "bic")
    with pytest.raises(CountsError, match="outside"):
        local_score(data, np.array([2, 2, 2, 2, 2]), 0, (1,), "bic")
    with pytest.raises(CountsError, match="arities has shape"):
        local_score(data, arities[:3], 0, (1,), "bic")


def test_against_pgmpy():
    pd = pytest.importorskip("pandas")
    estimators = pytest.importorskip("pgmpy.estimators")
    data, arities = _random_data(6, n_rows=300)
    frame = pd.DataFrame(data.astype(np.int64), columns=list("abcde"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bdeu = estimators.BDeu(frame, equivalent_sample_size=4.0)
        bic = estimators.BIC(frame)
        k2 = estimators.K2(frame)
    for child, parents in [(0, ()), (0, (1,)), (2, (0, 3)), (4, (1, 2, 3))]:
        names = [frame.columns[p] for p in parents]
        col = frame.columns[child]
        assert local_score(data, arities, child, parents, "bdeu", ess=4.0) == pytest.approx(
            bdeu.local_score(col, names), rel=1e-10)
        assert local_score(data, arities, child, parents, "bic") == pytest.approx(
            bic.local_score(col, names), rel=1e-10)
        assert local_score(data, arities, child, parents, "k2") == pytest.approx(k2.local_score(col, names), rel=1e-10)

