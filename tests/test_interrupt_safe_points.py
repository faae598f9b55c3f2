"""Stop requests (Ctrl-C, SIGTERM) at the safe points of issue 41 point 2 beyond the solve: the
sampling of the data, the cops-and-robbers restriction, the kernels' first compilation, and
between the networks of a bootstrap, a selection and a grid, in this process and with ``-j N``
worker processes; a stopped bootstrap keeps the run's network.

The first tests stop these in this process (a stop request at a chosen call); the last ones send
real signals to ``run.py`` subprocesses at chosen moments, read from their stderr (a pipe: the
progress display writes a plain line at a task's first record) or from ``/proc``."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import psutil
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest
from constraints.cops import cops_and_robbers, independence_oracle
from constraints.methods import run_cops
from graphs.dsep import DSeparation
from hybridbn import interrupt
from pipeline.core import kernels
from pipeline.core.config import RunConfig
from pipeline.core.executors import LocalExecutor, map_tasks
from pipeline.core.kernels import CompileStopped, compile_groups  # bound before conftest.py replaces it
from pipeline.core.stages import run_stages
from pipeline.core.stopping import StageStopped, StoppingDeadline

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_stop_request_left():
    yield
    interrupt.clear()


# --------------------------------------------------------------- safe points in this process

def test_sampling_calls_its_checkpoint_before_each_variable_and_stops_where_it_raises():
    network = load_network("asia")
    calls = []
    checked = forward_sample(network, 500, seed=3, checkpoint=lambda: calls.append(1))
    assert len(calls) == network.n_vars
    assert np.array_equal(checked.data, forward_sample(network, 500, seed=3).data)  # the same rows

    def stop_at_the_third():
        calls.append(1)
        if len(calls) == 3:
            raise StageStopped("data", signal.SIGTERM)

    calls.clear()
    with pytest.raises(StageStopped):
        forward_sample(network, 500, seed=3, checkpoint=stop_at_the_third)
    assert len(calls) == 3


@dataclass(frozen=True)
class Checks(StoppingDeadline):
    """The restriction's safe points without a time limit, counted (``seen``); a stop request at
    the ``stop_at``-th."""

    stop_at: int | None = None
    seen: list = field(default_factory=list)

    def passed(self) -> bool:
        self.seen.append(1)
        if len(self.seen) == self.stop_at:
            interrupt.request_stop(signal.SIGTERM)
        return super().passed()


def test_the_cops_stop_at_their_clock_checks_and_are_unchanged_without_a_stop():
    data = forward_sample(load_network("asia"), 2000, seed=0)
    settings = SimpleNamespace(alpha=0.05, cops_time_limit=None)
    free = Checks(math.inf, stage="restrict")  # the restriction stage hands its deadline to the cops
    checked, _ = run_cops(CITest(data.data, data.arities), 8, settings, deadline=free)
    plain, _ = run_cops(CITest(data.data, data.arities), 8, settings)
    assert free.seen and np.array_equal(checked.allowed, plain.allowed) and checked.n_tests == plain.n_tests
    with pytest.raises(StageStopped) as stopped:
        run_cops(CITest(data.data, data.arities), 8, settings, deadline=Checks(math.inf, stage="restrict", stop_at=1))
    assert stopped.value.stage == "restrict" and stopped.value.signum == signal.SIGTERM
    interrupt.clear()
    # checked at every oracle call: stopped at the 10th check of a run of many more
    indep = independence_oracle(CITest(data.data, data.arities))
    free = Checks(math.inf, stage="restrict")
    assert cops_and_robbers(indep, 8, check_every=1, deadline=free).cpdag.tolist() == \
        cops_and_robbers(indep, 8).cpdag.tolist()
    stopping = Checks(math.inf, stage="restrict", stop_at=10)
    with pytest.raises(StageStopped):
        cops_and_robbers(indep, 8, check_every=1, deadline=stopping)
    assert len(stopping.seen) == 10 < len(free.seen)
    interrupt.clear()
    truth = load_network("alarm")  # the compiled engine of the exact oracle checks between batches of steps
    dag = np.zeros((truth.n_vars,) * 2, dtype=bool)
    for child, parents in enumerate(truth.parents):
        dag[list(parents), child] = True
    stopping = Checks(math.inf, stage="restrict", stop_at=10)
    with pytest.raises(StageStopped):
        cops_and_robbers(DSeparation(dag), truth.n_vars, deadline=stopping)
    assert len(stopping.seen) == 10


def _count(i: int, log: list | None = None) -> int:
    if log is not None:
        log.append(i)
    if i == 2:
        interrupt.request_stop(signal.SIGINT)
    return 10 * i


def test_no_task_starts_in_this_process_after_a_stop_request():
    """Every job has its outcome: those kept from starting a StageStopped (stage "tasks")."""
    log = []
    outcomes = list(LocalExecutor(1).map_unordered(_count, [(i, log) for i in range(6)]))
    assert [(i, result, exc) for i, result, exc in outcomes[:3]] == [(0, 0, None), (1, 10, None), (2, 20, None)]
    assert [i for i, _, _ in outcomes[3:]] == [3, 4, 5] and log == [0, 1, 2]
    assert all(isinstance(exc, StageStopped) and (exc.stage, exc.signum) == ("tasks", signal.SIGINT)
               for _, _, exc in outcomes[3:])
    interrupt.clear()
    finished = []
    with pytest.raises(StageStopped) as stopped:
        map_tasks(_count, [(i,) for i in range(6)], on_done=lambda: finished.append(1))
    assert stopped.value.signum == signal.SIGINT and len(finished) == 3


def _wait_for_the_stop(i: int, folder: str) -> int:
    """A job of a worker process: say it started, then wait for a stop request (its parent's),
    and stop as a stage does at its safe point."""
    Path(folder, f"started-{i}").touch()
    end = time.monotonic() + 120
    while interrupt.stop_requested() is None and time.monotonic() < end:
        time.sleep(0.01)
    raise StageStopped("test", interrupt.stop_requested() or 0)


def test_pool_workers_take_their_parents_stop_request_and_no_job_starts_after_it(tmp_path):
    """The stop request of the runner (here set in this process, as its signal handler does) reaches
    the jobs running in the workers, which end at their safe points; the others never start."""
    def stop_once_two_started():
        while len(list(tmp_path.glob("started-*"))) < 2:
            time.sleep(0.01)
        interrupt.request_stop(signal.SIGTERM)

    helper = threading.Thread(target=stop_once_two_started, daemon=True)
    helper.start()
    executor = LocalExecutor(2)
    outcomes = {i: exc for i, _, exc in executor.map_unordered(_wait_for_the_stop,
                                                               [(i, str(tmp_path)) for i in range(6)])}
    executor.close()
    assert sorted(outcomes) == list(range(6))
    assert all(isinstance(exc, StageStopped) and exc.signum == signal.SIGTERM for exc in outcomes.values())
    assert [outcomes[i].stage for i in range(6)] == ["test"] * 2 + ["tasks"] * 4  # 2 stopped, 4 never started
    assert sorted(p.name for p in tmp_path.glob("started-*")) == ["started-0", "started-1"]


def _compiling_on(cache, cfg, upto, n_jobs):
    """Stages that compile for two minutes with no safe point (as numba's compiler): they record
    their process and sleep, stop request or not."""
    Path(os.environ["WARM_UP_PIDS"], str(os.getpid())).touch()
    time.sleep(120)


def _when_both_compile(folder: Path) -> None:
    """Request a stop once two warm-up processes compile."""
    end = time.monotonic() + 120
    while len(list(folder.iterdir())) < 2 and time.monotonic() < end:
        time.sleep(0.05)
    interrupt.request_stop(signal.SIGTERM)


def test_a_stop_kills_the_warm_up_processes_and_keeps_the_groups_finished(monkeypatch, tmp_path):
    groups = kernels.kernel_groups(RunConfig(network="alarm"))[1:]  # the restriction's, the solver's
    pids = tmp_path / "pids"
    pids.mkdir()
    monkeypatch.setenv("WARM_UP_PIDS", str(pids))  # the processes' environment
    threading.Thread(target=_when_both_compile, args=(pids,), daemon=True).start()
    start = time.monotonic()
    with pytest.raises(CompileStopped) as stopped:
        compile_groups(groups, _compiling_on, processes=2)
    assert time.monotonic() - start < 60  # killed, not waited for
    assert stopped.value.done == [] and stopped.value.signum == signal.SIGTERM
    assert "first-run compilation of the numba kernels" in stopped.value.during
    compiling = [int(path.name) for path in pids.iterdir()]
    assert len(compiling) == 2 and os.getpid() not in compiling
    assert not psutil.wait_procs([psutil.Process(pid) for pid in compiling if psutil.pid_exists(pid)], timeout=5)[1]
    interrupt.clear()

    def solver_stopped(cache, cfg, upto, n_jobs):  # a warm-up in this process, stopped in the solver's
        if upto == "solve":
            raise StageStopped(upto, signal.SIGINT)

    with pytest.raises(CompileStopped) as stopped:
        compile_groups(groups, solver_stopped, processes=1)
    assert stopped.value.done == ["restriction/pc/g2"] and stopped.value.signum == signal.SIGINT
    # ensure_compiled stamps the finished groups only (the solver's compiles at the next run)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr(kernels, "_checked", set())
    monkeypatch.setattr(kernels, "compile_groups", lambda missing, driver, processes=1: compile_groups(
        missing, solver_stopped, processes=1))
    with pytest.raises(CompileStopped):
        kernels.ensure_compiled(RunConfig(network="alarm"), run_stages=run_stages)
    stamp = json.loads((tmp_path / "numba" / "hybridbn-kernels.json").read_text())
    assert stamp["compiled"] == ["restriction/pc/g2", "scores/bdeu"]


# ------------------------------------------------------------- real signals to run.py

def command(args, cache: Path, out: Path) -> list[str]:
    return [sys.executable, "run.py", *map(str, args), "--cache-dir", str(cache), "--output-dir", str(out)]


def signal_when(args, cache: Path, out: Path, ready, signum: int = signal.SIGTERM, env=None):
    """Start ``run.py args``, send ``signum`` once ``ready(line, process)`` holds for a line of its
    stderr (``line`` None: polled every 0.05 s meanwhile), and wait for it to end; returns it with
    all of its stdout and stderr, and the pids of its children when the signal went."""
    proc = subprocess.Popen(command(args, cache, out), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    watchdog = threading.Timer(600, proc.kill)
    watchdog.start()
    lines: list[str] = []
    stdout: list[str] = []
    children: list[int] = []

    def read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    readers = [threading.Thread(target=read, args=pair, daemon=True) for pair in ((proc.stderr, lines),
                                                                                  (proc.stdout, stdout))]
    for reader in readers:
        reader.start()
    sent, seen = False, 0
    try:
        while proc.poll() is None and not sent:
            news, seen = lines[seen:], len(lines)
            if any(ready(line, proc.pid) for line in news) or ready(None, proc.pid):
                children.extend(p.pid for p in psutil.Process(proc.pid).children(recursive=True))
                proc.send_signal(signum)
                sent = True
            time.sleep(0.05)
        proc.wait(timeout=300)
        for reader in readers:
            reader.join(timeout=60)
    finally:
        watchdog.cancel()
        proc.kill()
    assert sent, "".join(lines)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(stdout), "".join(lines)), children


def one_line(stderr: str) -> list[str]:
    """The lines of a stopped run's stderr after its header, less the signal's warning."""
    return [line for line in stderr.splitlines()[1:] if not line.startswith("WARNING: SIGTERM")]


def manifests(cache: Path, stage: str) -> list[Path]:
    return sorted((cache / stage).glob("*/manifest.json"))


def alive(pids, seconds: float = 30.0) -> list[int]:
    """Those of the processes ``pids`` still running after ``seconds`` (to end, once their parent has)."""
    processes = []
    for pid in pids:
        try:
            processes.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    _, running = psutil.wait_procs(processes, timeout=seconds)
    return [p.pid for p in running if p.status() != psutil.STATUS_ZOMBIE]


def test_sigterm_while_sampling_the_data_stops_in_the_data_stage(tmp_path):
    """andes' million rows take seconds to sample; the signal goes once the process has grown by
    40 MB past its size at the header (the sampled columns filling)."""
    start = {}

    def sampling(line, pid):
        rss = psutil.Process(pid).memory_info().rss
        if line is not None and line.startswith("learning andes"):
            start["rss"] = rss
        return "rss" in start and rss > start["rss"] + 40e6

    done, _ = signal_when(["--network", "andes", "--rows", "1000000", "--method", "none", "--stage", "data"],
                          tmp_path / "cache", tmp_path / "out", sampling)
    assert done.returncode == 143, done.stderr
    assert one_line(done.stderr) == ["interrupted during the data stage: finished stages are cached; rerun the same "
                                     "command to resume"]
    assert not manifests(tmp_path / "cache", "data") and not list((tmp_path / "cache").rglob("*.partial"))


def test_sigterm_during_the_cops_stops_in_the_restriction(tmp_path):
    """The cops on alarm take seconds; --debug logs each k whose cops lose, from the first on."""
    cache = tmp_path / "cache"
    done, _ = signal_when(["--network", "alarm", "--method", "cops", "--stage", "restrict", "--debug"], cache,
                          tmp_path / "out", lambda line, pid: line is not None and "cops lose" in line)
    assert done.returncode == 143, done.stderr
    assert done.stderr.splitlines()[-1] == ("interrupted during the restrict stage: finished stages are cached; "
                                            "rerun the same command to resume")
    assert manifests(cache, "data") and not manifests(cache, "restrict")


@pytest.mark.slow
def test_sigterm_during_the_first_compilation_ends_its_processes_with_one_line(tmp_path):
    """A fresh numba cache: the kernels' first compilation starts after the data stage. On a busy
    machine the warm-ups run in the run's own process (one per idle core), which stops at their
    stages' next safe point, after the kernel being compiled: a minute or more."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done, children = signal_when(["--network", "asia", "--rows", "500"], tmp_path / "cache", tmp_path / "out",
                                 lambda line, pid: line is not None and line.startswith("compiling the numba kernels"),
                                 env=env)
    assert done.returncode == 143, done.stderr
    assert one_line(done.stderr)[-1] == ("interrupted during the first-run compilation of the numba kernels: "
                                         "finished stages are cached; rerun the same command to resume")
    assert not alive(children) and not (tmp_path / "out").exists()
    assert manifests(tmp_path / "cache", "data") and not manifests(tmp_path / "cache", "restrict")


BOOTSTRAP = ["--network", "asia", "--rows", "300", "--method", "none", "--score", "bdeu", "--bootstrap", "40"]
"""40 networks of seconds each in all (BDeu: no cross-validation of --score auto before them)."""


def bootstrap_line(line, pid) -> bool:
    return line is not None and line.startswith("bootstrap  ")


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigterm_during_the_bootstrap_writes_the_network_with_the_resamples_learned(tmp_path, jobs):
    cache, out = tmp_path / "cache", tmp_path / "out"
    done, children = signal_when([*BOOTSTRAP, "-j", jobs], cache, out, bootstrap_line)
    assert done.returncode == 143, done.stderr
    (folder,) = out.iterdir()
    boot = json.loads((folder / "bootstrap.json").read_text())
    learned = boot["done"]
    assert boot == {"replicates": 40, "done": learned, "seed": 0, "status": "interrupted"} and learned < 40
    assert len(manifests(cache, "solve")) == 1 + learned  # the run's network and each resample learned, cached
    record = json.loads((folder / "result.json").read_text())
    assert record["interrupted"] == "bootstrap" and record["completion"] == "final"
    assert record["result"]["status"] == "optimal" and "evaluate" in record["stages"]
    assert {"edges.csv", "network.bif", "network.png"} <= {p.name for p in folder.iterdir()}
    assert not (folder / "strengths.csv").exists()
    assert f"bootstrap : interrupted after {learned} of 40 resamples" in done.stdout
    assert done.stderr.splitlines()[-1] == (
        f"interrupted by SIGTERM: the network learned is reported and written, with {learned} of 40 bootstrap "
        "resamples learned (cached); rerun the same command to finish the bootstrap")
    assert f"networks {learned}/40  status interrupted" in done.stderr  # the display's last bootstrap line
    assert not alive(children)


def test_sigterm_during_the_selection_stops_between_networks_with_one_line(tmp_path):
    cache = tmp_path / "cache"
    done, _ = signal_when(["--network", "asia", "--rows", "300", "--method", "none", "--select", "palim=1; palim=2",
                           "--folds", "10", "-j", "2"], cache, tmp_path / "out",
                          lambda line, pid: line is not None and line.startswith("selection  "))
    assert done.returncode == 143, done.stderr
    last = done.stderr.splitlines()[-1]
    learned = len(manifests(cache, "solve"))
    assert last == (f"interrupted during the selection ({learned} of 20 networks learned): finished stages are "
                    "cached; rerun the same command to resume")
    assert learned < 20 and not (tmp_path / "out").exists()


WIN95 = ["--network", "win95pts", "--rows", "5000", "--method", "none"]
"""Exact solves of minutes (win95pts unrestricted), scored in seconds."""


def scip_in_children(count: int):
    """Whether ``count`` children of the process have loaded SCIP (their solves began)."""
    def ready(line, pid):
        solving = 0
        for child in psutil.Process(pid).children():
            try:
                solving += "libscip" in Path(f"/proc/{child.pid}/maps").read_text()
            except OSError:
                pass
        return solving >= count

    return ready


@pytest.mark.slow
def test_sigterm_to_a_parallel_grid_runner_records_its_running_jobs_as_interrupted(tmp_path):
    """SIGTERM to the runner alone (as ``kill PID``): its two workers' solves stop with their best
    DAGs, recorded as interrupted; the third job never starts."""
    cache = tmp_path / "cache"
    for palim in (2, 3):
        scored = subprocess.run(command([*WIN95, "--palim", palim, "--stage", "scores", "--quiet"], cache, tmp_path),
                                cwd=REPO, capture_output=True, text=True, timeout=600)
        assert scored.returncode == 0, scored.stderr
    grid = tmp_path / "g.toml"
    grid.write_text('networks = ["win95pts"]\nrows = 5000\nmethods = ["none"]\npalims = [2, 3, 1]\n'
                    'baseline = false\n')
    ready = scip_in_children(2)
    moment = {}

    def solving_a_while(line, pid):  # SCIP loaded in both workers, then 3 s of solving
        if "t" not in moment and ready(line, pid):
            moment["t"] = time.monotonic()
        return "t" in moment and time.monotonic() > moment["t"] + 3

    done, children = signal_when(["grid", grid, "-j", "2", "--quiet"], cache, tmp_path / "out", solving_a_while)
    assert done.returncode == 143, done.stderr
    rows = pd.read_parquet(tmp_path / "out" / "grid-g" / "results.parquet").set_index("palim")
    assert list(rows.loc[[2, 3], "status"]) == ["interrupted", "interrupted"] and rows.loc[1, "status"] == "missing"
    assert (rows.loc[[2, 3], "dual_bound"] >= rows.loc[[2, 3], "objective"]).all()
    assert not manifests(cache, "job") and not manifests(cache, "solve")
    assert "the interrupted job is recorded as such, not cached" in done.stderr
    assert not alive(children)
