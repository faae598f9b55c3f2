"""Progress records, trajectories and stop requests of the solvers: the ILP on SCIP (in process and
by real signals to a subprocess), the treewidth-bounded ILP, k-G / k-A* and GES / SGES."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers import assert_consistent_solution, random_table
from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from graphs.dag import is_acyclic
from graphs.treewidth import dag_treewidth
from hybridbn import interrupt
from hybridbn.progress import KEYS, ProgressError, Throttle
import ilp.solve
from ilp import solve_ilp
from ilp.event_progress import include_progress_eventhdlr
from ilp.treewidth.solve import solve_bounded_treewidth
from scores.candidates import build_score_table
from search.ges import forward_search, ges
from search.ges_ops import complete_pdag
from search.kastar import k_astar
from search.kgreedy import k_greedy
from search.oracle_score import OracleScore
from search.score_cache import LocalScoreCache
from search.sges import sges
from search.synthetic import chickering_meek_model

TOL = 1e-9


@pytest.fixture(autouse=True)
def no_stop_request_left():
    interrupt.clear()
    yield
    interrupt.clear()


@pytest.fixture(scope="module")
def alarm_table():
    """A table SCIP needs a few seconds for (a root cut loop and a small tree)."""
    data = forward_sample(load_network("alarm"), 5000, seed=0)
    return build_score_table(data.data, data.arities, score="bdeu", ess=1.0, palim=2)


@pytest.fixture(scope="module")
def alarm_solve(alarm_table):
    """The whole solve of ``alarm_table`` and the progress records it reported."""
    records = []
    return solve_ilp(alarm_table, time_limit=600, progress=records.append), records


def assert_monotone_valid(trajectory, optimum: float, rel: float = 1e-9) -> None:
    """Incumbents never worse, bounds never weaker, and the optimum between them throughout."""
    slack = rel * abs(optimum)
    times = [t for t, _, _ in trajectory]
    primals = [p for _, p, _ in trajectory if p is not None]
    duals = [d for _, _, d in trajectory if d is not None]
    assert times == sorted(times)
    assert all(a <= b for a, b in zip(primals, primals[1:]))
    assert all(a >= b for a, b in zip(duals, duals[1:]))
    assert all(p <= optimum + slack for p in primals) and all(d >= optimum - slack for d in duals)


def stop_at_first_bound(records):
    """A progress callback that keeps the records and asks for a stop once SCIP has a dual bound."""

    def report(record):
        records.append(record)
        if record["dual"] is not None:
            interrupt.request_stop(signal.SIGTERM)

    return report


# -- the ILP -----------------------------------------------------------------------------------
def test_ilp_reports_records_and_keeps_its_trajectory(alarm_solve):
    res, records = alarm_solve
    assert res.status == "optimal"
    assert len(records) >= 2 and all(set(KEYS) <= set(r) for r in records)
    assert all(r["stage"] == "solve" and r["solver"] == "ilp" and r["limit"] == 600 for r in records)
    elapsed = [r["elapsed"] for r in records]
    assert elapsed == sorted(elapsed)
    for r in records:
        if r["primal"] is not None and r["dual"] is not None:
            assert r["primal"] <= r["dual"] + TOL * abs(r["dual"])
            assert r["gap"] == pytest.approx((r["dual"] - r["primal"]) / abs(r["primal"]), abs=1e-12)
    last = records[-1]
    assert last["status"] == "optimal" and last["primal"] == res.objective and last["nodes"] == res.stats["nodes"]
    assert all("status" not in r for r in records[:-1])

    assert len(res.trajectory) >= 2
    assert_monotone_valid(res.trajectory, res.objective)
    t_end, primal, dual = res.trajectory[-1]
    assert t_end == pytest.approx(sum(res.times.values()))
    assert primal == pytest.approx(res.objective, rel=1e-12) and dual == pytest.approx(res.dual_bound, rel=1e-12)
    record = json.loads(json.dumps(res.to_dict()))
    assert record["trajectory"] == [[t, p, d] for t, p, d in res.trajectory]


def test_ilp_stops_with_best_dag_bound_and_gap_when_a_stop_is_requested(alarm_table, alarm_solve):
    records = []
    res = solve_ilp(alarm_table, progress=stop_at_first_bound(records))
    assert res.status == "userinterrupt" and interrupt.stop_requested() == signal.SIGTERM
    assert_consistent_solution(alarm_table, res)
    assert math.isfinite(res.dual_bound) and res.dual_bound >= res.objective
    assert res.gap == pytest.approx((res.dual_bound - res.objective) / abs(res.objective))
    assert records[-1]["status"] == "userinterrupt" and records[-1]["dual"] == res.dual_bound
    optimum = alarm_solve[0].objective  # the stopped solve's bounds are valid ones
    assert res.objective < optimum <= res.dual_bound + TOL * abs(res.dual_bound)
    assert_monotone_valid(res.trajectory, optimum)


def test_events_after_the_solve_reach_nobody(alarm_table, monkeypatch):
    """SCIP fires events when it frees a stopped solve's tree, whenever the model is garbage-collected
    (here, as it happened, in a later test's solve): they must neither report nor ask for a stop."""
    handlers = []

    def include(*args):
        handlers.append(include_progress_eventhdlr(*args))
        return handlers[-1]

    monkeypatch.setattr(ilp.solve, "include_progress_eventhdlr", include)
    records = []
    res = solve_ilp(alarm_table, progress=stop_at_first_bound(records))
    interrupt.clear()
    seen, points = len(records), list(res.trajectory)
    handlers[0].throttle = Throttle(0.0)  # any event would be reported
    handlers[0].eventexec(None)
    assert len(records) == seen and res.trajectory == points and interrupt.stop_requested() is None


def test_a_request_pending_before_the_solve_stops_it_at_once_with_the_warm_start(alarm_table):
    interrupt.request_stop()
    res = solve_ilp(alarm_table)
    assert res.status == "userinterrupt" and is_acyclic(res.dag)
    assert res.objective == pytest.approx(res.stats["warm_start_objective"])


def test_a_second_ctrl_c_inside_a_callback_quits_at_once(alarm_table):
    """KeyboardInterrupt raised inside a SCIP callback (the second signal's handler) leaves solve_ilp
    as KeyboardInterrupt, not as a SCIP error."""
    def report(record):
        raise KeyboardInterrupt("quit")

    with pytest.raises(KeyboardInterrupt, match="quit"):
        solve_ilp(alarm_table, progress=report)


def test_the_dp_route_reports_its_end_and_a_one_point_trajectory():
    table = random_table(8, 3, palim=2)
    records = []
    res = solve_ilp(table, progress=records.append)
    assert res.stats["method"] == "exact_dp"
    assert res.trajectory == [(pytest.approx(sum(res.times.values())), res.objective, res.objective)]
    assert [r["status"] for r in records] == ["optimal"] and records[0]["gap"] == 0.0


def test_bad_progress_is_refused_before_solving(alarm_table):
    with pytest.raises(ProgressError):
        solve_ilp(alarm_table, progress=True)


def test_bounded_treewidth_reports_both_phases_and_joins_their_trajectories():
    table = random_table(10, 0, palim=3)
    records = []
    res = solve_bounded_treewidth(table, 2, progress=records.append)
    assert res.status == "optimal" and res.stats["relaxation_optimal"] is False
    phases = [r["phase"] for r in records]
    assert phases == sorted(phases, key=["relaxation", "bounded"].index) and set(phases) == {"relaxation", "bounded"}
    assert all(r["primal"] is None for r in records if r["phase"] == "relaxation")  # not bounded DAGs
    elapsed = [r["elapsed"] for r in records]
    assert elapsed == sorted(elapsed)
    assert res.trajectory[0][1] is None  # the relaxation's bound comes first
    assert_monotone_valid(res.trajectory, res.objective)
    assert res.trajectory[-1][1] == pytest.approx(res.objective)


# -- real signals to a solve in a subprocess ---------------------------------------------------
CHILD = textwrap.dedent("""
    import sys
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample
    from hybridbn.interrupt import catching_signals, exit_code, stop_requested
    from ilp import solve_ilp
    from scores.candidates import build_score_table

    data = forward_sample(load_network("win95pts"), 5000, seed=0)  # a root cut loop of minutes
    table = build_score_table(data.data, data.arities, score="bdeu", ess=1.0, palim=2)
    report = lambda record: print("record", record["elapsed"], flush=True)
    if sys.argv[1] == "catching":
        with catching_signals() as stop:
            result = solve_ilp(table, progress=report)
        signum = stop.signum
    else:  # SCIP's own Ctrl-C handler
        result = solve_ilp(table, progress=report)
        signum = stop_requested()
    print("status", result.status, result.gap, signum, flush=True)
    sys.exit(exit_code(signum) if signum else 0)
""")


@pytest.mark.parametrize("mode, signum, code", [
    ("catching", signal.SIGTERM, 143), ("catching", signal.SIGINT, 130), ("scip", signal.SIGINT, 0),
])
def test_a_signal_stops_the_solve_cleanly(tmp_path, mode, signum, code):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    child = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=Path(__file__).resolve().parents[1])
    try:
        assert child.stdout.readline().startswith("record")  # the solve is under way
        child.send_signal(signum)
        out, err = child.communicate(timeout=300)
    finally:
        child.kill()
    status, gap, seen = out.splitlines()[-1].split()[1:]
    assert child.returncode == code, err
    assert status == "userinterrupt" and 0 < float(gap) < math.inf
    assert seen == (str(int(signum)) if mode == "catching" else "None")


# -- k-G and k-A* ------------------------------------------------------------------------------
@pytest.mark.parametrize("learner", [k_greedy, k_astar])
def test_bounded_search_reports_the_best_score_and_the_orders(learner):
    table = random_table(10, 2, palim=2)
    records = []
    res = learner(table, 2, max_orders=30, progress=records.append)
    assert all(set(KEYS) <= set(r) for r in records) and records[0]["orders"] == 1
    assert records[-1]["status"] == res.status == "max_orders"
    assert records[-1]["orders"] == res.n_orders == 30 and records[-1]["primal"] == pytest.approx(res.score)
    best = [r["primal"] for r in records]
    assert best == sorted(best) and all(r["dual"] is None for r in records)


@pytest.mark.parametrize("learner", [k_greedy, k_astar])
def test_bounded_search_stops_after_the_order_in_hand(learner):
    table = random_table(10, 2, palim=2)

    def stop(record):
        interrupt.request_stop(signal.SIGINT)

    res = learner(table, 2, time_limit=600, progress=stop)
    assert (res.status, res.n_orders) == ("userinterrupt", 1)
    assert dag_treewidth(res.dag).width <= 2 and table.score_of(res.parent_sets) == pytest.approx(res.score)


def test_k_astar_ends_its_order_early_when_a_stop_is_pending():
    """A* stops expanding at once and completes its best open state greedily: still a bounded DAG."""
    table = random_table(12, 4, palim=3)
    interrupt.request_stop()
    res = k_astar(table, 3, time_limit=600, max_expansions=None)
    assert (res.status, res.n_orders) == ("userinterrupt", 1) and dag_treewidth(res.dag).width <= 3


# -- GES and SGES ------------------------------------------------------------------------------
def oracle(n: int, seed: int) -> OracleScore:
    model = chickering_meek_model(n, seed)
    return OracleScore(model.parents, model.cpts)


def stopping_after(score, n_evaluations: int):
    """``score`` that asks for a stop at its ``n_evaluations``-th call."""
    calls = [0]

    def local_score(child, parents):
        calls[0] += 1
        if calls[0] == n_evaluations:
            interrupt.request_stop(signal.SIGTERM)
        return score(child, parents)

    return local_score


@pytest.mark.parametrize("search", [ges, lambda score, n, **kw: sges(score, n, ("parents", 2), **kw)])
def test_equivalence_search_reports_its_score_and_phases(search):
    score = oracle(8, 1)
    records = []
    res = search(score, 8, progress=records.append)
    assert res.status == "converged"
    assert records[0]["phase"] == "forward" and records[0]["primal"] == pytest.approx(
        sum(score(v, ()) for v in range(8)))
    assert records[-1]["status"] == "converged" and records[-1]["primal"] == res.score
    assert all(set(KEYS) <= set(r) for r in records)


@pytest.mark.parametrize("seed", range(3))
def test_a_ges_stopped_in_its_forward_phase_resumes_to_the_full_answer(seed):
    """Each step of GES is a deterministic function of the CPDAG, so GES restarted from where a stop
    left it ends where the uninterrupted search does."""
    score = oracle(8, seed)
    full = ges(score, 8)
    stopped = ges(stopping_after(score, 120), 8)
    assert stopped.status == "userinterrupt" and 0 < stopped.n_inserts < full.n_inserts and stopped.n_deletes == 0
    assert np.array_equal(complete_pdag(stopped.cpdag), stopped.cpdag) and stopped.score < full.score
    interrupt.clear()
    resumed = ges(score, 8, start=stopped.cpdag)
    assert resumed.status == "converged" and np.array_equal(resumed.cpdag, full.cpdag)


def test_a_ges_stopped_in_its_backward_phase_returns_what_the_forward_phase_found():
    score = oracle(8, 1)
    full = ges(score, 8)
    stopped = ges(stopping_after(score, full.n_evaluations_forward + 1), 8)
    forward, _ = forward_search(LocalScoreCache(score, 8), np.zeros((8, 8), dtype=bool))
    assert stopped.status == "userinterrupt" and (stopped.n_inserts, stopped.n_deletes) == (full.n_inserts, 0)
    assert full.n_deletes > 0 and np.array_equal(stopped.cpdag, forward)
