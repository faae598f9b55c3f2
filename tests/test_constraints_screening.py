"""Order-0 screening: bit-identical marginal p-values, blocks that cover every pair, and PC's
level 0 through the screen giving the per-test PC-stable's skeleton, records and counts."""

import numpy as np
import pytest

from constraints import citest_batch  # (not its TestSettings by name: pytest would collect it)
from constraints.citests import CITest
from constraints.pc import pc_skeleton
from constraints.restriction import PairLog
from constraints.screening import MarginalScreen, block_pairs, marginal_rows_task, row_blocks
from hybridbn.deadline import Deadline


def random_data(seed, n_vars=30, rows=400):
    """Random states (arities 1-4) with a constant column, a copy and a noisy copy, so that
    the zero-dof and dependent cases occur beside independent pairs."""
    rng = np.random.default_rng(seed)
    arities = rng.integers(1, 5, n_vars)
    arities[:3] = 3
    data = np.stack([rng.integers(0, a, rows) for a in arities], axis=1)
    data[:, 1] = data[:, 0]
    noisy = rng.random(rows) < 0.3
    data[noisy, 2] = rng.integers(0, 3, int(noisy.sum()))
    data[:, 3] = 0
    return data, arities


@pytest.mark.parametrize("settings", [
    {}, {"statistic": "x2"}, {"df_adjust": "none"}, {"min_rows_per_df": 40},
    {"min_rows_per_df": 40, "insufficient": "independent"}, {"min_rows_per_df": 0, "statistic": "x2"},
])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_marginal_p_values_equal_citest_bit_for_bit(settings, n_jobs):
    data, arities = random_data(1)
    test = CITest(data, arities, **settings)
    screen = MarginalScreen(citest_batch.TestSettings(test))
    n = len(arities)
    blocks = row_blocks(n, 50)
    with citest_batch.compute_threads(n_jobs):
        found = np.concatenate([np.stack(screen.rows(*rows)) for rows in blocks], axis=1)
    us, vs = np.triu_indices(n, 1)
    expected = np.array([test.unmemoised(u, v) for u, v in zip(us, vs)], dtype=float).T  # p, statistic, dof
    assert np.array_equal(found, expected)
    assert (found[0] > 0.05).any() and (found[0] <= 0.05).any() and (found[0] == 1.0).any()
    assert np.array_equal(np.stack(marginal_rows_task(screen, *blocks[1])), np.stack(screen.rows(*blocks[1])))


def test_row_blocks_cover_every_pair_once_in_triu_order():
    for n, size in ((2, 1), (7, 1), (7, 5), (40, 100), (40, 10 ** 6)):
        blocks = row_blocks(n, size)
        assert blocks[0][0] == 0 and blocks[-1][1] == n - 1
        assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
        pairs = [np.stack(block_pairs(n, *rows)) for rows in blocks]
        assert np.array_equal(np.concatenate(pairs, axis=1), np.stack(np.triu_indices(n, 1)))
        if size > 1:
            assert all(p.shape[1] >= size for p in pairs[:-1])


def one_at_a_time_and_screened(data, arities, **kwargs):
    runs = [pc_skeleton(CITest(data, arities), len(arities), max_order=2, batched=b, **kwargs)
            for b in (False, True)]
    return runs


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_screened_level_zero_gives_the_per_test_skeleton(seed):
    data, arities = random_data(seed)
    rng = np.random.default_rng(seed)
    keep = np.zeros((len(arities), len(arities)), dtype=bool)
    keep[0, 1] = keep[5, 9] = keep[rng.integers(10, 30), 4] = True
    keep |= keep.T
    for kwargs in ({}, {"keep": keep}, {"n_jobs": 2, "keep": keep}):
        slow, fast = one_at_a_time_and_screened(data, arities, **kwargs)
        assert fast.same_result(slow)
        assert fast.removed_by_order.get(0, 0) > 0 and fast.tests_by_order[0] > 0
    assert fast.records.loc[(fast.records.u == 0) & (fast.records.v == 1), "order"].item() == -1  # kept


def test_screened_level_zero_stops_at_a_passed_deadline():
    data, arities = random_data(5)
    slow, fast = one_at_a_time_and_screened(data, arities, deadline=Deadline.after(-1.0))
    assert fast.same_result(slow) and fast.status == "timeout" and fast.n_tests == 0
    assert fast.n_allowed == len(arities) * (len(arities) - 1) // 2
    slow, fast = one_at_a_time_and_screened(data, arities, deadline=Deadline.after(3600.0))
    assert fast.same_result(slow) and fast.status == "ok"


def test_screened_level_zero_split_over_an_executor_equals_one_process():
    from pipeline.core.executors import LocalExecutor

    data, arities = random_data(6)
    whole = pc_skeleton(CITest(data, arities), len(arities), max_order=1)
    split = pc_skeleton(CITest(data, arities), len(arities), max_order=1, executor=LocalExecutor(1), n_groups=4)
    assert split.same_result(whole)


def test_record_batch_of_empty_sets_keeps_the_largest_p():
    log = PairLog(None, 4)
    log.record_batch(np.array([0, 1]), np.array([2, 3]), {0: 2}, np.array([0.2, np.nan]), np.empty((2, 0), int))
    log.record_batch(np.array([0, 0]), np.array([2, 3]), {1: 2}, np.array([0.1, 0.4]), np.array([[1], [1]]))
    r = log.build(~np.eye(4, dtype=bool), 0.0, "pc", {})
    rec = r.records.set_index(["u", "v"])
    assert rec.loc[(0, 2), "p_value"] == 0.2 and rec.loc[(0, 2), "sepset"] == []
    assert rec.loc[(0, 3), "p_value"] == 0.4 and rec.loc[(0, 3), "sepset"] == [1]
    assert np.isnan(rec.loc[(1, 3), "p_value"]) and rec.loc[(1, 3), "order"] == -1
    assert r.tests_by_order == {0: 2, 1: 2}
