"""A grid's progress: jobs done / running / failed / left, the time elapsed and an estimate of the
time left, as progress records (:mod:`hybridbn.progress`) that a run's display shows (a status
line on a terminal, plain lines in a batch log); and the task ids a Slurm array resubmits.

The estimate of the time left is the time elapsed per job ended so far times the jobs left (the
jobs that run at once, ``-j N`` or a Dask cluster's threads, are in the rate). Jobs read from the
cache count as done and take no time, so a resumed grid's estimate rests on the jobs run now only.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from hybridbn.progress import Callback, Record, progress_record

STAGE = "grid"
"""The ``stage`` of a grid's progress records."""


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 20 s``, ``2 h 05 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def array_ranges(ids: Sequence[int]) -> str:
    """Task ids as ``sbatch --array`` takes them: ``3,7-9,12`` (sorted, runs of consecutive ids
    as ``first-last``)."""
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


class GridProgress:
    """Counts a grid's jobs as they end and reports a record to ``report`` (``None``: nothing) at
    the start, at each job's end and at :meth:`finish` (the last, with its ``status``).

    ``total`` jobs of which ``cached`` were found in the cache (done already), ``slots`` of the
    others running at once."""

    def __init__(self, report: Callback | None, name: str, total: int, cached: int, slots: int,
                 clock: Callable[[], float] = time.perf_counter):
        self.report, self.name, self.total, self.slots = report, name, total, max(1, slots)
        self.done, self.failed, self.ran = cached, 0, 0
        self._clock = clock
        self._start = clock()
        self._send()

    @property
    def left(self) -> int:
        """Jobs neither done nor failed."""
        return self.total - self.done - self.failed

    @property
    def running(self) -> int:
        return min(self.slots, self.left)

    def estimate(self) -> float | None:
        """Seconds left at the mean time per job run so far; None before the first ends."""
        if not self.ran:
            return None
        return (self._clock() - self._start) * self.left / self.ran

    def record(self, status: str | None = None) -> Record:
        eta = self.estimate()
        extra = {"done": f"{self.done}/{self.total}", "running": 0 if status else self.running,
                 "failed": self.failed, "left": self.left}
        if eta is not None and self.left and status is None:
            extra["time_left"] = f"~{duration(eta)}"
        if status is not None:
            extra["status"] = status
        return progress_record(STAGE, self.name, self._clock() - self._start, **extra)

    def _send(self, status: str | None = None) -> None:
        if self.report is not None:
            self.report(self.record(status))

    def job_ended(self, failed: bool) -> None:
        """One job ran to its end (``failed``: with an error)."""
        self.ran += 1
        if failed:
            self.failed += 1
        else:
            self.done += 1
        self._send()

    def finish(self, status: str) -> None:
        """The last record (``done``, ``interrupted``)."""
        self._send(status)
