"""Experiment grids: parsing, expansion, local and Dask execution, resume, failures, --task."""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pandas as pd
import pytest

from pipeline.apps import grid as grid_mod
from pipeline.core import stages
from pipeline.core.cache import StageCache
from pipeline.apps.cli import main
from pipeline.core.executors import DaskExecutor, LocalExecutor
from pipeline.apps.grid import GridError, job_key, load_grid, parse_grid, run_grid

SMALL = """
name = "small"
networks = ["asia", "cancer"]
rows = 400
alphas = [0.01, 0.05]
palims = [2]
time_limit = 60
"""


def _write(tmp_path, text, name="g.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _manifests(root):
    return sorted(p for p in root.rglob("manifest.json"))


def test_expansion_is_deterministic_and_deduplicated():
    grid = parse_grid("""
        networks = ["cancer", "asia"]
        rows = [100, 200]
        methods = ["none", "pc"]
        alphas = [0.01, 0.1]
        scores = ["bic", "bdeu"]
        ess = [1, 10]
        palims = ["none", 2]
    """)
    # per network x rows: method none ignores alpha -> 1, pc -> 2; bic ignores ess -> 1, bdeu -> 2
    assert len(grid.configs) == 2 * 2 * (1 + 2) * (1 + 2) * 2
    assert [c.network for c in grid.configs[:3]] == ["cancer"] * 3
    assert grid.configs[0].palim is None and grid.configs[1].palim == 2
    assert grid == parse_grid("""
        networks = ["cancer", "asia"]
        rows = [100, 200]
        methods = ["none", "pc"]
        alphas = [0.01, 0.1]
        scores = ["bic", "bdeu"]
        ess = [1, 10]
        palims = ["none", 2]
    """)
    keys = {job_key(c, True) for c in grid.configs}
    assert len(keys) == len(grid.configs)


def test_cops_time_limit_goes_to_the_cops_jobs_only():
    grid = parse_grid('networks = ["asia"]\nmethods = ["pc", "cops"]\ncops_time_limit = 60')
    assert [(c.method, c.cops_time_limit) for c in grid.configs] == [("pc", None), ("cops", 60.0)]
    plain = parse_grid('networks = ["asia"]\nmethods = ["pc", "cops"]')
    assert job_key(grid.configs[0], True) == job_key(plain.configs[0], True)
    assert job_key(grid.configs[1], True) != job_key(plain.configs[1], True)


@pytest.mark.parametrize(
    "text, message",
    [
        ('networks = ["asia"]\nalpha = [0.1]', "unknown grid key 'alpha'"),
        ('networks = ["asia"]\nalphas = [1.5]', "--alpha"),
        ('networks = ["asia"]\nmethods = ["magic"]', "--method"),
        ('rows = [10]', "at least one source"),
        ('data = ["nowhere.csv"]', "in grid key 'data': data file not found: "),
        ('scores = ["nowhere.jkl"]', "in grid key 'scores': --scores: file not found: "),
        ('networks = ["mine.csv"]', "mine.csv is a data file; list it under data = "),
        ('networks = []', "empty list"),
        ('networks = ["asia", "atlantis"]', "unknown network 'atlantis'"),
        ('networks = ["asia"\n', "not valid TOML"),
        ('networks = ["asia"]\nbaseline = "yes"', "baseline"),
        ('networks = ["asia"]\nrows = true', "--rows must be a positive integer, got True"),
        ('networks = ["asia"]\npalims = [true]', "--palim must be a non-negative integer or 'none'"),
        ('networks = ["asia"]\n[alphas]\nx = 1', "--alpha must be a number"),
        ('networks = ["asia"]\ntime_limit = inf', "--time-limit must be a positive number of seconds"),
        ('networks = ["asia"]\nname = "../../out"', "grid key 'name'"),
    ],
)
def test_bad_grid_files(text, message):
    with pytest.raises(GridError, match=message.replace("[", r"\[")):
        parse_grid(text)


def test_network_files_are_found_next_to_the_grid_file(tmp_path, monkeypatch):
    from bayesnet.bif import write_bif
    from bayesnet.catalog import load_network

    (tmp_path / "nets").mkdir()
    write_bif(load_network("cancer"), tmp_path / "nets" / "mine.bif")
    path = tmp_path / "grid.toml"
    path.write_text('networks = ["nets/mine.bif", "asia"]')
    monkeypatch.chdir(tmp_path / "nets")  # not where the grid file is
    grid = load_grid(path)
    assert [c.network for c in grid.configs] == [str(tmp_path / "nets" / "mine.bif"), "asia"]
    with pytest.raises(GridError, match="network file not found: .*gone.bif"):
        parse_grid('networks = ["gone.bif"]', base_dir=tmp_path)


def test_process_pool_grid_then_resume_computes_nothing(tmp_path, capsys):
    path = _write(tmp_path, SMALL)
    cache_dir, out_dir = tmp_path / "cache", tmp_path / "out"
    argv = ["grid", str(path), "--cache-dir", str(cache_dir), "--output-dir", str(out_dir), "-j", "2", "--quiet"]
    assert main(argv) == 0
    frame = pd.read_parquet(out_dir / "grid-small" / "results.parquet")
    assert list(frame["job"]) == [0, 1, 2, 3]
    assert (frame["status"] == "optimal").all() and not frame["cached"].any()
    assert frame["t_hybrid"].to_numpy() == pytest.approx(
        (frame["t_restrict"] + frame["t_score"] + frame["t_solve"]).to_numpy())
    assert frame["f1"].between(0, 1).all() and frame["f1_vs_unrestricted"].between(0, 1).all()
    assert (frame["n_candidates"] <= frame["n_candidates_unrestricted"]).all()
    assert (frame["n_tests"] > 0).all() and (frame["gap"] == 0).all()
    csv = pd.read_csv(out_dir / "grid-small" / "results.csv")
    assert len(csv) == 4 and "shd" in csv.columns
    before = _manifests(cache_dir)
    mtimes = [p.stat().st_mtime_ns for p in before]
    capsys.readouterr()
    assert main(argv) == 0
    assert "4 from cache" in capsys.readouterr().out
    assert _manifests(cache_dir) == before and [p.stat().st_mtime_ns for p in before] == mtimes
    again = pd.read_parquet(out_dir / "grid-small" / "results.parquet")
    assert again["cached"].all()
    pd.testing.assert_frame_equal(again.drop(columns="cached"), frame.drop(columns="cached"))


def test_dask_local_cluster_matches_inline(tmp_path):
    distributed = pytest.importorskip("distributed")
    grid = load_grid(_write(tmp_path, SMALL))
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        dask_rows = run_grid(grid, StageCache(tmp_path / "a"), DaskExecutor(client))
    inline_rows = run_grid(grid, StageCache(tmp_path / "b"), LocalExecutor(1))
    cols = ["network", "alpha", "status", "objective", "shd", "f1", "n_tests", "n_candidates", "f1_vs_unrestricted"]
    pd.testing.assert_frame_equal(dask_rows[cols], inline_rows[cols])


def test_failing_job_is_recorded_and_grid_goes_on(tmp_path, monkeypatch):
    grid = load_grid(_write(tmp_path, SMALL))
    real = stages.solve_stage

    def flaky(cache, cfg, *args, **kwargs):
        if cfg.network == "cancer" and cfg.method != "none":
            raise RuntimeError("solver exploded\nsecond line")
        return real(cache, cfg, *args, **kwargs)

    monkeypatch.setattr(stages, "solve_stage", flaky)
    cache = StageCache(tmp_path / "c")
    frame = run_grid(grid, cache)
    assert list(frame["status"]) == ["optimal", "optimal", "error", "error"]
    assert frame.loc[2, "error"] == "RuntimeError: solver exploded second line"
    monkeypatch.setattr(stages, "solve_stage", real)
    frame = run_grid(grid, cache)  # failures are not cached: they are retried
    assert list(frame["status"]) == ["optimal"] * 4
    assert list(frame["cached"]) == [True, True, False, False]


def test_time_limit_is_recorded_with_gap(tmp_path, monkeypatch):
    import ilp

    real = ilp.solve_ilp

    def limited(table, **kwargs):
        result = real(table, **kwargs)
        assert kwargs["time_limit"] == 60
        result.status, result.gap = "timelimit", 0.25
        return result

    monkeypatch.setattr(ilp, "solve_ilp", limited)
    grid = parse_grid(SMALL.replace('["asia", "cancer"]', '["cancer"]'))
    frame = run_grid(grid, StageCache(tmp_path / "c"))
    assert list(frame["status"]) == ["timelimit", "timelimit"] and (frame["gap"] == 0.25).all()
    assert list(frame["status_unrestricted"]) == ["timelimit"] * 2 and (frame["gap_unrestricted"] == 0.25).all()


def test_interrupt_leaves_cache_valid_and_resumable(tmp_path, monkeypatch):
    grid = load_grid(_write(tmp_path, SMALL))
    cache = StageCache(tmp_path / "c")
    real = stages.scores_stage

    def interrupted(cache_, cfg, *args, **kwargs):
        if cfg.network == "cancer":
            raise KeyboardInterrupt
        return real(cache_, cfg, *args, **kwargs)

    monkeypatch.setattr(stages, "scores_stage", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_grid(grid, cache)
    for manifest in _manifests(tmp_path / "c"):  # every artifact written so far loads and checks out
        assert cache.load(manifest.parent.parent.name, manifest.parent.name) is not None
    assert not [p for p in (tmp_path / "c").rglob("*") if p.name.startswith(".tmp")]
    monkeypatch.setattr(stages, "scores_stage", real)
    frame = run_grid(grid, cache)
    assert list(frame["cached"]) == [True, True, False, False]
    assert (frame["status"] == "optimal").all()


def test_task_option_runs_one_job(tmp_path, capsys):
    path = _write(tmp_path, SMALL)
    common = ["--cache-dir", str(tmp_path / "c"), "--quiet"]
    assert main(["grid", str(path), "--list-tasks", *common]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("4 jobs") and "network=cancer" in listing.splitlines()[3]
    assert main(["grid", str(path), "--task", "2", *common]) == 0
    assert "status optimal" in capsys.readouterr().out
    grid = load_grid(path)
    cache = StageCache(tmp_path / "c")
    done = [cache.has("job", job_key(c, grid.baseline)) for c in grid.configs]
    assert done == [False, False, True, False]
    assert main(["grid", str(path), "--task", "7", *common]) == 2
    assert "--task must be in 0..3" in capsys.readouterr().err
    out_dir = tmp_path / "out"
    assert main(["grid", str(path), "--collect", "--output-dir", str(out_dir), *common]) == 1
    assert "3 not run" in capsys.readouterr().out
    frame = pd.read_csv(out_dir / "grid-small" / "results.csv")
    assert list(frame["status"]) == ["missing", "missing", "optimal", "missing"]
    assert not cache.has("job", job_key(grid.configs[0], grid.baseline))  # --collect ran nothing


def test_unknown_key_on_the_command_line(tmp_path, capsys):
    path = _write(tmp_path, 'networks = ["asia"]\npalim = 3\n')
    assert main(["grid", str(path), "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "unknown grid key 'palim'" in err and len(err.strip().splitlines()) == 1


def test_cluster_without_jobqueue_is_a_clear_error(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_jobqueue(name, *args, **kwargs):
        if name == "dask_jobqueue":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jobqueue)
    path = _write(tmp_path, SMALL)
    assert main(["grid", str(path), "--cluster", "slurm", "--cache-dir", str(tmp_path / "c")]) == 1
    assert "dask-jobqueue" in capsys.readouterr().err


def test_grid_results_are_deterministic_over_seeds(tmp_path):
    grid = parse_grid('networks = ["cancer"]\nrows = 300\nseeds = [0, 1]\npalims = [2]\nbaseline = false')
    frame = run_grid(grid, StageCache(tmp_path / "c"))
    assert list(frame["seed"]) == [0, 1] and frame["f1_vs_unrestricted"].isna().all()
    assert np.isfinite(frame["objective"]).all()


def test_module_has_no_stale_columns():
    assert len(set(grid_mod.RESULT_COLUMNS)) == len(grid_mod.RESULT_COLUMNS)


def test_documented_grid_file_has_every_key_and_the_list_keys_in_expansion_order():
    """The grid file of pipeline.apps.grid's docstring: jobs are numbered in the order of its list keys."""
    import re

    example = grid_mod.__doc__.split("::")[1].split("\n\n")[1]
    keys = re.findall(r"^\s+(\w+) =", example, re.M)
    assert set(keys) == set(grid_mod.LIST_KEYS) | grid_mod.SCALAR_KEYS | {grid_mod.DATA_KEY}
    assert [k for k in keys if k in grid_mod.LIST_KEYS] == list(grid_mod.LIST_KEYS)


def _crash_on_three(x: int) -> int:
    if x == 3:
        os._exit(70)  # a worker ending abruptly, as in a segfault or an out-of-memory kill
    return 10 * x


def test_a_dying_worker_fails_its_job_only():
    from pipeline.core.executors import WorkerDied

    executor = LocalExecutor(jobs=2)
    outcomes = {i: (result, exc) for i, result, exc in executor.map_unordered(_crash_on_three,
                                                                              [(x,) for x in range(7)])}
    executor.close()
    assert sorted(outcomes) == list(range(7))
    assert isinstance(outcomes[3][1], WorkerDied)
    assert {i: r for i, (r, e) in outcomes.items() if e is None} == {i: 10 * i for i in range(7) if i != 3}
