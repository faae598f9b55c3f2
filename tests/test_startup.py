"""Start-up: kernels compiled once with one announced line, and a fully cached run that imports
neither numba nor pyscipopt (timings live in bench/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.apps.cli import main
from pipeline.core import kernels
from pipeline.core.config import RunConfig
from pipeline.core.stages import run_stages

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def stamp_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setattr(kernels, "_checked", set())
    warmed = []
    monkeypatch.setattr(kernels, "_warm_up", lambda cfg, run_stages: warmed.append(cfg))
    monkeypatch.setattr(kernels, "_warm_up_threads", lambda cfg, run_stages, n_jobs: warmed.append((cfg, n_jobs)))
    return tmp_path / "numba", warmed


def test_kernels_compile_once_per_kind_of_run_with_one_line(stamp_dir, capsys, monkeypatch):
    folder, warmed = stamp_dir
    cfg = RunConfig(network="alarm")
    kernels.ensure_compiled(cfg, run_stages)
    err = capsys.readouterr().err
    assert "compiling the numba kernels" in err and "kernels compiled in" in err and warmed == [cfg]
    assert json.loads((folder / "hybridbn-kernels.json").read_text())["compiled"] == [kernels.kernel_set(cfg)]
    kernels.ensure_compiled(cfg, run_stages)  # same process
    monkeypatch.setattr(kernels, "_checked", set())
    kernels.ensure_compiled(RunConfig(network="asia", alpha=0.01), run_stages)  # a later process, same kernels
    assert capsys.readouterr().err == "" and len(warmed) == 1
    kernels.ensure_compiled(RunConfig(network="alarm", solver="ges"), run_stages)  # other kernels
    assert "compiling" in capsys.readouterr().err and len(warmed) == 2
    monkeypatch.setattr(kernels, "_checked", set())
    monkeypatch.setattr(kernels, "stamp_key", lambda: "another numba")
    kernels.ensure_compiled(cfg, run_stages)
    assert "compiling" in capsys.readouterr().err and len(warmed) == 3


def test_threaded_kernels_are_compiled_once_for_runs_on_several_threads(stamp_dir, capsys, monkeypatch):
    folder, warmed = stamp_dir
    cfg = RunConfig(network="alarm")
    kernels.ensure_compiled(cfg, run_stages, n_jobs=2)  # a first run on two threads: both variants, one message
    assert capsys.readouterr().err.count("compiling the numba kernels") == 1 and warmed == [cfg, (cfg, 2)]
    stamp = json.loads((folder / "hybridbn-kernels.json").read_text())["compiled"]
    assert stamp == sorted([kernels.kernel_set(cfg), kernels.kernel_set(cfg, threaded=True)])
    monkeypatch.setattr(kernels, "_checked", set())
    kernels.ensure_compiled(cfg, run_stages)  # a later run on one thread
    kernels.ensure_compiled(cfg, run_stages, n_jobs=4)  # or on four
    assert capsys.readouterr().err == "" and len(warmed) == 2
    monkeypatch.setattr(kernels, "_checked", set())
    kernels.ensure_compiled(RunConfig(network="alarm", method="pmms"), run_stages)  # other kernels, one thread:
    assert warmed[2:] == [RunConfig(network="alarm", method="pmms")]  # no threaded warm-up


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


def test_warm_up_runs_the_same_kinds_of_stages_on_bundled_data():
    cfg = RunConfig(data="mine.csv", method="mmpc", score="bic", solver="kg", treewidth=2, time_limit=600.0,
                    required="req.csv", tiers="tiers.csv", palim=None, max_order=None, budget=30.0)
    [small] = kernels.warm_up_configs(cfg)
    assert (small.network, small.data, small.required, small.tiers) == ("alarm", None, None, None)
    assert (small.scores, small.budget) == (None, None)
    assert kernels.kernel_set(small) == kernels.kernel_set(cfg)
    assert (small.time_limit, small.palim, small.max_order) == (2.0, 3, 1)
    cops, solver = kernels.warm_up_configs(RunConfig(network="munin", method="cops"))
    assert (cops.network, cops.method) == ("asia", "cops")
    assert (solver.network, solver.method, solver.palim) == ("alarm", "none", 2)
    assert kernels.warm_up_configs(RunConfig(network="munin", method="none", palim=None)) == [solver]
