"""Fault injection: interrupted and failed runs never leave a wrong result that looks right.

Each test runs ``run.py`` in a subprocess and injects a fault at a chosen moment: SIGINT during
the solve, ``kill -9`` of a grid runner, a file-size limit (``RLIMIT_FSIZE``, as a full disk),
a flipped digit in a cache manifest. Truncated or unreadable input files and out-of-range options
are refused before any stage runs: those runs are ``run.py``'s ``main`` in this process (the
``cli`` fixture), with the same exit status and stderr and no interpreter start-up each.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
ALARM = ["--network", "alarm", "--rows", "5000", "--method", "none", "--quiet"]
"""An exact solve of several seconds (alarm, no restriction): long enough to interrupt."""
ASIA = ["--network", "asia", "--rows", "500", "--method", "none", "--quiet"]


def command(args, cache: Path | None, out: Path | None = None) -> list[str]:
    cmd = [sys.executable, "run.py", *map(str, args)] + (["--cache-dir", str(cache)] if cache else [])
    return cmd + ["--output-dir", str(out)] if out is not None else cmd


def run(args, cache: Path | None, out: Path | None = None, file_size: int | None = None, timeout: float = 300):
    """``run.py args`` in a subprocess (with a file-size limit in the child if given)."""
    limit = None if file_size is None else (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (file_size,) * 2))
    return subprocess.run(command(args, cache, out), cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


def manifests(cache: Path, stage: str) -> list[Path]:
    return sorted((cache / stage).glob("*/manifest.json"))


def solving(pid: int) -> bool:
    """Whether process ``pid`` or one of its children has loaded SCIP (the solve stage began)."""
    for p in [pid, *children(pid)]:
        try:
            if "libscip" in Path(f"/proc/{p}/maps").read_text():
                return True
        except OSError:
            continue
    return False


def interrupt_during_solve(args, cache: Path, out: Path, group: bool = False) -> subprocess.CompletedProcess:
    """Start a run, wait until SCIP is loaded and a few seconds more (the model is built in under
    one, the solve takes several), then send SIGINT (to the process group with ``group``,
    as Ctrl-C in a terminal does). Under heavy load the signal may still come before SCIP
    started solving: then the run is repeated with a longer wait."""
    for delay in (4.0, 8.0, 16.0):
        proc = subprocess.Popen(command(args, cache, out), cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not solving(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert solving(proc.pid), "the run never reached the solve"
            time.sleep(delay)
            os.killpg(proc.pid, signal.SIGINT) if group else proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        if group or "finished stages are cached" not in stderr:  # not interrupted before the solve
            break
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def alarm_cache(tmp_path_factory) -> Path:
    """A cache holding the data, restrict and scores stages of the ALARM run (shared by tests),
    and the solver's kernels in numba's cache: the kernel warm-up groups of an ILP run on alarm
    (the solver's on the bundled table, which reaches every cut separator) run first, so that no
    Ctrl-C lands while numba compiles (that would end the run with numba's error;
    :mod:`pipeline.core.kernels` spares real runs the same way)."""
    from pipeline.core.cache import StageCache
    from pipeline.core.config import RunConfig
    from pipeline.core.kernels import kernel_groups
    from pipeline.core.stages import run_stages

    for group in kernel_groups(RunConfig(network="alarm")):
        run_stages(StageCache(None, enabled=False), group.run, upto=group.upto)
    cache = tmp_path_factory.mktemp("alarm-cache")
    done = run([*ALARM, "--stage", "scores"], cache)
    assert done.returncode == 0, done.stderr
    return cache


def copy_cache(src: Path, dst: Path) -> Path:
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)
    return dst


# ------------------------------------------------------------------- 1. Ctrl-C during the solve

def test_ctrl_c_during_solve_writes_the_best_dag_exits_130_caches_nothing_final_and_rerun_resumes(alarm_cache,
                                                                                                   tmp_path):
    cache = copy_cache(alarm_cache, tmp_path / "cache")
    done = interrupt_during_solve(ALARM, cache, tmp_path / "out")
    assert done.returncode == 130, done.stderr
    assert "status interrupted" in done.stdout and "interrupted by SIGINT" in done.stderr
    (folder,) = (tmp_path / "out").iterdir()
    result = json.loads((folder / "result.json").read_text())["result"]
    objective, bound = result["objective"], result["dual_bound"]
    assert result["status"] == "interrupted" and bound >= objective
    assert len(pd.read_csv(folder / "edges.csv")) > 0
    assert not manifests(cache, "solve") and not manifests(cache, "evaluate")  # nothing cached as final
    # a rerun (here with a short time limit) warm-starts from the interrupted incumbent
    again = run([*ALARM, "--time-limit", "2"], cache, tmp_path / "out")
    assert again.returncode == 0, again.stderr
    meta = json.loads(manifests(cache, "solve")[0].read_text())["meta"]
    assert meta["warm_start"] == {"objective": objective, "status": "interrupted"}
    assert meta["result"]["objective"] >= objective - 1e-6


def test_ctrl_c_in_a_grid_job_records_it_as_interrupted_caches_no_job_and_exits_130(alarm_cache, tmp_path):
    cache = copy_cache(alarm_cache, tmp_path / "cache")
    grid = tmp_path / "g.toml"
    grid.write_text('networks = ["alarm"]\nrows = 5000\nmethods = ["none"]\nbaseline = false\n')
    done = interrupt_during_solve(["grid", grid, "--quiet"], cache, tmp_path / "out")
    assert done.returncode == 130, done.stderr
    assert "the interrupted job is recorded as such, not cached" in done.stderr
    assert not manifests(cache, "job") and not manifests(cache, "solve")
    [row] = pd.read_parquet(tmp_path / "out" / "grid-g" / "results.parquet").to_dict("records")
    assert row["status"] == "interrupted" and row["dual_bound"] >= row["objective"]


def test_ctrl_c_of_a_parallel_grid_stops_it_and_caches_no_interrupted_job(alarm_cache, tmp_path):
    """Ctrl-C in a terminal reaches the whole process group: the runner and its -j 2 workers."""
    cache = copy_cache(alarm_cache, tmp_path / "cache")
    grid = tmp_path / "g.toml"
    grid.write_text('networks = ["alarm"]\nrows = 5000\nmethods = ["none"]\npalims = [2, 3]\nbaseline = false\n')
    done = interrupt_during_solve(["grid", grid, "--quiet", "-j", "2"], cache, tmp_path / "out", group=True)
    assert done.returncode == 130, done.stderr
    solved = [json.loads(p.read_text())["meta"]["result"]["status"] for p in manifests(cache, "solve")]
    assert "userinterrupt" not in solved  # a job whose solve finished first may be cached, as final
    assert len(manifests(cache, "job")) <= solved.count("optimal")


# ------------------------------------------------------------------ 2. time-limited results

def test_time_limited_result_is_cached_with_its_status_and_a_larger_limit_continues(alarm_cache, tmp_path):
    cache = copy_cache(alarm_cache, tmp_path / "cache")
    first = run([*ALARM, "--time-limit", "1"], cache, tmp_path / "out")
    assert first.returncode == 0, first.stderr
    assert "status timelimit" in first.stdout and "stopped at a limit" in first.stdout
    assert "cached with this status" in first.stdout
    stored = json.loads(manifests(cache, "solve")[0].read_text())
    assert stored["completion"] == "limited"
    limited = stored["meta"]["result"]["objective"]
    same = run([*ALARM, "--time-limit", "1"], cache, tmp_path / "out")
    assert same.returncode == 0 and "reused from the cache" in same.stdout
    assert len(manifests(cache, "solve")) == 1
    larger = run([*ALARM, "--time-limit", "3"], cache, tmp_path / "out")
    assert larger.returncode == 0, larger.stderr
    metas = [json.loads(p.read_text()) for p in manifests(cache, "solve")]
    resumed = next(m for m in metas if m["params"]["time_limit"] == 3.0)["meta"]
    assert resumed["warm_start"]["objective"] == limited
    assert resumed["result"]["objective"] >= limited - 1e-6


def test_tiny_time_limit_prints_no_scip_error(alarm_cache, tmp_path):
    cache = copy_cache(alarm_cache, tmp_path / "cache")
    done = run([*ALARM, "--time-limit", "0.001"], cache, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "ERROR" not in done.stderr and "status timelimit" in done.stdout


# --------------------------------------------------------------- 3. checksummed manifests

def flip_digit(path: Path, key_pattern: str) -> None:
    """Change one digit of the first number after ``key_pattern`` (the JSON stays valid)."""
    text = path.read_text()
    match = re.search(key_pattern + r"\s*-?(\d)", text)
    digit = match.group(1)
    start = match.start(1)
    path.write_text(text[:start] + str((int(digit) + 1) % 10) + text[start + 1:])


def test_flipped_digit_in_solve_and_evaluate_manifests_is_detected_and_recomputed(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    asia = [*ASIA, "--score", "bdeu"]  # one solve: none of --score auto's folds
    first = run(asia, cache, out)
    assert first.returncode == 0, first.stderr
    flip_digit(manifests(cache, "solve")[0], r'"objective":')
    flip_digit(manifests(cache, "evaluate")[0], r'"shd":')
    second = run(asia, cache, out)
    assert second.returncode == 0, second.stderr
    warned = re.findall(r"cache artifact (\w+)/\w+ is corrupt", second.stderr)
    assert sorted(warned) == ["evaluate", "solve"], second.stderr
    assert "checksum mismatch in manifest.json" in second.stderr

    def figures(text):
        return re.search(r"objective (\S+),", text)[1], re.search(r"SHD (\d+)", text)[1]

    assert figures(second.stdout) == figures(first.stdout)


# ---------------------------------------------------------------- 4. atomic output folder

def test_full_disk_leaves_the_previous_output_folder_or_none_and_names_the_file(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    first = run(ASIA, cache, out)
    assert first.returncode == 0, first.stderr
    (folder,) = out.iterdir()
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "result.json" in before and "network.bif" in before
    failed = run(ASIA, cache, out, file_size=300)  # every stage cached: only the outputs are written
    assert failed.returncode == 1
    assert re.search(rf"error: cannot write {re.escape(str(folder))}/[\w.]+: File too large", failed.stderr)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # the old folder, untouched
    assert [p.name for p in out.iterdir()] == [folder.name]  # no staging folder left behind
    subprocess.run(["rm", "-r", str(folder)], check=True)
    again = run(ASIA, cache, out, file_size=300)
    assert again.returncode == 1 and not any(out.iterdir())  # no torn folder without result.json


def test_full_disk_in_the_cache_is_a_one_line_error_naming_the_cache(tmp_path):
    done = run(ASIA, tmp_path / "cache", tmp_path / "out", file_size=300)
    assert done.returncode == 1
    assert re.search(r"error: cannot write cache artifact under \S+cache/\w+/\w+", done.stderr), done.stderr
    assert "Traceback" not in done.stderr


SCORES_UNDER_LIMIT = """
import resource, sys
from hybridbn import learn
from pipeline.core.atomic import WriteError
result = learn("asia", rows=500, method="none", cache_dir=sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
try:
    result.write_scores(sys.argv[2])
except WriteError as exc:
    sys.exit(str(exc))
"""


def test_full_disk_while_exporting_scores_keeps_the_previous_file_and_names_it(tmp_path):
    target = tmp_path / "asia.jkl"
    target.write_text("previous\n")
    done = subprocess.run([sys.executable, "-c", SCORES_UNDER_LIMIT, str(tmp_path / "cache"), str(target)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.stderr.strip().endswith(f"cannot write {target}: File too large"), done.stderr
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir() if p.name != "cache"] == ["asia.jkl"]


# ------------------------------------------------------------------- 5. atomic grid tables

def test_failed_grid_rerun_keeps_the_previous_results_tables(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    grid = tmp_path / "g.toml"
    grid.write_text('networks = ["asia"]\nrows = 300\nmethods = ["none"]\nbaseline = false\n')
    assert run(["grid", grid, "--quiet"], cache, out).returncode == 0
    tables = out / "grid-g"
    before = {name: (tables / name).read_bytes() for name in ("results.parquet", "results.csv")}
    failed = run(["grid", grid, "--quiet"], cache, out, file_size=500)
    assert failed.returncode == 1
    assert f"cannot write {tables}/results." in failed.stderr
    assert {name: (tables / name).read_bytes() for name in before} == before
    assert pd.read_parquet(tables / "results.parquet")["status"].tolist() == ["optimal"]
    assert sorted(p.name for p in tables.iterdir()) == ["results.csv", "results.parquet"]


# ---------------------------------------------------------- 6. workers die with the runner

def children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_a_grid_runner_ends_its_workers(tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('networks = ["alarm"]\nrows = 5000\nseeds = [0, 1]\nmethods = ["none"]\nbaseline = false\n')
    proc = subprocess.Popen(command(["grid", grid, "--quiet", "-j", "2"], tmp_path / "cache", tmp_path / "out"),
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = children(proc.pid)
        assert len(workers) >= 2, "the grid never started its workers"
        time.sleep(2.0)  # the workers are computing their jobs
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(w) for w in workers)
    finally:
        proc.kill()
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)


# ------------------------------------------------------------------------ 7. small ones

def truncated_gzip(path: Path, text: str) -> Path:
    data = gzip.compress(text.encode())
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("case", ["csv.gz", "bif.gz", "unreadable", "directory", "empty report"])
def test_bad_input_files_exit_2_naming_the_file(tmp_path, cli, case):
    if case == "csv.gz":
        path = truncated_gzip(tmp_path / "d.csv.gz", "a,b\n" + "x,y\n" * 5000)
        args = ["--data", path]
    elif case == "bif.gz":
        text = (REPO / "bayesnet" / "networks" / "asia.bif.gz").read_bytes()
        path = truncated_gzip(tmp_path / "n.bif.gz", gzip.decompress(text).decode())
        args = ["--network", path]
    elif case == "unreadable":  # reading /proc/self/mem at offset 0 fails, even for root
        path = tmp_path / "d.csv"
        path.symlink_to("/proc/self/mem")
        args = ["--data", path]
    elif case == "directory":
        path = tmp_path / "data.csv"
        path.mkdir()
        args = ["--data", path]
    else:
        path = tmp_path / "results.csv"
        path.write_text("")
        args = ["report", path]
    cache = [] if case == "empty report" else ["--cache-dir", tmp_path / "cache"]
    status, _, err = cli(*map(str, [*args, *cache]))
    assert status == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ") and str(path) in line
    if case == "directory":
        assert "is a directory" in line


@pytest.mark.parametrize("args, message", [
    (["--time-limit", "1e30"], "--time-limit must be a positive number of seconds up to 1e+09"),
    (["--treewidth", "8", "--solver", "kg"], "--treewidth must be at most n - 1 = 7"),
    (["--rows", "1000000000000"], "--rows 1000000000000: a sample of 1000000000000 rows x 8 variables needs"),
    (["--ess", "1e308"], "--ess must be a positive number up to 1e+06"),
    (["--treewidth", "0"], "--treewidth must be a positive integer or 'none', got 0"),
    (["--output-dir", "{file}/out"], "--output-dir {file}/out cannot be written"),
])
def test_bad_options_are_refused_before_any_stage(tmp_path, cli, args, message):
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    args = [a.replace("{file}", str(blocker)) for a in args]
    status, _, err = cli(*ASIA, *args, "--cache-dir", str(tmp_path / "cache"))
    assert status == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("error: ")
    assert message.replace("{file}", str(blocker)) in err
    assert not manifests(tmp_path / "cache", "data")  # no stage ran


def test_treewidth_none_is_accepted_as_the_error_message_suggests(tmp_path, cli):
    status, _, err = cli(*ASIA, "--treewidth", "none", "--stage", "data", "--cache-dir", str(tmp_path / "cache"))
    assert status == 0, err
