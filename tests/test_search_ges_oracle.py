"""The section-5 oracle score of Chickering & Meek (2015): exact expected log loss + MDL penalty."""

import math

import numpy as np
import pytest

from search.oracle_score import OracleScore, OracleScoreError, all_marginal_entropies, joint_distribution
from search.synthetic import chickering_meek_model


def _two_node():
    # A -> B, binary A, ternary B
    return [[], [0]], [np.array([0.3, 0.7]), np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])]


def test_joint_and_family_score_by_hand():
    parents, cpts = _two_node()
    joint = joint_distribution(parents, cpts)
    assert joint.shape == (2, 3)
    assert joint[1, 0] == pytest.approx(0.7 * 0.6)
    N = 1e6
    s = OracleScore(parents, cpts, n_samples=N)
    ll = N * sum(joint[a, b] * math.log(cpts[1][a, b]) for a in range(2) for b in range(3))
    assert s(1, (0,)) == pytest.approx(ll - 0.5 * math.log(N) * 2 * 2)
    pb = joint.sum(axis=0)
    assert s(1, ()) == pytest.approx(N * float((pb * np.log(pb)).sum()) - 0.5 * math.log(N) * 2)


def test_score_equivalence_and_dependence_detected():
    mdl = chickering_meek_model(6, seed=4)
    s = OracleScore(mdl.parents, mdl.cpts)
    # X -> Y and Y -> X score the same (score equivalence)
    for x in range(6):
        for y in range(x + 1, 6):
            assert s(x, ()) + s(y, (x,)) == pytest.approx(s(y, ()) + s(x, (y,)), rel=1e-12)
    # every true parent improves its child's score given the other parents
    for v, pa in enumerate(mdl.parents):
        for p in pa:
            rest = tuple(q for q in pa if q != p)
            assert s(v, tuple(sorted(pa))) > s(v, rest)


def test_precomputed_entropies_match_lazy():
    mdl = chickering_meek_model(7, seed=1)
    joint = joint_distribution(mdl.parents, mdl.cpts)
    table = all_marginal_entropies(joint)
    lazy = OracleScore(mdl.parents, mdl.cpts, precompute_limit=0)
    for mask in range(1 << 7):
        assert table[mask] == pytest.approx(lazy.entropy(mask), abs=1e-12)
    assert table[0] == 0.0


def test_bad_networks_rejected():
    parents, cpts = _two_node()
    with pytest.raises(OracleScoreError, match="CPT shape"):
        joint_distribution(parents, [cpts[0], cpts[1].T])
    with pytest.raises(OracleScoreError, match="sum to one"):
        joint_distribution(parents, [np.array([0.5, 0.6]), cpts[1]])
    with pytest.raises(OracleScoreError, match="max_size"):
        joint_distribution(parents, cpts, max_size=4)
    with pytest.raises(OracleScoreError, match="own parent"):
        OracleScore(parents, cpts)(1, (1,))


def test_random_model_respects_paper_construction():
    for seed in range(5):
        mdl = chickering_meek_model(9, seed)
        assert mdl.dag.sum(axis=0).max() <= 2
        assert all(c.shape == (2,) * len(p) + (2,) for c, p in zip(mdl.cpts, mdl.parents))
    a, b = chickering_meek_model(9, 3), chickering_meek_model(9, 3)
    assert np.array_equal(a.dag, b.dag) and all(np.array_equal(x, y) for x, y in zip(a.cpts, b.cpts))
