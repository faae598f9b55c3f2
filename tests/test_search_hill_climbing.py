"""Hill climbing and tabu search (search.hill_climbing) against brute-force move checks, the exact
optimum and the on-demand path, on score tables of sampled asia data and random tables."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest
from helpers import random_table

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from graphs.dag import is_acyclic
from hybridbn import interrupt
from hybridbn.progress import KEYS, ProgressError
from ilp.exact_dp import exact_optimum
from scores.candidates import build_score_table
from scores.local import local_score_function
from scores.table import ScoreTable
from search.hill_climbing import TOL, HillClimbError, hill_climb, hill_climb_on_data, tabu_search


@lru_cache(maxsize=None)
def asia_data(rows: int = 1000, seed: int = 1):
    ds = forward_sample(load_network("asia"), rows, seed=seed)
    return ds.data, ds.arities


@lru_cache(maxsize=None)
def asia_table(rows: int = 1000, seed: int = 1) -> ScoreTable:
    return build_score_table(*asia_data(rows, seed), palim=3)


def sparse_table(n: int, seed: int, pool: int = 6, per_child: int = 8) -> ScoreTable:
    """A random table over ``n`` variables: each child draws ``per_child`` parent sets of at most 3
    parents from a pool of ``pool`` candidates, plus the empty set."""
    rng = np.random.default_rng(seed)
    families = []
    for v in range(n):
        others = rng.choice(np.delete(np.arange(n), v), size=pool, replace=False)
        fam = {(): float(-rng.gamma(5.0) * 10)}
        for _ in range(per_child):
            ps = tuple(sorted(rng.choice(others, size=int(rng.integers(1, 4)), replace=False).tolist()))
            fam[ps] = float(-rng.gamma(5.0) * 10 + 8.0 * len(ps) * rng.random())
        families.append(fam)
    return ScoreTable.from_families(families)


TABLES = {
    "asia1000": asia_table,
    "asia300": lambda: asia_table(300, 4),
    "random6": lambda: random_table(6, 0, keep=0.4),
    "random7": lambda: random_table(7, 1, palim=2),
    "sparse12": lambda: sparse_table(12, 2),
    "sparse100": lambda: sparse_table(100, 5),
}
"""Score tables by name, built when a test asks for them."""


def stand_in(table: ScoreTable, v: int, parents: set, keep: set) -> tuple | None:
    """The table family a move to ``parents`` gives ``v``: the set itself, else its best subset in the
    table holding ``keep``; None if there is none (or the set is larger than every family)."""
    fams = table.families[v]
    ps = tuple(sorted(parents))
    if ps in fams:
        return ps
    if len(ps) > int(table.sizes.max()):
        return None
    subsets = [u for u in fams if keep <= set(u) < parents]
    return max(subsets, key=lambda u: fams[u]) if subsets else None  # first of equal scores in table order


def improving_moves(table: ScoreTable, parent_sets, tol: float) -> list:
    """Every legal single-arc addition, deletion or reversal from a DAG improving it by more than ``tol``."""
    n = table.n_vars
    current = [set(ps) for ps in parent_sets]
    base = table.score_of(parent_sets)
    found = []
    for p, v in itertools.permutations(range(n), 2):
        options = []
        if p in current[v]:
            options.append(("delete", {v: stand_in(table, v, current[v] - {p}, set())}))
            options.append(("reverse", {v: stand_in(table, v, current[v] - {p}, set()),
                                        p: stand_in(table, p, current[p] | {v}, {v})}))
        elif v not in current[p]:
            options.append(("add", {v: stand_in(table, v, current[v] | {p}, {p})}))
        for kind, change in options:
            if any(ps is None for ps in change.values()):
                continue
            moved = [change.get(u, tuple(sorted(current[u]))) for u in range(n)]
            adj = np.zeros((n, n), dtype=bool)
            for u, ps in enumerate(moved):
                adj[list(ps), u] = True
            if is_acyclic(adj) and table.score_of(moved) > base + tol:
                found.append((kind, p, v))
    return found


def tolerance(table: ScoreTable) -> float:
    return TOL * max(1.0, float(np.abs(table.score).max()))


def assert_valid(table: ScoreTable, result) -> None:
    assert is_acyclic(result.dag)
    assert result.score == table.score_of(result.parent_sets)
    times, best, bounds = zip(*result.trajectory)
    assert list(times) == sorted(times) and list(best) == sorted(best) and set(bounds) == {None}
    assert best[-1] == result.score


# ----------------------------------------------------------------------------- hill climbing


@pytest.mark.parametrize("name", ["asia1000", "asia300", "random6", "random7", "sparse12"])
def test_hill_climbing_ends_at_a_local_optimum_below_the_optimum(name):
    table = TABLES[name]()
    result = hill_climb(table)
    assert_valid(table, result)
    assert result.status == "converged" and result.n_restarts == 0
    assert improving_moves(table, result.parent_sets, tolerance(table)) == []
    assert result.score <= exact_optimum(table)[0] + tolerance(table)


def test_restarts_reach_the_optimum_of_asia():
    table = asia_table()
    optimum = exact_optimum(table)[0]
    plain = hill_climb(table)
    assert plain.score < optimum - 1e-6  # a local optimum that is not the global one
    restarted = hill_climb(table, restarts=50, perturb=3, seed=0)
    assert_valid(table, restarted)
    assert restarted.n_restarts == 50 and restarted.status == "converged"
    assert restarted.score == pytest.approx(optimum, rel=1e-12)


@pytest.mark.parametrize("name", ["asia1000", "asia300", "random6", "sparse100"])
def test_tabu_search_is_at_least_as_good_as_hill_climbing(name):
    table = TABLES[name]()
    hc = hill_climb(table)
    tabu = tabu_search(table)
    assert_valid(table, tabu)
    assert tabu.score >= hc.score
    assert tabu.n_iterations > hc.n_iterations  # it went on past hill climbing's optimum


def test_the_tabu_list_lets_the_search_escape_a_local_optimum():
    table = random_table(5, 1, keep=0.5)
    hc = hill_climb(table)
    short = tabu_search(table, tabu=1, max_tabu=10)  # only the current graph is tabu: it steps back to hc's
    long = tabu_search(table, tabu=10)
    assert short.score == hc.score < long.score
    assert long.score == pytest.approx(exact_optimum(table)[0], rel=1e-12)


def test_a_reversal_is_one_move():
    table = ScoreTable.from_families([{(): -10.0, (1,): -1.0}, {(): -10.0, (0,): -5.0}])
    result = hill_climb(table, start=[(), (0,)])  # reversing 0 -> 1 gains 4; deleting it loses 5
    assert result.parent_sets == [(1,), ()] and result.n_iterations == 1


@pytest.mark.parametrize("search", [hill_climb, tabu_search])
def test_ties_go_as_in_bnlearn_first_parent_then_child(search):
    """Equal gains: 1 -> 0 and 0 -> 1 (score equivalent); 2 -> 0 gains more by float noise only.
    bnlearn scans additions by parent, then child, and keeps the first of moves within its tolerance."""
    tie = ScoreTable.from_families([{(): -10.0, (1,): -5.0, (2,): -5.0 + 1e-13},
                                    {(): -10.0, (0,): -5.0}, {(): -10.0, (0,): -5.0}])
    first = search(tie, max_iter=1)
    assert first.parent_sets == [(), (0,), ()]  # 0 -> 1, first in that order; not 1 -> 0 or 2 -> 0
    assert search(tie).parent_sets == [(), (0,), (0,)]


def test_additions_come_before_deletions_and_reversals_of_equal_gain():
    table = ScoreTable.from_families([{(): -10.0, (2,): -6.0}, {(): -10.0, (0,): -14.0}, {(): -10.0}])
    result = hill_climb(table, start=[(), (0,), ()], max_iter=1)  # adding 2 -> 0 and deleting 0 -> 1 both gain 4
    assert result.parent_sets == [(2,), (0,), ()]


def test_tabu_search_counts_only_moves_that_do_not_improve():
    """From the empty graph (score 0) every move loses; 0 -> 1 loses least (-3), then 2 -> 1 gains
    (-1, still below the best) and 3 -> 1 reaches +2. bnlearn's max.tabu counts only the first move,
    so max_tabu = 1 lets the search through; counting every move since the best would stop at -3."""
    table = ScoreTable.from_families([{(): 0.0}, {(): 0.0, (0,): -3.0, (2,): -5.0, (3,): -5.0, (0, 2): -1.0,
                                                  (0, 3): -10.0, (2, 3): -10.0, (0, 2, 3): 2.0}, {(): 0.0}, {(): 0.0}])
    assert hill_climb(table).parent_sets == [(), (), (), ()]
    result = tabu_search(table, max_tabu=1)
    assert result.parent_sets == [(), (0, 2, 3), (), ()] and result.score == 2.0


def test_on_demand_scoring_breaks_ties_as_bnlearn():
    column = np.random.default_rng(0).integers(0, 2, 500)
    result = hill_climb_on_data(np.column_stack([column, column]), np.array([2, 2]), palim=None)
    assert result.parent_sets == [(), (0,)]  # a copied column: 0 -> 1 and 1 -> 0 gain the same


def test_a_parent_set_missing_from_the_table_stands_in_by_its_best_subset():
    deletion = ScoreTable.from_families([{(): 0.0}, {(): 0.0}, {(): -1.0, (0, 1): -5.0}])
    result = hill_climb(deletion, start=[(), (), (0, 1)])  # deleting 0 or 1 leaves {1} or {0}: both stand in by {}
    assert result.parent_sets == [(), (), ()] and result.n_iterations == 1
    addition = ScoreTable.from_families([{(): 0.0, (1, 2): -50.0}, {(): 0.0}, {(): -10.0, (0,): -5.0, (1,): -1.0}])
    result = hill_climb(addition, start=[(), (), (0,)])  # adding 1 gives {0, 1}: it stands in by {1}
    assert result.parent_sets == [(), (), (1,)] and result.n_iterations == 1
    narrow = addition.select(addition.sizes < 2)  # no family of two parents: {0, 1} is out of reach
    assert hill_climb(narrow, start=[(), (), (0,)]).n_iterations == 0


def test_sparse_tables_of_more_than_64_variables():
    table = sparse_table(100, 7)
    result = hill_climb(table, restarts=3, perturb=4, seed=2)
    assert_valid(table, result)
    assert sum(map(len, result.parent_sets)) > 0
    plain = hill_climb(table)
    assert improving_moves(table, plain.parent_sets, tolerance(table)) == []
    assert result.score >= plain.score


def test_a_fixed_seed_gives_the_same_search():
    table = sparse_table(30, 8)
    runs = [hill_climb(table, restarts=5, perturb=3, seed=4, tabu=3) for _ in range(2)]
    assert runs[0].parent_sets == runs[1].parent_sets and runs[0].score == runs[1].score
    assert [s for _, s, _ in runs[0].trajectory] == [s for _, s, _ in runs[1].trajectory]
    assert runs[0].n_iterations == runs[1].n_iterations


def test_starting_from_a_local_optimum_moves_nowhere():
    table = asia_table()
    first = hill_climb(table)
    again = hill_climb(table, start=first.parent_sets)
    assert again.n_iterations == 0 and again.parent_sets == first.parent_sets


def test_limits_stop_the_search_with_a_valid_dag():
    table = sparse_table(100, 9)
    full = hill_climb(table)
    assert full.n_iterations > 3
    cut = hill_climb(table, max_iter=3)
    assert cut.status == "max_iter" and cut.n_iterations == 3
    assert_valid(table, cut)
    assert cut.score < full.score
    timed = hill_climb(table, restarts=10 ** 9, time_limit=1e-6)
    assert timed.status == "timelimit" and timed.n_restarts < 10 ** 9
    assert_valid(table, timed)


def test_progress_reports_the_best_score_and_the_status():
    records = []
    table = asia_table()
    result = hill_climb(table, restarts=20, perturb=3, tabu=2, progress=records.append)
    assert set(KEYS) | {"iterations", "restarts"} <= set(records[0])
    assert records[0]["solver"] == "tabu" and records[0]["dual"] is None
    assert [r["primal"] for r in records] == sorted(r["primal"] for r in records)
    assert records[-1]["primal"] == result.score and records[-1]["status"] == "converged"
    assert records[-1]["restarts"] == 20 and records[-1]["iterations"] == result.n_iterations
    with pytest.raises(ProgressError):
        hill_climb(table, progress="yes")


def test_a_stop_request_ends_the_search_with_its_best_dag():
    table = sparse_table(100, 6)
    try:
        interrupt.request_stop()
        result = hill_climb(table, restarts=10 ** 9)
    finally:
        interrupt.clear()
    assert result.status == "userinterrupt"
    assert_valid(table, result)


# --------------------------------------------------------------------------------- knowledge


def test_required_and_forbidden_arcs_are_honoured():
    data, arities = asia_data()
    n = data.shape[1]
    plain = hill_climb(asia_table())
    p, v = map(int, np.argwhere(plain.dag)[0])  # an arc hill climbing finds: forbid it
    required_arcs = [(7, 0), (2, 6)]  # arcs it does not find
    assert not any(plain.dag[a] for a in required_arcs)
    required = np.zeros((n, n), dtype=bool)
    required[tuple(zip(*required_arcs))] = True
    forbidden = np.zeros((n, n), dtype=bool)
    forbidden[p, v] = True
    table = build_score_table(data, arities, palim=3, allowed=~forbidden, required=required)
    knowledge = {"required_arcs": required_arcs, "forbidden_arcs": [(p, v)]}
    for result in (hill_climb(table, **knowledge), tabu_search(table, restarts=5, seed=1, **knowledge)):
        assert_valid(table, result)
        assert all(result.dag[a] for a in required_arcs) and not result.dag[p, v]


def test_knowledge_the_table_cannot_hold_is_refused():
    table = random_table(5, 0, palim=1)
    required = [(0, 1), (2, 1)]  # two parents, but families have one at most
    with pytest.raises(HillClimbError, match="no family left"):
        hill_climb(table, required_arcs=required)
    with pytest.raises(HillClimbError, match="both required and forbidden"):
        hill_climb(table, required_arcs=required, forbidden_arcs=required[:1])
    with pytest.raises(HillClimbError, match="cycle"):
        hill_climb(table, required_arcs=[(0, 1), (1, 0)])
    with pytest.raises(HillClimbError, match="distinct nodes"):
        hill_climb(table, forbidden_arcs=[(0, 5)])


@pytest.mark.parametrize("options, message", [
    ({"tabu": -1}, "tabu"), ({"max_iter": 1.5}, "max_iter"), ({"time_limit": 0}, "time_limit"),
    ({"start": [(1,), (0,), (), (), ()]}, "not acyclic"), ({"start": [()] * 4}, "one parent set per variable"),
    ({"palim": -1}, "palim"),
])
def test_bad_options_are_refused(options, message):
    with pytest.raises(HillClimbError, match=message) as err:
        hill_climb(random_table(5, 1), **options)
    assert isinstance(err.value, ValueError)


def test_a_start_family_outside_the_table_is_refused():
    table = random_table(4, 2, palim=1)
    with pytest.raises(HillClimbError, match="not in the table"):
        hill_climb(table, start=[(1, 2), (), (), ()])


# -------------------------------------------------------------------------- on-demand path


def full_table(data, arities, palim: int) -> ScoreTable:
    """Every parent set of at most ``palim`` parents, scored by the on-demand path's own scorer."""
    score = local_score_function(data, arities)
    n = data.shape[1]
    others = [np.delete(np.arange(n), v).tolist() for v in range(n)]
    sets = [[ps for k in range(palim + 1) for ps in itertools.combinations(others[v], k)] for v in range(n)]
    return ScoreTable.from_families([{ps: score(v, ps) for ps in sets[v]} for v in range(n)])


@pytest.mark.parametrize("options", [{}, {"tabu": 5}, {"restarts": 4, "perturb": 2, "seed": 3}])
def test_on_demand_scoring_follows_the_unpruned_table(options):
    data, arities = asia_data(400, 2)
    table = full_table(data, arities, palim=2)
    on_table = hill_climb(table, **options)
    on_data = hill_climb_on_data(data, arities, palim=2, **options)
    assert on_data.parent_sets == on_table.parent_sets
    assert on_data.score == on_table.score
    assert on_data.n_iterations == on_table.n_iterations
    assert on_data.stats["families"] < table.n_candidates  # it scored only the families it reached


def test_on_demand_scoring_honours_the_restriction():
    data, arities = asia_data()
    n = data.shape[1]
    allowed = np.ones((n, n), dtype=bool)
    allowed[:, 5] = False  # variable 5 gets no parent
    options = {"allowed": allowed, "required_arcs": [(0, 1)], "palim": 2, "tabu": 4}
    assert hill_climb_on_data(data, arities, **options).dag[4, 7]
    result = hill_climb_on_data(data, arities, forbidden_arcs=[(4, 7)], **options)
    assert is_acyclic(result.dag) and result.dag[0, 1] and not result.dag[:, 5].any() and not result.dag[4, 7]
    assert max(map(len, result.parent_sets)) <= 2
    score = local_score_function(data, arities)
    assert result.score == pytest.approx(sum(score(v, ps) for v, ps in enumerate(result.parent_sets)), rel=1e-12)
    with pytest.raises(HillClimbError, match="not allowed"):
        hill_climb_on_data(data, arities, allowed=allowed, required_arcs=[(0, 5)])
