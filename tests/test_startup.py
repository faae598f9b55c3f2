"""Start-up: kernels compiled once per group with one announcement, in several processes, and a
fully cached run that imports neither numba nor pyscipopt (timings live in bench/startup.py)."""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from pipeline.apps.cli import main
from pipeline.core import kernels
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.kernels import compile_groups  # bound before conftest.py replaces it for the session
from pipeline.core.stages import names_of, run_stages, table_of
from scores.jkl import read_jkl

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def stamp_dir(tmp_path, monkeypatch):
    """An empty stamp folder; the groups a warm-up would compile are recorded, not compiled."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr(kernels, "_checked", set())
    warmed = []

    def record(groups, driver, processes=1):
        assert driver is run_stages
        warmed.append(([g.key for g in groups], processes))
        return [g.key for g in groups]

    monkeypatch.setattr(kernels, "compile_groups", record)
    return tmp_path / "numba", warmed


def stamped(folder):
    return json.loads((folder / "hybridbn-kernels.json").read_text())["compiled"]


def ensure(*configs, n_jobs=1):
    kernels.ensure_compiled(*configs, run_stages=run_stages, n_jobs=n_jobs)


def test_kernels_compile_once_per_group_with_one_announcement(stamp_dir, capsys, monkeypatch):
    folder, warmed = stamp_dir
    monkeypatch.setattr(kernels, "_cores", lambda: 2)
    monkeypatch.setattr(kernels, "_idle_cores", lambda: 2.0)  # a quiet machine
    ensure(RunConfig(network="alarm"))
    err = capsys.readouterr().err
    assert "compiling the numba kernels" in err and "in 2 processes" in err and "kernels compiled in" in err
    assert warmed == [(["scores/bdeu", "restriction/pc/g2", "solver/ilp"], 2)]  # heaviest first
    assert stamped(folder) == ["restriction/pc/g2", "scores/bdeu", "solver/ilp"]
    ensure(RunConfig(network="alarm"))  # same process
    monkeypatch.setattr(kernels, "_checked", set())
    ensure(RunConfig(network="asia", alpha=0.01))  # a later process, same kernels
    assert capsys.readouterr().err == "" and len(warmed) == 1
    ensure(RunConfig(network="alarm", solver="kg", score="bic"))  # two groups are new
    assert "in 2 processes" in capsys.readouterr().err and warmed[1] == (["scores/bic", "solver/kg"], 2)
    ensure(RunConfig(network="alarm", method="mmpc"))  # one group: this process
    assert "in 1 process " in capsys.readouterr().err and warmed[2] == (["restriction/mmpc/g2"], 1)
    ensure(RunConfig(network="alarm", solver="tabu"))  # the scores and the restriction are compiled
    assert warmed[3] == (["solver/tabu"], 1)
    monkeypatch.setattr(kernels, "_checked", set())
    monkeypatch.setattr(kernels, "stamp_key", lambda: "another numba")
    ensure(RunConfig(network="alarm"))
    assert "compiling" in capsys.readouterr().err and len(warmed[4][0]) == 3


def test_edited_sources_drop_the_cached_kernels(stamp_dir, tmp_path, monkeypatch):
    """numba rechecks only the file that defines a kernel, so a changed source file of the kernel
    packages (size or modification time) changes the stamp's key and clears numba's cache, which
    an unchanged installation keeps."""
    folder, warmed = stamp_dir
    package = tmp_path / "root" / "constraints"
    package.mkdir(parents=True)
    (package / "citests.py").write_text("x = 1\n")
    monkeypatch.setattr(kernels, "ROOT", tmp_path / "root")
    monkeypatch.setattr(kernels, "KERNEL_PACKAGES", ("constraints",))
    cached = [folder / "constraints" / "__pycache__" / f"citest_batch.evaluate-10.py311.{kind}" for kind in ("nbi", "nbc")]
    ensure(RunConfig(network="alarm"))
    for path in cached:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"kernel")
    monkeypatch.setattr(kernels, "_checked", set())
    ensure(RunConfig(network="alarm"))  # same sources: the cache stays, nothing to compile
    assert all(path.exists() for path in cached) and len(warmed) == 1
    before = kernels.sources_digest()
    (package / "citests.py").write_text("x = 22\n")  # an edited callee
    assert kernels.sources_digest() != before
    monkeypatch.setattr(kernels, "_checked", set())
    ensure(RunConfig(network="alarm"))
    assert not any(path.exists() for path in cached) and len(warmed) == 2


def test_threaded_kernels_are_compiled_once_for_runs_on_several_threads(stamp_dir, capsys, monkeypatch):
    folder, warmed = stamp_dir
    cfg = RunConfig(network="alarm")
    ensure(cfg, n_jobs=2)  # a first run on two threads: both variants, one message
    assert capsys.readouterr().err.count("compiling the numba kernels") == 1
    assert "restriction/pc/g2/threads" in stamped(folder) and "restriction/pc/g2" in stamped(folder)
    monkeypatch.setattr(kernels, "_checked", set())
    ensure(cfg)  # a later run on one thread
    ensure(cfg, n_jobs=4)  # or on four
    assert capsys.readouterr().err == "" and len(warmed) == 1
    ensure(RunConfig(network="alarm", method="candidates"), n_jobs=2)  # no CI test:
    assert warmed[1][0] == ["restriction/candidates"]  # no threaded variant


def test_a_busy_machine_compiles_in_one_process(stamp_dir, monkeypatch):
    folder, warmed = stamp_dir
    monkeypatch.setattr(kernels, "_idle_cores", lambda: 0.3)
    ensure(RunConfig(network="alarm"))
    assert warmed == [(["scores/bdeu", "restriction/pc/g2", "solver/ilp"], 1)]


def test_idle_cores_are_a_share_of_the_machine():
    assert 0.0 <= kernels._idle_cores(0.05) <= os.cpu_count()


def test_selection_candidates_are_compiled_together_before_the_workers_start(stamp_dir, capsys):
    folder, warmed = stamp_dir
    ensure(RunConfig(network="alarm"), RunConfig(network="alarm", score="bic", method="pmms"))
    assert capsys.readouterr().err.count("compiling the numba kernels") == 1
    assert warmed[0][0] == ["scores/bdeu", "scores/bic", "restriction/pc/g2", "solver/ilp", "restriction/pmms/g2"]


def test_a_warm_up_inside_a_warm_up_compiles_nothing_more(stamp_dir, monkeypatch):
    folder, warmed = stamp_dir
    monkeypatch.setattr(kernels, "_compiling", True)
    ensure(RunConfig(network="alarm"))
    assert warmed == [] and not (folder / "hybridbn-kernels.json").exists()


def test_cached_run_imports_neither_numba_nor_pyscipopt(tmp_path, capsys):
    dirs = ["--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "out")]
    argv = ["--network", "asia", "--rows", "300", *dirs]
    assert main(argv) == 0
    capsys.readouterr()
    code = ("import sys; from pipeline.apps.cli import main; status = main(%r); "
            "print(status, *sorted(m for m in ('numba', 'pyscipopt', 'matplotlib', 'scipy') if m in sys.modules))"
            % argv)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "0", done.stdout + done.stderr


def test_warm_ups_run_the_stages_of_their_group_on_bundled_data():
    cfg = RunConfig(data="mine.csv", method="mmpc", score="bic", solver="kg", treewidth=2, time_limit=600.0,
                    required="req.csv", tiers="tiers.csv", palim=None, max_order=None, budget=30.0)
    scores, restriction, solver = kernels.kernel_groups(cfg)
    assert [g.key for g in (scores, restriction, solver)] == ["scores/bic", "restriction/mmpc/g2",
                                                              "solver/kg/treewidth"]
    for group in (scores, restriction, solver):
        run = group.run
        assert (run.data, run.required, run.tiers, run.budget) == (None, None, None, None)
        assert (run.time_limit, run.max_order, run.treewidth) == (2.0, 1, 2)
    assert (scores.upto, scores.run.network, scores.run.method, scores.run.palim) == ("scores", "alarm", "none", 2)
    assert (restriction.upto, restriction.run.network, restriction.run.palim) == ("restrict", "alarm", 3)
    assert (solver.upto, solver.run.network, solver.run.scores) == ("solve", None, str(kernels.WARM_UP_TABLE))
    cops = kernels.kernel_groups(RunConfig(network="munin", method="cops"))[1]
    assert (cops.run.network, cops.run.method, cops.upto) == ("asia", "cops", "restrict")
    assert kernels.kernel_groups(RunConfig(network="munin"))[2].run.time_limit == kernels.WARM_UP_ILP_LIMIT
    [ges] = kernels.kernel_groups(RunConfig(network="munin", method="none", solver="ges"))
    assert (ges.key, ges.upto, ges.run.network, ges.run.method) == ("solver/ges", "solve", "alarm", "none")
    [from_file] = kernels.kernel_groups(RunConfig(scores="mine.jkl"))
    assert (from_file.key, from_file.run.scores) == ("solver/ilp", str(kernels.WARM_UP_TABLE))


def test_the_bundled_warm_up_table_is_alarms_pipeline_table():
    arts = run_stages(StageCache(None, enabled=False), RunConfig(network="alarm"), upto="scores")
    table, bundled = table_of(arts["scores"], names_of(arts["data"])), read_jkl(kernels.WARM_UP_TABLE)
    assert bundled.names == table.names and bundled.n_candidates == table.n_candidates == 520
    assert {(int(v), ps): s for v in range(37) for ps, s in bundled.families[v].items()} == pytest.approx(
        {(int(v), ps): s for v in range(37) for ps, s in table.families[v].items()})


def test_kernel_groups_compile_in_two_processes_as_they_free(capsys):
    restriction, solver = kernels.kernel_groups(RunConfig(network="alarm"))[1:]
    assert sorted(compile_groups([restriction, solver], run_stages, processes=2)) == ["restriction/pc/g2",
                                                                                       "solver/ilp"]
    lines = capsys.readouterr().err.splitlines()
    assert sorted(line.split(":")[0] for line in lines) == ["  restriction/pc/g2", "  solver/ilp"]


@pytest.mark.parametrize("file, spec, again", [
    ("/elsewhere/analysis.py", None, True),  # a user's script, guarded or not
    (str(ROOT / "run.py"), None, False),  # this repository's scripts have the guard
    (None, None, False),  # python -c, an interactive session: nothing runs again
    ("/elsewhere/tool/__main__.py", "tool.__main__", False),  # python -m tool: not run again by spawn
])
def test_the_warm_up_compiles_in_this_process_under_a_callers_script(monkeypatch, file, spec, again):
    """Spawned processes run the caller's ``__main__`` script again: one calling hybridbn.learn
    without an ``if __name__ == "__main__"`` guard would learn once more in each."""
    main = types.ModuleType("__main__")
    main.__spec__ = None if spec is None else importlib.machinery.ModuleSpec(spec, None)
    if file is not None:
        main.__file__ = file
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(kernels, "_cores", lambda: 2)
    monkeypatch.setattr(kernels, "_idle_cores", lambda: 2.0)
    assert kernels._processes(3) == (1 if again else 2)
