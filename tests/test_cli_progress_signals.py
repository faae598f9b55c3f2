"""Progress and interruption of a run (issue 41, points 1 and 2): the header and the solver's
progress on stderr, ``--quiet``, ``learn(progress=...)``, the solve's trajectory and
``convergence.png``, and SIGINT / SIGTERM during and before the solve (exit 130 / 143, the output
folder of the best DAG, nothing torn, the rerun warm-started).

The signals go to ``run.py`` subprocesses whose stderr is a pipe: a batch job's log, where the
display prints a plain line at a solver's first record. WIN95 is a table whose exact solve runs
for minutes, so a signal sent after its first progress line lands in the solve."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

import hybridbn
from hybridbn import interrupt
from hybridbn.progress import KEYS, ProgressError
from pipeline.apps import pictures
from pipeline.core import stages
from pipeline.core.polish import POLISH_SECONDS

REPO = Path(__file__).resolve().parents[1]
WIN95 = ["--network", "win95pts", "--rows", "5000", "--method", "none"]
"""An exact solve of minutes (win95pts unrestricted: 95746 parent sets), scored in seconds."""
ALARM = ["--network", "alarm", "--rows", "5000", "--method", "none"]
"""An exact solve of several seconds: a 1 s time limit stops it."""


def command(args, cache: Path, out: Path) -> list[str]:
    return [sys.executable, "run.py", *map(str, args), "--cache-dir", str(cache), "--output-dir", str(out)]


def run(args, cache: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command(args, cache, out), cwd=REPO, capture_output=True, text=True, timeout=600)


def signal_when(args, cache: Path, out: Path, ready, signum: int) -> subprocess.CompletedProcess:
    """Start ``run.py args``, send ``signum`` once a line of its stderr satisfies ``ready``, and
    wait for it to end; returns it with all of its stdout and stderr."""
    proc = subprocess.Popen(command(args, cache, out), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    watchdog = threading.Timer(600, proc.kill)
    watchdog.start()
    try:
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if ready(line):
                proc.send_signal(signum)
                break
        stdout, rest = proc.communicate(timeout=300)
    finally:
        watchdog.cancel()
        proc.kill()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, "".join(lines) + rest)


def solve_line(line: str) -> bool:
    return line.startswith("solve  ilp  ")


def copy_cache(src: Path, dst: Path) -> Path:
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)
    return dst


@pytest.fixture(scope="module")
def win95_cache(tmp_path_factory) -> Path:
    """A cache holding the data, restrict and scores stages of the WIN95 run."""
    cache = tmp_path_factory.mktemp("win95-cache")
    done = run([*WIN95, "--stage", "scores", "--quiet"], cache, cache / "unused")
    assert done.returncode == 0, done.stderr
    return cache


@pytest.fixture(scope="module")
def alarm_cache(tmp_path_factory) -> Path:
    """A cache holding the data, restrict and scores stages of the ALARM run."""
    cache = tmp_path_factory.mktemp("alarm-cache")
    done = run([*ALARM, "--stage", "scores", "--quiet"], cache, cache / "unused")
    assert done.returncode == 0, done.stderr
    return cache


@pytest.fixture(autouse=True)
def no_stop_request_left():
    yield
    interrupt.clear()


# ------------------------------------------------------------- signals during the solve

@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_solve_writes_the_best_dag_and_exits_128_plus_signum(win95_cache, tmp_path, signum,
                                                                                code):
    cache, out = copy_cache(win95_cache, tmp_path / "cache"), tmp_path / "out"
    done = signal_when(WIN95, cache, out, solve_line, signum)
    assert done.returncode == code, done.stderr
    assert f"interrupted by {signal.Signals(signum).name}" in done.stderr
    assert "status interrupted" in done.stdout
    (folder,) = out.iterdir()
    assert {"edges.csv", "network.bif", "network.png", "convergence.png", "result.json"} <= {
        p.name for p in folder.iterdir()}
    record = json.loads((folder / "result.json").read_text())
    result = record["result"]
    assert record["completion"] == "interrupted" and result["status"] == "interrupted"
    assert result["solver_status"] == "userinterrupt"
    assert math.isfinite(result["dual_bound"]) and result["dual_bound"] >= result["objective"]
    assert result["gap"] == pytest.approx((result["dual_bound"] - result["objective"]) / abs(result["objective"]))
    assert result["trajectory"][-1][1] == pytest.approx(result["objective"])
    assert len(pd.read_csv(folder / "edges.csv")) > 0
    assert not list((cache / "solve").glob("*/manifest.json"))  # never cached as final
    if signum == signal.SIGTERM:  # the rerun warm-starts from the interrupted DAG
        again = run([*WIN95, "--time-limit", "3", "--quiet"], cache, out)
        assert again.returncode == 0, again.stderr
        (rerun,) = (p for p in out.iterdir() if p != folder)
        solve = json.loads((rerun / "result.json").read_text())["stages"]["solve"]["meta"]
        assert solve["warm_start"] == {"objective": result["objective"], "status": "interrupted"}
        assert solve["result"]["objective"] >= result["objective"] - 1e-6


# ---------------------------------------------------------- a signal before the solve

def test_sigterm_before_the_solve_stops_with_one_line_and_leaves_no_file(tmp_path):
    """The header comes before any work; andes' data and unrestricted scoring take longer than 3 s."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    proc = subprocess.Popen(command(["--network", "andes", "--method", "none"], cache, out), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        header = proc.stderr.readline()
        assert header.startswith("learning andes, 5000 rows"), header
        time.sleep(3.0)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 143, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("WARNING: SIGTERM")]
    assert len(lines) == 1 and lines[0].startswith("interrupted during the ")
    assert "finished stages are cached" in lines[0]
    assert stdout == "" and not out.exists()
    assert not list(cache.rglob("*.partial")) and not list(cache.rglob(".*.partial"))
    assert not list((cache / "scores").glob("*/manifest.json")) and not (cache / "solve").exists()


# ------------------------------------------------------------------ progress on stderr

def test_batch_log_shows_header_and_solve_lines_and_quiet_shows_none(alarm_cache, tmp_path):
    cache, out = copy_cache(alarm_cache, tmp_path / "cache"), tmp_path / "out"
    done = run([*ALARM, "--time-limit", "1"], cache, out)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "learning alarm, 5000 rows (seed 0) -> no restriction -> bdeu (ess 1), palim 3 -> ilp " \
                       "(time limit 1 s)"
    last = [line for line in lines if solve_line(line)][-1]
    for part in ("/1 s", "incumbent ", "bound ", "gap ", "nodes ", "status timelimit"):
        assert part in last
    (folder,) = out.iterdir()
    assert (folder / "convergence.png").is_file()  # stopped at its limit
    quiet = run([*ALARM, "--time-limit", "1.5", "--quiet"], cache, out)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_an_optimal_solve_draws_no_convergence_plot(tmp_path):
    done = run(["--network", "asia", "--rows", "500", "--method", "none"], tmp_path / "cache", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "out").iterdir()
    assert (folder / "network.png").is_file() and not (folder / "convergence.png").exists()
    assert json.loads((folder / "result.json").read_text())["completion"] == "final"


def test_a_large_drawing_is_reported_before_and_after(monkeypatch, tmp_path):
    monkeypatch.setattr(pictures, "draw", lambda drawing, stem: [])
    records = []
    for n in (pictures.SLOW_NODES, pictures.SLOW_NODES + 1):
        names = [f"v{i}" for i in range(n)]
        pictures.write_pictures(tmp_path, pd.DataFrame(False, index=names, columns=names).to_numpy(), names, "x",
                                report=records.append)
    assert [(r["stage"], r["solver"], r["variables"], r.get("status")) for r in records] == [
        ("pictures", "network.png", pictures.SLOW_NODES + 1, None),
        ("pictures", "network.png", pictures.SLOW_NODES + 1, "drawn")]


# --------------------------------------------------------------------- the Python API

def test_learn_reports_records_to_a_callable_and_keeps_a_monotone_trajectory(alarm_cache, tmp_path):
    records = []
    result = hybridbn.learn("alarm", rows=5000, method="none", time_limit=2, budget=600,
                            cache_dir=copy_cache(alarm_cache, tmp_path / "cache"), progress=records.append)
    solve = [r for r in records if r["stage"] == "solve"]
    assert solve and all(set(KEYS) <= set(r) for r in solve) and all(0 <= r["budget_left"] <= 600 for r in solve)
    polish = [r for r in solve if r["solver"] == "tabu"]  # the tabu search from the stopped ILP's incumbent
    assert polish and all(r["limit"] == POLISH_SECONDS[0] for r in polish)
    assert all(r["solver"] == "ilp" and r["limit"] == 2 for r in solve if r["solver"] != "tabu")
    assert solve[-1]["solver"] == "ilp" and solve[-1]["status"] == result.status == "timelimit"
    assert solve[-1]["primal"] == pytest.approx(result.objective)
    trajectory = result.trajectory
    assert trajectory[-1][1] == pytest.approx(result.objective) and trajectory[-1][2] == pytest.approx(result.bound)
    primal = [p for _, p, _ in trajectory if p is not None]
    dual = [d for _, _, d in trajectory if d is not None]
    seconds = [t for t, _, _ in trajectory]
    assert primal == sorted(primal) and dual == sorted(dual, reverse=True) and seconds == sorted(seconds)


def test_learn_reports_bootstrap_and_selection_networks(tmp_path):
    records = []
    hybridbn.learn("asia", rows=300, method="none", select="palim=1; palim=2", folds=2, bootstrap=2,
                   cache_dir=tmp_path / "cache", progress=records.append)
    counts = {stage: [r["networks"] for r in records if r["stage"] == stage] for stage in ("selection", "bootstrap")}
    assert counts == {"selection": ["0/4", "1/4", "2/4", "3/4", "4/4"], "bootstrap": ["0/2", "1/2", "2/2"]}
    assert [r.get("status") for r in records if r["stage"] == "bootstrap"] == [None, None, "done"]


@pytest.mark.parametrize("bad", ["yes", 1])
def test_learn_refuses_a_progress_that_is_no_callable(bad, tmp_path):
    with pytest.raises(ProgressError, match="progress must be True, False, None or a callable"):
        hybridbn.learn("asia", rows=300, cache_dir=tmp_path / "cache", progress=bad)
    assert not (tmp_path / "cache" / "data").exists()


@pytest.mark.parametrize("solver", ["ilp", "ges"])
def test_an_interrupted_solve_in_python_returns_its_best_network_with_a_warning(alarm_cache, tmp_path, solver):
    """As Ctrl-C in a notebook: the stop request arrives while the solver reports progress."""
    def stop_at_first_record(record):
        if record["stage"] == "solve":
            interrupt.request_stop(signal.SIGINT)

    with pytest.warns(UserWarning, match="the solve was interrupted"):
        result = hybridbn.learn("alarm", rows=5000, method="none", solver=solver,
                                cache_dir=copy_cache(alarm_cache, tmp_path / "cache"), progress=stop_at_first_record)
    assert result.interrupted and result.status == "interrupted"
    assert result.solver_result["solver_status"] == "userinterrupt"
    assert len(result.arcs) == int(result.adjacency.sum())
    assert result.evaluation["shd"] == stages.compare(result.adjacency, stages.true_dag("alarm"))["shd"]
    assert not (tmp_path / "cache" / "solve").exists() and not (tmp_path / "cache" / "evaluate").exists()  # never cached
    if solver == "ilp":  # no stop request is left over: the next call solves as usual
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = hybridbn.learn("alarm", rows=5000, method="none", time_limit=1, cache_dir=tmp_path / "cache")
        assert again.status == "timelimit" and not again.interrupted
