"""The Python API (``hybridbn.learn``): sources, result object, conversions, the documented
examples, the thin CLI over it, missing values and cheap import."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import assert_evaluation_of

import hybridbn
from bayesnet.bif import read_bif
from pipeline.apps.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def asia(tmp_path_factory):
    return hybridbn.learn("asia", rows=800, seed=2, cache_dir=tmp_path_factory.mktemp("cache"))


def noisy_frame(n=600, seed=0):
    """a -> b (10 % noise), c independent, as object columns."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = a ^ (rng.random(n) < 0.1)
    return pd.DataFrame({"a": a, "b": b.astype(int), "c": rng.integers(0, 3, n)}).astype(object)


@pytest.mark.parametrize("path,section", [("README.md", "From Python"), ("docs/user-guide.md", "## Python API")])
def test_documented_example_runs(path, section, tmp_path, monkeypatch):
    text = (ROOT / path).read_text()
    block = re.search(r"```python\n(.*?)```", text[text.index(section):], re.S).group(1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYBRIDBN_CACHE_DIR", str(tmp_path / "cache"))
    scope: dict = {}
    exec(compile(block, path, "exec"), scope)
    result = scope["result"]
    assert result.status == "optimal" and result.gap == 0
    assert_evaluation_of(result.evaluation, result.adjacency, "asia")
    assert len(scope["edges"]) == len(result.arcs)


def test_result_holds_dag_cpdag_solver_result_stages_and_evaluation(asia):
    assert asia.names[:2] == ["asia", "tub"]
    assert asia.adjacency.shape == (8, 8) and not np.any(asia.adjacency & asia.adjacency.T)
    assert sorted(asia.arcs) == sorted((p, c) for c, ps in asia.parents.items() for p in ps)
    assert asia.bound == pytest.approx(asia.objective) and asia.status == "optimal" and asia.gap == 0
    assert set(asia.times) == {"data", "restrict", "scores", "solve", "evaluate"}
    assert asia.counts["data"]["n_rows"] == 800 and asia.counts["scores"]["n_candidates"] > 8
    assert_evaluation_of(asia.evaluation, asia.adjacency, "asia")
    # the CPDAG contains every arc of the DAG (directed or reversible) and nothing else
    assert np.array_equal(asia.cpdag | asia.cpdag.T, asia.adjacency | asia.adjacency.T)
    assert np.all(asia.cpdag[asia.adjacency])


def test_objective_is_the_table_score_of_the_dag(asia):
    from pipeline.core.stages import table_of

    table = table_of(asia.artifacts["scores"], asia.names)
    parent_sets = [tuple(np.flatnonzero(asia.adjacency[:, v])) for v in range(len(asia.names))]
    assert table.score_of(parent_sets) == pytest.approx(asia.objective)


def test_qnml_objective_is_the_sum_of_its_local_scores(cache):
    """``score="qnml"`` reaches the scorer: the optimum's objective is the qNML of its families."""
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample
    from scores.local import local_score

    result = hybridbn.learn("asia", rows=800, seed=2, score="qnml", cache_dir=cache)
    sample = forward_sample(load_network("asia"), 800, seed=2)
    arities = np.array([len(states) for states in sample.states])
    total = sum(local_score(np.asarray(sample.data), arities, v, tuple(np.flatnonzero(result.adjacency[:, v])),
                            score="qnml") for v in range(arities.size))
    assert result.status == "optimal" and result.objective == pytest.approx(total, rel=1e-10)
    assert result.objective != pytest.approx(hybridbn.learn("asia", rows=800, seed=2, score="bic",
                                                            cache_dir=cache).objective)


def test_conversions(asia, tmp_path):
    edges = asia.to_edge_frame()
    assert list(edges.columns) == ["source", "target", "directed"] and edges["directed"].all()
    assert sorted(zip(edges["source"], edges["target"])) == sorted(asia.arcs)
    undirected = asia.to_edge_frame(cpdag=True)
    assert len(undirected) == len(asia.arcs) and (~undirected["directed"]).sum() == (
        (asia.cpdag & asia.cpdag.T).sum() // 2)
    (tmp_path / "x.bif").write_text(asia.to_bif())
    network = read_bif(tmp_path / "x.bif")
    assert network.variables == asia.names
    assert {(network.variables[p], network.variables[c]) for c, ps in enumerate(network.parents) for p in ps} == set(asia.arcs)
    mle = asia.parameters("mle")
    assert all(np.allclose(cpt.sum(axis=-1), 1) for cpt in mle.cpts)
    assert "digraph" in asia.to_dot()


def test_to_networkx(asia, monkeypatch):
    try:
        import networkx as nx
    except ImportError:
        monkeypatch.setitem(sys.modules, "networkx", None)
        with pytest.raises(ImportError, match="pip install networkx"):
            asia.to_networkx()
        return
    graph = asia.to_networkx()
    assert sorted(graph.nodes) == sorted(asia.names) and sorted(graph.edges) == sorted(asia.arcs)
    assert nx.is_directed_acyclic_graph(graph)


def test_dataframe_and_file_sources_agree_and_are_cached(cache, tmp_path):
    frame = noisy_frame()
    first = hybridbn.learn(frame, cache_dir=cache, palim=2)
    assert first.arcs in ([("a", "b")], [("b", "a")]) and first.evaluation is None
    again = hybridbn.learn(frame.copy(), cache_dir=cache, palim=2)
    assert all(again.cached.values()) and again.arcs == first.arcs
    frame.to_csv(tmp_path / "d.csv", index=False)
    from_file = hybridbn.learn(str(tmp_path / "d.csv"), cache_dir=cache, palim=2)
    assert from_file.objective == pytest.approx(first.objective) and from_file.arcs == first.arcs
    changed = frame.copy()
    changed.iloc[0, 2] = (changed.iloc[0, 2] + 1) % 3
    assert not hybridbn.learn(changed, cache_dir=cache, palim=2).cached["data"]


def test_cli_is_the_api(capsys, tmp_path, asia):
    """run.py writes what learn() returns: same arcs and objective for the same options."""
    status = main(["--network", "asia", "--rows", "800", "--seed", "2", "--cache-dir", str(tmp_path / "c"),
                   "--output-dir", str(tmp_path / "out")])
    assert status == 0
    folder = next((tmp_path / "out").iterdir())
    edges = pd.read_csv(folder / "edges.csv")
    assert sorted(zip(edges["source"], edges["target"])) == sorted(asia.arcs)
    record = json.loads((folder / "result.json").read_text())
    assert record["result"]["objective"] == pytest.approx(asia.objective)
    assert asia.summary().splitlines()[0] == capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("source,options,message", [
    ("asia", {"rows": 0}, "rows must be a positive integer, got 0"),
    ("asia", {"missing": "keep"}, "missing must be one of reject, drop, state, em; got 'keep'"),
    ("asia", {"budget": -1}, "budget must be a positive number of seconds"),
    ("asia", {"palimm": 2}, "unknown option 'palimm'"),
    ("asia", {"data": "x.csv"}, "give the data as the first argument"),
    ("asia", {"stage": "fit"}, "stage must be one of"),
    ("nosuchnet", {}, "nosuchnet"),
    ("missing.csv", {}, "data file not found: missing.csv"),
    ("missing.jkl", {}, "scores: file not found: missing.jkl"),
    (3, {}, "source must be a DataFrame, a file or a network name, got int"),
])
def test_bad_input_raises_value_error_before_work(source, options, message, cache):
    with pytest.raises(ValueError, match=re.escape(message)):
        hybridbn.learn(source, cache_dir=cache, **options)
    assert not cache.exists()


def test_stopped_early_result_says_which_stage_is_missing(cache):
    result = hybridbn.learn(noisy_frame(), stage="scores", cache_dir=cache)
    assert set(result.artifacts) == {"data", "restrict", "scores"}
    with pytest.raises(ValueError, match="stopped before the solve stage"):
        result.arcs


def test_missing_cells_rejected_by_default_naming_the_option_and_dropped_on_request(cache, capsys, tmp_path):
    frame = noisy_frame()
    frame.iloc[[3, 10], 2] = None
    frame.iloc[10, 0] = None
    frame.iloc[20, 1] = np.nan
    with pytest.raises(ValueError, match=r"column 'a': 1 of 600 rows are missing \(first rows \[10\]\); "
                                         r"missing='drop' drops"):
        hybridbn.learn(frame, cache_dir=cache)
    result = hybridbn.learn(frame, missing="drop", cache_dir=cache)
    assert result.counts["data"]["n_rows"] == 597 and result.counts["data"]["n_dropped_rows"] == 3
    assert "(3 rows with a missing cell dropped)" in result.summary()
    frame.to_csv(tmp_path / "m.csv", index=False)
    argv = ["--data", str(tmp_path / "m.csv"), "--cache-dir", str(cache), "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 2
    assert "--missing drop" in capsys.readouterr().err
    assert main([*argv, "--missing", "drop"]) == 0
    assert "597 rows x 3 variables (3 rows with a missing cell dropped)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--missing", "keep"])
    assert stop.value.code == 2 and "--missing: invalid choice: 'keep'" in capsys.readouterr().err


def test_import_is_cheap_and_the_module_entry_point_works(tmp_path):
    code = ("import sys, hybridbn; heavy = {'numba', 'pyscipopt', 'pandas', 'numpy', 'pipeline.core.stages'};"
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert "learn" in dir(hybridbn) and callable(hybridbn.learn)
    done = subprocess.run([sys.executable, "-m", "hybridbn", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--scores FILE.jkl" in done.stdout and "--missing" in done.stdout
