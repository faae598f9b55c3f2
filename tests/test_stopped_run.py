"""A run stopped by a signal during its solve still evaluates what it wrote (issue 54, point 5):
the SHD of its best DAG against the true network in the summary and ``result.json``, and
``comparison.png`` beside ``network.png``; the evaluation is not cached (a rerun's final DAG
gets its own)."""

from __future__ import annotations

import json
import signal

import numpy as np
import pandas as pd

from bayesnet.catalog import load_network
from pipeline.core import stages
from test_cli_progress_signals import ALARM, alarm_cache, copy_cache, signal_when, solve_line  # noqa: F401


def test_sigterm_during_the_solve_writes_the_evaluation_and_comparison_of_the_best_dag(alarm_cache, tmp_path):
    cache, out = copy_cache(alarm_cache, tmp_path / "cache"), tmp_path / "out"
    done = signal_when(ALARM, cache, out, solve_line, signal.SIGTERM)
    assert done.returncode == 143, done.stderr
    (folder,) = out.iterdir()
    assert {"network.png", "comparison.png", "convergence.png"} <= {p.name for p in folder.iterdir()}
    record = json.loads((folder / "result.json").read_text())
    assert record["completion"] == "interrupted"
    evaluation = record["stages"]["evaluate"]["meta"]
    edges = pd.read_csv(folder / "edges.csv")
    names = load_network("alarm").variables  # the sampled data's columns, in the network's order
    dag = np.zeros((len(names), len(names)), dtype=bool)
    for source, target in zip(edges["source"], edges["target"]):
        dag[names.index(source), names.index(target)] = True
    assert evaluation["truth"] == "alarm"
    assert evaluation["shd"] == stages.compare(dag, stages.true_dag("alarm"))["shd"]
    assert f"SHD {evaluation['shd']} (CPDAGs)" in done.stdout
    assert not (cache / "evaluate").exists()  # the interrupted DAG's evaluation is never cached
