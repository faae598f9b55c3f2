"""The HPC examples of docs/hpc.md run as written (issue 54, point 3), checked without Slurm: the
array task's command for a task id, the submit script against a stand-in ``sbatch`` that records
its calls and refuses an ``--output`` whose folder is missing (Slurm would not create it), and the
paths the dask-jobqueue script names."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import textwrap
from pathlib import Path

import pytest

from pipeline.apps.grid import load_grid

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"
needs_venv = pytest.mark.skipif(not (REPO / ".venv" / "bin" / "activate").is_file(),
                                reason="the scripts activate the repository's .venv")

FAKE_SBATCH = """#!/bin/bash
# records its arguments; refuses an --output whose folder does not exist, as Slurm's tasks would fail
for arg in "$@"; do
  case $arg in --output=*) out=${arg#--output=}; [[ -d $(dirname "$out") ]] || { echo "no folder $out" >&2; exit 1; };; esac
done
printf '%q ' "$@" >> "$SBATCH_CALLS"; echo >> "$SBATCH_CALLS"
echo $((1000 + $(wc -l < "$SBATCH_CALLS")))
"""


@pytest.fixture
def small_grid(tmp_path) -> Path:
    path = tmp_path / "two.toml"
    path.write_text(textwrap.dedent("""
        name = "two"
        networks = ["asia", "cancer"]
        rows = 200
        palims = [2]
        baseline = false
    """))
    return path


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HYBRIDBN_CACHE_DIR": str(tmp_path / "cache"), **extra}


def _task(tmp_path: Path, script: str, args: list[str], task: int) -> subprocess.CompletedProcess:
    env = _env(tmp_path, SLURM_SUBMIT_DIR=str(REPO), SLURM_ARRAY_TASK_ID=str(task))
    return subprocess.run(["bash", script, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)


@needs_venv
def test_the_array_task_runs_its_job_and_logs_the_grids_progress(tmp_path, small_grid):
    done = _task(tmp_path, str(EXAMPLES / "slurm-array.sh"), [str(small_grid)], 1)
    assert done.returncode == 0, done.stderr
    assert "network=cancer" in done.stdout and "status optimal" in done.stdout
    assert "grid two: 2 jobs: 1 done (1 from cache), 0 failed, 0 interrupted, 1 not run" in done.stdout


@needs_venv
@pytest.mark.slow
def test_the_submit_script_creates_the_log_folder_and_its_jobs_run_as_submitted(tmp_path, small_grid):
    bin_dir, calls, logs = tmp_path / "bin", tmp_path / "calls", tmp_path / "logs"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    env = _env(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}", SBATCH_CALLS=str(calls), HYBRIDBN_LOGS=str(logs))
    done = subprocess.run(["bash", str(EXAMPLES / "submit-slurm-array.sh"), str(small_grid), "5"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert logs.is_dir() and "array job 1001 (2 tasks), collected by job 1002" in done.stdout
    array, collect = (shlex.split(line) for line in calls.read_text().splitlines())
    assert array[:3] == ["--parsable", "--array=0-1%5", f"--output={logs}/%x-%A_%a.out"]
    assert collect[:2] == ["--parsable", "--dependency=afterany:1001"]
    script, *args = array[3:]
    assert (REPO / script).is_file()
    wrapped = collect[collect.index("--wrap") + 1]
    collected = subprocess.run(["sh", "-c", wrapped], cwd=REPO, env=_env(tmp_path), capture_output=True, text=True,
                               timeout=600)
    assert collected.returncode == 1 and "not run: jobs 0-1" in collected.stdout  # the array has not run
    for task in (0, 1):  # as Slurm runs them: from the submit folder, with the array's task id
        assert _task(tmp_path, str(REPO / script), args, task).returncode == 0
    collected = subprocess.run(["sh", "-c", wrapped], cwd=REPO, env=_env(tmp_path), capture_output=True, text=True,
                               timeout=600)
    assert collected.returncode == 0 and "2 jobs: 2 done (2 from cache)" in collected.stdout


def test_the_submit_script_stops_on_a_missing_grid_file(tmp_path):
    done = subprocess.run(["bash", str(EXAMPLES / "submit-slurm-array.sh"), str(tmp_path / "none.toml")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "grid file not found" in done.stderr


def test_the_dask_jobqueue_script_reports_the_results_of_the_grid_it_runs():
    text = (EXAMPLES / "dask-jobqueue.sh").read_text()
    (grid_file,) = re.findall(r"^grid=(\S+)", text, re.M)
    (results,) = re.findall(r"run\.py report (\S+)", text)
    grid = load_grid(REPO / grid_file)
    assert results == f"output/grid-{grid.name}/results.parquet"
