"""Sparse candidate parents (scores.identification): gains, top-m selection, recovery, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from scores.candidates import build_score_table
from scores.identification import (IdentificationError, conditional_gains, identify_candidates, pairwise_gains,
                                   select_candidates)
from scores.local import local_score


def _random_data(seed: int, n_rows: int = 300):
    rng = np.random.default_rng(seed)
    arities = np.array([2, 3, 1, 4, 2, 5, 3], dtype=np.int64)  # a one-state variable too
    data = np.column_stack([rng.integers(0, r, n_rows) for r in arities])
    data[:, 1] = (data[:, 0] + data[:, 1] * (rng.random(n_rows) < 0.3)) % 3  # some dependence
    data[:, 4] = np.where(rng.random(n_rows) < 0.8, data[:, 0], data[:, 4])
    return data.astype(np.uint8), arities


@pytest.mark.parametrize("score", ["bic", "bdeu", "aic", "ll", "k2", "qnml"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_gains_equal_brute_force_score_differences(score, n_jobs):
    data, arities = _random_data(3)
    gains = pairwise_gains(data, arities, score=score, ess=2.0, n_jobs=n_jobs)
    n = arities.size
    for c in range(n):
        empty = local_score(data, arities, c, (), score=score, ess=2.0)
        for p in range(n):
            if p == c:
                assert gains[p, c] == -np.inf
                continue
            expected = local_score(data, arities, c, (p,), score=score, ess=2.0) - empty
            assert gains[p, c] == pytest.approx(expected, abs=1e-9, rel=1e-12)
    assert np.all(gains[2, :][np.arange(n) != 2] == 0.0) and np.all(gains[:, 2][np.arange(n) != 2] == 0.0)


@pytest.mark.parametrize("score", ["bic", "bdeu", "k2", "qnml"])
def test_conditional_gains_equal_brute_force(score):
    data, arities = _random_data(4)
    first = np.array([3, -1, 0, 0, 1, 4, 5])
    gains = conditional_gains(data, arities, first, score=score, ess=2.0, n_jobs=2)
    for c, p1 in enumerate(first):
        for p in range(arities.size):
            if p1 < 0 or p in (c, p1):
                assert gains[p, c] == -np.inf
                continue
            expected = (local_score(data, arities, c, tuple(sorted((p1, p))), score=score, ess=2.0)
                        - local_score(data, arities, c, (p1,), score=score, ess=2.0))
            assert gains[p, c] == pytest.approx(expected, abs=1e-9, rel=1e-12)


def test_conditional_round_finds_a_parent_without_marginal_dependence():
    rng = np.random.default_rng(5)
    n_rows = 4000
    a = rng.integers(0, 2, n_rows)
    b = (rng.random(n_rows) < 0.2).astype(int)
    c = np.where(rng.random(n_rows) < 0.95, a ^ b, 1 - (a ^ b))  # c follows a, flipped when b = 1
    data = np.column_stack([a, b, c, rng.integers(0, 2, (n_rows, 4))]).astype(np.uint8)
    arities = np.full(data.shape[1], 2, dtype=np.int64)
    gains = pairwise_gains(data, arities)
    assert gains[0, 2] > 100 and gains[1, 2] < 0  # b alone says nothing about c
    plain = identify_candidates(data, arities, m=3, conditional=0)
    both = identify_candidates(data, arities, m=3, conditional=1)
    assert plain[0, 2] and not plain[1, 2]
    assert both[0, 2] and both[1, 2] and not (both & ~plain)[2:, 2].any()


def _brute_force_selection(gains, m, positive_only, symmetric):
    n = gains.shape[0]
    allowed = np.zeros((n, n), dtype=bool)
    for c in range(n):
        ranked = sorted((p for p in range(n) if p != c), key=lambda p: (-gains[p, c], p))[:m]
        for p in ranked:
            if gains[p, c] > 0 or not positive_only:
                allowed[p, c] = True
    if symmetric:
        allowed |= allowed.T
    return allowed


@pytest.mark.parametrize("seed", range(5))
def test_top_m_selection_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 9
    gains = rng.normal(size=(n, n)).round(1)  # rounding makes ties
    for m in range(1, n + 1):
        for positive_only in (True, False):
            for symmetric in (True, False):
                got = select_candidates(gains, m, positive_only=positive_only, symmetric=symmetric)
                assert np.array_equal(got, _brute_force_selection(gains, m, positive_only, symmetric))
                if not symmetric:
                    assert (got.sum(axis=0) <= m).all()
                assert not got.diagonal().any()


@pytest.mark.parametrize("network", ["asia", "sachs"])
def test_true_parents_are_candidates_with_many_rows(network):
    net = load_network(network)
    ds = forward_sample(net, 20000, seed=1)
    allowed = identify_candidates(ds.data, ds.arities, m=4, score="bic", conditional=0)
    truth = np.asarray(net.adjacency, dtype=bool)
    assert (allowed.sum(axis=0) <= 4).all()
    missing = np.argwhere(truth & ~allowed)
    assert missing.size == 0, [(net.variables[p], net.variables[c]) for p, c in missing]


def test_candidates_restrict_the_score_table():
    ds = forward_sample(load_network("asia"), 2000, seed=0)
    allowed = identify_candidates(ds.data, ds.arities, m=2, score="bic")
    table = build_score_table(ds.data, ds.arities, score="bic", palim=2, allowed=allowed)
    for c, fam in enumerate(table.families):
        assert all(allowed[p, c] for ps in fam for p in ps)


@pytest.mark.parametrize("m", [0, -1, True, 1.5, "3"])
def test_bad_m(m):
    data, arities = _random_data(0, 50)
    with pytest.raises(IdentificationError, match="m \\(candidates per child\\)"):
        identify_candidates(data, arities, m=m)
    with pytest.raises(IdentificationError, match="m \\(candidates per child\\)"):
        select_candidates(np.zeros((3, 3)), m)


def test_bad_shapes_and_options():
    data, arities = _random_data(0, 50)
    with pytest.raises(IdentificationError, match="square"):
        select_candidates(np.zeros((3, 4)), 2)
    with pytest.raises(ValueError, match="arities has shape"):
        pairwise_gains(data, arities[:-1])
    with pytest.raises(ValueError, match="unknown score"):
        pairwise_gains(data, arities, score="mdl")
    with pytest.raises(IdentificationError, match="n_jobs"):
        pairwise_gains(data, arities, n_jobs=0)
    with pytest.raises(IdentificationError, match="conditional must be"):
        identify_candidates(data, arities, m=2, conditional=-1)
    with pytest.raises(IdentificationError, match="first must hold"):
        conditional_gains(data, arities, np.zeros(3, dtype=int))
    with pytest.raises(IdentificationError, match="first must hold"):
        conditional_gains(data, arities, np.arange(arities.size))  # each its own parent
