"""Stop requests in the stages that have no result to give when stopped (data, restriction,
scores, evaluation).

Inside :func:`hybridbn.interrupt.catching_signals` (``run.py``, :func:`hybridbn.learn`) SIGINT and
SIGTERM only record a stop request, which the solvers poll: a solve stops with its best DAG,
bound and gap (:class:`pipeline.core.cache.StageInterrupted`). The other stages end at their
next safe point with :class:`StageStopped`: on entering a stage (:func:`check_stop`) and wherever
the restriction learners and the score table check their deadline (:func:`stage_deadline`: between
batches of PC pairs, PMMS / MMPC candidates, children to score, and while the score kernels run:
:func:`scores.candidates.build_score_table` stops them through their control arrays first).
Raising from the signal handler itself is not safe: a handler also runs while a numba kernel
returns, which then fails with a ``SystemError``. Nothing of the stopped stage is stored, the stages finished before stay
cached, and the cache and output folders are written through temporary files that an exception
removes (:mod:`pipeline.core.atomic`), so no torn file is left.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from hybridbn.deadline import Deadline
from hybridbn.interrupt import catching, stop_requested


class StageStopped(KeyboardInterrupt):
    """A stop request (signal ``signum``) ended the run in ``stage``, where no solver could return a
    result; the stages finished before are cached. ``during`` names what it interrupted (default
    ``"the <stage> stage"``)."""

    def __init__(self, stage: str, signum: int, during: str | None = None):
        self.stage = stage
        self.signum = int(signum)
        self.during = f"the {stage} stage" if during is None else during
        super().__init__(f"interrupted during {self.during}: finished stages are cached; rerun to resume")

    def __reduce__(self):  # crosses process boundaries (pool workers) like any exception
        return type(self), (self.stage, self.signum, self.during)


def check_stop(stage: str) -> None:
    """A safe point of ``stage``: :class:`StageStopped` if a stop request is pending."""
    signum = stop_requested()
    if signum is not None:
        raise StageStopped(stage, signum)


@dataclass(frozen=True)
class StoppingDeadline(Deadline):
    """A :class:`~hybridbn.deadline.Deadline` (``at`` may be infinite: no time limit) whose every
    check is also a safe point of ``stage`` (:func:`check_stop`)."""

    stage: str = "stage"

    def passed(self) -> bool:
        check_stop(self.stage)
        return super().passed()


def stage_deadline(stage: str, limit: float | None) -> Deadline | None:
    """The deadline of ``stage`` starting now with time limit ``limit`` (None: none): a
    :class:`StoppingDeadline` inside ``catching_signals``, else a plain one or None."""
    if catching():
        return StoppingDeadline(time.time() + (math.inf if limit is None else limit), stage=stage)
    return None if limit is None else Deadline.after(limit)
