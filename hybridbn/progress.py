"""Progress of the long solves: the record a solver reports, its display, and its trajectory.

A **progress record** is a plain ``dict`` (built by :func:`progress_record`) with the keys

``stage``
    the pipeline stage, e.g. ``"solve"``;
``solver``
    e.g. ``"ilp"``, ``"k-G"``, ``"ges"``;
``elapsed``
    seconds since the solver started;
``limit``
    the solver's time limit in seconds, or ``None``;
``primal``
    the incumbent's objective (the best score so far, maximised), or ``None`` before the first;
``dual``
    the proven upper bound on the optimum, or ``None`` (heuristics have none);
``gap``
    the relative gap ``(dual - primal) / |primal|`` (:func:`relative_gap`), or ``None``;
``nodes``
    branch-and-bound nodes so far, or ``None``;

plus any solver-specific keys (``phase``, ``orders``, ``inserts``, ``status`` ...). Solvers take
``progress``: ``None``, or a callable that receives these records about once a second
(:data:`REPORT_INTERVAL`) and a last one, with the ``status``, when they finish;
:func:`as_callback` and :func:`reporting` turn the ``True`` / ``False`` of the command line and
the Python API into such a callable (a :class:`ProgressDisplay`, which also refreshes its line
between records while a task runs). :class:`TaskCount` reports
``done/total`` of a set of tasks (the networks of a bootstrap or a selection) the same way.

A :class:`Trajectory` keeps the ``(elapsed, primal, dual)`` points of a solve, bounded in number,
for ``result.json`` and the convergence plot.
"""

from __future__ import annotations

import math
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from hybridbn.errors import HybridBNError

Record = dict[str, Any]
Callback = Callable[[Record], None]

KEYS = ("stage", "solver", "elapsed", "limit", "primal", "dual", "gap", "nodes")
"""The keys every progress record has, in display order."""

TERMINAL_INTERVAL = 0.5
"""Least seconds between two refreshes of the status line on a terminal."""

LOG_INTERVAL = 15.0
"""Seconds between two plain lines when the output is not a terminal (a batch job's log)."""

REPORT_INTERVAL = 1.0
"""Least seconds between two records a solver reports (the display then refreshes about this often)."""

TICK = 1.0
"""Seconds between two wake-ups of a :class:`ProgressDisplay`'s ticker: on a terminal the status line
of a running task then stands still at most ``TICK + TERMINAL_INTERVAL`` seconds, records or not."""


class ProgressError(HybridBNError, TypeError):
    """A ``progress`` argument of the wrong kind (see :func:`as_callback` and :func:`check_callback`)."""


def relative_gap(primal: float | None, dual: float | None) -> float | None:
    """``(dual - primal) / |primal|`` (at least 0), the gap of :class:`ilp.result.ILPResult`;
    ``None`` unless both are finite."""
    if primal is None or dual is None or not (math.isfinite(primal) and math.isfinite(dual)):
        return None
    return max(0.0, (dual - primal) / max(abs(primal), 1e-12))


def progress_record(stage: str, solver: str, elapsed: float, *, limit: float | None = None,
                    primal: float | None = None, dual: float | None = None, nodes: int | None = None,
                    **extra: Any) -> Record:
    """A progress record (see the module docstring); ``gap`` is computed from ``primal`` and ``dual``."""
    return {"stage": stage, "solver": solver, "elapsed": float(elapsed), "limit": limit, "primal": primal,
            "dual": dual, "gap": relative_gap(primal, dual), "nodes": nodes, **extra}


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_record(record: Record) -> str:
    """One line, e.g. ``solve  ilp  62.0/120 s  incumbent -139126.54  bound -138729.79  gap 0.29 %
    nodes 4``; missing values are left out, extra keys follow as ``key value``."""
    limit = record.get("limit")
    clock = f"{record['elapsed']:.1f}" + (f"/{limit:g}" if limit is not None else "") + " s"
    parts = [record["stage"], record["solver"], clock]
    for key, label, fmt in (("primal", "incumbent", "{:.2f}"), ("dual", "bound", "{:.2f}"),
                            ("gap", "gap", "{:.2%}"), ("nodes", "nodes", "{:d}")):
        value = record.get(key)
        if value is not None and not (isinstance(value, float) and math.isinf(value)):
            parts.append(f"{label} {fmt.format(value).replace('%', ' %')}")
    parts += [f"{key} {_number(value)}" for key, value in record.items() if key not in KEYS and value is not None]
    return "  ".join(parts)


class Throttle:
    """``ready()`` is True on its first call and then at most once every ``interval`` seconds of ``clock``."""

    def __init__(self, interval: float, clock: Callable[[], float] = time.monotonic):
        self.interval = interval
        self.clock = clock
        self._last: float | None = None

    def ready(self) -> bool:
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True


class ProgressDisplay:
    """Shows progress records on ``stream`` (default ``sys.stderr``); a progress callback.

    On a terminal (``interactive``, default ``stream.isatty()``) one status line is rewritten in
    place (carriage return) at most every :data:`TERMINAL_INTERVAL` seconds; elsewhere a plain
    line is written for the first record and then at most every :data:`LOG_INTERVAL` seconds.
    A task (the records' ``stage`` and ``solver``) starts with its first record shown at once, the
    last one's line ended; a record with a ``status`` (a task's last) is shown at once and ends
    its task.

    Solvers report about once a second, but may go quiet for longer (one long LP of the exact
    ILP, a large drawing). While a task runs, a daemon thread (the *ticker*) wakes every ``tick``
    seconds (:data:`TICK`; ``None``: no ticker) and calls :meth:`refresh`, which shows the task's
    last record aged to the present when no line was written for the interval: the status line
    moves on at least every 1.5 s, and a batch log gets its line every 15 s, records or not.
    :meth:`close` shows the last record if it was held back, ends the status line and stops the
    ticker (it writes nothing after); the display is also a context manager that closes itself.
    """

    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None, *,
                 clock: Callable[[], float] = time.monotonic, tick: float | None = TICK):
        self.stream = sys.stderr if stream is None else stream
        self.interactive = self.stream.isatty() if interactive is None else bool(interactive)
        self.tick = tick
        self._interval = TERMINAL_INTERVAL if self.interactive else LOG_INTERVAL
        self._clock = clock
        self._lock = threading.RLock()  # the caller's thread and the ticker write in turn
        self._task: tuple[Any, Any] | None = None  # (stage, solver) of the records shown
        self._latest: Record | None = None  # the running task's last record ...
        self._latest_at = 0.0  # ... and when it came (clock)
        self._shown_at: float | None = None  # when the task's last line was written (clock)
        self._held: Record | None = None  # the last record, not yet shown
        self._width = 0  # length of the status line on the terminal
        self._ticker: threading.Event | None = None  # set: the running ticker stops

    def __call__(self, record: Record) -> None:
        with self._lock:
            task = (record.get("stage"), record.get("solver"))
            if task != self._task:
                self._end_line()
                self._task, self._shown_at = task, None
            now = self._clock()
            last = record.get("status") is not None
            self._latest, self._latest_at = record, now
            if last or self._shown_at is None or now - self._shown_at >= self._interval:
                self._show(record, now)
            else:
                self._held = record
            if last:
                self.close()
            else:
                self._start_ticker()

    def refresh(self) -> None:
        """Show the running task's last record with the seconds since it came added to its
        ``elapsed`` (and taken from its ``budget_left``) when no line was written for
        :data:`TERMINAL_INTERVAL` seconds on a terminal, :data:`LOG_INTERVAL` seconds elsewhere."""
        with self._lock:
            now = self._clock()
            if self._latest is None or self._shown_at is None or now - self._shown_at < self._interval:
                return
            self._show(aged(self._latest, now - self._latest_at), now)

    def _show(self, record: Record, now: float) -> None:
        self._held, self._shown_at = None, now
        line = format_record(record)
        if self.interactive:
            line = line[: shutil.get_terminal_size().columns - 1]
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _end_line(self) -> None:
        """Show the held-back record, if any, and end the status line."""
        if self._held is not None:
            self._show(self._held, self._clock())
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def _start_ticker(self) -> None:
        if self.tick is None or self._ticker is not None:
            return
        self._ticker = threading.Event()
        threading.Thread(target=self._tick, args=(self._ticker,), name="progress-ticker", daemon=True).start()

    def _tick(self, stopped: threading.Event) -> None:
        while not stopped.wait(self.tick):
            with self._lock:
                if stopped.is_set():  # closed while this thread waited for the lock
                    return
                self.refresh()

    def close(self) -> None:
        """End the running task's line (see the class docstring); the next record starts again."""
        with self._lock:
            self._end_line()
            self._latest = None
            if self._ticker is not None:
                self._ticker.set()
                self._ticker = None

    def __enter__(self) -> "ProgressDisplay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def aged(record: Record, seconds: float) -> Record:
    """``record`` as it would read ``seconds`` later: ``elapsed`` that much more, ``budget_left``
    (if any) that much less, down to 0."""
    older = {**record, "elapsed": record["elapsed"] + seconds}
    if record.get("budget_left") is not None:
        older["budget_left"] = round(max(record["budget_left"] - seconds, 0.0), 1)
    return older


def check_callback(progress: Callback | None) -> Callback | None:
    """A solver's ``progress`` argument: a callable or ``None`` (``False`` reads as ``None``);
    :class:`ProgressError` otherwise (``True`` included: :func:`reporting` makes the display)."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    raise ProgressError(f"progress must be None or a callable taking a record, got {progress!r}")


def as_callback(progress: bool | Callback | None) -> Callback | None:
    """The callback for a ``progress`` argument: ``True`` a new :class:`ProgressDisplay` on
    stderr, ``False`` / ``None`` none, a callable itself; :class:`ProgressError` otherwise."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressDisplay()
    if callable(progress):
        return progress
    raise ProgressError(f"progress must be True, False, None or a callable taking a record, got {progress!r}")


@contextmanager
def reporting(progress: bool | Callback | None) -> Iterator[Callback | None]:
    """:func:`as_callback` for the ``with`` block, closing the display it made (if any) at its end."""
    callback = as_callback(progress)
    try:
        yield callback
    finally:
        if progress is True:
            callback.close()


class TaskCount:
    """Reports ``done/total`` tasks (e.g. the networks of a bootstrap) to ``report`` as records of
    ``stage`` and ``solver`` under the key ``unit``: one when made, one per :meth:`done` call, the
    last (with ``status`` ``"done"``) when all are done, or at :meth:`end` (e.g. ``"interrupted"``).
    ``report`` ``None``: nothing."""

    def __init__(self, report: Callback | None, stage: str, solver: str, total: int, unit: str, done: int = 0):
        self.report, self.stage, self.solver, self.total, self.unit = report, stage, solver, total, unit
        self.count = done
        self.start = time.perf_counter()
        self._send()

    def _send(self, status: str | None = None) -> None:
        if self.report is not None:
            status = "done" if status is None and self.count >= self.total else status
            self.report(progress_record(self.stage, self.solver, time.perf_counter() - self.start,
                                        **{self.unit: f"{self.count}/{self.total}"},
                                        **({} if status is None else {"status": status})))

    def done(self) -> None:
        """One more task finished."""
        self.count += 1
        self._send()

    def end(self, status: str) -> None:
        """The tasks end unfinished: a last record with ``status``."""
        self._send(status)


class Trajectory:
    """The ``(elapsed, primal, dual)`` points of a solve (maximisation), bounded in number.

    :meth:`add` takes the state at each event; primal never decreases and dual never increases
    along the points (a better value once seen stays proven). A new incumbent is always a point;
    a change of the bound alone becomes one when ``max(min_spacing, rel_spacing * elapsed)``
    seconds have passed since the last point (about ``100 ln T`` points over ``T`` seconds of
    bound changes), and a held-back state that then lasted that long is kept before it.
    :meth:`finish` adds the final state. ``None`` stands for no incumbent / no bound yet.
    """

    def __init__(self, min_spacing: float = 1.0, rel_spacing: float = 0.01):
        self.min_spacing = min_spacing
        self.rel_spacing = rel_spacing
        self.points: list[tuple[float, float | None, float | None]] = []
        self._held: tuple[float, float | None, float | None] | None = None

    def _monotone(self, primal: float | None, dual: float | None) -> tuple[float | None, float | None]:
        if self.points or self._held:
            _, last_primal, last_dual = self._held or self.points[-1]
            if last_primal is not None:
                primal = last_primal if primal is None else max(primal, last_primal)
            if last_dual is not None:
                dual = last_dual if dual is None else min(dual, last_dual)
        return primal, dual

    def _spacing(self, t: float) -> float:
        return max(self.min_spacing, self.rel_spacing * t)

    def add(self, t: float, primal: float | None, dual: float | None) -> None:
        primal, dual = self._monotone(primal, dual)
        state = self._held or (self.points[-1] if self.points else None)
        if state is not None and state[1:] == (primal, dual):
            return
        last = self.points[-1] if self.points else None
        if last is None or primal != last[1] or t - last[0] >= self._spacing(t):
            if self._held is not None and t - self._held[0] >= self._spacing(t):
                self.points.append(self._held)
            self.points.append((t, primal, dual))
            self._held = None
        else:
            self._held = (t, primal, dual)

    def finish(self, t: float, primal: float | None, dual: float | None) -> list[tuple[float, float | None, float | None]]:
        """Add the final state (always a point) and return the points."""
        primal, dual = self._monotone(primal, dual)
        if self._held is not None and t - self._held[0] >= self._spacing(t):
            self.points.append(self._held)
        self._held = None
        self.points.append((t, primal, dual))
        return self.points
