"""Parent-set enumeration and exact pruning (scores.candidates) against brute force."""

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scores.candidates import CandidateError, build_score_table
from scores.local import ScoreError, local_score
from scores.pruning import STATS

SCORES = ("bdeu", "bic", "aic", "k2", "ll", "qnml")


def _data(seed, n_vars=6, n_rows=200, arities=None, skew=False):
    rng = np.random.default_rng(seed)
    arities = rng.integers(2, 5, n_vars) if arities is None else np.asarray(arities)
    cols = []
    for v, a in enumerate(arities):
        if skew and v > 0:  # nearly constant columns: low entropy, exercises Theorem 1
            col = np.zeros(n_rows, dtype=np.int64)
            col[rng.choice(n_rows, 2, replace=False)] = rng.integers(1, a, 2) if a > 1 else 0
        else:
            col = rng.integers(0, a, n_rows)
        cols.append(col)
    data = np.stack(cols, axis=1)
    if not skew:  # some dependence so that parent sets matter
        data[:, 1] = (data[:, 0] + (rng.random(n_rows) < 0.25)) % arities[1]
        data[:, 2] = (data[:, 1] * 2 + data[:, 3] + (rng.random(n_rows) < 0.2)) % arities[2]
    return data.astype(np.uint8), arities.astype(np.int64)


def _non_dominated(full):
    """Brute force: the sets whose score beats every proper subset's (ties go to the subset)."""
    return {
        ps: s for ps, s in full.items()
        if all(full[sub] < s for k in range(len(ps)) for sub in itertools.combinations(ps, k))
    }


def _check_counters(meta):
    c = meta["counts"]
    assert c["total"] == c["pruned_constant"] + c["not_generated"] + c["generated"]
    assert c["generated"] == (c["scored"] + c["pruned_upper_bound"] + c["pruned_penalty_bound"]
                              + c["pruned_theorem1"] + c["pruned_entropy"] + c["pruned_bdeu_bound"])
    assert c["scored"] == c["kept"] + c["pruned_dominated"]
    assert set(STATS) <= set(c)


CASES = [  # (seed, n_rows, arities, skew, palim)
    (0, 200, None, False, 3),
    (1, 12, None, False, 3),          # tiny N: the bounds fire
    (2, 40, (2, 3, 6, 5, 2, 4), False, 4),
    (3, 300, (2, 2, 2, 2, 2, 2, 2), False, None),
    (4, 2000, (2, 2, 2, 2, 2, 2), True, 4),   # one balanced child, near-constant parents
    (5, 60, (2, 3, 1, 2, 3), False, 3),       # a one-state variable
    (6, 150, (30, 25, 3, 20, 2), False, 3),   # large cell spaces: grouped / dense counting
    (7, 3000, (9, 8, 10, 7, 6, 8), False, 3),  # bitset, dense and touched counting, by the cost model
    (8, 2000, (60, 50, 3, 45, 40), False, 3),  # cell spaces beyond the dense histograms: grouped counting
]


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("seed,n_rows,arities,skew,palim", CASES)
def test_kept_sets_are_exactly_the_non_dominated_sets(score, seed, n_rows, arities, skew, palim):
    data, arities = _data(seed, n_rows=n_rows, arities=arities, skew=skew)
    if seed == 5:
        data[:, 2] = 0
    pruned = build_score_table(data, arities, score, ess=1.5, palim=palim)
    full = build_score_table(data, arities, score, ess=1.5, palim=palim, prune=False)
    pruned.validate()
    _check_counters(pruned.meta)
    n = data.shape[1]
    limit = n - 1 if palim is None else palim
    for v in range(n):
        assert len(full.families[v]) == sum(
            len(list(itertools.combinations(range(n - 1), k))) for k in range(min(limit, n - 1) + 1))
        for ps, s in full.families[v].items():
            assert s == pytest.approx(local_score(data, arities, v, ps, score, ess=1.5), rel=1e-10, abs=1e-10)
        want = _non_dominated(full.families[v])
        assert pruned.families[v].keys() == want.keys(), (score, v)
        for ps, s in pruned.families[v].items():
            assert s == full.families[v][ps]


def test_each_rule_fires_somewhere():
    fired = dict.fromkeys(STATS, 0)
    for score in ("bdeu", "bic"):
        for seed, n_rows, arities, skew, palim in CASES:
            data, ar = _data(seed, n_rows=n_rows, arities=arities, skew=skew)
            counts = build_score_table(data, ar, score, palim=palim).meta["counts"]
            for name in STATS:
                fired[name] += counts[name]
    data, ar = _near_functional(40, 7, 300, 0.02)  # small H(X | parents): the entropy rule
    counts = build_score_table(data, ar, "bic", palim=None).meta["counts"]
    for name in STATS:
        fired[name] += counts[name]
    assert all(fired[name] > 0 for name in STATS), fired


def test_exact_optimum_unchanged_by_pruning():
    exact_dp = pytest.importorskip("ilp.exact_dp")
    for seed in range(6):
        n = 5 + seed % 4  # 5..8 variables
        data, arities = _data(seed + 10, n_vars=n, n_rows=[15, 80, 400][seed % 3])
        for score in ("bdeu", "bic"):
            pruned = build_score_table(data, arities, score, palim=3)
            full = build_score_table(data, arities, score, palim=3, prune=False)
            best_pruned, dag = exact_dp.exact_optimum(pruned)
            best_full, _ = exact_dp.exact_optimum(full)
            assert best_pruned == pytest.approx(best_full, rel=1e-9)
            assert pruned.score_of(dag) == pytest.approx(best_pruned, rel=1e-12)


@pytest.mark.parametrize("network,n_rows", [("asia", 1000), ("cancer", 500), ("sachs", 2000)])
def test_exact_optimum_unchanged_on_benchmarks(network, n_rows):
    exact_dp = pytest.importorskip("ilp.exact_dp")
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample

    ds = forward_sample(load_network(network), n_rows, seed=7)
    for score in ("bdeu", "bic"):
        pruned = build_score_table(ds.data, ds.arities, score, palim=3, names=ds.names)
        full = build_score_table(ds.data, ds.arities, score, palim=3, prune=False)
        assert pruned.names == ds.names
        assert exact_dp.exact_optimum(pruned)[0] == pytest.approx(exact_dp.exact_optimum(full)[0], rel=1e-9)
        for v in range(full.n_vars):
            assert pruned.families[v].keys() == _non_dominated(full.families[v]).keys()


def test_threads_give_the_same_table():
    data, arities = _data(20, n_vars=7, n_rows=300)
    one = build_score_table(data, arities, "bdeu", palim=3)
    two = build_score_table(data, arities, "bdeu", palim=3, n_jobs=2, progress=False)
    assert one.families == two.families
    assert one.meta["counts"] == two.meta["counts"]


def test_allowed_and_required_parents():
    data, arities = _data(21, n_vars=6, n_rows=300)
    n = data.shape[1]
    allowed = np.ones((n, n), dtype=bool)
    allowed[:, 4] = False  # child 4: no parent allowed
    allowed[1, 2] = False  # 1 may not be a parent of 2
    required = np.zeros((n, n), dtype=bool)
    required[0, 3] = True  # 0 must be a parent of 3
    table = build_score_table(data, arities, "bic", palim=2, allowed=allowed, required=required)
    assert list(table.families[4]) == [()]
    assert all(1 not in ps for ps in table.families[2])
    assert all(0 in ps and len(ps) <= 2 for ps in table.families[3])
    # conditioned pruning: the kept sets of child 3 are the non-dominated supersets of {0}
    full3 = {ps: local_score(data, arities, 3, ps, "bic")
             for k in range(2) for rest in itertools.combinations([1, 2, 4, 5], k)
             for ps in [tuple(sorted((0, *rest)))]}
    want = {ps for ps, s in full3.items() if all(full3[q] < s for q in full3 if set(q) < set(ps))}
    assert set(table.families[3]) == want
    assert table.meta["restricted"]


def test_bad_input():
    data, arities = _data(22, n_vars=4, n_rows=50)
    with pytest.raises(CandidateError, match="palim"):
        build_score_table(data, arities, palim=-1)
    with pytest.raises(ScoreError, match="unknown score"):
        build_score_table(data, arities, score="mdl")
    with pytest.raises(ScoreError, match="ess"):
        build_score_table(data, arities, ess=0)
    with pytest.raises(CandidateError, match="allowed must be"):
        build_score_table(data, arities, allowed=np.ones((3, 3), dtype=bool))
    with pytest.raises(CandidateError, match="required must be"):
        build_score_table(data, arities, required=np.zeros((4, 5), dtype=bool))
    required = np.zeros((4, 4), dtype=bool)
    required[[0, 1, 2], 3] = True
    with pytest.raises(CandidateError, match="required parents but palim"):
        build_score_table(data, arities, palim=2, required=required)
    allowed = np.ones((4, 4), dtype=bool)
    allowed[0, 3] = False
    with pytest.raises(CandidateError, match="both required and not allowed"):
        build_score_table(data, arities, palim=3, required=required, allowed=allowed)
    with pytest.raises(CandidateError, match="names"):
        build_score_table(data, arities, names=["a"])


@pytest.mark.parametrize("score", ["bdeu", "bic", "qnml"])
@pytest.mark.parametrize("seed,n_rows,palim", [(30, 25, 3), (31, 400, 3), (32, 3000, 2), (33, 120, 4)])
@pytest.mark.parametrize("restricted", [False, True])
def test_kept_sets_equal_brute_force_dominance(score, seed, n_rows, palim, restricted):
    """Against ``local_score`` directly: keep W iff it beats every proper subset (ties to the subset).

    Every pruning bound must remove only sets that this rule drops anyway, with and without a
    (directional) restriction. The data has a one-state variable (adding it to a set is an exact
    tie) and a deterministic function of another column (zero-entropy families).
    """
    data, arities = _data(seed, n_vars=7, n_rows=n_rows)
    data[:, 5] = 0
    arities[5] = 1  # a one-state variable: adding it to any set ties
    data[:, 6] = data[:, 0] % arities[6]  # a function of another column
    n = data.shape[1]
    rng = np.random.default_rng(seed)
    allowed = rng.random((n, n)) < 0.7 if restricted else np.ones((n, n), dtype=bool)
    np.fill_diagonal(allowed, False)
    table = build_score_table(data, arities, score, ess=1.0, palim=palim,
                              allowed=allowed if restricted else None)
    n_ties = 0
    for v in range(n):
        pool = np.flatnonzero(allowed[:, v]).tolist()
        scores = {ps: local_score(data, arities, v, ps, score, ess=1.0)
                  for k in range(min(palim, len(pool)) + 1) for ps in itertools.combinations(pool, k)}
        want = _non_dominated(scores)
        assert table.families[v].keys() == want.keys(), (score, v)
        for ps, s in table.families[v].items():
            assert s == pytest.approx(want[ps], rel=1e-12)
        n_ties += sum(scores[ps] == scores[tuple(p for p in ps if p != 5)] for ps in scores if 5 in ps)
    assert n_ties > 0


def _near_functional(seed, n_vars, n_rows, noise):
    """Each column a noisy function of one or two earlier ones: small ``H(X | parents)``."""
    rng = np.random.default_rng(seed)
    arities = rng.integers(2, 5, n_vars)
    data = np.empty((n_rows, n_vars), dtype=np.int64)
    data[:, 0] = rng.integers(0, arities[0], n_rows)
    for v in range(1, n_vars):
        parents = rng.choice(v, min(v, int(rng.integers(1, 3))), replace=False)
        data[:, v] = (data[:, parents] * rng.integers(1, 4, parents.size)).sum(axis=1) % arities[v]
        flip = rng.random(n_rows) < noise
        data[flip, v] = rng.integers(0, arities[v], int(flip.sum()))
    return data.astype(np.uint8), arities.astype(np.int64)


@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("palim", [2, 4, None])
@pytest.mark.parametrize("seed,n_vars,n_rows,noise", [(40, 7, 300, 0.02), (41, 8, 1500, 0.05), (42, 6, 60, 0.2)])
def test_bound_pruning_keeps_the_dominance_table_on_random_data(score, palim, seed, n_vars, n_rows, noise):
    """Pruning before counting (every bound, the entropy rule included) against the full table."""
    data, arities = _near_functional(seed, n_vars, n_rows, noise)
    pruned = build_score_table(data, arities, score, ess=1.0, palim=palim)
    full = build_score_table(data, arities, score, ess=1.0, palim=palim, prune=False)
    _check_counters(pruned.meta)
    for v in range(n_vars):
        want = _non_dominated(full.families[v])
        assert pruned.families[v].keys() == want.keys(), (score, v)
        for ps, s in pruned.families[v].items():
            assert s == full.families[v][ps]


def test_entropy_rule_cuts_branches_before_counting():
    """Near-functional data: the entropy rule prunes, and whole branches are never generated."""
    fired = dict.fromkeys(STATS, 0)
    for seed in (40, 41):
        data, arities = _near_functional(seed, 8, 1500, 0.02)
        counts = build_score_table(data, arities, "bic", palim=None).meta["counts"]
        for name in STATS:
            fired[name] += counts[name]
        assert counts["not_generated"] > 0
    assert fired["pruned_entropy"] > 0, fired


@pytest.mark.parametrize("score", SCORES)
def test_binary_triple_count_path_matches_local_score(score):
    """All-binary data is counted from triple counts (``scores.counts.count_binary``) up to palim 3,
    the families of three binary parents of a binary child scored on full term tables.

    With a required parent the binary prefixes shift by one layer; every score must match.
    """
    data, arities = _data(3, n_vars=7, n_rows=300, arities=[2] * 6 + [3])
    required = np.zeros((7, 7), dtype=bool)
    required[4, 0] = True
    for req in (None, required):
        table = build_score_table(data, arities, score, palim=3, prune=False, required=req)
        for v in range(7):
            assert len(table.families[v]) > 1
            for ps, s in table.families[v].items():
                assert s == pytest.approx(local_score(data, arities, v, ps, score), rel=1e-12), (v, ps)


BOUNDS_CHECKED = """
import numpy as np
from scores.candidates import build_score_table
rng = np.random.default_rng(0)
data = rng.integers(0, 2, size=(300, 7)).astype(np.uint8)
data[:, 6] = data[:, 0] ^ data[:, 1]
table = build_score_table(data, np.full(7, 2), palim=5)
print(sum(len(f) for f in table.families))
"""


def test_kernels_stay_in_bounds_with_large_parent_limits(tmp_path):
    """The counting kernels compiled with numba's bounds checks (off in normal runs, where an
    out-of-range write corrupts memory silently): binary data, parent sets of up to 5."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", BOUNDS_CHECKED], env=env, capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) > 7
