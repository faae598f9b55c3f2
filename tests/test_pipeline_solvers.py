"""The solve stage's other optimisers (GES, SGES) and the cops-and-robbers restriction in the pipeline."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import assert_evaluation_of

from graphs.dag import is_acyclic, parents_from_adjacency
from graphs.pdag import skeleton
from graphs.treewidth import dag_treewidth
from pipeline.core.cache import StageCache
from pipeline.apps.cli import main
from pipeline.core.config import RunConfig
from pipeline.core.declarations import ConfigError
from pipeline.apps.grid import parse_grid, run_grid
from pipeline.core.stages import allowed_of, dag_of, dataset_of, names_of, run_stages, table_of
from scores.local import local_score


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return StageCache(tmp_path_factory.mktemp("cache"))


def _dag_score(dag, dataset, score="bdeu"):
    return sum(local_score(dataset.data, dataset.arities, v, ps, score=score)
               for v, ps in enumerate(parents_from_adjacency(dag)))


@pytest.mark.parametrize("solver", ["ges", "sges"])
def test_equivalence_search_solvers_score_the_data(cache, solver):
    cfg = RunConfig(network="asia", rows=2000, seed=2, solver=solver, sges_bound="parents:2").validated()
    arts = run_stages(cache, cfg)
    assert "scores" not in arts  # GES/SGES score the data on demand
    dag = dag_of(arts["solve"])
    result = arts["solve"].meta["result"]
    assert is_acyclic(dag)
    assert result["objective"] == pytest.approx(_dag_score(dag, dataset_of(arts["data"])), abs=1e-6)
    assert result["n_score_evaluations"] > 0 and result["gap"] is None
    allowed = allowed_of(arts["restrict"])
    assert not (skeleton(dag) & ~allowed).any()  # only restriction-allowed adjacencies
    assert_evaluation_of(arts["evaluate"].meta, dag, "asia")


def test_ges_without_restriction_matches_the_ilp_optimum_on_cancer(cache):
    """On a 5-node network with plenty of data GES reaches the exact optimum (palim 4 = none)."""
    base = RunConfig(network="cancer", rows=5000, seed=0, method="none", palim=4)
    ges = run_stages(cache, replace(base, solver="ges").validated())
    exact = run_stages(cache, base.validated())
    assert ges["solve"].meta["result"]["objective"] == pytest.approx(
        exact["solve"].meta["result"]["objective"], rel=1e-9)


def test_cops_restriction_keeps_its_decomposition(cache):
    cfg = RunConfig(network="asia", rows=3000, seed=0, method="cops", palim=2).validated()
    arts = run_stages(cache, cfg)
    meta = arts["restrict"].meta
    assert meta["method"] == "cops" and meta["cops_status"] == "ok" and meta["n_tests"] > 0
    allowed = allowed_of(arts["restrict"])
    n = allowed.shape[0]
    covered = np.zeros((n, n), dtype=bool)
    for bag in meta["bags"]:
        covered[np.ix_(bag, bag)] = True
    assert not (allowed & ~covered).any()  # every allowed edge lies inside a bag
    assert max(len(b) for b in meta["bags"]) - 1 == meta["treewidth"]
    dag = dag_of(arts["solve"])
    assert not (skeleton(dag) & ~allowed).any()


@pytest.mark.parametrize(
    "options, message",
    [
        ({"solver": "kg"}, "needs a treewidth bound"),
        ({"solver": "kastar", "treewidth": 0}, "--treewidth must be a positive integer"),
        ({"solver": "ges", "treewidth": 2}, "--treewidth applies to"),
        ({"solver": "sges", "sges_bound": "depth:2"}, "unknown SGES property"),
        ({"solver": "sges", "sges_bound": "parents:-1"}, ">= 0"),
        ({"solver": "sges", "sges_bound": "parents"}, "NAME:K"),
        ({"within_bags": True}, "--within-bags needs --method cops"),
        ({"method": "cops", "within_bags": True, "treewidth": 2}, "not both"),
    ],
)
def test_bad_solver_options(options, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig(network="asia", **options).validated()


def test_cli_bad_sges_bound_is_one_line_error(capsys, tmp_path):
    status = main(["--network", "asia", "--solver", "sges", "--sges-bound", "width:2", "--cache-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "unknown SGES property" in err and len(err.strip().splitlines()) == 1


def test_grid_with_ges_and_cops_rows(tmp_path):
    grid = parse_grid(
        'networks = ["cancer"]\nrows = 1000\nmethods = ["pc", "cops"]\nmax_orders = [1, 2]\n'
        'solvers = ["ilp", "sges"]\nsges_bounds = ["parents:2"]\npalims = [2]\n'
    )
    # cops ignores max_order, so its two orders collapse into one job per solver
    assert len(grid.configs) == 6
    frame = run_grid(grid, StageCache(tmp_path / "c"))
    assert (frame["status"] != "error").all(), frame["error"].tolist()
    sges = frame[frame["solver"] == "sges"]
    assert (sges["t_score"] == 0).all() and sges["n_candidates"].isna().all()
    assert (sges["sges_bound"] == "parents:2").all()
    assert frame[frame["solver"] == "ilp"]["sges_bound"].isna().all()
    assert frame[frame["method"] == "cops"]["max_order"].isna().all()
    assert frame["f1_vs_unrestricted"].notna().all()


def _family_score(arts, dag):
    table = table_of(arts["scores"], names_of(arts["data"]))
    return table.score_of(parents_from_adjacency(dag))


@pytest.mark.parametrize("solver, k", [("kg", 1), ("kastar", 2), ("ilp", 1)])
def test_treewidth_bounded_solvers(cache, solver, k):
    base = RunConfig(network="asia", rows=3000, seed=1, score="bic", palim=2, time_limit=3)
    arts = run_stages(cache, replace(base, solver=solver, treewidth=k).validated())
    dag = dag_of(arts["solve"])
    assert is_acyclic(dag) and dag_treewidth(dag).width <= k
    result = arts["solve"].meta["result"]
    assert result["objective"] == pytest.approx(_family_score(arts, dag), abs=1e-6)
    unbounded = run_stages(cache, replace(base, time_limit=None).validated())
    assert result["objective"] <= unbounded["solve"].meta["result"]["objective"] + 1e-6


def test_ilp_within_cops_bags(cache):
    cfg = RunConfig(network="asia", rows=3000, seed=0, method="cops", palim=2, within_bags=True).validated()
    arts = run_stages(cache, cfg)
    bags = [set(b) for b in arts["restrict"].meta["bags"]]
    for child, parents in enumerate(parents_from_adjacency(dag_of(arts["solve"]))):
        assert any({child, *parents} <= bag for bag in bags)
    assert arts["solve"].meta["result"]["status"] == "optimal"


def test_candidates_restriction_runs_end_to_end(cache):
    """--method candidates: sparse candidate parents (scores.identification) feed palim-k scores and k-G."""
    from scores.identification import identify_candidates

    cfg = RunConfig(network="child", rows=3000, seed=0, method="candidates", candidates=3, score="bic",
                    palim=2, solver="kg", treewidth=2, time_limit=2).validated()
    arts = run_stages(cache, cfg, n_jobs=2)
    meta = arts["restrict"].meta
    assert meta["method"] == "candidates" and meta["n_tests"] == 0 and meta["candidates"] == 3
    allowed = allowed_of(arts["restrict"])
    dataset = dataset_of(arts["data"])
    assert np.array_equal(allowed, identify_candidates(dataset.data, dataset.arities, m=3, score="bic"))
    assert (allowed.sum(axis=0) <= 3 + meta["conditional"]).all() and not allowed.diagonal().any()
    assert meta["n_arcs_allowed"] == allowed.sum() and not np.array_equal(allowed, allowed.T)
    table = table_of(arts["scores"], names_of(arts["data"]))
    assert max(len(ps) for fam in table.families for ps in fam) <= 2
    for child, fam in enumerate(table.families):
        assert all(allowed[p, child] for ps in fam for p in ps)
    dag = dag_of(arts["solve"])
    assert is_acyclic(dag) and not (dag & ~allowed).any() and dag_treewidth(dag).width <= 2
    assert arts["solve"].meta["result"]["objective"] == pytest.approx(_family_score(arts, dag), abs=1e-6)
    assert_evaluation_of(arts["evaluate"].meta, dag, "child")


def test_candidates_cache_key_and_validation():
    from pipeline.core.stages import restrict_params

    base = RunConfig(network="asia", method="candidates", score="bic")
    assert restrict_params(replace(base, alpha=0.01).validated()) == restrict_params(base.validated())
    assert restrict_params(replace(base, candidates=4).validated()) != restrict_params(base.validated())
    assert restrict_params(replace(base, score="bdeu").validated()) != restrict_params(base.validated())
    for bad in (0, -2, True, 2.5):
        with pytest.raises(ConfigError, match="--candidates must be a positive integer"):
            replace(base, candidates=bad).validated()


def test_cli_and_grid_with_candidates(capsys, tmp_path):
    assert main(["--network", "asia", "--method", "candidates", "--candidates", "0", "--cache-dir", str(tmp_path)]) == 2
    assert "--candidates must be a positive integer, got 0" in capsys.readouterr().err
    grid = parse_grid('networks = ["asia"]\nrows = 1000\nmethods = ["pc", "candidates"]\ncandidates = [2, 3]\n'
                      'alphas = [0.01, 0.05]\nscores = ["bic"]\npalims = [2]\n')
    # pc ignores the candidate count, candidates ignores alpha: 2 pc jobs + 2 candidates jobs
    assert sorted((c.method, c.candidates, c.alpha) for c in grid.configs) == [
        ("candidates", 2, 0.05), ("candidates", 3, 0.05), ("pc", 16, 0.01), ("pc", 16, 0.05)]
    frame = run_grid(grid, StageCache(tmp_path / "c"))
    assert (frame["status"] != "error").all(), frame["error"].tolist()
    cand = frame[frame["method"] == "candidates"]
    assert sorted(cand["candidates"]) == [2, 3] and cand["alpha"].isna().all() and (cand["n_tests"] == 0).all()
    assert frame[frame["method"] == "pc"]["candidates"].isna().all()


def test_memory_limit_stops_the_ilp_like_a_time_limit(tmp_path):
    """``--memory-limit`` reaches SCIP (also in the treewidth-bounded ILP): 1 MB ends the solve at
    once with the warm-start DAG, cached as a limited result under its own key; the other solvers
    refuse the option."""
    import hybridbn

    options = {"rows": 500, "method": "none", "cache_dir": tmp_path}
    capped = hybridbn.learn("alarm", memory_limit=1, **options)
    assert capped.status == "memlimit" and capped.bound is None and is_acyclic(capped.adjacency)
    assert capped.solver_result["local_search"]["start_objective"] <= capped.objective  # polished from there
    assert "tabu search from the incumbent" in capped.summary()
    assert hybridbn.learn("alarm", memory_limit=1, **options).cached["solve"]
    assert hybridbn.learn("alarm", memory_limit=1, treewidth=3, **options).status == "memlimit"
    full = hybridbn.learn("alarm", **options)
    assert not full.cached["solve"] and full.status == "optimal" and full.objective > capped.objective
    with pytest.raises(ConfigError, match="--memory-limit applies to --solver ilp only"):
        RunConfig(network="alarm", solver="ges", memory_limit=10).validated()
