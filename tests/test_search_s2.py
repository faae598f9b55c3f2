"""S2 and S2+ (Nie, de Campos & Ji; the baselines of Scanagatta et al. NIPS 2016, section 3.4) and the
uniform k-tree sampler they draw from: the code is a bijection (every labelled k-tree decoded exactly
``k (n - k) + 1`` times), samples are uniform (chi-square), learned DAGs are certified and never beat
the brute-force treewidth-bounded optimum, which S2 reaches on tiny cases."""

import collections
import itertools

import numpy as np
import pytest
from scipy import stats
from helpers import brute_force, candidate_table

from graphs.dag import is_acyclic
from graphs.ktree import is_k_tree, random_k_tree
from graphs.ktree_sampling import (code_length, decode_k_tree, k_tree_count, k_tree_from_construction,
                                   sample_k_tree_construction, uniform_k_tree)
from graphs.moral import moral_graph
from graphs.treewidth import dag_treewidth, treewidth_exact
from ilp.exact_dp import exact_optimum
from scores.table import ScoreTable
from search.ktree_search import BoundedSearchError
from search.s2 import (FlatCandidates, KTreeMask, densest_clique, guided_k_tree, learn_within, pair_weights, s2,
                       s2_plus)


def edge_key(order, attachments, k) -> frozenset:
    edges = {frozenset(p) for p in itertools.combinations(order[: k + 1], 2)}
    edges |= {frozenset((v, u)) for v, c in zip(order[k + 1:], attachments) for u in c}
    return frozenset(edges)


# ------------------------------------------------------------------------------ the sampler
def test_k_tree_count_known_values():
    assert [k_tree_count(n, 1) for n in range(2, 7)] == [n ** (n - 2) for n in range(2, 7)]  # Cayley
    assert k_tree_count(3, 2) == 1 and k_tree_count(4, 2) == 6 and k_tree_count(5, 2) == 70
    assert k_tree_count(5, 3) == 10


@pytest.mark.parametrize("n,k", [(4, 1), (5, 1), (5, 2), (6, 2), (6, 3)])
def test_code_is_a_bijection_onto_k_trees_with_a_root_clique(n, k):
    """Every (root k-subset, code) decodes to a construction of a k-tree; each of the
    ``k_tree_count(n, k)`` k-trees comes out once per k-clique, so uniform codes give uniform k-trees."""
    length, symbols = code_length(n, k)
    counts = collections.Counter()
    for root in itertools.combinations(range(n), k):
        for code in itertools.product(range(symbols), repeat=length):
            order, attachments = decode_k_tree(n, k, root, code)
            assert sorted(order) == list(range(n)) and tuple(order[:k]) == root
            for t, (v, clique) in enumerate(zip(order[k + 1:], attachments)):
                assert len(clique) == k and set(clique) <= set(order[: k + 1 + t])
            counts[edge_key(order, attachments, k)] += 1
    assert len(counts) == k_tree_count(n, k)
    assert set(counts.values()) == {k * (n - k) + 1}


def test_decoded_graphs_are_k_trees():
    rng = np.random.default_rng(0)
    for n, k in [(9, 1), (10, 2), (12, 4)]:
        for _ in range(5):
            order, attachments = sample_k_tree_construction(n, k, rng)
            assert is_k_tree(k_tree_from_construction(n, k, order, attachments).adjacency, k)
    assert is_k_tree(uniform_k_tree(11, 3, seed=4).adjacency, 3)


def chi_square_p(sample, n, k, draws):
    counts = collections.Counter(edge_key(*sample(), k) for _ in range(draws))
    observed = np.array(list(counts.values()) + [0] * (k_tree_count(n, k) - len(counts)))
    return stats.chisquare(observed).pvalue


def test_samples_are_uniform_over_labelled_k_trees():
    """n = 5, k = 2: 70 k-trees, 7000 draws (100 expected each). The construction-uniform
    ``random_k_tree`` fails the same test, so it can tell the two apart."""
    n, k, draws = 5, 2, 7000
    rng = np.random.default_rng(1)
    assert chi_square_p(lambda: sample_k_tree_construction(n, k, rng), n, k, draws) > 1e-3
    seeds = iter(range(draws))

    def biased():
        tree = random_k_tree(n, k, seed=next(seeds))
        return list(tree.order), list(tree.attachments)

    assert chi_square_p(biased, n, k, draws) < 1e-6


def test_bad_codes():
    with pytest.raises(ValueError, match="root clique"):
        decode_k_tree(5, 2, (0, 0), [0, 0])
    with pytest.raises(ValueError, match="symbols"):
        decode_k_tree(5, 2, (0, 1), [0, 7])
    with pytest.raises(ValueError, match="1 <= k <= n - 1"):
        sample_k_tree_construction(3, 3, np.random.default_rng(0))


# ------------------------------------------------------------------------------ tables and brute force
def sparse_table(n: int, seed: int) -> ScoreTable:
    """Per child the empty set and four random sets of one to three parents (:func:`candidate_table`)."""
    return candidate_table(n, seed, n_sets=4)


def bounded_optimum(table: ScoreTable, k: int) -> float:
    """Best score over all acyclic choices of one family per child with treewidth at most ``k``."""
    return brute_force(table, lambda moral: treewidth_exact(moral).width <= k)


def assert_certified(table, res, k):
    assert res.k == k
    assert res.score == pytest.approx(table.score_of(res.parent_sets), abs=1e-9)
    assert is_acyclic(res.dag)
    assert dag_treewidth(res.dag).width <= k
    assert res.decomposition.validate(moral_graph(res.dag)) <= k
    assert is_k_tree(res.ktree.adjacency, k)
    assert not (moral_graph(res.dag) & ~res.ktree.adjacency).any()


CASES = [(5, 1, 4), (5, 2, 5), (6, 2, 0), (6, 2, 4)]


@pytest.mark.parametrize("n,k,seed", CASES)
@pytest.mark.parametrize("learner", [s2, s2_plus])
@pytest.mark.parametrize("inner", ["dp", "orders"])
def test_certified_and_never_above_the_bounded_optimum(n, k, seed, learner, inner):
    table = sparse_table(n, seed)
    res = learner(table, k, max_samples=60, seed=seed, inner=inner)
    assert_certified(table, res, k)
    assert res.status == "max_samples" and res.n_orders == res.stats["samples"] == 60
    assert res.stats["inner"] == inner
    assert res.score <= bounded_optimum(table, k) + 1e-9


@pytest.mark.parametrize("n,k,seed", CASES)
def test_s2_reaches_the_bounded_optimum(n, k, seed):
    table = sparse_table(n, seed)
    optimum = bounded_optimum(table, k)
    res = s2(table, k, max_samples=2000, seed=seed, inner="dp")
    assert res.score == pytest.approx(optimum, abs=1e-9)
    history = [score for _, _, score in res.stats["history"]]
    assert history == sorted(history) and history[-1] == pytest.approx(res.score, abs=1e-9)


def test_cases_exercise_the_bound():
    """Without the treewidth bound the optimum is higher: the bound binds in the cases above."""
    assert all(exact_optimum(sparse_table(n, seed))[0] > bounded_optimum(sparse_table(n, seed), k) + 1e-6
               for n, k, seed in CASES)


def test_orders_phase_is_a_restriction_of_the_exact_phase():
    """Inside one k-tree the construction-order DAG scores at most the exact optimum inside it, its
    parents come before their child and lie in the child's attachment clique."""
    table = sparse_table(7, 5)
    k = 2
    cand = FlatCandidates.from_table(table, k)
    mask = KTreeMask(table.n_vars)
    rng = np.random.default_rng(3)
    strictly = False
    for _ in range(30):
        construction = sample_k_tree_construction(table.n_vars, k, rng)
        mask.load(k, construction)
        fits = mask.fitting(cand)
        exact = learn_within(cand, fits, construction, exact=True)
        along = learn_within(cand, fits, construction, exact=False)
        assert exact is not None and along is not None  # the empty set always fits
        assert along[0] <= exact[0] + 1e-9
        strictly |= along[0] < exact[0] - 1e-6
        order, attachments = construction
        pos = {v: i for i, v in enumerate(order)}
        clique_of = dict(zip(order[k + 1:], attachments))
        for v, ps in enumerate(along[1]()):
            assert all(pos[p] < pos[v] for p in ps)
            assert set(ps) <= set(clique_of.get(v, order[: k + 1]))
        assert along[0] == pytest.approx(table.score_of(along[1]()))
    assert strictly


# ------------------------------------------------------------------------------ informative score
def planted_table(tree, gain: float = 5.0) -> ScoreTable:
    """Single-parent families that gain ``gain`` (plus a little per pair) on the k-tree's edges only."""
    n = tree.adjacency.shape[0]
    families = []
    for v in range(n):
        fam = {(): -50.0}
        for u in range(n):
            if u != v:
                fam[(u,)] = -50.0 + (gain + 0.01 * ((u + v) % 5) if tree.adjacency[u, v] else -1.0)
        families.append(fam)
    return ScoreTable.from_families(families)


def test_pair_weights_are_the_symmetric_positive_single_parent_gains():
    table = ScoreTable.from_families([{(): -10.0, (1,): -7.0, (2,): -11.0}, {(): -5.0, (0,): -4.0},
                                      {(): -3.0, (0,): -3.5}])
    w = pair_weights(table)
    assert w == {0: {1: 3.0}, 1: {0: 3.0}, 2: {}}


@pytest.mark.parametrize("n,k,seed", [(12, 2, 0), (15, 3, 1), (9, 1, 2), (30, 4, 3)])
def test_guided_growth_recovers_a_planted_k_tree(n, k, seed):
    tree = random_k_tree(n, k, seed)
    w = pair_weights(planted_table(tree))
    first = densest_clique(n, k, w)
    assert tree.adjacency[np.ix_(first, first)].sum() == k * (k + 1)  # a clique of the planted tree
    construction = guided_k_tree(n, k, w, first, np.random.default_rng(seed))
    grown = k_tree_from_construction(n, k, *construction)
    assert (grown.adjacency == tree.adjacency).all()


def test_s2_plus_first_tree_follows_the_information():
    """On a planted k-tree S2+'s first k-tree is the planted one, and its DAG is at least as good as
    S2's best over as many uniform k-trees."""
    k, tree = 2, random_k_tree(10, 2, 7)
    table = planted_table(tree)
    plus = s2_plus(table, k, max_samples=1, seed=0, inner="orders")
    assert (plus.ktree.adjacency == tree.adjacency).all()
    assert plus.score >= s2(table, k, max_samples=1, seed=0, inner="orders").score


# ------------------------------------------------------------------------------ anytime contract
@pytest.mark.parametrize("learner", [s2, s2_plus])
def test_deterministic_for_seed_and_time_limited(learner):
    table = sparse_table(7, 9)
    a = learner(table, 2, max_samples=25, seed=4)
    b = learner(table, 2, max_samples=25, seed=4)
    assert a.parent_sets == b.parent_sets and a.score == b.score and a.order == b.order
    timed = learner(table, 2, time_limit=0.2, seed=4)
    assert timed.status == "time_limit" and timed.n_orders >= 1
    assert_certified(table, timed, 2)


@pytest.mark.parametrize("bad,match", [(dict(k=0), "k must be >= 1"), (dict(k=5), "exceeds n - 1"),
                                       (dict(max_samples=None), "give time_limit or max_samples"),
                                       (dict(max_samples=0), "max_samples must be"),
                                       (dict(time_limit=-1.0), "time_limit"), (dict(inner="ilp"), "inner must be")])
@pytest.mark.parametrize("learner", [s2, s2_plus])
def test_bad_input(learner, bad, match):
    args = dict(k=2, max_samples=3) | bad
    with pytest.raises(BoundedSearchError, match=match):
        learner(sparse_table(5, 0), args.pop("k"), **args)


def test_progress_records_count_k_trees():
    records = []
    res = s2(sparse_table(6, 1), 2, max_samples=5, seed=0, progress=records.append)
    assert records[-1]["status"] == "max_samples" and records[-1]["ktrees"] == res.n_orders == 5
    assert records[-1]["accepted"] == res.stats["accepted"] and records[-1]["primal"] == pytest.approx(res.score)


@pytest.mark.parametrize("learner", [s2, s2_plus])
@pytest.mark.parametrize("inner", ["dp", "orders"])
def test_k_trees_without_a_family_for_some_child_are_skipped(learner, inner):
    """Child 0 may only have parent 1 (a required arc): k-trees without the edge 0 - 1 hold no family
    of it, are counted infeasible, and the DAG found has the arc."""
    table = ScoreTable.from_families([{(1,): -5.0}] + [dict(sparse_table(6, 2).families[v]) for v in range(1, 6)])
    res = learner(table, 1, max_samples=40, seed=3, inner=inner)
    assert res.parent_sets[0] == (1,)
    assert_certified(table, res, 1)
    assert res.stats["infeasible"] > 0
