"""Treewidth (exact, bounds), tree decompositions and k-trees against known values and brute force."""

import itertools

import numpy as np
import pytest

from graphs.ktree import check_k_tree, complete_k_tree, is_k_tree, random_k_tree
from graphs.moral import moral_graph
from graphs.random_graphs import random_dag
from graphs.treedec import (
    TreeDecomposition,
    decomposition_from_order,
    elimination_width,
    validate_tree_decomposition,
)
from graphs.treewidth import (
    greedy_elimination_order,
    minimal_obstruction,
    treewidth_exact,
    treewidth_lower_bound,
    treewidth_upper_bound,
    width_at_most,
)


def undirected(n, pairs):
    G = np.zeros((n, n), dtype=bool)
    for a, b in pairs:
        G[a, b] = G[b, a] = True
    return G


def grid(a, b):
    return undirected(
        a * b,
        [(i * b + j, i * b + j + 1) for i in range(a) for j in range(b - 1)]
        + [(i * b + j, (i + 1) * b + j) for i in range(a - 1) for j in range(b)],
    )


def cycle(n):
    return undirected(n, [(i, (i + 1) % n) for i in range(n)])


def random_tree(n, seed):
    rng = np.random.default_rng(seed)
    return undirected(n, [(k, int(rng.integers(k))) for k in range(1, n)])


def assert_treewidth_facts(G, expected):
    ex = treewidth_exact(G)
    assert ex.exact and ex.width == expected
    assert ex.decomposition.validate(G) == expected
    assert elimination_width(G, ex.order) == expected
    for method in ("min_fill", "min_degree"):
        ub = treewidth_upper_bound(G, method)
        assert ub.width >= expected
        assert ub.decomposition.validate(G) == ub.width
    assert treewidth_lower_bound(G) <= expected


@pytest.mark.parametrize("seed", range(5))
def test_trees(seed):
    assert_treewidth_facts(random_tree(30, seed), 1)


@pytest.mark.parametrize("n", [3, 4, 10, 40])
def test_cycles(n):
    assert_treewidth_facts(cycle(n), 2)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_grids(k):
    assert_treewidth_facts(grid(k, k), k)


def test_rectangular_grid_and_complete_graphs():
    assert_treewidth_facts(grid(3, 8), 3)
    for n in (1, 2, 5, 12):
        assert_treewidth_facts(~np.eye(n, dtype=bool), n - 1)


def test_trivial_graphs():
    assert_treewidth_facts(np.zeros((5, 5), bool), 0)
    ex = treewidth_exact(np.zeros((0, 0), bool))
    assert ex.width == -1 and ex.decomposition.bags == ()
    # disconnected: a triangle and a 4-cycle
    G = undirected(7, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (5, 6), (6, 3)])
    assert_treewidth_facts(G, 2)


def brute_force_treewidth(G):
    n = len(G)
    return min(elimination_width(G, p) for p in itertools.permutations(range(n)))


def test_exact_matches_brute_force_on_small_random_graphs():
    rng = np.random.default_rng(0)
    for trial in range(25):
        n = int(rng.integers(4, 8))
        G = np.triu(rng.random((n, n)) < 0.45, 1)
        G = G | G.T
        assert_treewidth_facts(G, brute_force_treewidth(G))


def test_width_at_most_agrees_with_brute_force():
    rng = np.random.default_rng(1)
    for trial in range(20):
        n = int(rng.integers(4, 8))
        G = np.triu(rng.random((n, n)) < 0.5, 1)
        G = G | G.T
        width = brute_force_treewidth(G)
        assert [width_at_most(G, k) for k in range(n)] == [width <= k for k in range(n)]


def test_k_trees_have_treewidth_k():
    for k in (1, 2, 3, 4):
        for seed in range(3):
            T = random_k_tree(18, k, seed)
            assert is_k_tree(T.adjacency, k)
            assert T.tree_decomposition().validate(T.adjacency) == k
            assert_treewidth_facts(T.adjacency, k)
            # min-fill is optimal on chordal graphs (a perfect elimination ordering exists)
            assert treewidth_upper_bound(T.adjacency).width == k


def test_moral_graphs_of_random_dags():
    for seed in range(10):
        G = moral_graph(random_dag(22, 0.15, seed))
        ex = treewidth_exact(G)
        assert ex.decomposition.validate(G) == ex.width
        assert treewidth_lower_bound(G) <= ex.width <= treewidth_upper_bound(G).width


def test_validate_tree_decomposition_errors():
    G = cycle(4)
    good = [{0, 1, 2}, {0, 2, 3}]
    assert validate_tree_decomposition(G, good, [(0, 1)]) == 2
    with pytest.raises(ValueError, match="no bag"):
        validate_tree_decomposition(G, [{0, 1, 2}], [])
    with pytest.raises(ValueError, match=r"edge \(0, 3\)"):
        validate_tree_decomposition(G, [{0, 1, 2}, {1, 2, 3}], [(0, 1)])
    with pytest.raises(ValueError, match="needs 1 edges"):
        validate_tree_decomposition(G, good, [])
    with pytest.raises(ValueError, match="cycle"):
        validate_tree_decomposition(G, good + [{0}], [(0, 1), (1, 0)])
    with pytest.raises(ValueError, match="running intersection"):
        bags = [{0, 1}, {1, 2}, {2, 3}, {3, 0}]
        validate_tree_decomposition(G, bags, [(0, 1), (1, 2), (2, 3)])
    with pytest.raises(ValueError, match="out of range"):
        validate_tree_decomposition(G, [{0, 1, 2, 3, 9}], [])
    with pytest.raises(ValueError, match="symmetric"):
        validate_tree_decomposition(np.triu(G), good, [(0, 1)])


def test_decomposition_from_order_and_greedy_orders():
    G = grid(4, 4)
    for method in ("min_fill", "min_degree"):
        order = greedy_elimination_order(G, method)
        assert sorted(order) == list(range(16))
        td = decomposition_from_order(G, order)
        assert isinstance(td, TreeDecomposition)
        assert td.validate(G) == td.width == elimination_width(G, order)
    with pytest.raises(ValueError, match="method"):
        greedy_elimination_order(G, "best")
    with pytest.raises(ValueError, match="permutation"):
        elimination_width(G, [0, 1])


def test_k_tree_construction_and_recognition():
    T = complete_k_tree(2)
    assert is_k_tree(T.adjacency, 2) and len(T.k_cliques()) == 3
    T = T.attach((0, 2)).attach((2, 3))
    assert T.n == 5 and is_k_tree(T.adjacency, 2)
    assert T.cliques() == [(0, 1, 2), (0, 2, 3), (2, 3, 4)]
    order = check_k_tree(T.adjacency, 2)
    assert sorted(order) == list(range(5))
    with pytest.raises(ValueError, match="clique"):
        T.attach((0, 4))
    with pytest.raises(ValueError, match="distinct"):
        T.attach((1,))
    # a 2-tree minus an edge, and a 4-cycle plus chords in the wrong place, are not 2-trees
    B = T.adjacency.copy()
    B[0, 1] = B[1, 0] = False
    assert not is_k_tree(B, 2)
    with pytest.raises(ValueError, match="edges"):
        check_k_tree(B, 2)
    assert not is_k_tree(grid(3, 3), 2)
    assert is_k_tree(random_tree(10, 1), 1) and not is_k_tree(cycle(5), 1)
    assert not is_k_tree(cycle(6), 2) and not is_k_tree(random_k_tree(9, 3, 0).adjacency, 2)
    # a 6-cycle with the inner triangle is a 2-tree; K4 plus a pendant vertex has 2n-3 edges but is not
    assert is_k_tree(cycle(6) | undirected(6, [(0, 2), (2, 4), (4, 0)]), 2)
    K4p = undirected(5, [(a, b) for a in range(4) for b in range(a + 1, 4)] + [(3, 4)])
    assert K4p.sum() // 2 == 2 * 5 - 3
    with pytest.raises(ValueError, match="no simplicial vertex"):
        check_k_tree(K4p, 2)
    with pytest.raises(ValueError, match="k must be"):
        is_k_tree(T.adjacency, 0)
    with pytest.raises(ValueError, match="at least"):
        random_k_tree(3, 3)
    with pytest.raises(ValueError, match="k must be"):
        random_k_tree(5, 0)


def test_random_k_tree_seeded():
    a, b = random_k_tree(20, 3, 7), random_k_tree(20, 3, 7)
    assert np.array_equal(a.adjacency, b.adjacency) and a.order == b.order
    assert a.adjacency.sum() // 2 == 3 * 20 - 6


# moral-graph treewidths where the minor-min-width lower bound meets the min-fill upper bound
@pytest.mark.parametrize(
    "name, width", [("asia", 2), ("sachs", 3), ("child", 3), ("alarm", 4), ("hailfinder", 4), ("hepar2", 6)]
)
def test_benchmark_network_treewidths(name, width):
    catalog = pytest.importorskip("bayesnet.catalog")
    from graphs.treewidth import dag_treewidth

    A = catalog.load_network(name).adjacency
    res = dag_treewidth(A)
    assert res.width == width == treewidth_lower_bound(moral_graph(A))
    assert res.decomposition.validate(moral_graph(A)) == width
    assert dag_treewidth(A, exact=False).width >= width


def test_k_tree_on_a_vertex_universe():
    T = complete_k_tree(2, vertices=[5, 1, 3], n=7)
    assert T.n == 3 and T.adjacency.shape == (7, 7)
    T = T.attach((1, 5), vertex=0).attach((0, 1), vertex=6).attach((3, 5), vertex=2).attach((0, 6), vertex=4)
    assert T.n == 7 and is_k_tree(T.adjacency, 2)
    assert T.tree_decomposition().validate(T.adjacency) == 2
    with pytest.raises(ValueError, match="already"):
        T.attach((0, 1), vertex=6)
    with pytest.raises(ValueError, match="not all in"):
        complete_k_tree(2, vertices=[0, 1, 2], n=5).attach((0, 4), vertex=3)
    with pytest.raises(ValueError, match="distinct"):
        complete_k_tree(2, vertices=[0, 0, 1])


def test_decompositions_are_rooted_at_bag_zero():
    for td in (
        treewidth_exact(grid(3, 4)).decomposition,
        treewidth_upper_bound(undirected(6, [(0, 1), (2, 3), (3, 4)])).decomposition,
        random_k_tree(12, 3, 0).tree_decomposition(),
    ):
        children = [c for _, c in td.edges]
        assert all(p < c for p, c in td.edges) and len(set(children)) == len(children)
        assert 0 not in children


@pytest.mark.parametrize("seed", range(6))
def test_minimal_obstruction_is_edge_minimal(seed):
    """The edge set has treewidth > k, and dropping any one edge brings it to <= k."""
    rng = np.random.default_rng(seed)
    n, k = 9, 1 + seed % 3
    G = np.triu(rng.random((n, n)) < 0.55, 1)
    G = G | G.T
    if treewidth_exact(G).width <= k:
        G = random_k_tree(n, k + 1, seed).adjacency
    F = minimal_obstruction(G, k, priority=rng.random((n, n)))
    H = np.zeros((n, n), dtype=bool)
    for a, b in F:
        assert a < b and G[a, b]
        H[a, b] = H[b, a] = True
    assert treewidth_exact(H).width > k
    for a, b in F:
        H[a, b] = H[b, a] = False
        assert treewidth_exact(H).width <= k
        H[a, b] = H[b, a] = True


def test_minimal_obstruction_of_k4_minor_and_width_at_most():
    cycle = np.zeros((6, 6), dtype=bool)
    for v in range(6):
        cycle[v, (v + 1) % 6] = cycle[(v + 1) % 6, v] = True
    assert width_at_most(cycle, 2) and not width_at_most(cycle, 1)
    wheel = np.zeros((7, 7), dtype=bool)  # a 6-cycle plus a hub: treewidth 3, a K4 minor
    wheel[:6, :6] = cycle
    wheel[6, :6] = wheel[:6, 6] = True
    assert not width_at_most(wheel, 2) and width_at_most(wheel, 3)
    F = minimal_obstruction(wheel, 2)  # a subdivided K4: the rim and three spokes
    assert len(F) == 9 and sum(6 in e for e in F) == 3
