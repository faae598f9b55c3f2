"""Arc confidence by the bootstrap: strengths, Scutari & Nagarajan's threshold, the averaged
network, and ``--bootstrap`` through the CLI, the Python API and grids."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import hybridbn
import pipeline.apps.bootstrap
import pipeline.core.executors
import pipeline.core.stages
from bayesnet.catalog import load_network
from graphs.averaging import (arc_strengths, averaged_network, inclusion_threshold, pair_strengths,
                              strength_frame)
from graphs.dag import is_acyclic
from graphs.metrics import shd
from graphs.pdag import dag_to_cpdag, pdag_from_edges as pdag, pdag_to_dag
from pipeline.apps.bootstrap import run_bootstrap
from pipeline.apps.cli import main
from pipeline.apps.grid import parse_grid, run_grid
from pipeline.core.cache import StageCache


# ------------------------------------------------------------------------------ strengths

def test_strengths_of_hand_made_networks_are_exact_frequencies():
    graphs = [pdag(3, [(0, 1)]), pdag(3, [(0, 1), (1, 2)]), pdag(3, [(1, 0)]), pdag(3, undirected=[(0, 1)]),
              pdag(3, [(2, 1)])]
    strength, direction = arc_strengths(graphs)
    assert strength[0, 1] == strength[1, 0] == pytest.approx(4 / 5)  # 0-1 adjacent in 4 of 5
    assert direction[0, 1] == pytest.approx((1 + 1 + 0 + 0.5) / 4)  # undirected counts half
    assert direction[1, 0] == pytest.approx((0 + 0 + 1 + 0.5) / 4)
    assert strength[1, 2] == pytest.approx(2 / 5) and direction[1, 2] == direction[2, 1] == pytest.approx(0.5)
    assert strength[0, 2] == 0 and direction[0, 2] == 0
    frame = strength_frame(strength, direction, ["a", "b", "c"])
    assert list(frame.columns) == ["from", "to", "strength", "direction"] and len(frame) == 6
    assert frame.iloc[0].tolist() == ["a", "b", pytest.approx(0.8), pytest.approx(0.625)]


@pytest.mark.parametrize("strengths,expected", [
    ([0, 0, 0, 0.2, 0.9, 1], 0.2),      # F: 1/2 on [0, .2), 2/3 on [.2, .9): median level 2/3 -> 0.2
    ([0, 0, 0.5, 0.5, 1, 1], 0.5),      # minimisers [1/3, 2/3]: midpoint 1/2 -> quantile 0.5
    ([0.1, 0.1, 0.1, 0.8], 0.1),
    ([1, 1], 1.0),
])
def test_threshold_of_hand_made_strengths(strengths, expected):
    assert inclusion_threshold(strengths) == pytest.approx(expected)


def test_threshold_minimises_the_l1_distance_by_brute_force():
    rng = np.random.default_rng(3)
    t = (np.arange(20000) + 0.5) / 20000  # midpoint rule on [0, 1)
    for _ in range(20):
        s = np.sort(rng.integers(0, 11, size=rng.integers(3, 30)) / 10)
        ecdf = np.searchsorted(s, t, side="right") / s.size
        grid = np.union1d(np.linspace(0, 1, 2001), np.arange(s.size + 1) / s.size)  # the levels of F too
        distance = np.array([np.abs(ecdf - c).mean() for c in grid])
        best = grid[distance <= distance.min() + 1e-9]
        quantiles = {float(s[min(int(np.ceil(c * s.size - 1e-9)) - 1, s.size - 1)]) if c > 0 else float(s[0])
                     for c in best}
        assert inclusion_threshold(s) in quantiles


def test_averaged_network_drops_the_weakest_arc_of_a_cycle_and_keeps_ties_undirected():
    n = 4
    strength, direction = np.zeros((n, n)), np.zeros((n, n))
    for (i, j), s in {(0, 1): 1.0, (1, 2): 0.9, (2, 0): 0.8, (2, 3): 0.7}.items():
        strength[i, j] = strength[j, i] = s
        direction[i, j], direction[j, i] = 1.0, 0.0
    direction[2, 3] = direction[3, 2] = 0.5
    strength[0, 3] = strength[3, 0] = 0.3  # below the threshold
    direction[0, 3] = 1.0
    P = averaged_network(strength, direction, 0.5)
    assert P[0, 1] and P[1, 2] and not P[2, 0] and not P[0, 2]  # 2 -> 0 would close 0 -> 1 -> 2 -> 0
    assert P[2, 3] and P[3, 2] and not P[0, 3]


def test_averaged_network_is_always_acyclic():
    rng = np.random.default_rng(0)
    for _ in range(50):
        graphs = [rng.random((7, 7)) < 0.3 for _ in range(5)]  # arbitrary digraphs, cycles included
        graphs = [g & ~np.eye(7, dtype=bool) & ~(g & g.T) for g in graphs]
        strength, direction = arc_strengths(graphs)
        P = averaged_network(strength, direction, inclusion_threshold(pair_strengths(strength)))
        assert is_acyclic(P & ~P.T)


# ------------------------------------------------------------------------------- pipeline

@pytest.fixture(scope="module")
def asia_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def learn_boot(cache_dir, **options):
    return hybridbn.learn("asia", rows=300, seed=1, bootstrap=3, cache_dir=cache_dir, **options).bootstrap


def test_bootstrap_is_deterministic_for_a_seed_and_a_rerun_is_fully_cached(asia_cache, monkeypatch):
    first = learn_boot(asia_cache)
    assert first.replicates == 3 and first.evaluation["truth"] == "asia"
    solved = replace(pipeline.core.stages.SOLVER["ilp"], run=lambda *a: pytest.fail("a cached replicate was solved"))
    monkeypatch.setattr(pipeline.core.stages, "SOLVER", replace(pipeline.core.stages.SOLVER, methods=(solved,)))
    again = learn_boot(asia_cache)
    np.testing.assert_array_equal(first.strength, again.strength)
    np.testing.assert_array_equal(first.averaged, again.averaged)


def test_a_cached_rerun_starts_no_worker_process(asia_cache, monkeypatch):
    first = learn_boot(asia_cache)
    monkeypatch.setattr(pipeline.core.executors, "_worker_pool", lambda jobs: pytest.fail("a worker pool was started"))
    again = learn_boot(asia_cache, n_jobs=2)
    np.testing.assert_array_equal(first.strength, again.strength)
    assert again.statuses == first.statuses


def test_only_the_missing_replicates_are_learned(tmp_path, monkeypatch):
    hybridbn.learn("asia", rows=300, seed=1, bootstrap=2, cache_dir=tmp_path)
    computed = []
    learn = pipeline.apps.bootstrap.learn_replicate

    def recording(*args, read_only=False):
        if not read_only:
            computed.append(args[-1])
        return learn(*args, read_only=read_only)

    monkeypatch.setattr(pipeline.apps.bootstrap, "learn_replicate", recording)
    assert learn_boot(tmp_path).replicates == 3
    assert computed == [2]


def test_pool_and_serial_bootstrap_give_identical_strengths(asia_cache, tmp_path):
    serial = learn_boot(asia_cache)
    pooled = learn_boot(tmp_path / "fresh", n_jobs=2)
    np.testing.assert_array_equal(serial.strength, pooled.strength)
    np.testing.assert_array_equal(serial.direction, pooled.direction)


def test_dask_bootstrap_matches_serial(asia_cache, tmp_path):
    distributed = pytest.importorskip("distributed")
    from pipeline.core.executors import DaskExecutor

    serial = learn_boot(asia_cache)
    cfg = hybridbn.learn("asia", rows=300, seed=1, bootstrap=3, cache_dir=asia_cache).config
    cache = StageCache(tmp_path / "dask")
    data = pipeline.core.stages.data_stage(cache, cfg)
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = run_bootstrap(cfg, cache, data, executor=DaskExecutor(client))
    np.testing.assert_array_equal(serial.strength, on_dask.strength)
    np.testing.assert_array_equal(serial.averaged, on_dask.averaged)


def test_resamples_depend_on_the_seed(tmp_path):
    cfg = hybridbn.learn("asia", rows=200, seed=0, cache_dir=tmp_path, stage="data").config
    from dataclasses import replace

    from pipeline.apps.bootstrap import resample_stage
    from pipeline.core.stages import data_stage

    cache = StageCache(tmp_path)
    data = data_stage(cache, cfg)
    a, b = resample_stage(cache, cfg, data, 0), resample_stage(cache, replace(cfg, seed=5), data, 0)
    assert a.key != b.key and not a.frames["data"].equals(b.frames["data"])
    assert resample_stage(cache, cfg, data, 0).cached and a.frames["data"].equals(
        resample_stage(cache, cfg, data, 0).frames["data"])
    assert list(a.frames["data"].dtypes) == list(data.frames["data"].dtypes)  # states kept


def test_cli_end_to_end_writes_strengths_and_averaged_network(asia_cache, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(["--network", "asia", "--rows", "300", "--seed", "1", "--bootstrap", "3", "--cache-dir",
                   str(asia_cache), "--output-dir", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert status == 0 and "bootstrap : 3 resamples" in printed
    folder = next(out.iterdir())
    strengths = pd.read_csv(folder / "strengths.csv")
    assert list(strengths.columns) == ["from", "to", "strength", "direction"] and len(strengths) == 8 * 7
    assert set(strengths["strength"]) <= {0, 1 / 3, 2 / 3, 1} or np.allclose(
        strengths["strength"] * 3, np.round(strengths["strength"] * 3))
    record = json.loads((folder / "bootstrap.json").read_text())
    averaged = pd.read_csv(folder / "averaged.csv")
    assert len(averaged) == record["n_edges"]
    assert ((averaged["strength"] > record["threshold"]) | (averaged["strength"] == 1)).all()
    assert (folder / "averaged.png").is_file()
    # the recorded SHD is that of the CPDAG of a DAG extending the averaged network written to the CSV
    truth = load_network("asia")
    node = {name: i for i, name in enumerate(truth.variables)}
    arcs, undirected = [], []
    for source, target, directed in averaged[["source", "target", "directed"]].itertuples(index=False):
        (arcs if directed else undirected).append((node[source], node[target]))
    estimate = pdag_to_dag(pdag(truth.n_vars, arcs, undirected))
    assert record["evaluation"]["shd"] == shd(dag_to_cpdag(estimate), dag_to_cpdag(truth.adjacency))
    assert (folder / "averaged.svg").is_file()


def test_cli_threshold_is_used(asia_cache, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--network", "asia", "--rows", "300", "--seed", "1", "--bootstrap", "3", "--threshold", "0",
                 "--cache-dir", str(asia_cache), "--output-dir", str(out), "--quiet"]) == 0
    record = json.loads((next(out.iterdir()) / "bootstrap.json").read_text())
    assert record["threshold"] == 0 and record["threshold_rule"] == "--threshold"


def test_grid_key_bootstrap(asia_cache):
    grid = parse_grid('networks = ["asia"]\nrows = [300]\nseeds = [1]\nbootstrap = 3\nbaseline = false')
    assert [cfg.bootstrap for cfg in grid.configs] == [3]
    frame = run_grid(grid, StageCache(asia_cache))
    row = frame.iloc[0]
    evaluation = learn_boot(asia_cache).evaluation  # the same resamples through the Python API
    assert row["status"] == "optimal" and row["bootstrap"] == 3
    assert row["shd_averaged"] == evaluation["shd"] and row["f1_averaged"] == pytest.approx(evaluation["f1"])
    plain = parse_grid('networks = ["asia"]\nrows = [300]')
    assert plain.configs[0].bootstrap is None


@pytest.mark.parametrize("argv,option", [
    (["--bootstrap", "0"], "--bootstrap"),
    (["--bootstrap", "3", "--threshold", "1.5"], "--threshold"),
    (["--bootstrap", "3", "--threshold", "-0.1"], "--threshold"),
    (["--threshold", "0.5"], "--threshold"),
    (["--bootstrap", "3", "--stage", "scores"], "--bootstrap"),
])
def test_bad_bootstrap_options_are_one_line_errors(argv, option, capsys, tmp_path):
    status = main(["--network", "asia", "--cache-dir", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert status == 2 and option in err and err.count("\n") == 1


def test_bootstrap_of_a_score_file_is_refused(capsys, tmp_path):
    assert main(["--scores", str(tmp_path / "table.jkl"), "--bootstrap", "2"]) == 2
    err = capsys.readouterr().err
    assert "--bootstrap" in err and "--scores" in err and err.count("\n") == 1
    with pytest.raises(ValueError, match="^bootstrap must be a positive integer"):  # as a keyword in Python
        hybridbn.learn("asia", bootstrap=0)
    with pytest.raises(ValueError, match="^threshold must lie between 0 and 1"):
        hybridbn.learn("asia", bootstrap=2, threshold=2)


def test_averaged_drawing_widths_follow_strength():
    from pipeline.apps.pictures import MAX_WIDTH, strength_drawing, to_dot_text

    P = pdag(3, [(0, 1)], [(1, 2)])
    strength = np.array([[0, 1.0, 0], [1.0, 0, 0.5], [0, 0.5, 0]])
    drawing = strength_drawing(P, strength, ["a", "b", "c"], "t")
    widths = dict(zip([(i, j) for i, j, *_ in drawing.edges], drawing.widths))
    assert widths == {(0, 1): MAX_WIDTH, (1, 2): MAX_WIDTH / 2}
    assert [s for *_, s in drawing.edges] == ["arc", "edge"] and drawing.legend == [("arc", 1), ("edge", 1)]
    assert f"penwidth={MAX_WIDTH:.2f}" in to_dot_text(drawing)
