"""Cops-and-robbers learner with the exact d-separation oracle (Talvitie & Parviainen, s. 4).

The learned CPDAG must equal the true CPDAG, the width found must equal the exact treewidth of
the moral graph, and the tree decomposition must be valid for the moral graph.
"""

import numpy as np
import pytest

from bayesnet.catalog import load_network
from constraints.cops import cops_and_robbers
from graphs.dsep import DSeparation
from graphs.moral import moral_graph
from graphs.pdag import dag_to_cpdag
from graphs.random_graphs import random_dag
from graphs.treedec import validate_tree_decomposition
from graphs.treewidth import treewidth_exact


def dsep_oracle(A):
    ds = DSeparation(A)
    return lambda x, y, S: ds.separated(x, y, S)


def recording_oracle(A, log):
    ds = DSeparation(A)

    def indep(x, y, S):
        log.append((min(x, y), max(x, y), tuple(S)))
        return ds.separated(x, y, S)

    return indep


def assert_learns_truth(A):
    n = A.shape[0]
    log = []
    res = cops_and_robbers(recording_oracle(A, log), n)
    assert res.status == "ok" and res.phase == "done"
    assert np.array_equal(res.cpdag, dag_to_cpdag(A))
    assert np.array_equal(res.skeleton, A | A.T)
    M = moral_graph(A)
    assert res.k == max(treewidth_exact(M).width, 0)
    for td in (res.raw_decomposition, res.tree_decomposition):
        assert validate_tree_decomposition(M, td.bags, td.edges) == max(res.k, 0)
    # the oracle memo: every distinct query reaches the oracle once; counts are per |S|
    assert len(log) == len(set(log)) == res.n_distinct_tests == sum(res.tests_by_order)
    for size, count in enumerate(res.tests_by_order):
        assert count == sum(len(S) == size for _, _, S in log)
    # conditioning sets have at most k + 1 nodes (EXTRACTCOMPONENT conditions on k + 1 cops)
    assert len(res.tests_by_order) - 1 <= res.k + 1
    return res


SMALL = [(n, p, seed) for n in (2, 5, 8, 11) for p in (0.15, 0.35, 0.6) for seed in range(3)]


@pytest.mark.parametrize("n,p,seed", SMALL)
def test_random_small_dags(n, p, seed):
    assert_learns_truth(random_dag(n, p, seed=seed))


@pytest.mark.parametrize("n,p,seed", [(32, 0.05, 1), (32, 0.05, 2), (20, 0.08, 0), (16, 0.1, 0)])
def test_random_larger_sparse_dags(n, p, seed):
    assert_learns_truth(random_dag(n, p, seed=seed))


@pytest.mark.slow
@pytest.mark.parametrize("n,p,seed", [(n, p, s) for n, p in ((16, 0.2), (16, 0.3), (24, 0.1), (32, 0.05),
                                                               (32, 0.08)) for s in range(3)])
def test_random_dags_slow(n, p, seed):
    assert_learns_truth(random_dag(n, p, seed=seed))


def test_edgeless_graph_has_one_bag_per_node():
    res = assert_learns_truth(np.zeros((4, 4), dtype=bool))
    assert res.k == 0 and len(res.components) == 4
    assert sorted(map(sorted, res.raw_decomposition.bags)) == [[0], [1], [2], [3]]


def test_components_and_chain_separator():
    A = np.zeros((5, 5), dtype=bool)
    A[0, 2] = A[2, 4] = A[1, 3] = True  # 0 -> 2 -> 4 and 1 -> 3
    res = assert_learns_truth(A)
    assert res.components == [(0, 2, 4), (1, 3)]
    assert res.component_widths == [1, 1] and res.k == 1
    assert res.separating_sets == {}  # bags {0, 2}, {2, 4}, {1, 3} hold only true edges


def test_diamond_separator_and_v_structure():
    A = np.zeros((4, 4), dtype=bool)
    A[0, 1] = A[0, 2] = A[1, 3] = A[2, 3] = True  # moral edge 1 - 2
    res = assert_learns_truth(A)
    assert res.k == 2
    assert sorted(map(sorted, res.tree_decomposition.bags)) == [[0, 1, 2], [1, 2, 3]]
    # bag {0, 1, 2}: subsets of {0} in order {}, {0}; the first independence is 1 _||_ 2 | 0
    assert res.separating_sets == {(1, 2): (0,)}
    assert res.cpdag[1, 3] and not res.cpdag[3, 1] and res.cpdag[2, 3] and not res.cpdag[3, 2]


@pytest.mark.parametrize("name", ["cancer", "earthquake", "survey", "asia", "sachs", "child"])
def test_benchmark_networks(name):
    res = assert_learns_truth(load_network(name).adjacency)
    # Figure 1: the last nonzero bar is at treewidth + 1
    assert len(res.tests_by_order) - 1 == res.k + 1 and res.tests_by_order[-1] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alarm", "mildew", "insurance"])
def test_benchmark_networks_slow(name):
    assert_learns_truth(load_network(name).adjacency)


def test_few_hundred_nodes_low_treewidth():
    """Bit sets beyond one machine word: a 200-node forest-shaped network (treewidth 1)."""
    A = random_dag(200, 0.02, seed=0, palim=1)
    res = cops_and_robbers(dsep_oracle(A), 200)
    assert res.status == "ok" and res.k == 1
    assert np.array_equal(res.cpdag, dag_to_cpdag(A))
    M = moral_graph(A)
    assert validate_tree_decomposition(M, res.tree_decomposition.bags, res.tree_decomposition.edges) == 1
