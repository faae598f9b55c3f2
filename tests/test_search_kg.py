"""k-G and k-A* (Scanagatta et al. NIPS 2016, section 3): treewidth certificates, scores, determinism,
brute-force optimality of k-A* over its order-based search space, W-score, bad input."""

import itertools
import math

import numpy as np
import pytest

from graphs.dag import is_acyclic
from graphs.ktree import is_k_tree
from graphs.moral import moral_graph
from graphs.treewidth import dag_treewidth
from ilp.exact_dp import exact_optimum
from scores.table import ScoreTable
from search.kastar import astar_order, k_astar
from search.kgreedy import greedy_order, k_greedy
from search.ktree_search import (BoundedSearchError, OrderSampler, SearchContext, learn_root, w_score)


def random_table(n: int, max_size: int, seed: int) -> ScoreTable:
    """All parent sets up to ``max_size`` with scores from pairwise gains, a size penalty and noise."""
    rng = np.random.default_rng(seed)
    gain = rng.uniform(0, 3, size=(n, n))
    families = []
    for v in range(n):
        others = [u for u in range(n) if u != v]
        fam = {}
        for size in range(max_size + 1):
            for ps in itertools.combinations(others, size):
                fam[ps] = -20.0 + sum(gain[p, v] for p in ps) - 0.5 * size + rng.normal(0, 1.0)
        families.append(fam)
    return ScoreTable.from_families(families)


def sub_root(table: ScoreTable, first) -> float:
    first = sorted(first)
    local = {v: i for i, v in enumerate(first)}
    fams = [{tuple(local[p] for p in ps): s for ps, s in table.families[v].items() if set(ps) <= set(first)}
            for v in first]
    return exact_optimum(ScoreTable.from_families(fams))[0]


def brute_force_order(table: ScoreTable, k: int, order) -> float:
    """Best score over every sequence of k-clique choices for ``order`` (section 3's search space)."""
    n = table.n_vars
    first = order[: k + 1]
    root_kcliques = [frozenset(first) - {u} for u in first]

    def rec(i, kcliques, score):
        if i == n:
            return score
        v, best = order[i], -math.inf
        for q in kcliques:
            inside = [s for ps, s in table.families[v].items() if set(ps) <= q]
            if inside:
                grown = kcliques + [(q - {u}) | {v} for u in q]
                best = max(best, rec(i + 1, grown, score + max(inside)))
        return best

    return rec(k + 1, root_kcliques, sub_root(table, first))


def assert_certified(table, res, k):
    assert res.k == k
    assert res.score == pytest.approx(table.score_of(res.parent_sets), abs=1e-9)
    assert dag_treewidth(res.dag).width <= k
    assert res.decomposition.validate(moral_graph(res.dag)) <= k
    assert is_k_tree(res.ktree.adjacency, k)
    M = moral_graph(res.dag)
    assert not (M & ~res.ktree.adjacency).any()
    assert is_acyclic(res.dag)
    pos = {v: max(i, k) for i, v in enumerate(res.order)}  # the root k+1 variables are unordered
    assert all(pos[p] < pos[v] for v, ps in enumerate(res.parent_sets) for p in ps if pos[v] > k)


@pytest.mark.parametrize("n,k,seed", [(6, 1, 0), (7, 2, 1), (8, 2, 2), (8, 3, 3)])
@pytest.mark.parametrize("learner", [k_greedy, k_astar])
def test_bounded_treewidth_and_score(n, k, seed, learner):
    table = random_table(n, k + 1, seed)
    res = learner(table, k, max_orders=30, seed=seed)
    assert_certified(table, res, k)
    assert res.status == "max_orders" and res.n_orders == 30


@pytest.mark.parametrize("learner", [k_greedy, k_astar])
def test_deterministic_for_seed(learner):
    table = random_table(8, 3, 5)
    a = learner(table, 2, max_orders=20, seed=7)
    b = learner(table, 2, max_orders=20, seed=7)
    assert a.parent_sets == b.parent_sets and a.score == b.score and a.order == b.order
    assert a.stats["history"][-1][1:] == b.stats["history"][-1][1:]


def test_astar_order_is_optimal_over_clique_choices():
    improved, expansions = False, 0
    for n, k, seed, n_orders in [(7, 2, 4, 3), (8, 3, 1, 2), (8, 2, 5, 1)]:
        table = random_table(n, k + 1, seed)
        rng = np.random.default_rng(seed)
        for _ in range(n_orders):
            order = tuple(rng.permutation(n).tolist())
            ctx = SearchContext(table, k, seed, "dp", math.inf)
            sol = astar_order(ctx, order)
            assert sol.proved
            assert sol.score == pytest.approx(brute_force_order(table, k, order), abs=1e-7)
            assert sol.score == pytest.approx(table.score_of(sol.parent_sets), abs=1e-7)
            greedy = greedy_order(SearchContext(table, k, seed, "dp", math.inf), order)
            assert greedy.score <= sol.score + 1e-9
            improved |= greedy.score < sol.score - 1e-6
            expansions += ctx.counters["astar_expansions"]
    assert improved and expansions > 0  # the cases exercise the search, not just the k-G incumbent


@pytest.mark.parametrize("n,k,seed", [(6, 2, 3), (5, 1, 4)])
def test_exhaustive_astar_matches_brute_force_and_beats_greedy(n, k, seed):
    table = random_table(n, k + 1, seed)
    astar = k_astar(table, k, seed=seed)
    greedy = k_greedy(table, k, seed=seed)
    classes = math.factorial(n) // math.factorial(k + 1)
    assert astar.status == greedy.status == "exhausted"
    assert astar.n_orders == greedy.n_orders == classes
    best = max(brute_force_order(table, k, first + rest)
               for first in itertools.combinations(range(n), k + 1)
               for rest in itertools.permutations([v for v in range(n) if v not in first]))
    assert astar.score == pytest.approx(best, abs=1e-7)
    assert greedy.score <= astar.score + 1e-9
    assert_certified(table, astar, k)


def test_k_equal_n_minus_1_is_unbounded_optimum():
    table = random_table(5, 4, 8)
    opt, _ = exact_optimum(table)
    for learner in (k_greedy, k_astar):
        res = learner(table, 4)
        assert res.status == "exhausted" and res.n_orders == 1
        assert res.score == pytest.approx(opt, abs=1e-9)


def test_root_solvers_agree():
    table = random_table(6, 3, 9)
    root = (0, 2, 3, 5)
    dp = learn_root(table, root, "dp")
    ilp = learn_root(table, root, "ilp")
    assert ilp[0] == pytest.approx(dp[0], abs=1e-6)
    for score, sets in (dp, ilp):
        assert all(set(ps) <= set(root) for ps in sets)
        assert score == pytest.approx(sum(table.families[v][ps] for v, ps in zip(root, sets)), abs=1e-6)


def test_order_sampler_classes_distinct():
    rng = np.random.default_rng(0)
    enum = OrderSampler(6, 2, rng)
    sampled = OrderSampler(6, 2, np.random.default_rng(1), enumerate_limit=0)
    for sampler in (enum, sampled):
        keys = set()
        while (order := sampler.next()) is not None:
            assert sorted(order) == list(range(6))
            keys.add((frozenset(order[:3]), order[3:]))
        assert len(keys) == sampler.total == 120
    assert sampled.n_duplicates > 0


def test_w_score():
    assert w_score(-110.0, -100.0) == pytest.approx(0.1)
    assert w_score(-100.0, -100.0) == 0.0
    with pytest.raises(ValueError):
        w_score(-1.0, 0.0)


def test_bad_input():
    table = random_table(5, 2, 0)
    for learner in (k_greedy, k_astar):
        for k in (0, -1, 5, 7, 1.5, True):
            with pytest.raises(BoundedSearchError):
                learner(table, k, max_orders=1)
        with pytest.raises(BoundedSearchError):
            learner(table, 1, time_limit=-1)
        with pytest.raises(BoundedSearchError):
            learner(table, 1, max_orders=0)
        with pytest.raises(BoundedSearchError):
            learner(table, 1, max_orders=1, root_solver="gobnilp")
    with pytest.raises(BoundedSearchError):
        k_astar(table, 1, max_orders=1, max_expansions=0)
    with pytest.raises(BoundedSearchError, match="time_limit or max_orders"):
        k_greedy(random_table(12, 1, 0), 1)


def test_a_time_limit_shorter_than_the_setup_still_gives_a_dag():
    table = random_table(9, 3, 2)
    for learner in (k_greedy, k_astar):
        res = learner(table, 2, time_limit=1e-9)
        assert res.status == "time_limit" and res.n_orders == 1
        assert is_acyclic(res.dag) and dag_treewidth(res.dag).width <= 2


def test_no_bounded_dag_raises():
    table = random_table(5, 3, 1)
    table = table.select((table.child != 0) | (table.sizes == 3))
    with pytest.raises(BoundedSearchError, match="no candidate parent set of at most k=2"):
        k_greedy(table, 2, max_orders=5)
    families = random_table(5, 2, 1).families
    table = ScoreTable.from_families([{ps: s for ps, s in fam.items() if ps == only}
                                      for fam, only in zip(families, [(1, 2), (0,)])] + families[2:])
    with pytest.raises(BoundedSearchError, match="no treewidth-2 DAG"):
        k_astar(table, 2)
