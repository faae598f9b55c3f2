"""hybridbn.progress (records, their display, trajectories) and hybridbn.interrupt (stop requests)."""

from __future__ import annotations

import io
import math
import signal
import sys
import threading
import time

import numpy as np
import pytest

from hybridbn import interrupt
from hybridbn.errors import HybridBNError
from hybridbn.progress import (KEYS, LOG_INTERVAL, TERMINAL_INTERVAL, TICK, ProgressDisplay, ProgressError,
                               TaskCount, Throttle, Trajectory, aged, as_callback, check_callback, format_record,
                               progress_record, relative_gap, reporting)


@pytest.fixture(autouse=True)
def no_stop_request_left():
    yield
    interrupt.clear()


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def ilp_record(elapsed=62.0, **changes):
    values = dict(limit=120.0, primal=-139126.54, dual=-138729.79, nodes=4)
    values.update(changes)
    return progress_record("solve", "ilp", elapsed, **values)


# -- records ---------------------------------------------------------------------------------
def test_record_has_every_key_and_the_gap_of_its_bounds():
    record = ilp_record()
    assert tuple(record) == KEYS
    assert record["gap"] == pytest.approx((-138729.79 + 139126.54) / 139126.54)
    assert progress_record("solve", "k-G", 1.0, primal=-5.0, orders=3)["orders"] == 3


@pytest.mark.parametrize("primal, dual, gap", [
    (-100.0, -90.0, 0.1), (-100.0, -100.0, 0.0), (100.0, 110.0, 0.1),
    (-100.0, -100.5, 0.0),  # a bound a rounding error below the incumbent: no negative gap
    (None, -90.0, None), (-100.0, None, None), (-100.0, math.inf, None),
])
def test_relative_gap(primal, dual, gap):
    assert relative_gap(primal, dual) == (pytest.approx(gap) if gap is not None else None)


def test_format_record_reads_like_the_issue_asks():
    assert format_record(ilp_record()) == (
        "solve  ilp  62.0/120 s  incumbent -139126.54  bound -138729.79  gap 0.29 %  nodes 4")


def test_format_record_leaves_out_what_is_missing_and_appends_extra_keys():
    record = progress_record("solve", "ges", 3.04, primal=-1234.5, phase="forward", steps=12, evaluations=3456)
    assert format_record(record) == "solve  ges  3.0 s  incumbent -1234.50  phase forward  steps 12  evaluations 3456"
    start = ilp_record(0.25, primal=None, dual=None, nodes=0, status="optimal")
    assert format_record(start) == "solve  ilp  0.2/120 s  nodes 0  status optimal"


# -- throttling and display ------------------------------------------------------------------
def test_throttle_passes_the_first_call_then_one_per_interval():
    clock = FakeClock()
    throttle = Throttle(1.0, clock)
    passed = []
    for now in (0.0, 0.5, 0.99, 1.0, 1.5, 2.2, 2.3, 5.0):
        clock.now = now
        passed.append(throttle.ready())
    assert passed == [True, False, False, True, False, True, False, True]


def test_log_display_writes_the_first_record_then_one_line_per_interval_and_the_last_on_close():
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=False, clock=clock, tick=None)
    for t in (0.0, 5.0, 14.0, 15.5, 20.0, 31.0, 33.0):
        clock.now = t
        display(ilp_record(t))
    assert stream.getvalue().splitlines() == [format_record(ilp_record(t)) for t in (0.0, 15.5, 31.0)]
    display.close()
    assert stream.getvalue().splitlines()[-1] == format_record(ilp_record(33.0))
    display.close()  # nothing more to show
    assert len(stream.getvalue().splitlines()) == 4
    assert LOG_INTERVAL == 15.0


def test_log_display_close_repeats_nothing_already_shown():
    clock, stream = FakeClock(), io.StringIO()
    with ProgressDisplay(stream, interactive=False, clock=clock, tick=None) as display:
        display(ilp_record(0.0))
        clock.now = 20.0
        display(ilp_record(20.0))
    assert stream.getvalue().splitlines() == [format_record(ilp_record(0.0)), format_record(ilp_record(20.0))]


def test_terminal_display_rewrites_one_line_and_ends_it_on_close(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=True, clock=clock, tick=None)
    long = ilp_record(1.0)
    short = progress_record("solve", "ilp", 1.6, nodes=7)
    clock.now = 1.0
    display(long)
    clock.now = 1.2  # within TERMINAL_INTERVAL: held back
    display(ilp_record(1.2))
    clock.now = 1.6
    display(short)
    text = stream.getvalue()
    assert "\n" not in text and text.count("\r") == 2
    first, second = text.split("\r")[1:]
    assert first == format_record(long)
    assert second == format_record(short).ljust(len(first))  # the longer line's tail is blanked
    display.close()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1
    assert TERMINAL_INTERVAL <= 0.5


def test_terminal_line_is_cut_to_the_terminal_width(monkeypatch):
    """A wrapped line could not be rewritten by a carriage return."""
    monkeypatch.setenv("COLUMNS", "40")
    stream = io.StringIO()
    ProgressDisplay(stream, interactive=True, tick=None)(ilp_record())
    assert stream.getvalue() == "\r" + format_record(ilp_record())[:39]


def test_terminal_display_refreshes_often_enough_for_records_arriving_each_second():
    """Solvers report about once a second; every such record reaches the screen (>= every 2 s)."""
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=True, clock=clock, tick=None)
    for t in np.arange(0.0, 10.0, 1.0):
        clock.now = float(t)
        display(ilp_record(float(t)))
    assert stream.getvalue().count("\r") == 10


def test_log_display_shows_a_new_task_and_a_last_record_at_once():
    """A batch log gets the first line of each stage or solver and each one's final state at once,
    not 15 s later."""
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=False, clock=clock, tick=None)
    shown = [ilp_record(0.0), ilp_record(2.0, status="timelimit"),
             progress_record("pictures", "network.png", 0.0, variables=223),
             progress_record("pictures", "network.png", 17.0, variables=223, status="drawn"),
             progress_record("bootstrap", "ilp", 0.0, networks="0/3")]
    held = progress_record("bootstrap", "ilp", 1.0, networks="1/3")
    for t, record in zip((0.0, 1.0, 2.0, 3.0, 4.0, 5.0), [*shown, held]):
        clock.now = t
        display(record)
    assert stream.getvalue().splitlines() == [format_record(r) for r in shown]
    display.close()
    assert stream.getvalue().splitlines()[-1] == format_record(held)


def test_terminal_display_ends_a_task_line_at_its_last_record(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=True, clock=clock, tick=None)
    display(ilp_record(0.0))
    clock.now = 0.1  # within TERMINAL_INTERVAL, but the last record of the solve
    display(ilp_record(0.1, status="optimal"))
    display(progress_record("bootstrap", "ilp", 0.0, networks="0/2"))
    lines = stream.getvalue().split("\n")
    assert lines[0].split("\r")[-1] == format_record(ilp_record(0.1, status="optimal"))
    assert lines[1].strip("\r").startswith("bootstrap  ilp  0.0 s  networks 0/2")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_aged_record_moves_its_clock_and_budget_on():
    record = {**ilp_record(10.0), "budget_left": 3.0}
    assert aged(record, 2.5) == {**record, "elapsed": 12.5, "budget_left": 0.5}
    assert aged(record, 9.0)["budget_left"] == 0.0
    assert aged(ilp_record(10.0), 1.0) == {**ilp_record(10.0), "elapsed": 11.0}  # no budget: none added


def test_terminal_refresh_moves_the_line_on_without_records(monkeypatch):
    """One long LP: no record for 5 s; the status line still advances at each wake-up of the
    ticker that comes TERMINAL_INTERVAL or more after the last line."""
    monkeypatch.setenv("COLUMNS", "200")
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=True, clock=clock, tick=None)
    display({**ilp_record(2.0), "budget_left": 50.0})
    for now in (0.3, 0.5, 0.9, 1.0, 1.5, 3.5, 5.0):
        clock.now = now
        display.refresh()
    lines = stream.getvalue().split("\r")[1:]
    assert [line.rstrip() for line in lines] == [
        format_record({**ilp_record(2.0 + t), "budget_left": 50.0 - t}) for t in (0.0, 0.5, 1.0, 1.5, 3.5, 5.0)]
    assert TICK + TERMINAL_INTERVAL <= 2.0  # the most seconds between two lines of a running task


def test_log_refresh_writes_a_plain_line_every_interval_without_records():
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=False, clock=clock, tick=None)
    display(ilp_record(0.0))
    clock.now = 10.0
    display(ilp_record(10.0))  # held back
    for now in (14.9, 15.0, 20.0, 29.9, 30.0):
        clock.now = now
        display.refresh()
    assert stream.getvalue().splitlines() == [format_record(ilp_record(t)) for t in (0.0, 15.0, 30.0)]
    display.close()  # the held record was refreshed: nothing more to show
    assert len(stream.getvalue().splitlines()) == 3


def test_refresh_shows_nothing_of_a_finished_task_or_a_closed_display():
    clock, stream = FakeClock(), io.StringIO()
    display = ProgressDisplay(stream, interactive=False, clock=clock, tick=None)
    display(ilp_record(0.0, status="optimal"))
    clock.now = 100.0
    display.refresh()
    display(progress_record("bootstrap", "ilp", 0.0, networks="0/3"))
    display.close()
    clock.now = 200.0
    display.refresh()
    assert stream.getvalue().splitlines() == [format_record(ilp_record(0.0, status="optimal")),
                                              format_record(progress_record("bootstrap", "ilp", 0.0,
                                                                            networks="0/3"))]


def wait_for(condition, seconds: float = 30.0) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass (a generous bound for a loaded machine)."""
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.005)
    return True


@pytest.mark.parametrize("interactive, step", [(True, TICK), (False, LOG_INTERVAL)])
def test_the_ticker_thread_refreshes_while_records_are_rare_and_stops_at_close(monkeypatch, interactive, step):
    monkeypatch.setenv("COLUMNS", "200")
    clock = FakeClock()
    stream = Terminal() if interactive else io.StringIO()
    display = ProgressDisplay(stream, clock=clock, tick=0.001)
    assert display.interactive is interactive
    shown = lambda: stream.getvalue().count("\r" if interactive else "\n")  # noqa: E731
    display(ilp_record(0.0))
    assert wait_for(lambda: any(t.name == "progress-ticker" for t in threading.enumerate()))
    for k in (1, 2, 3):  # the clock jumps a refresh interval on; no record comes
        clock.now = k * step
        assert wait_for(lambda: shown() == k + 1)
        assert format_record(ilp_record(k * step)) in stream.getvalue()
    display.close()
    text = stream.getvalue()
    clock.now = 10 * step
    assert wait_for(lambda: not any(t.name == "progress-ticker" for t in threading.enumerate()))
    assert stream.getvalue() == text  # nothing written after close


def test_task_count_reports_done_over_total_and_ends_with_its_status():
    seen = []
    count = TaskCount(seen.append, "bootstrap", "ilp", 3, "networks", done=1)
    count.done()
    count.done()
    assert [r["networks"] for r in seen] == ["1/3", "2/3", "3/3"]
    assert [r.get("status") for r in seen] == [None, None, "done"]
    assert all(r["stage"] == "bootstrap" and r["solver"] == "ilp" for r in seen)
    TaskCount(None, "selection", "ilp", 2, "networks").done()  # no one to report to: nothing happens
    stopped = []
    count = TaskCount(stopped.append, "bootstrap", "ilp", 5, "networks")
    count.done()
    count.end("interrupted")  # a stop request: the count so far, as the task's last record
    assert [(r["networks"], r.get("status")) for r in stopped] == [("0/5", None), ("1/5", None),
                                                                   ("1/5", "interrupted")]


def test_display_follows_isatty_by_default():
    assert ProgressDisplay(Terminal()).interactive and not ProgressDisplay(io.StringIO()).interactive


# -- progress arguments ----------------------------------------------------------------------
def test_as_callback_and_check_callback():
    def collect(record):
        pass

    assert isinstance(as_callback(True), ProgressDisplay)
    assert as_callback(False) is None and as_callback(None) is None and as_callback(collect) is collect
    assert check_callback(None) is None and check_callback(False) is None and check_callback(collect) is collect
    for bad in (3, "yes"):
        with pytest.raises(ProgressError, match="progress must be"):
            as_callback(bad)
    with pytest.raises(ProgressError, match="callable"):
        check_callback(True)  # a display is made, and closed, by reporting()
    assert issubclass(ProgressError, HybridBNError) and issubclass(ProgressError, TypeError)


def test_reporting_closes_the_display_it_made(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with reporting(True) as report:
        report(ilp_record(0.0))
        report(ilp_record(0.1))  # held back by the display until it is closed
    assert stream.getvalue().splitlines() == [format_record(ilp_record(0.0)), format_record(ilp_record(0.1))]
    seen = []
    with reporting(seen.append) as report:
        report(ilp_record(0.0))
    assert seen == [ilp_record(0.0)]
    with reporting(False) as report:
        assert report is None


# -- trajectories ----------------------------------------------------------------------------
def test_trajectory_keeps_every_incumbent_and_spaces_the_bound_changes():
    traj = Trajectory(min_spacing=1.0, rel_spacing=0.0)
    traj.add(0.0, None, None)
    traj.add(0.1, -100.0, None)   # first incumbent
    traj.add(0.2, -100.0, -50.0)  # bound only, too soon: held back
    traj.add(0.3, -100.0, -60.0)  # bound only, too soon: held back (replaces the last)
    traj.add(1.2, -100.0, -70.0)  # bound only, 1.1 s after the last point
    traj.add(1.3, -90.0, -70.0)   # new incumbent: always a point
    traj.add(1.4, -90.0, -71.0)   # held back ...
    traj.add(9.0, -90.0, -72.0)   # ... and it lasted 7.6 s: kept before this point
    points = traj.finish(9.5, -85.0, -85.0)
    assert points == [(0.0, None, None), (0.1, -100.0, None), (1.2, -100.0, -70.0), (1.3, -90.0, -70.0),
                      (1.4, -90.0, -71.0), (9.0, -90.0, -72.0), (9.5, -85.0, -85.0)]


def test_trajectory_never_worsens_a_bound_it_has_seen():
    traj = Trajectory(min_spacing=0.0)
    traj.add(0.0, -10.0, -1.0)
    traj.add(1.0, -12.0, None)  # a worse incumbent and a lost bound are not news
    traj.add(2.0, None, 5.0)
    assert traj.points == [(0.0, -10.0, -1.0)]
    assert traj.finish(3.0, -11.0, -0.5) == [(0.0, -10.0, -1.0), (3.0, -10.0, -1.0)]


@pytest.mark.parametrize("seed", range(5))
def test_random_trajectories_are_monotone_and_bounded_in_size(seed):
    """Thousands of bound changes over an hour become a few hundred points; every incumbent stays."""
    rng = np.random.default_rng(seed)
    times = np.sort(rng.uniform(0, 3600, 5000))
    dual = -1000 + 900 * np.exp(-times / 600) + rng.uniform(0, 1, times.size)
    primal = np.maximum.accumulate(np.where(rng.random(times.size) < 0.005, -1200 + times / 10, -np.inf))
    traj = Trajectory()
    for t, p, d in zip(times, primal, dual):
        traj.add(float(t), None if np.isinf(p) else float(p), float(d))
    points = traj.finish(3600.0, float(primal[-1]), float(dual.min()))
    ps = [p for _, p, _ in points if p is not None]
    ds = [d for _, _, d in points]
    assert all(a <= b for a, b in zip(ps, ps[1:])) and all(a >= b for a, b in zip(ds, ds[1:]))
    assert set(np.unique(primal[np.isfinite(primal)]).tolist()) <= set(ps)
    assert [t for t, _, _ in points] == sorted(t for t, _, _ in points)
    assert len(points) < 1000 and points[-1] == (3600.0, float(primal[-1]), float(dual.min()))


# -- stop requests ---------------------------------------------------------------------------
def test_stop_request_keeps_the_first_signal_until_cleared():
    assert interrupt.stop_requested() is None
    interrupt.request_stop(signal.SIGTERM)
    interrupt.request_stop(signal.SIGINT)
    assert interrupt.stop_requested() == signal.SIGTERM
    interrupt.clear()
    assert interrupt.stop_requested() is None


def test_exit_codes_follow_the_shell():
    assert interrupt.exit_code(signal.SIGINT) == 130 and interrupt.exit_code(signal.SIGTERM) == 143


def test_catching_signals_records_a_signal_and_restores_the_handlers():
    def previous(signum, frame):
        raise AssertionError("the previous handler must not run inside the block")

    before_int = signal.signal(signal.SIGINT, previous)
    try:
        interrupt.request_stop(signal.SIGINT)  # an old request: forgotten on entry
        with interrupt.catching_signals() as stop:
            assert interrupt.catching() and stop.signum is None
            signal.raise_signal(signal.SIGTERM)  # recorded, nothing raised
            assert interrupt.stop_requested() == signal.SIGTERM and stop.signum == signal.SIGTERM
            with pytest.raises(KeyboardInterrupt):  # a second signal: quit at once
                signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is previous
        assert not interrupt.catching() and interrupt.stop_requested() is None
        assert stop.signum == signal.SIGTERM  # still readable after the block
    finally:
        signal.signal(signal.SIGINT, before_int)


def test_nested_blocks_keep_the_request_until_the_outermost_ends():
    with interrupt.catching_signals([signal.SIGTERM]) as outer:
        with interrupt.catching_signals([signal.SIGTERM]) as inner:
            signal.raise_signal(signal.SIGTERM)
        assert inner.signum == signal.SIGTERM and interrupt.stop_requested() == signal.SIGTERM
        assert interrupt.catching()
    assert outer.signum == signal.SIGTERM and interrupt.stop_requested() is None


def test_outside_the_main_thread_nothing_is_installed():
    seen = {}

    def work():
        with interrupt.catching_signals() as stop:
            seen["catching"] = interrupt.catching()
            interrupt.request_stop(signal.SIGTERM)
            seen["signum"] = stop.signum

    handler = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == {"catching": False, "signum": signal.SIGTERM}
    assert signal.getsignal(signal.SIGTERM) is handler
