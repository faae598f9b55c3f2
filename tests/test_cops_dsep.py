"""The cops learner's fast exact oracle: bit-set d-separation and the batched counting oracle.

* ``graphs.dsep.DSeparation.connected_bits`` / ``separated_bits`` (closed-form Bayes ball with
  per-conditioning-set components) against the reference d-separation (``DSeparation.separated``,
  ``constraints.citests.DSeparationOracle``) and a brute-force moral-ancestral-graph check, on
  random DAGs and random queries;
* ``CountingOracle.dependents`` / ``all_independent`` against the same sequence of single calls;
* a whole cops run through the bit-set oracle against the same run through ``indep(x, y, S)``.
"""

import random

import numpy as np
import pytest
from helpers import cops_fingerprint, hashed_oracle, lauritzen_separated

from bayesnet.catalog import load_network
from constraints.citests import DSeparationOracle
from constraints.cops import cops_and_robbers
from constraints.cops.oracle import BitsetIndependence, CountingOracle, OracleTimeout
from graphs.bitsets import bits, to_mask, to_tuple
from graphs.dsep import DSeparation
from graphs.random_graphs import random_dag


def random_query(rng, n):
    x = rng.randrange(n)
    p = rng.choice([0.0, 0.1, 0.3, 0.6])
    z = to_mask(v for v in range(n) if v != x and rng.random() < p)
    return x, z, ((1 << n) - 1) & ~z & ~(1 << x)


CASES = [(n, p, seed) for n in (2, 4, 7, 10, 14) for p in (0.1, 0.3, 0.6) for seed in range(3)]


@pytest.mark.parametrize("n,p,seed", CASES)
def test_fast_dsep_matches_reference(n, p, seed):
    A = random_dag(n, p, seed=seed)
    ds, oracle = DSeparation(A), DSeparationOracle(A)
    rng = random.Random(1000 * n + seed)
    for _ in range(40):
        x, z, others = random_query(rng, n)
        S = to_tuple(z)
        expected = to_mask(y for y in bits(others) if not ds.separated(x, y, S))
        assert expected == to_mask(y for y in bits(others) if oracle(x, y, S).p_value == 0.0)
        assert expected == to_mask(y for y in bits(others) if not lauritzen_separated(A, x, y, set(S)))
        assert ds.connected_bits(x, others, z) == expected
        targets = to_mask(y for y in bits(others) if rng.random() < 0.5)  # any subset of targets
        assert ds.connected_bits(x, targets, z) == expected & targets
        for y in bits(others):
            assert ds.separated_bits(x, y, z) == (not expected >> y & 1)


@pytest.mark.parametrize("n,p,seed", [(70, 0.04, 0), (100, 0.03, 1), (130, 0.02, 2)])
def test_fast_dsep_beyond_one_machine_word(n, p, seed):
    A = random_dag(n, p, seed=seed)
    ds = DSeparation(A)
    ds.GIVEN_CACHE = 3  # exercise the eviction of the per-conditioning-set tables
    rng = random.Random(seed)
    for _ in range(60):
        x, z, others = random_query(rng, n)
        S = to_tuple(z)
        expected = to_mask(y for y in bits(others) if not ds.separated(x, y, S))
        assert ds.connected_bits(x, others, z) == expected


def test_fast_dsep_on_a_benchmark_network_all_pairs_small_sets():
    A = load_network("asia").adjacency
    ds = DSeparation(A)
    n = A.shape[0]
    for x in range(n):
        for z in range(1 << n):
            if z >> x & 1 or z.bit_count() > 2:
                continue
            others = ((1 << n) - 1) & ~z & ~(1 << x)
            expected = to_mask(y for y in bits(others) if not ds.separated(x, y, to_tuple(z)))
            assert ds.connected_bits(x, others, z) == expected


class HashedBits:
    """The hashed test as a BitsetIndependence, logging every pair it is asked about."""

    def __init__(self, seed):
        self.indep, self.log = hashed_oracle(seed), []

    def separated_bits(self, x, y, cond):
        self.log.append((min(x, y), max(x, y), cond))
        return self.indep(x, y, to_tuple(cond))

    def connected_bits(self, x, targets, cond):
        return to_mask(y for y in bits(targets) if not self.separated_bits(x, y, cond))


@pytest.mark.parametrize("seed", range(6))
def test_batches_count_like_single_calls(seed):
    n = 9
    rng = random.Random(seed)
    log_single, log_tuple = [], []

    def logging(log):
        inner = hashed_oracle(seed)
        return lambda x, y, S: log.append((x, y, S)) or inner(x, y, S)

    single = CountingOracle(logging(log_single), n_vars=n)
    batched_tuple = CountingOracle(logging(log_tuple), n_vars=n)
    bitset = HashedBits(seed)
    batched_bits = CountingOracle(bitset, n_vars=n)
    assert isinstance(bitset, BitsetIndependence)
    for _ in range(300):
        x, z, others = random_query(rng, n)
        z &= to_mask(rng.sample(range(n), 3))  # small conditioning sets: many repeated keys
        others = ((1 << n) - 1) & ~z & ~(1 << x)
        ys = to_mask(y for y in bits(others) if rng.random() < 0.6)
        if rng.random() < 0.5:
            expected = to_mask(y for y in bits(ys) if not single(y, x, z))
            assert batched_tuple.dependents(x, ys, z) == expected
            assert batched_bits.dependents(x, ys, z) == expected
        else:
            expected = all(single(x, y, z) for y in bits(ys))
            assert batched_tuple.all_independent(x, ys, z) == expected
            assert batched_bits.all_independent(x, ys, z) == expected
        for oracle in (batched_tuple, batched_bits):
            assert oracle.tests_by_order == single.tests_by_order
            assert oracle.n_distinct == single.n_distinct
            assert oracle.n_calls == single.n_calls
    assert log_tuple == log_single  # a plain indep() is asked the same pairs in the same order
    # the bit-set test may be asked about more pairs than are counted (all_independent asks
    # ahead), never fewer
    assert set(bitset.log) >= {(x, y, to_mask(S)) for x, y, S in log_single}


def test_oracle_rejects_out_of_range_nodes_and_times_out_in_batches():
    oracle = CountingOracle(DSeparation(random_dag(5, 0.5, seed=0)), n_vars=5)
    with pytest.raises(ValueError):
        oracle(0, 5, 0)
    with pytest.raises(ValueError):
        oracle.dependents(0, 1 << 6, 0)
    with pytest.raises(ValueError):
        oracle.all_independent(7, 1, 0)
    timed = CountingOracle(lambda x, y, S: True, time_limit=1e-9, check_every=3, n_vars=5)
    timed.dependents(0, 0b110, 0)  # 2 calls
    with pytest.raises(OracleTimeout):
        timed.dependents(0, 0b11110, 0)  # calls 3..6 cross a multiple of check_every


@pytest.mark.parametrize("n,p,seed", [(8, 0.3, 0), (11, 0.35, 1), (16, 0.15, 2), (24, 0.1, 0)])
def test_bitset_oracle_run_equals_tuple_oracle_run(n, p, seed):
    A = random_dag(n, p, seed=seed)
    ds = DSeparation(A)
    via_tuples = cops_and_robbers(lambda x, y, S: ds.separated(x, y, S), n)
    via_bits = cops_and_robbers(DSeparation(A), n)
    assert cops_fingerprint(via_bits) == cops_fingerprint(via_tuples)


@pytest.mark.parametrize("name", ["asia", "sachs", "child"])
def test_bitset_oracle_run_equals_tuple_oracle_run_on_networks(name):
    A = load_network(name).adjacency
    ds = DSeparation(A)
    via_tuples = cops_and_robbers(lambda x, y, S: ds.separated(x, y, S), A.shape[0])
    via_bits = cops_and_robbers(DSeparation(A), A.shape[0])
    assert cops_fingerprint(via_bits) == cops_fingerprint(via_tuples)


def test_bitset_oracle_of_the_wrong_size_is_rejected():
    with pytest.raises(ValueError, match="nodes"):
        cops_and_robbers(DSeparation(random_dag(6, 0.3, seed=0)), 5)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alarm", "mildew", "insurance", "hailfinder", "pathfinder"])
def test_benchmark_networks_with_the_fast_oracle(name):
    """Figure 1 networks within reach of the fast oracle: exact CPDAG and exact treewidth."""
    from graphs.moral import moral_graph
    from graphs.pdag import dag_to_cpdag
    from graphs.treedec import validate_tree_decomposition
    from graphs.treewidth import treewidth_exact

    A = load_network(name).adjacency
    res = cops_and_robbers(DSeparation(A), A.shape[0])
    assert res.status == "ok"
    assert np.array_equal(res.cpdag, dag_to_cpdag(A))
    M = moral_graph(A)
    assert res.k == treewidth_exact(M, max_states=200_000).width
    td = res.tree_decomposition
    assert validate_tree_decomposition(M, td.bags, td.edges) == res.k
    assert len(res.tests_by_order) - 1 == res.k + 1
