"""PC skeleton / PC-stable / full PC: oracle recovery, order independence, orientation, errors."""

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest, DSeparationOracle
from constraints.pc import PCError, orient_v_structures, pc, pc_skeleton
from graphs.pdag import dag_to_cpdag

FAST = ["asia", "cancer", "earthquake", "survey", "sachs", "child", "alarm"]
SLOW = ["insurance", "win95pts"]  # water, hepar2: unbounded-order oracle PC runs for minutes


def assert_oracle_pc_recovers_cpdag(name):
    net = load_network(name)
    A = net.adjacency
    cpdag, r = pc(DSeparationOracle(A), net.n_vars)
    assert np.array_equal(r.allowed, A | A.T)
    assert np.array_equal(cpdag, dag_to_cpdag(A))
    assert r.n_tests == sum(r.tests_by_order.values()) > 0


@pytest.mark.parametrize("name", FAST)
def test_oracle_pc_recovers_cpdag(name):
    assert_oracle_pc_recovers_cpdag(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_oracle_pc_recovers_cpdag_slow(name):
    assert_oracle_pc_recovers_cpdag(name)


def test_oracle_separating_sets_are_valid():
    net = load_network("child")
    oracle = DSeparationOracle(net.adjacency)
    r = pc_skeleton(oracle, net.n_vars)
    removed = r.records[~r.records["allowed"]]
    assert len(removed) == net.n_vars * (net.n_vars - 1) // 2 - net.n_edges
    for u, v, sep, order in zip(removed["u"], removed["v"], removed["sepset"], removed["order"]):
        assert oracle(u, v, sep).p_value == 1.0 and len(sep) == order
    assert sum(r.removed_by_order.values()) == len(removed)


@pytest.fixture(scope="module")
def alarm_data():
    net = load_network("alarm")
    ds = forward_sample(net, 2000, seed=1)
    return net, ds.data, ds.arities


def test_stable_skeleton_is_order_independent(alarm_data):
    net, data, arities = alarm_data
    perm = np.random.default_rng(0).permutation(net.n_vars)
    for stable, must_match in ((True, True), (False, None)):
        r1 = pc_skeleton(CITest(data, arities), net.n_vars, max_order=2, stable=stable)
        r2 = pc_skeleton(CITest(data[:, perm], arities[perm]), net.n_vars, max_order=2, stable=stable)
        back = r2.allowed[np.ix_(np.argsort(perm), np.argsort(perm))]
        if must_match:
            assert np.array_equal(r1.allowed, back)
        else:  # original PC: same test results, at most a few edges differ
            assert (r1.allowed != back).sum() // 2 <= 5


def test_data_pc_is_reasonable_and_orders_nest(alarm_data):
    net, data, arities = alarm_data
    truth = net.adjacency | net.adjacency.T
    test = CITest(data, arities)
    prev = None
    for order in (0, 1, 2):
        r = pc_skeleton(test, net.n_vars, max_order=order)
        assert max(r.tests_by_order) <= order
        if prev is not None:  # higher orders only remove more edges
            assert not (r.allowed & ~prev).any()
        prev = r.allowed
    tp = (prev & truth).sum() // 2
    assert tp / net.n_edges > 0.85 and tp / (prev.sum() // 2) > 0.9
    unstable = pc_skeleton(test, net.n_vars, max_order=2, stable=False)
    assert unstable.n_tests <= r.n_tests  # live adjacencies shrink the pools


def test_v_structures_and_conflicts():
    # skeleton 0 - 2 - 1 and 1 - 3 - 4 ... collider 0 -> 2 <- 1 (2 not in sepset(0, 1))
    S = np.zeros((3, 3), bool)
    S[0, 2] = S[2, 0] = S[1, 2] = S[2, 1] = True
    P = orient_v_structures(S, {(0, 1): []})
    assert P[0, 2] and P[1, 2] and not P[2, 0] and not P[2, 1]
    assert np.array_equal(orient_v_structures(S, {(0, 1): [2]}), S)
    # conflict: chain 0 - 1 - 2 - 3 with colliders wanted at 1 (0, 2) and at 2 (1, 3):
    # triple at c=1 comes first, sets 2 -> 1; the later triple may not reverse it
    C = np.zeros((4, 4), bool)
    for a, b in ((0, 1), (1, 2), (2, 3)):
        C[a, b] = C[b, a] = True
    P = orient_v_structures(C, {(0, 2): [], (1, 3): [], (0, 3): []})
    assert P[0, 1] and not P[1, 0] and P[2, 1] and not P[1, 2] and P[3, 2] and not P[2, 3]


@pytest.mark.parametrize("kwargs", [{"alpha": 0.0}, {"alpha": 1.0}, {"alpha": -0.1},
                                    {"max_order": -1}, {"max_order": 1.5}])
def test_bad_arguments(kwargs):
    oracle = DSeparationOracle(np.zeros((3, 3), bool))
    with pytest.raises(PCError):
        pc_skeleton(oracle, 3, **kwargs)
    with pytest.raises(ValueError):
        pc(oracle, 3, **kwargs)


@pytest.mark.parametrize("name,rows", [("alarm", 2000), ("insurance", 1000), ("child", 500),
                                       ("hailfinder", 1000)])
@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("df_adjust", ["adf", "none"])
def test_batched_pc_equals_one_test_at_a_time(name, rows, statistic, df_adjust):
    """Compiled batched levels give the per-test PC-stable's skeleton, records and counts."""
    net = load_network(name)
    ds = forward_sample(net, rows, seed=5)
    runs = [pc_skeleton(CITest(ds.data, ds.arities, statistic=statistic, df_adjust=df_adjust),
                        net.n_vars, max_order=2, batched=batched) for batched in (True, False)]
    fast, slow = runs
    assert np.array_equal(fast.allowed, slow.allowed)
    assert fast.tests_by_order == slow.tests_by_order and fast.removed_by_order == slow.removed_by_order
    assert fast.records.drop(columns="sepset").equals(slow.records.drop(columns="sepset"))
    assert list(fast.records["sepset"]) == list(slow.records["sepset"])
    assert fast.n_tests > net.n_vars * (net.n_vars - 1) // 2  # order 1 and 2 tests ran


def test_full_pc_batched_equals_one_test_at_a_time(alarm_data):
    net, data, arities = alarm_data
    (c1, r1), (c2, r2) = (pc(CITest(data, arities, min_rows_per_df=0), net.n_vars, max_order=3,
                             batched=b) for b in (True, False))
    assert np.array_equal(c1, c2) and r1.tests_by_order == r2.tests_by_order


def test_pc_levels_split_over_executors_equal_one_process():
    """Levels split into tasks on a process pool and on a local Dask cluster give the
    single-process skeleton, records and counts."""
    from pipeline.core.executors import DaskExecutor, LocalExecutor

    net = load_network("insurance")
    ds = forward_sample(net, 1000, seed=2)

    def run(**kwargs):
        return pc_skeleton(CITest(ds.data, ds.arities, statistic="x2"), net.n_vars, max_order=2, **kwargs)

    whole = run()
    assert run(n_jobs=2).same_result(whole)
    assert run(executor=LocalExecutor(1), n_groups=7).same_result(whole)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert run(executor=DaskExecutor(client), n_groups=5).same_result(whole)
