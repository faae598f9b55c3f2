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
the Python API into such a callable (a :class:`ProgressDisplay`). :class:`TaskCount` reports
``done/total`` of a set of tasks (the networks of a bootstrap or a selection) the same way.

A :class:`Trajectory` keeps the ``(elapsed, primal, dual)`` points of a solve, bounded in number,
for ``result.json`` and the convergence plot.
"""

from __future__ import annotations

import math
import shutil
import sys
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
    its line. :meth:`close` shows the last record if it was held back and ends the status line;
    the display is also a context manager that closes itself.
    """

    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None, *,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = sys.stderr if stream is None else stream
        self.interactive = self.stream.isatty() if interactive is None else bool(interactive)
        self._interval = TERMINAL_INTERVAL if self.interactive else LOG_INTERVAL
        self._clock = clock
        self._throttle = Throttle(self._interval, clock)
        self._task: tuple[Any, Any] | None = None  # (stage, solver) of the records shown
        self._held: Record | None = None  # the last record, not yet shown
        self._width = 0  # length of the status line on the terminal

    def __call__(self, record: Record) -> None:
        task = (record.get("stage"), record.get("solver"))
        if task != self._task:
            self.close()
            self._task, self._throttle = task, Throttle(self._interval, self._clock)
        last = record.get("status") is not None
        if self._throttle.ready() or last:
            self._show(record)
        else:
            self._held = record
        if last:
            self.close()

    def _show(self, record: Record) -> None:
        self._held = None
        line = format_record(record)
        if self.interactive:
            line = line[: shutil.get_terminal_size().columns - 1]
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._held is not None:
            self._show(self._held)
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> "ProgressDisplay":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
    last (with ``status`` ``"done"``) when all are done. ``report`` ``None``: nothing."""

    def __init__(self, report: Callback | None, stage: str, solver: str, total: int, unit: str, done: int = 0):
        self.report, self.stage, self.solver, self.total, self.unit = report, stage, solver, total, unit
        self.count = done
        self.start = time.perf_counter()
        self._send()

    def _send(self) -> None:
        if self.report is not None:
            finished = {"status": "done"} if self.count >= self.total else {}
            self.report(progress_record(self.stage, self.solver, time.perf_counter() - self.start,
                                        **{self.unit: f"{self.count}/{self.total}"}, **finished))

    def done(self) -> None:
        """One more task finished."""
        self.count += 1
        self._send()


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
