"""CI tests: G2 / X2 against scipy and hand-computed stratified values; conventions; oracle."""

import math
from itertools import product

import numpy as np
import pytest
from scipy.stats import chi2, chi2_contingency

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CIResult, CITest, CITestError, DSeparationOracle


def _random_data(rng, n, arities, dep=True):
    data = np.column_stack([rng.integers(0, r, size=n) for r in arities]).astype(np.uint8)
    if dep:  # make column 1 depend on columns 0 and 2
        data[:, 1] = np.where(rng.random(n) < 0.4, (data[:, 0] + data[:, 2]) % arities[1], data[:, 1])
    return data


def _table(data, x, y, rx, ry, rows=None):
    t = np.zeros((rx, ry))
    sel = slice(None) if rows is None else rows
    np.add.at(t, (data[sel, x], data[sel, y]), 1)
    return t


@pytest.mark.parametrize("statistic,lambda_", [("g2", "log-likelihood"), ("x2", None)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_stratum_matches_scipy(statistic, lambda_, seed):
    rng = np.random.default_rng(seed)
    arities = [3, 4, 2]
    data = _random_data(rng, 400, arities)
    test = CITest(data, arities, statistic=statistic, df_adjust="none")
    stat, p, dof, _ = chi2_contingency(_table(data, 0, 1, 3, 4), correction=False, lambda_=lambda_)
    res = test(0, 1)
    assert res.statistic == pytest.approx(stat, rel=1e-10)
    assert res.dof == dof
    assert res.p_value == pytest.approx(p, rel=1e-8, abs=1e-300)


def test_single_stratum_zero_margins_adf_vs_none():
    # column 1 never takes state 3 and column 0 never state 2: adf strikes them, none keeps them
    rng = np.random.default_rng(5)
    data = np.column_stack([rng.integers(0, 2, 300), rng.integers(0, 3, 300)]).astype(np.uint8)
    adf = CITest(data, [3, 4], statistic="x2")(0, 1)
    none = CITest(data, [3, 4], statistic="x2", df_adjust="none")(0, 1)
    stat, p, dof, _ = chi2_contingency(_table(data, 0, 1, 2, 3), correction=False)
    assert adf.dof == dof == 2 and none.dof == 6
    assert adf.statistic == pytest.approx(stat) and none.statistic == pytest.approx(stat)
    assert adf.p_value == pytest.approx(p)
    assert none.p_value == pytest.approx(chi2.sf(stat, 6))


def _hand_stratified(data, x, y, S, arities, statistic, all_strata=False):
    """Explicit loops over strata and cells (no vectorisation), adf dof.

    Only observed strata are visited (empty strata contribute nothing); ``all_strata`` also walks
    every configuration to check that claim on small cases.
    """
    stat, dof = 0.0, 0
    configs = product(*[range(arities[s]) for s in S]) if all_strata else {tuple(r) for r in data[:, S]}
    for z in configs:
        rows = np.all(data[:, S] == np.array(z, dtype=data.dtype), axis=1) if S else np.ones(len(data), bool)
        n_z = int(rows.sum())
        if n_z == 0:
            continue
        counts = [[0] * arities[y] for _ in range(arities[x])]
        for a, b in zip(data[rows, x], data[rows, y]):
            counts[a][b] += 1
        nx = [sum(r) for r in counts]
        ny = [sum(counts[a][b] for a in range(arities[x])) for b in range(arities[y])]
        dof += (max(sum(v > 0 for v in nx), 1) - 1) * (max(sum(v > 0 for v in ny), 1) - 1)
        for a in range(arities[x]):
            for b in range(arities[y]):
                if nx[a] == 0 or ny[b] == 0:
                    continue
                e = nx[a] * ny[b] / n_z
                if statistic == "x2":
                    stat += (counts[a][b] - e) ** 2 / e
                elif counts[a][b] > 0:
                    stat += 2 * counts[a][b] * math.log(counts[a][b] / e)
    return stat, dof


@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("S", [[2], [2, 3], [3, 2, 4]])
def test_stratified_matches_hand_computation(statistic, S):
    rng = np.random.default_rng(11)
    arities = [3, 3, 2, 4, 3]
    data = _random_data(rng, 150, arities)  # small n: many sparse and empty strata
    stat, dof = _hand_stratified(data, 0, 1, S, arities, statistic, all_strata=True)
    res = CITest(data, arities, statistic=statistic, min_rows_per_df=0)(0, 1, S)
    assert res.statistic == pytest.approx(stat, rel=1e-10)
    assert res.dof == dof
    assert res.p_value == pytest.approx(chi2.sf(stat, dof), rel=1e-8)
    none = CITest(data, arities, statistic=statistic, df_adjust="none", min_rows_per_df=0)(0, 1, S)
    assert none.dof == 2 * 2 * int(np.prod([arities[s] for s in S]))


def test_tiny_stratified_table_by_hand():
    # strata z=0: x,y perfectly matched (2 rows each of (0,0),(1,1)); z=1: 4 rows all (0,1)
    rows = [(0, 0, 0)] * 2 + [(1, 1, 0)] * 2 + [(0, 1, 1)] * 4
    data = np.array(rows, dtype=np.uint8)
    res = CITest(data, [2, 2, 2], min_rows_per_df=0)(0, 1, [2])
    # z=0: G2 = 2 * 4 * 2 log 2 / 2 ... each cell n=2, e=1 -> 2 * (2 log 2 + 2 log 2) = 8 log 2
    assert res.statistic == pytest.approx(8 * math.log(2))
    assert res.dof == 1  # stratum z=1 has one row and one column level: 0 dof
    x2 = CITest(data, [2, 2, 2], statistic="x2", min_rows_per_df=0)(0, 1, [2])
    assert x2.statistic == pytest.approx(4.0)  # four cells (2-1)^2/1


def test_order_of_arguments_is_irrelevant_and_memoised():
    rng = np.random.default_rng(3)
    data = _random_data(rng, 500, [2, 3, 3, 2])
    test = CITest(data, [2, 3, 3, 2])
    a = test(0, 1, [3, 2])
    b = test(1, 0, (2, 3))
    assert a == b
    assert test.calls == 2 and test.tests_by_order == {2: 1} and test.n_tests == 1
    test(0, 3)
    assert test.tests_by_order == {2: 1, 0: 1}


def test_unmemoised_test_equals_the_memoised_one_and_keeps_nothing():
    rng = np.random.default_rng(4)
    data = _random_data(rng, 400, [2, 3, 3, 2])
    test = CITest(data, [2, 3, 3, 2])
    assert test.unmemoised(1, 0, (3, 2)) == CITest(data, [2, 3, 3, 2])(0, 1, [2, 3])
    assert test.calls == 0 and test.n_tests == 0
    with pytest.raises(CITestError):
        test.unmemoised(0, 1, [1])


def test_single_state_variable_is_independent():
    rng = np.random.default_rng(4)
    data = _random_data(rng, 200, [2, 3, 1, 2], dep=False)
    data[:, 2] = 0
    test = CITest(data, [2, 3, 1, 2])
    assert test(2, 0) == CIResult(1.0, 0.0, 0)
    assert test(2, 1, [0, 3]).p_value == 1.0
    assert test(0, 1, [2]).dof == test(0, 1).dof  # conditioning on a constant changes nothing


def test_minimum_sample_rule():
    rng = np.random.default_rng(6)
    arities = [4, 4, 4, 4]
    data = _random_data(rng, 60, arities, dep=False)
    dep = CITest(data, arities)(0, 1, [2, 3])
    ind = CITest(data, arities, insufficient="independent")(0, 1, [2, 3])
    off = CITest(data, arities, min_rows_per_df=0)(0, 1, [2, 3])
    assert dep.dof > 12  # 60 rows < 5 * dof
    assert dep.p_value == 0.0 and ind.p_value == 1.0
    assert 0.0 < off.p_value < 1.0 and off.statistic == dep.statistic
    assert CITest(data, arities)(0, 1).p_value > 0.0  # 9 dof * 5 = 45 <= 60 rows: trusted


def test_large_conditioning_sets_use_observed_strata_only():
    rng = np.random.default_rng(8)
    arities = [3] * 30
    data = _random_data(rng, 300, arities)
    S = list(range(2, 30))  # 3^28 configurations: codes compressed, never overflow
    res = CITest(data, arities, min_rows_per_df=0)(0, 1, S)
    stat, dof = _hand_stratified(data[:, [0, 1, *S]], 0, 1, list(range(2, 30)), arities, "g2")
    assert res.statistic == pytest.approx(stat) and res.dof == dof


def test_independent_and_dependent_data():
    rng = np.random.default_rng(9)
    n = 3000
    x = rng.integers(0, 3, n)
    z = (x + (rng.random(n) < 0.2)) % 3
    y = (z + (rng.random(n) < 0.2)) % 3
    data = np.column_stack([x, y, z]).astype(np.uint8)
    test = CITest(data, [3, 3, 3])
    assert test(0, 1).p_value < 1e-10
    assert test(0, 1, [2]).p_value > 0.01


@pytest.mark.parametrize("kwargs", [{"statistic": "mi"}, {"df_adjust": "bnlearn"},
                                    {"insufficient": "skip"}, {"min_rows_per_df": -1}, {"alpha": 0},
                                    {"alpha": 1.5}])
def test_bad_options(kwargs):
    with pytest.raises(CITestError, match="unknown|must"):
        CITest(np.zeros((5, 2), np.uint8), [2, 2], **kwargs)


def test_bad_data_and_calls():
    with pytest.raises(ValueError, match="arities"):
        CITest(np.zeros((5, 2), np.uint8), [2])
    with pytest.raises(ValueError, match="out of range"):
        CITest(np.full((5, 2), 3, np.uint8), [2, 2])
    test = CITest(np.zeros((5, 3), np.uint8), [2, 2, 2])
    with pytest.raises(ValueError, match="distinct"):
        test(1, 1)
    with pytest.raises(ValueError, match="conditioning set"):
        test(0, 1, [1])
    with pytest.raises(ValueError, match="conditioning set"):
        test(0, 1, [7])


def test_dseparation_oracle():
    A = np.zeros((4, 4), bool)
    A[0, 2] = A[1, 2] = A[2, 3] = True  # 0 -> 2 <- 1, 2 -> 3
    oracle = DSeparationOracle(A)
    assert oracle(0, 1).p_value == 1.0
    assert oracle(0, 1, [2]).p_value == 0.0
    assert oracle(0, 1, [3]).p_value == 0.0
    assert oracle(0, 3, [2]).p_value == 1.0
    assert oracle(3, 0, [2]).p_value == 1.0
    assert oracle.calls == 5 and oracle.tests_by_order == {0: 1, 1: 3}


def test_nominal_dof_is_exact_when_strata_are_compressed():
    """With many high-arity conditioning variables the stratum codes are compressed, but the
    nominal degrees of freedom stay the product of the declared arities (no int64 wrap-around)."""
    rng = np.random.default_rng(0)
    data = rng.integers(0, 255, (60, 14)).astype(np.uint8)
    test = CITest(data, np.full(14, 255), statistic="x2", df_adjust="none", min_rows_per_df=0)
    for cond in ((2, 3), tuple(range(2, 14))):
        res = test(0, 1, cond)
        assert res.dof == 254 * 254 * 255 ** len(cond)
    assert res.p_value == 1.0


def _random_keys(n_vars, max_order, per_order, seed):
    rng = np.random.default_rng(seed)
    for order in range(max_order + 1):
        for _ in range(per_order):
            v = rng.choice(n_vars, order + 2, replace=False)
            yield int(min(v[:2])), int(max(v[:2])), tuple(sorted(int(s) for s in v[2:]))


@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("df_adjust", ["adf", "none"])
@pytest.mark.parametrize("min_rows_per_df", [0, 5])
def test_compiled_batch_equals_one_test_at_a_time(statistic, df_adjust, min_rows_per_df):
    """The batch kernel gives bit-identical p-values, statistics and dof, across the dense,
    observed-strata and compressed-code paths (orders 0-5 on insurance; 14 wide variables, whose
    255 x 255 tables per stratum make each test cost in proportion to its rows: 60 rows reach
    every path, order 1 past the dense limit and orders >= 6 through code compression)."""
    from constraints.citest_batch import TestSettings, evaluate

    net = load_network("insurance")
    ds = forward_sample(net, 1500, seed=3)
    wide = np.random.default_rng(0).integers(0, 255, (60, 14)).astype(np.uint8)
    cases = [(ds.data, ds.arities, list(_random_keys(net.n_vars, 5, 60, 1))),
             (wide, np.full(14, 255), list(_random_keys(14, 12, 3, 2)))]
    for data, arities, keys in cases:
        test = CITest(data, arities, statistic=statistic, df_adjust=df_adjust,
                      min_rows_per_df=min_rows_per_df)
        settings = TestSettings(test)
        for order in {len(S) for _, _, S in keys}:
            batch = [k for k in keys if len(k[2]) == order]
            xs, ys, sets = (np.array(c) for c in zip(*batch))
            p, stat, dof = evaluate(settings, xs, ys, sets.reshape(len(batch), order))
            for (x, y, S), pi, si, di in zip(batch, p, stat, dof):
                res = test(x, y, S)
                assert (res.p_value, res.statistic) == (pi, si)
                # dof: a float product in the kernel, exact below 2^53 (the nominal dof of 12
                # 255-state conditioning variables is not)
                assert res.dof == di if res.dof < 2 ** 53 else math.isclose(res.dof, di, rel_tol=1e-12)


@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("df_adjust", ["adf", "none"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_tests_given_one_set_equal_one_test_at_a_time(statistic, df_adjust, jobs):
    """``evaluate_given`` (one node against many under one set, coded once) gives the tests'
    bit-identical p-values, statistics and dof, ``x`` on either side of each pair, across the
    dense and observed-strata paths; with ``alpha`` it returns the tests up to the first with
    ``p <= alpha`` and none after it (the sequential answer of a conjunction)."""
    from constraints.citest_batch import TestSettings, compute_threads, evaluate_given

    net = load_network("insurance")
    ds = forward_sample(net, 1500, seed=3)
    wide = np.random.default_rng(0).integers(0, 255, (60, 14)).astype(np.uint8)
    rng = np.random.default_rng(1)
    stops = 0
    for data, arities, max_order in [(ds.data, ds.arities, 4), (wide, np.full(14, 255), 3)]:
        test = CITest(data, arities, statistic=statistic, df_adjust=df_adjust, min_rows_per_df=0)
        settings = TestSettings(test)
        n = data.shape[1]
        for order in range(max_order + 1):
            for _ in range(6):
                v = rng.permutation(n)
                x, S = int(v[0]), np.sort(v[1:1 + order])
                ys = np.sort(v[1 + order:])
                expected = [test(x, int(y), S.tolist()) for y in ys]
                with compute_threads(jobs):
                    p, stat, dof = evaluate_given(settings, x, ys, S)
                    assert [(r.p_value, r.statistic, float(r.dof)) for r in expected] == list(zip(p, stat, dof))
                    alpha = float(np.median(p))  # a cut that stops inside the batch
                    first = next(i for i, r in enumerate(expected) if not r.p_value > alpha)
                    p_seq, _, _ = evaluate_given(settings, x, ys, S, alpha)
                    assert p_seq.tolist() == p[:first + 1].tolist()
                    stops += first + 1 < len(ys)
    assert stops > 0


def test_zero_dof_of_a_deterministic_relation_cannot_decide():
    """z = x: given z, x takes one value per stratum, so x _||_ y | z has no degrees of freedom
    left, and z, a copy of x, is information equivalent to it for y (y _||_ z | x has none either);
    with the minimum-sample rule on the test cannot decide (dependent by default, independent with
    insufficient="independent"), without the rule p = 1.  A constant variable stays independent of
    everything."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2, 400)
    y = np.where(rng.random(400) < 0.9, x, 1 - x)
    data = np.column_stack([x, y, x, np.zeros(400, int)])
    arities = [2, 2, 2, 2]
    assert CITest(data, arities)(0, 1).p_value < 1e-6
    res = CITest(data, arities)(0, 1, [2])
    assert res.p_value == 0.0 and res.dof == 0
    assert CITest(data, arities, insufficient="independent")(0, 1, [2]).p_value == 1.0
    assert CITest(data, arities, min_rows_per_df=0)(0, 1, [2]).p_value == 1.0
    assert CITest(data, arities)(0, 3, [2]).p_value == 1.0 and CITest(data, arities)(3, 1, [0]).p_value == 1.0


def _coarsened(ones_per_stratum, rows_per_stratum=40):
    """Columns (x, y, z): z in 0..3 with ``rows_per_stratum`` rows each, x = z // 2 (determined by z,
    z not by x), y = 1 in ``ones_per_stratum[z]`` of z's rows: exact counts, no sampling."""
    rows = [(z // 2, int(k < ones), z) for z, ones in enumerate(ones_per_stratum) for k in range(rows_per_stratum)]
    return np.array(rows, dtype=np.uint8), [2, 2, 4]


def _g2_given(data, a, b, s):
    """G2 and dof of column ``a`` _||_ column ``b`` given column ``s`` by scipy, stratum by stratum
    over the observed levels (the complement test of a test with no degrees of freedom)."""
    g2 = dof = 0
    for value in np.unique(data[:, s]):
        rows = data[data[:, s] == value]
        _, ia = np.unique(rows[:, a], return_inverse=True)
        _, ib = np.unique(rows[:, b], return_inverse=True)
        table = np.zeros((ia.max() + 1, ib.max() + 1))
        np.add.at(table, (ia, ib), 1)
        if min(table.shape) > 1:
            st = chi2_contingency(table, correction=False, lambda_="log-likelihood")
            g2, dof = g2 + st.statistic, dof + st.dof
    return g2, dof


def test_zero_dof_of_a_coarsening_is_decided_by_what_the_strata_tell_more():
    """x = z // 2 is determined by z, so x _||_ y | z has no degrees of freedom whatever the
    graph. If z tells more about y than x does (y _||_ z | x rejected), z explains the x-y
    association: independent (p = 1). If not, x may be y's link to z: undecided, so dependent
    by default and independent with insufficient="independent" (docs/references.md)."""
    explained, _ = _coarsened([4, 20, 20, 36])  # P(y = 1 | z) = 0.1, 0.5, 0.5, 0.9
    g2, dof = _g2_given(explained, 1, 2, 0)
    p_complement = chi2.sf(g2, dof)
    assert dof == 2 and p_complement < 1e-3  # hand check: z matters within both values of x
    arities = [2, 2, 4]
    res = CITest(explained, arities)(0, 1, [2])
    assert (res.p_value, res.dof) == (1.0, 0)
    assert CITest(explained, arities)(0, 1).p_value < 0.05  # x and y do depend on each other
    # the complement is judged at the test's level: below its p-value it cannot decide
    assert CITest(explained, arities, alpha=p_complement / 2)(0, 1, [2]).p_value == 0.0
    assert CITest(explained, arities, alpha=min(2 * p_complement, 0.5))(0, 1, [2]).p_value == 1.0

    mediated, _ = _coarsened([10, 10, 30, 30])  # P(y = 1 | z) depends on x = z // 2 only
    assert _g2_given(mediated, 1, 2, 0)[0] == pytest.approx(0.0, abs=1e-12)
    assert CITest(mediated, arities)(0, 1, [2]).p_value == 0.0
    assert CITest(mediated, arities, insufficient="independent")(0, 1, [2]).p_value == 1.0
    assert CITest(mediated, arities, min_rows_per_df=0)(0, 1, [2]).p_value == 1.0


def test_zero_dof_of_a_half_copy_cannot_decide():
    """x = (z != 0) is determined by z, and z = 0 exactly when x = 0: on the rows of x = 0 the
    two are copies. The complement y _||_ z | x is rejected (z matters within x = 1), which
    decides the test (p = 1) when those rows are a quarter of the data, but not when they are
    half of it: there the data cannot tell x from z on most rows, so the test is undecided
    (dependent by default), in CITest and in the batch kernels alike (docs/references.md)."""
    from constraints.citest_batch import TestSettings, evaluate

    ones = [4, 4, 20, 36]
    for rows_at_zero, decided in ((40, True), (120, False)):
        sizes = [rows_at_zero, 40, 40, 40]
        rows = [(int(z != 0), int(k < ones[z] * size // 40), z) for z, size in enumerate(sizes) for k in range(size)]
        data, arities = np.array(rows, dtype=np.uint8), [2, 2, 4]
        g2, dof = _g2_given(data, 1, 2, 0)
        assert dof == 2 and chi2.sf(g2, dof) < 1e-3  # the complement is rejected either way
        test = CITest(data, arities)
        res = test(0, 1, [2])
        assert (res.p_value, res.dof) == ((1.0 if decided else 0.0), 0)
        p, _, _ = evaluate(TestSettings(test), np.array([0]), np.array([1]), np.array([[2]]))
        assert p[0] == res.p_value


def test_zero_dof_of_strata_of_two_rows_each_cannot_decide():
    """With two rows per stratum (alike) every variable is determined by z. The complement tests
    reject at 0.05 but have more degrees of freedom than the minimum-sample rule trusts
    (10 * 5 > 24 rows): undecided, so dependent."""
    z = np.repeat(np.arange(12), 2)
    data = np.column_stack([z % 2, (z // 2) % 2, z]).astype(np.uint8)
    for a, s in ((1, 0), (0, 1)):
        g2, dof = _g2_given(data, a, 2, s)
        assert dof == 10 and chi2.sf(g2, dof) < 0.05
    res = CITest(data, [2, 2, 12])(0, 1, [2])
    assert (res.p_value, res.dof) == (0.0, 0)
    assert CITest(data, [2, 2, 12], min_rows_per_df=2)(0, 1, [2]).p_value == 1.0  # trusted at 2 rows per dof


def test_zero_dof_rule_is_the_same_in_the_batch_kernels():
    """The compiled batch and PC level kernels decide the tests with no degrees of freedom as
    ``CITest`` does, and PC keeps the edges of the data's graph: z -> x, z -> y when z tells more
    about y (the x-y association is explained), z -> x -> y when x mediates."""
    from constraints.citest_batch import TestSettings, evaluate
    from constraints.pc import pc_skeleton

    truths = {(4, 20, 20, 36): {(0, 2), (1, 2)}, (10, 10, 30, 30): {(0, 2), (0, 1)}}
    for ones, edges in truths.items():
        data, arities = _coarsened(ones)
        test = CITest(data, arities)
        p, _, dof = evaluate(TestSettings(test), np.array([0]), np.array([1]), np.array([[2]]))
        assert (p[0], dof[0]) == (test(0, 1, [2]).p_value, 0.0)
        for batched in (True, False):
            allowed = pc_skeleton(CITest(data, arities), 3, max_order=1, batched=batched).allowed
            assert set(zip(*np.nonzero(np.triu(allowed, 1)))) == edges


def test_threaded_kernels_keep_their_own_cache_entries():
    """numba's cache does not tell a ``parallel`` compilation from a serial one of the same
    function: each variant of a ``ThreadedKernel`` must have its own cache index, else the one
    compiled first serves both (the threaded PC levels ran on one thread)."""
    from constraints import citest_batch

    kernels = [k for k in vars(citest_batch).values() if isinstance(k, citest_batch.ThreadedKernel)]
    assert len(kernels) >= 3
    for kernel in kernels:
        assert kernel.threads.targetoptions.get("parallel") and not kernel.serial.targetoptions.get("parallel")
        assert kernel.threads._cache._cache_file._index_name != kernel.serial._cache._cache_file._index_name


@pytest.mark.parametrize("n_rows", [1, 63, 64, 1000, 1729])
def test_tables_from_bitsets_equal_the_row_pass(n_rows):
    """Small tables are counted from row bitsets, else by a pass over the rows: both give the
    ``(strata, x, y)`` counts of ``np.add.at`` on ``_strata``'s codes, for conditioning sets of
    0, 1 and 2 variables and a last word that is only partly rows."""
    from constraints.citest_batch import (_bit_counts, _bit_table, _order1_counts, _pair_bits, _pair_codes,
                                          _strata)
    from scores.counts import onehot_bitsets

    rng = np.random.default_rng(n_rows)
    arities = np.array([2, 3, 5, 7], dtype=np.int64)
    cols = np.stack([rng.integers(0, a, n_rows) for a in arities]).astype(np.uint8)
    bits, offsets = onehot_bitsets(cols, arities)
    for x, y, S in [(0, 1, [2]), (2, 3, [0]), (1, 3, [3]), (0, 1, []), (0, 2, [3, 1]), (1, 2, [0, 3])]:
        S = np.array(S, dtype=np.int64)
        key, q = _strata(cols, arities, S)
        want = np.zeros((q, arities[x], arities[y]), dtype=np.int64)
        np.add.at(want, (key, cols[x], cols[y]), 1)
        assert np.array_equal(_bit_table(bits, offsets, arities, x, y, S, q), want)
        if S.size == 1:  # PC's order-1 paths
            z = S[0]
            rows = _order1_counts(_pair_codes(cols, arities, x, y), cols[z], arities[z], arities[x], arities[y])
            pair = _pair_bits(bits, offsets[x], offsets[y], arities[x], arities[y])
            assert np.array_equal(_bit_counts(pair, bits[offsets[z]:offsets[z] + arities[z]]), rows)
            assert np.array_equal(rows, want.ravel())
