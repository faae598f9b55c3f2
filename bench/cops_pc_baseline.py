"""PC baseline with the cops learner's test counting, for the comparison of Figure 1.

Runs ``constraints.pc.pc`` (original, non-stable PC) on an independence oracle
``indep(x, y, S) -> bool`` through :class:`constraints.cops.oracle.CountingOracle`, so both
algorithms' distinct tests are counted the same way (symmetric key, per ``|S|``) and both obey a
time limit.  The PC search order itself is ``constraints.pc``'s, which differs from the authors'
PC in the order of pairs and of conditioning sets (see ``docs/cops.md``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from graphs.bitsets import to_mask
from constraints.citests import CIResult
from constraints.cops.oracle import BitsetIndependence, CountingOracle, IndepFn, OracleTimeout
from constraints.pc import pc


@dataclass
class PCRun:
    """Outcome of :func:`run_pc`: ``status`` ``"ok"`` or ``"timeout"`` (cpdag then None)."""

    status: str
    cpdag: np.ndarray | None
    tests_by_order: list[int]
    n_distinct_tests: int
    elapsed: float


def run_pc(indep: IndepFn | BitsetIndependence, n_vars: int, *, time_limit: float | None = None,
           check_every: int = 1000) -> PCRun:
    """Non-stable PC on ``indep`` with distinct tests counted by conditioning-set size."""
    oracle = CountingOracle(indep, time_limit=time_limit, check_every=check_every, n_vars=n_vars)

    def test(x: int, y: int, cond=()) -> CIResult:
        independent = oracle(int(x), int(y), to_mask(int(s) for s in cond))
        return CIResult(1.0 if independent else 0.0, 0.0, 0)

    start = time.monotonic()
    try:
        cpdag, _ = pc(test, n_vars, alpha=0.5, stable=False)
        status = "ok"
    except OracleTimeout:
        cpdag, status = None, "timeout"
    return PCRun(status, cpdag, oracle.tests_by_order, oracle.n_distinct, time.monotonic() - start)
