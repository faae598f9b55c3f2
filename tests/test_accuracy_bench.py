"""bench.accuracy: graph conversions of the peer adapters, metrics, settings parsing, the watchdog."""

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bench import accuracy, peer_learners
from graphs.pdag import dag_to_cpdag


def test_causal_learn_endpoints_to_pdag():
    g = np.zeros((3, 3), dtype=int)
    g[1, 0], g[0, 1] = 1, -1  # 0 -> 1
    g[1, 2] = g[2, 1] = -1  # 1 - 2
    P = peer_learners._endpoint_matrix(g)
    assert P[0, 1] and not P[1, 0]
    assert P[1, 2] and P[2, 1]
    assert P.sum() == 3


def test_truth_scores_perfectly_and_a_reversed_compelled_arc_counts_once():
    net = load_network("asia")
    truth = dag_to_cpdag(net.adjacency)
    assert accuracy.measure(truth, truth) == {"shd": 0, "f1": 1.0, "precision": 1.0, "recall": 1.0}
    i, j = map(int, np.argwhere(truth & ~truth.T)[0])
    wrong = truth.copy()
    wrong[i, j], wrong[j, i] = False, True
    m = accuracy.measure(wrong, truth)
    assert m["shd"] == 1 and m["f1"] == 1.0


def test_dag_by_name_follows_the_names_not_the_order():
    sample = accuracy.draw(load_network("asia"), 50, seed=0)
    names = sample.names
    P = peer_learners._dag_by_name(sample, [(names[2], names[5])])
    assert P[2, 5] and P[5, 2] and P.sum() == 2  # a lone arc is reversible


def test_shuffled_columns_keep_their_names_and_are_scored_in_their_order():
    net = load_network("asia")
    sample = accuracy.draw(net, 50, seed=0)
    mixed, order = accuracy.shuffled(sample, seed=3)
    assert sorted(order) == list(range(8)) and list(order) != list(range(8))
    assert mixed.names == [sample.names[v] for v in order]
    assert (mixed.codes == sample.codes[:, order]).all()
    assert (mixed.frame.to_numpy() == sample.frame.to_numpy()[:, order]).all()
    again, same = accuracy.shuffled(sample, seed=3)
    assert (same == order).all() and list(accuracy.shuffled(sample, seed=4)[1]) != list(order)
    truth = dag_to_cpdag(net.adjacency)
    learned = dag_to_cpdag(net.adjacency[np.ix_(order, order)])  # the true DAG, in the shuffled columns
    assert accuracy.measure(learned, truth[np.ix_(order, order)])["shd"] == 0
    assert accuracy.measure(learned, truth)["shd"] > 0


def test_settings_parse_and_unknown_options_are_refused():
    assert accuracy.parse_setting("default") == {}
    assert accuracy.parse_setting("palim=none,score=bic,alpha=0.01") == {"palim": None, "score": "bic",
                                                                         "alpha": 0.01}
    assert accuracy.parse_setting("method=none,structure_prior=1") == {"method": "none", "structure_prior": 1}
    accuracy.check_settings(["method=none,structure_prior=1"])  # 'none' names the method, not a missing value
    with pytest.raises(ValueError, match="key=value"):
        accuracy.parse_setting("palim")
    with pytest.raises(SystemExit, match="frobnicate"):
        accuracy.check_settings(["frobnicate=1"])
    with pytest.raises(ValueError, match="palim"):
        accuracy.check_settings(["palim=-2"])


def test_pyagrum_adapter_learns_asia_by_name():
    pytest.importorskip("pyagrum")
    net = load_network("asia")
    sample = accuracy.draw(net, 5000, seed=1)
    P = peer_learners.agrum_miic(sample)
    assert accuracy.measure(P, dag_to_cpdag(net.adjacency))["f1"] >= 0.75


def _stat(pid: int) -> tuple[str, int] | None:
    """State letter and parent pid of process ``pid`` from /proc (Linux), None once it is gone."""
    try:
        state, ppid = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[:2]
    except OSError:
        return None
    return state, int(ppid)


def _running(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _children(pid: int) -> list[int]:
    """Running child processes of ``pid``."""
    stats = {int(e.name): _stat(int(e.name)) for e in Path("/proc").iterdir() if e.name.isdigit()}
    return [child for child, stat in stats.items() if stat and stat[1] == pid and stat[0] != "Z"]


def _poll(condition, seconds: float):
    """``condition()`` once it is truthy, or its last value after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not (value := condition()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_timed_out_bnlearn_call_leaves_no_rscript_running(tmp_path):
    if not peer_learners.bnlearn_available():
        pytest.skip("no Rscript with bnlearn")
    sample = accuracy.draw(load_network("diabetes"), 5000, seed=0)  # bnlearn's hc takes minutes on it
    watchdog = accuracy.Watchdog(limit=5.0, ours=False, log=tmp_path / "workers.log")
    worker = watchdog.proc.pid
    try:
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(watchdog.call, "bnlearn hc", None, sample, str(tmp_path))
            rscript = _poll(lambda: _children(worker), 5.0)  # R, started by the worker
            status = pending.result()[0]
    finally:
        watchdog.close()
    assert status.startswith("timeout") and rscript
    assert _poll(lambda: not any(map(_running, rscript)), 10.0)  # killed with the worker
