"""The arc prior of scores.structure_prior: brute-force tables, exact optima, the GES score and
the pipeline option."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import hybridbn
from ilp.exact_dp import exact_optimum
from ilp.options import ILPOptions
from ilp.solve import solve_ilp
from pipeline.core.declarations import ConfigError
from scores.candidates import build_score_table
from scores.local import local_score, local_score_function
from scores.structure_prior import StructurePriorError, family_log_prior, with_structure_prior
from scores.table import ScoreTable
from search.ges import ges


def _data(seed, n_vars=6, n_rows=300):
    """Columns that are noisy functions of earlier ones, so that parents matter."""
    rng = np.random.default_rng(seed)
    arities = rng.integers(2, 4, n_vars)
    data = np.empty((n_rows, n_vars), dtype=np.int64)
    data[:, 0] = rng.integers(0, arities[0], n_rows)
    for v in range(1, n_vars):
        parents = rng.choice(v, min(v, 2), replace=False)
        data[:, v] = data[:, parents].sum(axis=1) % arities[v]
        flip = rng.random(n_rows) < 0.3
        data[flip, v] = rng.integers(0, arities[v], int(flip.sum()))
    return data.astype(np.uint8), arities.astype(np.int64)


def _full_table(data, arities, score, palim, expected):
    """Every parent set up to ``palim`` with its local score plus the prior (no pruning)."""
    n = data.shape[1]
    families = []
    for v in range(n):
        others = [p for p in range(n) if p != v]
        families.append({ps: local_score(data, arities, v, ps, score) + float(family_log_prior(len(ps), n, expected))
                         for k in range(palim + 1) for ps in itertools.combinations(others, k)})
    return families


@pytest.mark.parametrize("score", ["bdeu", "bic"])
@pytest.mark.parametrize("seed,palim,expected", [(0, 2, 1.0), (1, 3, 0.5), (2, 5, 2.0)])
def test_prior_table_is_the_dominance_table_of_the_adjusted_scores(score, seed, palim, expected):
    data, arities = _data(seed)
    table = with_structure_prior(build_score_table(data, arities, score, palim=palim), expected)
    full = _full_table(data, arities, score, palim, expected)
    for v, fam in enumerate(full):
        want = {ps: s for ps, s in fam.items()
                if all(fam[sub] < s for k in range(len(ps)) for sub in itertools.combinations(ps, k))}
        assert table.families[v].keys() == want.keys()
        for ps, s in table.families[v].items():
            assert s == pytest.approx(want[ps], rel=1e-12)
    assert table.meta["dominated_with_prior"] > 0 and table.meta["structure_prior"] == expected


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_ilp_with_the_prior_reaches_the_brute_force_optimum_and_never_adds_arcs(seed):
    data, arities = _data(seed, n_vars=7, n_rows=200)
    plain = build_score_table(data, arities, "bdeu", palim=3)
    table = with_structure_prior(plain, 1.0)
    best, _ = exact_optimum(ScoreTable.from_families(_full_table(data, arities, "bdeu", 3, 1.0)))
    result = solve_ilp(table, ILPOptions(dp_max_vars=0))  # SCIP, not the DP
    assert result.status == "optimal" and result.objective == pytest.approx(best, rel=1e-9)
    without = solve_ilp(plain, ILPOptions(dp_max_vars=0))
    assert result.dag.sum() <= without.dag.sum()  # each arc costs log((1 - beta) / beta) >= 0


def test_prior_values_and_limits():
    n = 11  # ten possible parents: beta = E / 10
    assert family_log_prior(2, n, 1.0) == pytest.approx(2 * math.log(0.1) + 8 * math.log(0.9))
    assert np.allclose(family_log_prior(np.arange(4), 3, 1.0), 2 * math.log(0.5))  # beta = 1/2: no preference
    with pytest.raises(StructurePriorError, match="at most 5"):
        family_log_prior(0, n, 5.5)
    with pytest.raises(StructurePriorError, match="positive"):
        family_log_prior(0, n, 0.0)


def test_ges_score_carries_the_prior_per_arc():
    data, arities = _data(6)
    plain, with_prior = local_score_function(data, arities), local_score_function(data, arities, structure_prior=1.0)
    kappa = math.log(1 / 5) - math.log(4 / 5)  # beta = 1/5 with six variables
    gain = with_prior(2, (0, 1)) - with_prior(2, ())
    assert gain == pytest.approx(plain(2, (0, 1)) - plain(2, ()) + 2 * kappa, rel=1e-12)
    assert ges(with_prior, 6).cpdag.sum() <= ges(plain, 6).cpdag.sum()


def test_pipeline_option_is_keyed_and_refused_where_it_cannot_apply(tmp_path):
    cache = tmp_path / "cache"
    base = hybridbn.learn("asia", rows=1000, seed=1, method="none", cache_dir=cache)
    prior = hybridbn.learn("asia", rows=1000, seed=1, method="none", structure_prior=1.0, cache_dir=cache)
    assert prior.objective < base.objective  # a new table, not the cached one: the prior is negative
    assert len(prior.arcs) <= len(base.arcs)
    with pytest.raises(ConfigError, match="^structure_prior applies to scores computed from data"):
        hybridbn.learn(str(tmp_path / "t.jkl"), structure_prior=1.0)
    with pytest.raises(ValueError, match="^structure_prior must be a positive number, got -1"):
        hybridbn.learn("asia", structure_prior=-1.0)


def test_prior_keeps_the_families_an_undirected_requirement_needs(tmp_path):
    """A required adjacency ``asia - dysp`` under a strong prior: every family joining the two is
    dominated without the requirement, yet the run is the brute-force constrained optimum."""
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample

    ds = forward_sample(load_network("asia"), 500, 3)
    names, expected = list(ds.names), 0.05
    a, d = names.index("asia"), names.index("dysp")
    free = with_structure_prior(build_score_table(ds.data, ds.arities, "bdeu", palim=3), expected)
    assert not any(a in ps for ps in free.families[d]) and not any(d in ps for ps in free.families[a])
    required = tmp_path / "required.csv"
    required.write_text("source,target,directed\nasia,dysp,false\n")
    result = hybridbn.learn(ds.to_frame(), method="none", structure_prior=expected, required=str(required),
                            use_cache=False)
    assert result.adjacency[a, d] or result.adjacency[d, a]
    full = build_score_table(ds.data, ds.arities, "bdeu", palim=3, prune=False)
    full = ScoreTable.from_columns(full.n_vars, full.child, full.parent_ptr, full.parents,
                                   full.score + family_log_prior(full.sizes, full.n_vars, expected))
    allowed = ~np.eye(len(names), dtype=bool)
    best = -np.inf
    for p, c in ((a, d), (d, a)):
        need = np.zeros_like(allowed)
        need[p, c] = True
        best = max(best, exact_optimum(full.select(full.respecting(allowed, need)))[0])
    assert result.objective == pytest.approx(best, rel=1e-9)
