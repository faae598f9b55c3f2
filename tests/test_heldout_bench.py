"""bench.heldout: the Chow-Liu tree against brute force, the Laplace log-likelihood by hand, the
capped worker, the scoreboard, and one end-to-end call on a tiny DEBD-style triple."""

import importlib.util
import itertools
import math
import resource
import sys

import numpy as np
import pandas as pd
import pytest

from bayesnet.catalog import load_network
from bayesnet.dataset import Dataset
from bayesnet.sampling import forward_sample
from bench import heldout


def binary(rows) -> Dataset:
    data = np.asarray(rows, dtype=np.uint8)
    return Dataset(data, [f"x{k}" for k in range(data.shape[1])], [["0", "1"]] * data.shape[1])


def test_mutual_information_is_the_definition_on_every_pair():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 500)
    codes = np.column_stack([a, (a % 2) ^ (rng.random(500) < 0.1), rng.integers(0, 2, 500)]).astype(np.uint8)
    arities = np.array([3, 2, 2])
    mi = heldout.mutual_information(codes, arities)
    for i, j in itertools.permutations(range(3), 2):
        expected = 0.0
        for x, y in itertools.product(range(arities[i]), range(arities[j])):
            p = np.mean((codes[:, i] == x) & (codes[:, j] == y))
            if p:
                expected += p * math.log(p / (np.mean(codes[:, i] == x) * np.mean(codes[:, j] == y)))
        assert mi[i, j] == pytest.approx(expected, abs=1e-12)
    assert mi[0, 1] > 10 * mi[0, 2]


def test_chow_liu_is_the_maximum_spanning_tree_of_all_sixteen():
    data = forward_sample(load_network("asia"), 3000, seed=1).data[:, [1, 3, 5, 6]]  # tub, lung, either, xray
    arities = np.array([2, 2, 2, 2])
    mi = heldout.mutual_information(data, arities)
    pairs = list(itertools.combinations(range(4), 2))
    trees = []
    for edges in itertools.combinations(pairs, 3):
        reach = {0}
        for _ in range(3):
            reach |= {v for u, w in edges for v in (u, w) if {u, w} & reach}
        if len(reach) == 4:  # 3 edges joining 4 nodes: a spanning tree
            trees.append((sum(mi[u, w] for u, w in edges), set(edges)))
    assert len(trees) == 16  # Cayley: 4^(4-2)
    weight, best = max(trees, key=lambda t: t[0])
    assert sorted(w for w, _ in trees)[-2] < weight  # a unique optimum, so the tree is determined
    dag = heldout.chow_liu_dag(data, arities, root=2)
    assert {tuple(sorted(map(int, e))) for e in np.argwhere(dag)} == best
    assert dag[:, 2].sum() == 0 and (dag.sum(axis=0)[[0, 1, 3]] == 1).all()  # rooted at 2


def test_laplace_log_likelihood_by_hand():
    learn, test = binary([[0, 0], [0, 1], [0, 1], [1, 1]]), binary([[0, 1], [1, 0]])
    dag = np.array([[False, True], [False, False]])  # x0 -> x1
    # P(x0=0) = (3+1)/(4+2); P(x1=1 | x0=0) = (2+1)/(3+2); P(x0=1) = 2/6; P(x1=0 | x0=1) = (0+1)/(1+2)
    expected = (math.log(4 / 6 * 3 / 5) + math.log(2 / 6 * 1 / 3)) / 2
    assert heldout.mean_test_ll(dag, learn, test) == pytest.approx(expected, abs=1e-12)
    cpt = heldout.laplace_network(dag, learn).cpts[1]
    assert cpt[1] == pytest.approx([1 / 3, 2 / 3])


def test_capped_child_reports_the_memory_cap_and_the_time_limit(tmp_path):
    log = tmp_path / "log"
    grow = heldout.run_capped([sys.executable, "-c", "bytearray(3 * 2**30)"], 30, 2**30, log)
    inherited_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the forked copy of this process
    assert grow.status == "exit 1" and "MemoryError" in log.read_text() and grow.peak_mb < 1024 + inherited_mb
    slow = heldout.run_capped([sys.executable, "-c", "import time; time.sleep(30)"], 0.5, 2**30, log)
    assert slow.status.startswith("timeout") and slow.wall_s < 10


def test_scoreboard_counts_ties_as_at_or_above():
    results = pd.DataFrame({
        "dataset": ["a", "a", "b", "b", "c", "c"], "learner": ["ours", "peer"] * 3,
        "status": ["ok", "ok", "ok", "ok", "timeout > 9 s", "ok"], "test_ll": [-5.0, -5.0, -7.0, -6.0, np.nan, -1.0],
        "peak_mb": [100.0, 10.0, 5000.0, 10.0, 50.0, 10.0], "wall_s": [10.0, 1.0, 200.0, 1.0, 9.0, 1.0]})
    board = heldout.scoreboard(results, "ours", budget=120)
    assert list(board[">= every other"]) == [True, False, False]
    assert list(board["<= 4096 MB"]) == [True, False, True]
    assert list(board["within budget"]) == [True, False, False]


def test_missing_data_says_where_to_get_it(tmp_path):
    with pytest.raises(SystemExit, match="UCLA-StarAI/Density-Estimation-Datasets"):
        heldout.main(["--debd", str(tmp_path), "--datasets", "nltcs"])


def test_end_to_end_on_a_tiny_triple(tmp_path):
    data = forward_sample(load_network("asia"), 900, seed=2).data
    folder = tmp_path / "debd" / "tiny"
    folder.mkdir(parents=True)
    for part, rows in zip(heldout.SPLITS, np.split(data, [500, 700])):
        np.savetxt(folder / f"tiny.{part}.data", rows, fmt="%d", delimiter=",")
    out = tmp_path / "out"
    agrum = ["pyAgrum GHC BIC"] if importlib.util.find_spec("pyagrum") else []  # an optional peer (extra 'peers')
    heldout.main(["--debd", str(tmp_path / "debd"), "--datasets", "tiny", "--ours", "--peers", "Chow-Liu",
                  "empty DAG", *agrum, "--limit", "60", "--out", str(out)])
    results = pd.read_csv(out / "results.csv").set_index("learner")
    assert list(results["status"]) == ["ok"] * (2 + len(agrum))
    assert results.loc["Chow-Liu", "arcs"] == 7 and results.loc["empty DAG", "arcs"] == 0
    assert results.loc["Chow-Liu", "test_ll"] > results.loc["empty DAG", "test_ll"]
    assert all(results.loc[name, "test_ll"] > results.loc["empty DAG", "test_ll"] for name in agrum)
    assert (results["learn_rows"] == 700).all() and (results["test_rows"] == 200).all()
    assert results["peak_mb"].gt(0).all()
    assert "| tiny |" in (out / "summary.md").read_text()
