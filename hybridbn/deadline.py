"""A point in time after which a long computation stops at its next safe point (``--budget``).

The restriction learners (PC, PMMS, MMPC) and the score-table stage take an optional
:class:`Deadline` and check it between units of work (a batch of PC pairs, a target's candidate,
a child); what each returns when it has passed is described where it checks. The time is the
wall clock (seconds since the epoch), so a deadline pickled to a worker process or a Dask
worker on another host means the same moment there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Deadline:
    """The moment ``at`` on ``clock`` (``time.time`` unless a test injects another clock)."""

    at: float
    clock: Callable[[], float] = time.time

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.time) -> "Deadline":
        """The deadline ``seconds`` from now."""
        return cls(clock() + seconds, clock)

    def passed(self) -> bool:
        return self.clock() >= self.at

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - self.clock()


def passed(deadline: Deadline | None) -> bool:
    """True when there is a deadline and it has passed."""
    return deadline is not None and deadline.passed()
