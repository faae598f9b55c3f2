"""Grids over the user's data and score files, grid progress and honest collection (issue 54,
points 1-3): sources checked as ``--data`` / ``--scores`` are, rows naming their data set, jobs
keyed by file content, progress records of jobs done / running / failed / left, and ``--collect``
exiting non-zero with the ids to resubmit in ``sbatch --array`` form."""

from __future__ import annotations

import itertools
import textwrap

import numpy as np
import pandas as pd
import pytest

from bayesnet.catalog import load_network
from bayesnet.dataset import write_dataset
from bayesnet.sampling import forward_sample
from graphs.dag import adjacency_from_parents, is_acyclic
from helpers import random_table
from pipeline.apps import grid as grid_mod
from pipeline.apps.cli import main
from pipeline.apps.grid_progress import GridProgress, array_ranges, duration
from pipeline.core.cache import StageCache
from scores.jkl import write_jkl


@pytest.fixture
def files(tmp_path):
    """A folder with a grid's own data file (asia, 300 rows) and a score file (3 variables)."""
    write_dataset(forward_sample(load_network("asia"), 300, seed=3), tmp_path / "mine.csv")
    table = random_table(3, seed=5, palim=2)
    write_jkl(table, tmp_path / "table.jkl")
    return tmp_path, table


def _grid(folder, text: str):
    path = folder / "g.toml"
    path.write_text(textwrap.dedent(text))
    return path


def _best_score(table) -> float:
    """The optimum of a small score table by brute force over one family per child."""
    best = -np.inf
    rows = [range(table.child_ptr[v], table.child_ptr[v + 1]) for v in range(table.n_vars)]
    for pick in itertools.product(*rows):
        parents = [tuple(table.parents[table.parent_ptr[r]:table.parent_ptr[r + 1]]) for r in pick]
        if is_acyclic(adjacency_from_parents(parents, table.n_vars)):
            best = max(best, float(sum(table.score[r] for r in pick)))
    return best


def test_a_grid_over_a_network_a_data_file_and_a_score_file(files, capsys):
    folder, table = files
    path = _grid(folder, """
        name = "mine"
        networks = ["asia"]
        data = ["mine.csv"]
        scores = ["bdeu", "table.jkl"]
        rows = [200, 300]
        palims = [2]
        time_limit = 60
    """)
    grid = grid_mod.load_grid(path)
    # rows apply to the sampled network only, and nothing before the solve to the score file
    assert [(c.source_name, c.rows) for c in grid.configs] == [("asia", 200), ("asia", 300), ("mine", 5000),
                                                               ("table", 5000)]
    assert grid.configs[1].data is None and grid.configs[2].data == str(folder / "mine.csv")
    cache, out = folder / "cache", folder / "out"
    common = ["--cache-dir", str(cache), "--output-dir", str(out), "--quiet"]
    assert main(["grid", str(path), "--collect", *common]) == 1  # nothing ran yet
    assert "not run: jobs 0-3" in capsys.readouterr().out
    assert main(["grid", str(path), *common]) == 0
    frame = pd.read_parquet(out / "grid-mine" / "results.parquet")
    assert list(frame["dataset"]) == ["asia", "asia", "mine", "table"]
    assert list(frame["status"]) == ["optimal"] * 4
    assert frame.loc[0, "shd"] >= 0 and np.isnan(frame.loc[2, "shd"])  # no truth for the user's data
    assert frame.loc[2, "rows"] is None or np.isnan(frame.loc[2, "rows"])  # unused: left empty
    assert frame.loc[3, "objective"] == pytest.approx(_best_score(table))
    assert main(["grid", str(path), "--collect", *common]) == 0


def test_a_data_file_is_keyed_by_its_content(files):
    folder, _ = files
    path = _grid(folder, 'data = ["mine.csv"]\nbaseline = false')
    before = grid_mod.job_key(grid_mod.load_grid(path).configs[0], False)
    write_dataset(forward_sample(load_network("asia"), 300, seed=4), folder / "mine.csv")
    assert grid_mod.job_key(grid_mod.load_grid(path).configs[0], False) != before


def test_collect_lists_failed_and_missing_task_ids_and_exits_non_zero(files, capsys, monkeypatch):
    """As a Slurm array: each task runs one job in its own process; --collect sees the failures."""
    folder, _ = files
    path = _grid(folder, """
        name = "array"
        networks = ["asia", "cancer", "earthquake", "sachs"]
        rows = 200
        palims = [2]
        baseline = false
    """)
    common = ["--cache-dir", str(folder / "cache"), "--output-dir", str(folder / "out"), "--quiet"]
    assert main(["grid", str(path), "--task", "0", *common]) == 0
    assert "grid array: 4 jobs: 1 done" in capsys.readouterr().out  # the array's progress in the task's log
    real = grid_mod.run_stages

    def failing(cache, cfg, *args, **kwargs):
        if cfg.network == "earthquake":
            raise RuntimeError("boom")
        return real(cache, cfg, *args, **kwargs)

    monkeypatch.setattr(grid_mod, "run_stages", failing)
    assert main(["grid", str(path), "--task", "2", *common]) == 1
    capsys.readouterr()
    assert main(["grid", str(path), "--collect", *common]) == 1
    out = capsys.readouterr().out
    assert "4 jobs: 1 done (1 from cache), 1 failed, 0 interrupted, 2 not run" in out
    assert "failed: jobs 2" in out and "not run: jobs 1,3" in out
    assert "sbatch --array=1-3 " in out
    frame = pd.read_csv(folder / "out" / "grid-array" / "results.csv")
    assert list(frame["status"])[1:] == ["missing", "error", "missing"]
    assert "RuntimeError: boom" in frame.loc[2, "error"]


def test_grid_progress_lines_in_a_batch_log(tmp_path, capsys):
    path = _grid(tmp_path, 'name = "p"\nnetworks = ["asia", "cancer"]\nrows = 200\npalims = [2]\nbaseline = false')
    assert main(["grid", str(path), "--cache-dir", str(tmp_path / "c"), "--output-dir", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.startswith("grid  p  ")]
    assert "done 0/2  running 1  failed 0  left 2" in lines[0]
    assert lines[-1].endswith("done 2/2  running 0  failed 0  left 0  status done")


@pytest.mark.parametrize("ids, text", [([], ""), ([4], "4"), ([3, 7, 8, 9, 12], "3,7-9,12"),
                                       ([2, 1, 0, 5, 5], "0-2,5")])
def test_array_ranges_are_what_sbatch_array_takes(ids, text):
    assert array_ranges(ids) == text


def test_grid_progress_counts_and_estimates_the_time_left():
    now = [0.0]
    records = []
    count = GridProgress(records.append, "g", total=10, cached=2, slots=4, clock=lambda: now[0])
    assert records[0]["done"] == "2/10" and records[0]["running"] == 4 and "time_left" not in records[0]
    now[0] = 30.0
    count.job_ended(failed=False)
    now[0] = 40.0
    count.job_ended(failed=True)
    last = records[-1]
    assert (last["done"], last["failed"], last["left"], last["running"]) == ("3/10", 1, 6, 4)
    assert last["elapsed"] == 40.0 and last["time_left"] == "~2 min 00 s"  # 40 s per 2 jobs, 6 left
    count.finish("interrupted")
    assert records[-1]["status"] == "interrupted" and records[-1]["running"] == 0


@pytest.mark.parametrize("seconds, text", [(4.4, "4 s"), (200, "3 min 20 s"), (7500, "2 h 05 min")])
def test_durations(seconds, text):
    assert duration(seconds) == text


def test_the_cache_of_a_collect_is_only_read(files):
    folder, _ = files
    grid = grid_mod.load_grid(_grid(folder, 'networks = ["asia"]'))
    cache = StageCache(folder / "cache")
    frame = grid_mod.run_grid(grid, cache, collect_only=True)
    assert list(frame["status"]) == ["missing"] and not (folder / "cache").exists()
