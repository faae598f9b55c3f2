"""Cops-and-robbers learner: bad input, limits, erroneous oracles and statistical tests."""

import time
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import hashed_oracle

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citest_batch import compute_threads
from constraints.citests import CITest
from constraints.cops import (
    MAX_VARS,
    CopsInputError,
    contract_decomposition,
    cops_and_robbers,
    cops_restriction,
    independence_oracle,
    learn_cops,
)
from constraints.cops.data_oracle import DataIndependence
from constraints.cops.oracle import CountingOracle, OracleTimeout
from constraints.methods import run_cops
from constraints.restriction import PairLog
from constraints.cops.solver import ComponentSearch, find_components, learn_decomposition
from graphs.dsep import DSeparation
from graphs.metrics import shd
from graphs.pdag import dag_to_cpdag
from graphs.treedec import TreeDecomposition, validate_tree_decomposition


def complete_dag(n):
    return np.triu(np.ones((n, n), dtype=bool), 1)


def dsep(A):
    ds = DSeparation(A)
    return lambda x, y, S: ds.separated(x, y, S)


@pytest.mark.parametrize("kwargs", [dict(max_k=0), dict(max_k=-2), dict(time_limit=0)])
def test_bad_limits(kwargs):
    with pytest.raises(CopsInputError):
        cops_and_robbers(dsep(complete_dag(3)), 3, **kwargs)


@pytest.mark.parametrize("n", [0, -1, MAX_VARS + 1, 2.5, True])
def test_bad_sizes(n):
    with pytest.raises(ValueError, match="n_vars|bit-set"):
        cops_and_robbers(lambda x, y, S: True, n)


def test_bad_alpha():
    with pytest.raises(CopsInputError):
        independence_oracle(lambda x, y, S: None, alpha=1.5)


def test_width_limit_reports_progress():
    res = cops_and_robbers(dsep(complete_dag(5)), 5, max_k=2)
    assert res.status == "width_limit" and res.cpdag is None and res.k is None
    assert res.k_lower_bound == 2 and res.n_distinct_tests > 0
    assert cops_and_robbers(dsep(complete_dag(5)), 5, max_k=4).k == 4


def test_timeout_reports_what_it_had():
    A = complete_dag(7)
    res = cops_and_robbers(dsep(A), 7, time_limit=1e-9, check_every=50)
    assert res.status == "timeout" and res.phase == "decomposition" and res.cpdag is None
    assert res.n_distinct_tests == sum(res.tests_by_order) > 0


def test_counting_oracle_memo_and_keys():
    calls = []
    oracle = CountingOracle(lambda x, y, S: calls.append((x, y, S)) or len(S) > 0)
    assert oracle(3, 1, 0b101) and oracle(1, 3, 0b101)  # symmetric key, one underlying call
    assert not oracle(0, 2, 0)
    assert calls == [(1, 3, (0, 2)), (0, 2, ())]
    assert oracle.tests_by_order == [1, 0, 1] and oracle.n_distinct == 2 and oracle.n_calls == 3
    timed = CountingOracle(lambda x, y, S: True, time_limit=1e-9, check_every=2)
    timed(0, 1, 0)
    with pytest.raises(OracleTimeout):
        timed(0, 1, 0)  # the clock is checked on cached calls too


def test_component_order_follows_reference_merging():
    # dependencies: 0-2, 1-3, 2-4 (disconnected first), then 4-3 merges {1,3} into {0,2,4}
    edges = {(0, 2), (1, 3), (2, 4), (3, 4)}
    oracle = CountingOracle(lambda x, y, S: (x, y) not in edges)
    comps = find_components(oracle, 6)
    assert comps == [0b11111, 1 << 5]


@pytest.mark.parametrize("seed", range(6))
def test_erroneous_oracle_terminates_with_a_valid_decomposition(seed):
    n = 9
    res = cops_and_robbers(hashed_oracle(seed), n)
    assert res.status == "ok"
    skel = res.skeleton
    assert np.array_equal(skel, skel.T) and not skel.diagonal().any()
    # the recursion tree is a tree decomposition of the learned skeleton (R' <- R' & R keeps it so)
    for td in (res.raw_decomposition, res.tree_decomposition):
        assert validate_tree_decomposition(skel, td.bags, td.edges) <= res.k
    # orientation never adds adjacencies
    assert not ((res.cpdag | res.cpdag.T) & ~skel).any()


def test_contract_decomposition_merges_nested_neighbours():
    bags = tuple(map(frozenset, [{0}, {0, 1}, {0, 1}, {1, 2}, {0, 3}]))
    td = TreeDecomposition(bags, ((0, 1), (1, 2), (2, 3), (1, 4)))
    out = contract_decomposition(td)
    assert sorted(map(sorted, out.bags)) == [[0, 1], [0, 3], [1, 2]]
    G = np.zeros((4, 4), dtype=bool)
    for a, b in [(0, 1), (1, 2), (0, 3)]:
        G[a, b] = G[b, a] = True
    assert validate_tree_decomposition(G, out.bags, out.edges) == 1
    with pytest.raises(CopsInputError):
        contract_decomposition(TreeDecomposition(bags[:2], ((1, 0),)))


def test_statistical_learner_recovers_sachs_with_enough_data():
    net = load_network("sachs")
    data = forward_sample(net, 20000, seed=3).data
    res = learn_cops(data, net.arities, alpha=0.05)
    assert res.status == "ok" and res.k == 3
    assert shd(res.cpdag, dag_to_cpdag(net.adjacency)) <= 2
    slow = learn_cops(data, net.arities, alpha=0.05, batched=False)  # one test call at a time
    assert np.array_equal(slow.cpdag, res.cpdag) and slow.tests_by_order == res.tests_by_order
    assert slow.separating_sets == res.separating_sets
    # same as wiring the reference test by hand
    test = CITest(data, net.arities, statistic="x2", df_adjust="none", min_rows_per_df=0)
    again = cops_and_robbers(independence_oracle(test, 0.05), net.n_vars)
    assert np.array_equal(again.cpdag, res.cpdag) and again.tests_by_order == res.tests_by_order


def _sample(name, rows, n_vars):
    """The first ``n_vars`` columns of a sample of a network (fast cops runs of width 2-4)."""
    net = load_network(name)
    return forward_sample(net, rows, seed=1).data[:, :n_vars], np.asarray(net.arities)[:n_vars]


def _keep_pairs(n, seed):
    """A few random pairs to keep adjacent (symmetric)."""
    rng = np.random.default_rng(seed)
    keep = np.zeros((n, n), dtype=bool)
    for a, b in rng.choice(n, (3, 2)):
        if a != b:
            keep[a, b] = keep[b, a] = True
    return keep


@pytest.mark.parametrize("name,rows,n_vars", [("asia", 1000, 8), ("child", 500, 14), ("insurance", 1000, 14),
                                              ("alarm", 1000, 16)])
@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("df_adjust", ["adf", "none"])
def test_batched_cops_restriction_equals_the_per_test_one(name, rows, n_vars, statistic, df_adjust):
    """Compiled batches (one and two threads) give the per-test run's skeleton, records (largest
    p-value and its set per pair), test counts by order and decomposition, with and without
    ``keep`` pairs; the pipeline's ``run_cops`` on two threads too."""
    data, arities = _sample(name, rows, n_vars)
    for keep in (None, _keep_pairs(n_vars, rows)):
        def run(batched, jobs=1):
            with compute_threads(jobs):
                return cops_restriction(CITest(data, arities, statistic=statistic, df_adjust=df_adjust),
                                        n_vars, alpha=0.05, keep=keep, batched=batched)

        slow, found = run(False)
        assert found.status == "ok" and slow.n_tests > 0
        for fast, fast_found in (run(True), run(True, 2)):
            assert fast.same_result(slow)
            assert fast_found.tests_by_order == found.tests_by_order and fast_found.k == found.k
            assert fast_found.tree_decomposition == found.tree_decomposition
            assert fast_found.separating_sets == found.separating_sets
        settings = SimpleNamespace(alpha=0.05, cops_time_limit=None)
        piped, meta = run_cops(CITest(data, arities, statistic=statistic, df_adjust=df_adjust), n_vars,
                               settings, keep=keep, n_jobs=2)
        assert piped.same_result(slow) and meta["treewidth"] == found.k


def test_batched_pruning_leaves_no_trace_of_the_tests_past_the_first_dependent_one():
    """all_independent stops at the first dependent node: the tests the batch computed past it
    (ahead of the sequential answer) neither count nor reach the pair records."""
    data, arities = _sample("alarm", 1000, 16)
    test = CITest(data, arities)
    x, cond = 0, 0b110
    p = {y: test(x, y, (1, 2)).p_value for y in range(3, 16)}
    first = next(y for y in range(3, 16) if p[y] <= 0.05)
    assert first < 15
    log = PairLog(test.unmemoised, 16, distinct=True)
    oracle = CountingOracle(DataIndependence(test, 0.05, log), n_vars=16)
    with compute_threads(2):
        assert not oracle.all_independent(x, (1 << 16) - (1 << 3), cond)
    assert oracle.tests_by_order == [0, 0, first - 2] and log.tests_by_order == {2: first - 2}
    assert [log.best_p[x, y] for y in range(3, first + 1)] == [p[y] for y in range(3, first + 1)]
    assert np.isnan(log.best_p[x, first + 1:16]).all()


def test_batched_cops_stopped_by_its_time_limit_allows_a_superset():
    data, arities = _sample("alarm", 1000, 16)
    done, _ = cops_restriction(CITest(data, arities), 16, alpha=0.05)
    for batched in (True, False):
        stopped, found = cops_restriction(CITest(data, arities), 16, alpha=0.05, time_limit=1e-6,
                                          batched=batched)
        assert found.status == "timeout" and stopped.n_tests > 0
        assert (stopped.allowed >= done.allowed).all() and stopped.n_allowed > done.n_allowed


def test_cops_restriction_keeps_one_memo_of_the_tests():
    """The run's CountingOracle asks each distinct test once: the CI test keeps no memo of its own
    and the restriction counts exactly the run's distinct tests."""
    net = load_network("sachs")
    sample = forward_sample(net, 1000, seed=0)
    test = CITest(sample.data, net.arities)
    restriction, res = cops_restriction(test, net.n_vars, alpha=0.05)
    assert res.status == "ok"
    assert test.calls == 0 and test.n_tests == 0
    assert restriction.tests_by_order == dict(enumerate(res.tests_by_order))
    assert np.array_equal(restriction.allowed, res.skeleton)


def test_timeout_in_skeleton_phase_keeps_the_decomposition():
    A = load_network("asia").adjacency
    ds = DSeparation(A)
    phase1 = CountingOracle(lambda x, y, S: ds.separated(x, y, S))
    learn_decomposition(phase1, 8, None, ComponentSearch())
    calls = []

    def slow_after_phase1(x, y, S):
        calls.append(1)
        if len(calls) > phase1.n_distinct:
            time.sleep(0.2)
        return ds.separated(x, y, S)

    res = cops_and_robbers(slow_after_phase1, 8, time_limit=2.0, check_every=1)
    assert res.status == "timeout" and res.phase == "skeleton" and res.cpdag is None
    assert res.k == 2 and res.tree_decomposition.width == 2
