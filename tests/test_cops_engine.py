"""The compiled exact-oracle engine of the cops learner (``constraints.cops.engine``).

Its runs must equal, in every query count, bag and orientation, the runs of the Python solver
(``constraints.cops.solver.CopsSolver`` over ``constraints.cops.oracle.CountingOracle``) on the
same d-separation oracle; counting in passes must add up to the single-pass counts.
"""

import random

import numpy as np
import pytest
from helpers import cops_fingerprint

from bayesnet.catalog import load_network
from constraints.cops import cops_and_robbers
from constraints.cops.exact_oracle import MAX_PASSES, ExactCountingOracle
from constraints.cops.node_words import MAX_ENGINE_VARS
from constraints.cops.oracle import CountingOracle
from graphs.dsep import DSeparation
from graphs.random_graphs import random_dag


class PythonPath:
    """The same d-separation behind the plain bit-set interface, so the Python solver runs it."""

    def __init__(self, A):
        self.ds = DSeparation(A)
        self.n = self.ds.n

    def separated_bits(self, x, y, z):
        return self.ds.separated_bits(x, y, z)

    def connected_bits(self, x, targets, z):
        return self.ds.connected_bits(x, targets, z)


@pytest.mark.parametrize("n,p,seed", [(2, 0.5, 0), (5, 0.6, 1), (9, 0.3, 2), (12, 0.5, 3), (16, 0.25, 4),
                                      (20, 0.15, 5), (30, 0.08, 6), (64, 0.025, 7), (70, 0.02, 8),
                                      (100, 0.02, 9), (128, 0.01, 11)])
def test_engine_run_equals_python_run_on_random_dags(n, p, seed):
    A = random_dag(n, p, seed=seed)
    assert cops_fingerprint(cops_and_robbers(DSeparation(A), n)) == cops_fingerprint(cops_and_robbers(PythonPath(A), n))


@pytest.mark.parametrize("name", ["asia", "sachs", "child", "alarm"])
def test_engine_run_equals_python_run_on_networks(name):
    A = load_network(name).adjacency
    n = A.shape[0]
    assert cops_fingerprint(cops_and_robbers(DSeparation(A), n)) == cops_fingerprint(cops_and_robbers(PythonPath(A), n))


@pytest.mark.parametrize("seed", range(6))
def test_engine_oracle_answers_and_counts_like_the_counting_oracle(seed):
    rng = random.Random(seed)
    n = rng.choice([7, 30, 64, 65, 90, 128])
    A = random_dag(n, rng.choice([0.05, 0.2, 0.4]), seed=seed)
    ds = DSeparation(A)
    engine, python = ExactCountingOracle(ds), CountingOracle(ds, n_vars=n)
    for _ in range(400):
        x = rng.randrange(n)
        others = [v for v in range(n) if v != x]
        rng.shuffle(others)
        cond = sum(1 << v for v in others[:rng.randrange(5)])
        ys = sum(1 << v for v in others[5:5 + rng.randrange(1, n)] if rng.random() < 0.5)
        kind = rng.randrange(3)
        if kind == 0:
            assert engine.dependents(x, ys, cond) == python.dependents(x, ys, cond)
        elif kind == 1:
            assert engine.all_independent(x, ys, cond) == python.all_independent(x, ys, cond)
        elif ys:
            y = (ys & -ys).bit_length() - 1
            assert engine(x, y, cond) == python(x, y, cond)
    assert engine.tests_by_order == python.tests_by_order
    assert engine.n_distinct == python.n_distinct and engine.n_calls == python.n_calls


def test_counting_in_passes_adds_up_to_one_pass(caplog):
    ds = DSeparation(load_network("alarm").adjacency)
    whole = cops_and_robbers(ds, 37)
    with caplog.at_level("INFO", logger="constraints"):
        tight = cops_and_robbers(ds, 37, memory_budget=2_400_000)  # 7.8 k of alarm's 28 k bitmaps
    assert "leaves the rest to a later pass" in caplog.text and "counting pass 2 of" in caplog.text
    assert 4 <= tight.counting_passes <= 8
    assert tight.tests_by_order == whole.tests_by_order and tight.n_distinct_tests == whole.n_distinct_tests
    assert np.array_equal(tight.cpdag, whole.cpdag) and tight.k == whole.k == 4
    sums = np.zeros(len(whole.tests_by_order), dtype=np.int64)
    for part in range(3):
        oracle = ExactCountingOracle(ds, part=part, n_parts=3)
        for x in range(37):
            oracle.dependents(x, ((1 << 37) - 1) & ~(1 << x) & ~0b111, 0b111 & ~(1 << x))
        sums[:len(oracle.tests_by_order)] += np.array(oracle.tests_by_order, dtype=np.int64)
    single = ExactCountingOracle(ds)
    for x in range(37):
        single.dependents(x, ((1 << 37) - 1) & ~(1 << x) & ~0b111, 0b111 & ~(1 << x))
    assert sums[:len(single.tests_by_order)].tolist() == single.tests_by_order


def ask_many_sets(oracle, n_sets):
    """Ask pairs of the last three nodes under ``n_sets`` distinct conditioning sets (one pair twice)."""
    n = oracle.n
    others = (1 << (n - 3)) - 1
    for i in range(n_sets):
        z = (i * 40503) & others
        oracle.dependents(n - 1, 0b11 << (n - 3), z)
        oracle.dependents(n - 2, 1 << (n - 3), z)  # half of it asked already: not new


def test_a_full_pass_hands_half_of_its_sets_to_later_passes():
    """A pass that fills its bitmaps halves its share; its own and the later passes' counts add up."""
    ds = DSeparation(random_dag(24, 0.3, seed=2))
    single = ExactCountingOracle(ds)
    ask_many_sets(single, 1000)
    first = ExactCountingOracle(ds, memory_budget=1)  # bitmaps for the floor of 2 * 56 sets
    ask_many_sets(first, 1000)
    shares, done, total = list(first.later_passes), 1, first.counts.copy()
    assert [n_parts for _, n_parts in shares] == [2, 4, 8, 16]
    while shares:
        part, n_parts = shares.pop()
        oracle = ExactCountingOracle(ds, part=part, n_parts=n_parts, memory_budget=1)
        ask_many_sets(oracle, 1000)
        shares += oracle.later_passes
        total += oracle.counts
        done += 1
    assert total.tolist() == single.counts.tolist() and done >= 5


def test_engine_limits_and_errors():
    ds = DSeparation(random_dag(24, 0.3, seed=2))
    with pytest.raises(MemoryError, match="memory_budget"):
        ask_many_sets(ExactCountingOracle(ds, memory_budget=1), 120 * MAX_PASSES)
    with pytest.raises(MemoryError, match="memory_budget"):
        cops_and_robbers(DSeparation(load_network("alarm").adjacency), 37, memory_budget=1)
    with pytest.raises(ValueError, match="pass"):
        ExactCountingOracle(ds, part=2, n_parts=2)
    with pytest.raises(ValueError, match="nodes"):
        ExactCountingOracle(DSeparation(random_dag(MAX_ENGINE_VARS + 1, 0.01, seed=0)))
    res = cops_and_robbers(DSeparation(np.triu(np.ones((9, 9), dtype=bool), 1)), 9, time_limit=1e-9)
    assert res.status == "timeout" and res.cpdag is None and res.n_distinct_tests == sum(res.tests_by_order)
    complete = DSeparation(np.triu(np.ones((6, 6), dtype=bool), 1))
    res = cops_and_robbers(complete, 6, max_k=3)
    assert res.status == "width_limit" and res.k_lower_bound == 3 and res.n_distinct_tests > 0
    halves = cops_and_robbers(complete, 6, max_k=3, passes=2)
    assert halves.counting_passes == 2 and halves.tests_by_order == res.tests_by_order
    for passes in (0, 3, 128, 1.0):
        with pytest.raises(ValueError, match="passes"):
            cops_and_robbers(complete, 6, passes=passes)
    for budget in (0, -5, "8GB", float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="memory_budget"):
            cops_and_robbers(complete, 6, memory_budget=budget)
