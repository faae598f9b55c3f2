"""Deadlines (``--budget``) in the restriction learners and the score table: a stopped run returns a
safe superset of the skeleton, or a table in which every child still has a parent set.

The deadlines are already past or run on a clock that ticks once per check, except where a
running kernel is stopped: there a deadline (or a stop request) 0.5 s on meets a table that takes
many seconds, and only what the stop leaves is checked, never a time.
"""

from __future__ import annotations

import threading
from itertools import count

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints import screening
from constraints.citests import CITest, DSeparationOracle
from constraints.pc import pc_skeleton
from constraints.pmms import mmpc, pmms
from hybridbn.deadline import Deadline
from hybridbn.interrupt import catching_signals, request_stop
from pipeline.core.executors import LocalExecutor
from pipeline.core.split_scores import split_score_table
from pipeline.core.stopping import StageStopped, stage_deadline
from scores.candidates import _score_child, build_score_table, counting_data
from scores.counts import as_columns
from scores.enumeration import COMPLETE, MEMORY_CUT, STOP, STOPPED, ScoreRule, new_control
from scores.local import score_code

PAST = Deadline(0.0)
"""The start of the epoch: long passed."""


def after_checks(k: int) -> Deadline:
    """A deadline that passes at its ``k``-th check (a clock ticking once per reading)."""
    return Deadline(float(k), count(1).__next__)


def oracle(name: str) -> tuple[DSeparationOracle, int]:
    net = load_network(name)
    return DSeparationOracle(net.adjacency), net.n_vars


LEARNERS = {
    "pc": lambda test, n, **kw: pc_skeleton(test, n, max_order=2, batched=False, **kw),
    "pmms": lambda test, n, **kw: pmms(test, n, max_order=2, **kw),
    "mmpc": lambda test, n, **kw: mmpc(test, n, max_order=2, **kw),
}


@pytest.mark.parametrize("network", ["asia", "child"])
@pytest.mark.parametrize("method", sorted(LEARNERS))
def test_past_deadline_keeps_every_pair(method, network):
    test, n = oracle(network)
    cut = LEARNERS[method](test, n, deadline=PAST)
    assert cut.status == "timeout" and cut.n_allowed == n * (n - 1) // 2 and cut.n_tests == 0
    assert LEARNERS[method](test, n).status == "ok"


@pytest.mark.parametrize("network", ["asia", "child"])
@pytest.mark.parametrize("method", sorted(LEARNERS))
def test_a_later_deadline_gives_a_nested_superset_of_the_full_skeleton(method, network):
    """Stopped after k checks, the skeleton contains the full run's and the one stopped later."""
    test, n = oracle(network)
    full = LEARNERS[method](test, n).allowed
    previous, strictly_between = np.ones((n, n), dtype=bool), 0
    for k in range(1, 400, 7):
        cut = LEARNERS[method](test, n, deadline=after_checks(k))
        assert (cut.allowed >= full).all() and (cut.allowed <= previous).all()
        previous = cut.allowed
        if cut.status == "ok":
            assert np.array_equal(cut.allowed, full)
            break
        strictly_between += cut.n_allowed < n * (n - 1) // 2 and not np.array_equal(cut.allowed, full)
    assert strictly_between > 0


def test_batched_pc_stops_between_batches(monkeypatch):
    """Compiled PC-stable stops between batches of pairs (here about 40 per batch, the marginal
    screen's blocks of level 0 included) with a superset."""
    monkeypatch.setattr("constraints.pc._BATCH_PAIRS", 40)
    monkeypatch.setattr("constraints.pc.row_blocks", lambda n_vars, pairs=40: screening.row_blocks(n_vars, pairs))
    net = load_network("alarm")
    ds = forward_sample(net, 2000, seed=1)
    n = net.n_vars
    full = pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2)
    sizes = []
    for k in (1, 5, 12, 20):
        cut = pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2, deadline=after_checks(k))
        assert cut.status == "timeout" and (cut.allowed >= full.allowed).all()
        sizes.append(cut.n_allowed)
    assert sizes[0] == n * (n - 1) // 2 and sizes == sorted(sizes, reverse=True) and sizes[-1] > full.n_allowed
    assert pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2, executor=LocalExecutor(1), n_groups=3,
                       deadline=PAST).n_allowed == n * (n - 1) // 2


@pytest.fixture(scope="module")
def asia_rows():
    return forward_sample(load_network("asia"), 800, seed=3)


def test_past_deadline_leaves_each_child_its_empty_set(asia_rows):
    ds = asia_rows
    full = build_score_table(ds.data, ds.arities, palim=2)
    cut = build_score_table(ds.data, ds.arities, palim=2, deadline=PAST)
    assert cut.families == [{(): fam[()]} for fam in full.families]
    assert cut.meta["unscored"] == list(range(ds.data.shape[1])) and full.meta["unscored"] == []
    required = np.zeros((8, 8), dtype=bool)
    required[0, 1] = True
    with_knowledge = build_score_table(ds.data, ds.arities, palim=2, required=required, deadline=PAST)
    assert list(with_knowledge.families[1]) == [(0,)]


def test_children_scored_before_the_deadline_keep_their_families(asia_rows):
    ds = asia_rows
    full = build_score_table(ds.data, ds.arities, palim=2)
    cut = build_score_table(ds.data, ds.arities, palim=2, deadline=after_checks(4))
    assert cut.families[:3] == full.families[:3] and cut.meta["unscored"] == list(range(3, 8))
    assert all(list(fam) == [()] for fam in cut.families[3:])


def test_split_scoring_checks_the_deadline_in_every_group(asia_rows):
    ds = asia_rows
    cut = split_score_table(LocalExecutor(1), ds.data, ds.arities, 3, palim=2, deadline=PAST)
    single = build_score_table(ds.data, ds.arities, palim=2, deadline=PAST)
    assert cut.families == single.families and cut.meta["unscored"] == single.meta["unscored"]
    assert cut.meta["counts"] == single.meta["counts"]


def dense_rows(n_rows: int = 4000, n_vars: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Binary rows in which every variable depends on several others, as in real data: pruning
    keeps many sets, and at ``palim`` 5 a child's kernel runs for a large part of a second."""
    rng = np.random.default_rng(0)
    latent = rng.integers(0, 2, size=(n_rows, 3))
    data = np.empty((n_rows, n_vars), dtype=np.int64)
    for j in range(n_vars):
        noise = rng.random(n_rows) < (0.2 if j < 3 else 0.25)
        data[:, j] = latent[:, j % 3] ^ noise if j < 3 else data[:, j - 3] ^ latent[:, (j + 1) % 3] ^ noise
    return data, np.full(n_vars, 2)


def child_sets(v: int, control: np.ndarray, palim: int = 3):
    """``(sets and scores of child v, its family in the full table, status)`` of one kernel call
    with ``control`` on :func:`dense_rows` (BIC, every other variable a candidate parent)."""
    data, arities = dense_rows()
    full = build_score_table(data, arities, "bic", palim=palim).families[v]
    cols = as_columns(data, arities)
    shared, marginal_ll = counting_data(cols, np.asarray(arities, dtype=np.int64))
    rule = ScoreRule(code=score_code("bic"), ess=1.0, prune=True)
    allowed, required = np.arange(cols.shape[0]) != v, np.zeros(cols.shape[0], dtype=bool)
    (sets, scores), _, status = _score_child(shared, v, allowed, required, palim, rule, marginal_ll, control)
    got = {tuple(int(p) for p in row if p >= 0): float(s) for row, s in zip(sets, scores)}
    return got, full, status


def test_a_stop_flag_ends_the_kernel_with_the_sets_scored_before():
    control = new_control()
    got, full, status = child_sets(5, control)
    assert status == COMPLETE and got.keys() == full.keys()
    control[STOP] = 1
    got, full, status = child_sets(5, control)
    assert status == STOPPED and list(got) == [()] and got[()] == pytest.approx(full[()])


def test_the_memory_cap_stops_a_child_before_a_growth_past_it():
    """At palim 4 the child's buffers grow past 300 kB in its fourth layer: it stops there, and each
    set it kept is one of the full enumeration's, with its score (a set is kept on the same test
    against its subsets either way); 1 MB lets it finish."""
    got, full, status = child_sets(5, new_control(300_000), palim=4)
    assert status == MEMORY_CUT and 1 < len(got) < len(full) and max(map(len, got)) <= 3
    assert all(full[s] == pytest.approx(score) for s, score in got.items())
    got, full, status = child_sets(5, new_control(1_000_000), palim=4)
    assert status == COMPLETE and got.keys() == full.keys()


def test_a_memory_limit_below_what_the_process_holds_leaves_each_child_its_required_set(asia_rows):
    ds = asia_rows
    full = build_score_table(ds.data, ds.arities, palim=2)
    cut = build_score_table(ds.data, ds.arities, palim=2, memory_limit=1)
    assert cut.families == [{(): fam[()]} for fam in full.families]
    assert cut.meta["memory_cut"] == cut.meta["unscored"] == list(range(8)) and full.meta["memory_cut"] == []
    roomy = build_score_table(ds.data, ds.arities, palim=2, memory_limit=1 << 40)
    assert roomy.families == full.families and roomy.meta["unscored"] == []


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_deadline_passing_while_the_kernels_run_stops_them(n_jobs):
    """Scoring all 30 children at palim 5 takes many seconds; a deadline 0.5 s on stops the running
    kernels (they keep what they scored) and leaves the others their empty set."""
    data, arities = dense_rows()
    cut = build_score_table(data, arities, "bic", palim=5, n_jobs=n_jobs, deadline=Deadline.after(0.5))
    assert 0 < len(cut.meta["unscored"]) <= 30 and all(() in fam for fam in cut.families)
    assert cut.meta["memory_cut"] == []


def test_a_stop_request_while_a_kernel_runs_ends_the_scoring():
    """A stop request (what SIGTERM records) 0.5 s into the scoring raises ``StageStopped`` once the
    running kernel has stopped at its next alive set, not after the whole table."""
    data, arities = dense_rows()
    with catching_signals():
        timer = threading.Timer(0.5, request_stop)
        timer.start()
        with pytest.raises(StageStopped, match="scores"):
            build_score_table(data, arities, "bic", palim=5, deadline=stage_deadline("scores", None))
        timer.join()


def test_a_table_the_memory_plan_cut_gives_a_limited_solve_under_its_own_key(tmp_path, monkeypatch):
    """With the machine's share of memory below what the process holds, every child keeps its
    empty set: the stage's status is ``memory``, the solve is ``limited`` with no bound, and a run
    with the usual share never reads that table as the complete one."""
    import hybridbn
    from hybridbn import memory

    options = {"rows": 500, "method": "none", "score": "bdeu", "cache_dir": tmp_path}
    monkeypatch.setattr(memory, "DEFAULT_SHARE", 1e-9)
    cut = hybridbn.learn("asia", **options)
    assert cut.status == "limited" and cut.bound is None and cut.arcs == []
    monkeypatch.undo()
    full = hybridbn.learn("asia", **options)
    assert not full.cached["scores"] and full.status == "optimal" and full.objective > cut.objective
