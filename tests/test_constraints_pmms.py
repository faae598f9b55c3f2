"""PMMS and MMPC: oracle recovery, the paper's Figure 1 counterexample, options, errors."""

from itertools import product

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest, DSeparationOracle
from constraints.pmms import mmpc, pmms
from graphs.random_graphs import random_dag


def _truth(name):
    net = load_network(name)
    return net, net.adjacency | net.adjacency.T


@pytest.mark.parametrize("name", ["asia", "cancer", "earthquake", "survey", "sachs"])
def test_oracle_mmpc_recovers_skeleton(name):
    net, truth = _truth(name)
    r = mmpc(DSeparationOracle(net.adjacency), net.n_vars)
    assert np.array_equal(r.allowed, truth)
    removed = r.records[~r.records["allowed"]]
    assert (removed["p_value"] == 1.0).all()  # every forbidden pair carries a separating set


@pytest.mark.slow
# child ~20 s, insurance ~3 min; alarm did not finish in 10 min (exponential MINASSOC over
# large oracle CPCs, ~0.5 ms per d-separation query)
@pytest.mark.parametrize("name", ["child", "insurance"])
def test_oracle_mmpc_recovers_skeleton_slow(name):
    net, truth = _truth(name)
    assert np.array_equal(mmpc(DSeparationOracle(net.adjacency), net.n_vars).allowed, truth)


def assert_oracle_pmms_sound(name):
    """With a 0/1 oracle Assoc only drops to 0, so the greedy search gets past its first step
    only when one variable separates: PMMS then keeps every true edge (no omission, as the paper
    proves), removes every non-adjacent pair separated by {} or one true neighbour, and keeps a
    false edge only where no single true neighbour of either end separates the pair."""
    net, truth = _truth(name)
    oracle = DSeparationOracle(net.adjacency)
    S = pmms(oracle, net.n_vars).allowed
    assert not (truth & ~S).any()
    for u, v in zip(*np.nonzero(np.triu(~truth, 1))):
        nbrs = set(np.flatnonzero(truth[u])) | set(np.flatnonzero(truth[v]))
        single = oracle(u, v).p_value == 1.0 or any(oracle(u, v, [z]).p_value == 1.0 for z in nbrs)
        if single:
            assert not S[u, v], (name, u, v)
    return S, truth


@pytest.mark.parametrize("name", ["asia", "cancer", "earthquake", "survey", "sachs", "child"])
def test_oracle_pmms_no_omissions_and_single_separators(name):
    assert_oracle_pmms_sound(name)


@pytest.mark.parametrize("seed", range(4))
def test_oracle_pmms_exact_on_polytrees(seed):
    # in a polytree every non-adjacent pair is separated by {} or by one neighbour on its path
    rng = np.random.default_rng(seed)
    n = 12
    A = np.zeros((n, n), bool)
    for v in range(1, n):
        u = int(rng.integers(0, v))
        A[u, v] = True
    perm = rng.permutation(n)
    A = A[np.ix_(perm, perm)]
    assert np.array_equal(pmms(DSeparationOracle(A), n).allowed, A | A.T)
    assert np.array_equal(mmpc(DSeparationOracle(A), n).allowed, A | A.T)


@pytest.mark.parametrize("seed", range(3))
def test_oracle_mmpc_random_dags(seed):
    A = random_dag(10, edge_prob=0.3, seed=seed)
    assert np.array_equal(mmpc(DSeparationOracle(A), 10).allowed, A | A.T)


def _figure1_data(n=10000):
    """Figure 1 of the paper: X -> A -> Y and X -> B -> Y, A positively associated with X, Y
    negatively with B, so the two paths' associations cancel.  Our CPTs: P(X=1) = 0.5,
    P(A=X) = 0.7, P(B=X) = 0.8, P(Y=1 | A, B) = [[0.4, 0.1], [0.9, 0.6]].  The data set holds
    exactly round(n P(x, a, b, y)) copies of each configuration (no sampling noise)."""
    py = np.array([[0.4, 0.1], [0.9, 0.6]])
    rows = []
    for x, a, b, y in product(range(2), repeat=4):
        p = 0.5 * (0.7 if a == x else 0.3) * (0.8 if b == x else 0.2) * (py[a, b] if y else 1 - py[a, b])
        rows += [(x, a, b, y)] * round(p * n)
    return np.array(rows, dtype=np.uint8)  # columns X, A, B, Y


def test_figure1_counterexample_pmms_keeps_false_edge_mmpc_removes_it():
    data = _figure1_data()
    X, A, B, Y = range(4)
    test = CITest(data, [2, 2, 2, 2])
    p0 = test(X, Y).p_value
    # the premise of the paper's example: conditioning on A or on B alone raises the association
    assert p0 < 0.05 and test(X, Y, [A]).p_value < p0 and test(X, Y, [B]).p_value < p0
    assert test(X, Y, [A, B]).p_value > 0.99
    truth = np.zeros((4, 4), bool)
    for u, v in ((X, A), (X, B), (A, Y), (B, Y)):
        truth[u, v] = truth[v, u] = True
    S_pmms = pmms(CITest(data, [2] * 4), 4).allowed
    S_mmpc = mmpc(CITest(data, [2] * 4), 4)
    expected = truth.copy()
    expected[X, Y] = expected[Y, X] = True  # the false positive X - Y, and nothing else
    assert np.array_equal(S_pmms, expected)
    assert np.array_equal(S_mmpc.allowed, truth)
    rec = S_mmpc.records.set_index(["u", "v"])
    assert rec.loc[(X, Y), "sepset"] == [A, B] and rec.loc[(X, Y), "order"] == 2


def test_symmetry_correction():
    # with the AND rule an edge needs both memberships; with OR either suffices
    net, truth = _truth("asia")
    oracle = DSeparationOracle(net.adjacency)
    both = pmms(oracle, net.n_vars).allowed
    either = pmms(oracle, net.n_vars, symmetric=False).allowed
    assert not (both & ~either).any() and not (truth & ~both).any()


def test_prune_and_max_order_options():
    net, truth = _truth("sachs")
    oracle = DSeparationOracle(net.adjacency)
    assert np.array_equal(mmpc(oracle, net.n_vars, prune=False).allowed, truth)
    capped = mmpc(oracle, net.n_vars, max_order=1)
    assert max(capped.tests_by_order) <= 1 and not (truth & ~capped.allowed).any()


@pytest.mark.parametrize("kwargs", [{"alpha": 0}, {"alpha": 1.5}, {"max_order": -2}])
def test_bad_arguments(kwargs):
    oracle = DSeparationOracle(np.zeros((3, 3), bool))
    for f in (pmms, mmpc):
        with pytest.raises(ValueError):
            f(oracle, 3, **kwargs)


def test_assoc_scale_underflow_and_untrusted_tests():
    from constraints.pmms import _Assoc
    from constraints.restriction import PairLog

    rng = np.random.default_rng(2)
    n = 5000
    x = rng.integers(0, 2, n)
    y = np.where(rng.random(n) < 0.98, x, 1 - x)  # p-value underflows to 0.0
    w = rng.integers(0, 2, n)  # independent of everything
    z = rng.integers(0, 1000, n)  # conditioning on z: ~760 adjusted dof > 5000 / 20 -> untrusted
    data = np.column_stack([x, y, w, z]).astype(np.uint16)
    test = CITest(data, [2, 2, 2, 1000], min_rows_per_df=20)
    assoc = _Assoc(PairLog(test, 4), alpha=0.05)
    assert test(0, 1).p_value == 0.0 and 700 < assoc(0, 1, ()) < np.inf  # -log p from the tail
    assert assoc(0, 1, ()) > assoc(0, 1, [2]) > 700  # still ordered beyond underflow
    assert assoc(0, 2, ()) == 0.0  # independent: p > alpha
    assert test(0, 2, [3]).p_value == 0.0 and assoc(0, 2, [3]) == np.inf  # rule-imposed dependence


@pytest.mark.parametrize("name,rows,orders", [("asia", 1000, (1, None)), ("child", 500, (2, None)),
                                              ("insurance", 1000, (1, None)), ("alarm", 2000, (1, 3))])
@pytest.mark.parametrize("statistic", ["g2", "x2"])
@pytest.mark.parametrize("df_adjust", ["adf", "none"])
def test_compiled_targets_equal_one_test_at_a_time(name, rows, orders, statistic, df_adjust):
    """Each target compiled gives the per-test path's skeleton, records (p-values and sets) and
    counts, for PMMS and MMPC at several maximum orders."""
    net = load_network(name)
    ds = forward_sample(net, rows, seed=5)
    for learner in (pmms, mmpc):
        for max_order in orders:
            fast, slow = (learner(CITest(ds.data, ds.arities, statistic=statistic, df_adjust=df_adjust),
                                  net.n_vars, max_order=max_order, batched=batched) for batched in (True, False))
            assert fast.same_result(slow), (learner.__name__, max_order)
            assert max(fast.tests_by_order) >= 1


@pytest.mark.parametrize("options", [{"prune": True}, {"prune": False}, {"symmetric": False}, {"n_jobs": 2},
                                     {"alpha": 0.2, "max_order": 2}])
def test_compiled_targets_equal_one_test_at_a_time_with_options_keep_and_untrusted_tests(options):
    """Options, required pairs (never tested) and a minimum-sample rule that leaves many tests
    untrusted (p = 0, infinite association) on 300 rows of insurance."""
    net = load_network("insurance")
    ds = forward_sample(net, 300, seed=7)
    keep = np.zeros((net.n_vars, net.n_vars), dtype=bool)
    keep[0, 5] = keep[5, 0] = keep[3, 20] = keep[20, 3] = True
    for learner in (pmms, mmpc):
        fast, slow = (learner(CITest(ds.data, ds.arities, min_rows_per_df=10), net.n_vars, keep=keep,
                              batched=batched, **{"max_order": None, **options})
                      for batched in (True, False))
        assert fast.same_result(slow)
        records = fast.records.set_index(["u", "v"])
        assert fast.allowed[0, 5] and fast.allowed[3, 20] and np.isnan(records.loc[(0, 5), "p_value"])


def test_compiled_targets_on_the_figure1_counterexample():
    data = _figure1_data()
    for learner in (pmms, mmpc):
        fast, slow = (learner(CITest(data, [2] * 4), 4, batched=batched) for batched in (True, False))
        assert fast.same_result(slow)


def test_compiled_targets_stop_at_the_deadline_between_targets():
    """The compiled path checks the deadline before the order-0 batch and before each target:
    stopped at the k-th check, the first k - 2 targets are finished and the skeleton is a
    superset of the full run's."""
    from itertools import count

    from hybridbn.deadline import Deadline

    net = load_network("child")
    ds = forward_sample(net, 1000, seed=1)
    n = net.n_vars
    for learner in (pmms, mmpc):
        full = learner(CITest(ds.data, ds.arities), n, max_order=2)
        assert learner(CITest(ds.data, ds.arities), n, deadline=Deadline(0.0)).n_tests == 0
        previous, strictly_between = np.ones((n, n), dtype=bool), 0
        for k in (1, 2, 5, 12, n):
            at_kth_check = Deadline(float(k), count(1).__next__)
            cut = learner(CITest(ds.data, ds.arities), n, max_order=2, deadline=at_kth_check)
            assert cut.status == "timeout" and (cut.allowed >= full.allowed).all()
            assert (cut.allowed <= previous).all() and cut.n_tests <= full.n_tests
            first = max(k - 2, 0)  # the first target not finished
            assert (cut.allowed | np.eye(n, dtype=bool))[first:, first:].all()
            assert not (k > 2 and cut.allowed[first - 1, first:].all())  # the target before is finished
            previous = cut.allowed
            strictly_between += cut.n_allowed < n * (n - 1) // 2 and not np.array_equal(cut.allowed, full.allowed)
        assert strictly_between > 0


def _insurance_keep(n):
    keep = np.zeros((n, n), dtype=bool)
    keep[0, 5] = keep[5, 0] = keep[3, 20] = keep[20, 3] = True
    return keep


@pytest.mark.parametrize("name,rows", [("asia", 1000), ("child", 500), ("insurance", 1000), ("alarm", 2000)])
@pytest.mark.parametrize("statistic", ["g2", "x2"])
def test_target_ranges_on_threads_and_an_executor_equal_the_single_run(name, rows, statistic):
    """Targets split into ranges on 2 and 3 threads (uneven ranges) and as 5 tasks of an
    executor give the single run's skeleton, records and counts, with required pairs."""
    from pipeline.core.executors import LocalExecutor

    net = load_network(name)
    ds = forward_sample(net, rows, seed=3)
    keep = _insurance_keep(net.n_vars) if net.n_vars > 20 else None
    for learner in (pmms, mmpc):
        def run(**kwargs):
            return learner(CITest(ds.data, ds.arities, statistic=statistic), net.n_vars, max_order=2, keep=keep,
                           **kwargs)

        whole = run()
        for kwargs in ({"n_jobs": 2}, {"n_jobs": 3}, {"executor": LocalExecutor(1), "n_groups": 5}):
            assert run(**kwargs).same_result(whole), (learner.__name__, kwargs)


def test_target_ranges_on_a_process_pool_and_a_dask_cluster_equal_the_single_run():
    from pipeline.core.executors import DaskExecutor, LocalExecutor

    net = load_network("insurance")
    ds = forward_sample(net, 1000, seed=2)
    for learner in (pmms, mmpc):
        def run(**kwargs):
            return learner(CITest(ds.data, ds.arities, statistic="x2"), net.n_vars, max_order=2,
                           keep=_insurance_keep(net.n_vars), **kwargs)

        whole = run()
        pool = LocalExecutor(2)
        try:
            assert run(executor=pool, n_groups=4).same_result(whole)
        finally:
            pool.close()
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        for learner in (pmms, mmpc):
            whole = learner(CITest(ds.data, ds.arities), net.n_vars, max_order=2)
            split = learner(CITest(ds.data, ds.arities), net.n_vars, max_order=2, executor=DaskExecutor(client),
                            n_groups=3)
            assert split.same_result(whole)


def test_tests_two_ranges_share_are_counted_once():
    """Ranges recompute the tests of the pairs across them: the counts merged on the keys equal
    the single run's and lie below the ranges' sum; ``repeats`` against a set of tuples."""
    from constraints.pmms_compiled import Order0, repeats
    from constraints.pmms_groups import run_group

    net = load_network("alarm")
    ds = forward_sample(net, 2000, seed=4)
    n = net.n_vars
    order0 = Order0(CITest(ds.data, ds.arities), np.zeros((n, n), dtype=bool), 0.05)
    halves = [run_group(order0, lo, hi, False, False, 2, None) for lo, hi in ((0, 20), (20, n))]
    whole = pmms(CITest(ds.data, ds.arities), n, max_order=2)
    summed = sum(g.tests.counts for g in halves)
    assert summed[1] > whole.tests_by_order[1] and summed[2] > whole.tests_by_order[2]
    assert pmms(CITest(ds.data, ds.arities), n, max_order=2, n_jobs=2).tests_by_order == whole.tests_by_order

    rng = np.random.default_rng(0)
    tests = [(int(u), int(u) + 1 + int(rng.integers(3)), tuple(sorted(rng.choice(9, k, replace=False) + 10)))
             for u, k in zip(rng.integers(0, 3, 300), rng.integers(1, 3, 300))]
    keys, starts = [], []
    for u, v, S in tests:
        starts.append(len(keys))
        keys += [u, v, len(S), *S]
    seen, expected = set(), np.zeros(4, dtype=np.int64)
    for t in tests:
        expected[len(t[2])] += t in seen
        seen.add(t)
    assert expected.sum() > 0
    assert np.array_equal(repeats(np.array(keys, dtype=np.int64), np.array(starts, dtype=np.int64), 4), expected)


def test_target_ranges_stop_at_the_deadline():
    """Ranges run one after the other on an in-process executor see the checks in the single
    run's order: the same cut result; on threads a cut result is a superset of the full run's."""
    from itertools import count

    from hybridbn.deadline import Deadline
    from pipeline.core.executors import LocalExecutor

    net = load_network("child")
    ds = forward_sample(net, 1000, seed=1)
    n = net.n_vars
    for learner in (pmms, mmpc):
        def run(**kwargs):
            return learner(CITest(ds.data, ds.arities), n, max_order=2, **kwargs)

        full = run()
        assert run(n_jobs=2, deadline=Deadline(0.0)).n_tests == 0
        for k in (2, 7, 13, 19):
            def at_kth_check():
                return Deadline(float(k), count(1).__next__)

            alone = run(deadline=at_kth_check())
            assert alone.status == "timeout"
            assert run(executor=LocalExecutor(1), n_groups=3, deadline=at_kth_check()).same_result(alone)
            cut = run(n_jobs=2, deadline=at_kth_check())
            assert cut.status == "timeout" and (cut.allowed >= full.allowed).all() and cut.n_tests <= full.n_tests


@pytest.mark.parametrize("n,groups", [(1, 3), (10, 3), (37, 4), (50, 50), (8, 20)])
def test_ranges_cover_the_targets_in_order_with_balanced_weights(n, groups):
    from constraints.pmms_groups import ranges

    for weights in (np.ones(n), np.random.default_rng(n).integers(1, 100, n) ** 2.0):
        cut = ranges(weights, groups)
        assert cut[0][0] == 0 and cut[-1][1] == n and len(cut) <= groups
        assert all(lo < hi for lo, hi in cut) and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))
        assert max(weights[lo:hi].sum() for lo, hi in cut) <= weights.sum() / groups + weights.max()
    assert len(ranges(np.ones(n), groups)) == min(n, groups)


@pytest.mark.parametrize("learner", [pmms, mmpc])
@pytest.mark.parametrize("batched", [True, False])
def test_one_and_two_variables(learner, batched):
    """A single variable has nothing to test; two copies of one column stay adjacent and two
    independent columns do not (same on the compiled and the per-test path)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400)
    one = learner(CITest(a[:, None], np.array([2])), 1, batched=batched)
    assert one.allowed.shape == (1, 1) and not one.allowed.any()
    copies = learner(CITest(np.c_[a, a], np.array([2, 2])), 2, batched=batched)
    assert copies.allowed[0, 1] and copies.allowed[1, 0]
    apart = learner(CITest(np.c_[a, rng.integers(0, 2, 400)], np.array([2, 2])), 2, batched=batched)
    assert not apart.allowed.any()
