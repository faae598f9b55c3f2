"""The cops' independence oracle on data: each batch of tests in one compiled, threaded call.

A :class:`~constraints.cops.oracle.CountingOracle` asks its test in batches of one node against
a set of nodes under one conditioning set: EXTRACTCOMPONENT's scans (``dependents``, every
target) and the pruning of a cop (``all_independent``, up to the first dependent target;
Talvitie & Parviainen, Algorithm 1 and Lemma 2).  :class:`DataIndependence` answers a batch
of a :class:`~constraints.citests.CITest` with one :func:`constraints.citest_batch.evaluate_given`
(the strata of the conditioning set coded once for the batch): the same statistic code, so the
same p-values as the test asked one pair ``(min, max)`` at a time, without the interpreter per
test.  Independent iff ``p > alpha``.  The p-values go to a
:class:`~constraints.restriction.PairLog` if one is given: only those of the tests asked, in
the order a sequence of single calls asks them.
"""

from __future__ import annotations

import numpy as np

from constraints.citest_batch import TestSettings, evaluate_given
from constraints.citests import CITest
from constraints.restriction import PairLog
from graphs.bitsets import bits, to_mask


class DataIndependence:
    """A :class:`~constraints.cops.oracle.StoppingIndependence` over a CI test on data.

    ``log`` (optional) records every test asked; its ``keep`` pairs are answered "dependent"
    without a test, as :meth:`PairLog.__call__` does.
    """

    def __init__(self, test: CITest, alpha: float, log: PairLog | None = None) -> None:
        self.n = test.n_vars
        self._settings = TestSettings(test)
        self._alpha = float(alpha)
        self._log = log
        self._keep = [0] * self.n if log is None else [to_mask(np.flatnonzero(row).tolist()) for row in log.keep]

    def separated_bits(self, x: int, y: int, cond: int) -> bool:
        """True iff ``x`` and ``y`` are independent given the node set ``cond``."""
        return not self.connected_bits(x, 1 << y, cond)

    def connected_bits(self, x: int, targets: int, cond: int) -> int:
        """The nodes of ``targets`` dependent on ``x`` given ``cond``: one :func:`evaluate_given`."""
        keep = targets & self._keep[x]
        return keep | self._dependent(x, targets ^ keep, cond, stop=False)

    def first_connected(self, x: int, targets: int, cond: int) -> int:
        """The lowest node of ``targets`` dependent on ``x`` given ``cond`` (a one-bit set, 0:
        none); the tests of the targets up to it only, by one :func:`evaluate_given` that stops."""
        keep = targets & self._keep[x]
        first_kept = keep & -keep
        if first_kept:
            targets &= first_kept - 1
        return self._dependent(x, targets, cond, stop=True) or first_kept

    def _dependent(self, x: int, targets: int, cond: int, stop: bool) -> int:
        """The dependent nodes among the tests of ``x`` against ``targets`` (in increasing order,
        stopping at the first dependent one if ``stop``), each test logged."""
        if not targets:
            return 0
        ys = np.fromiter(bits(targets), dtype=np.int64, count=targets.bit_count())
        S = np.fromiter(bits(cond), dtype=np.int64, count=cond.bit_count())
        p = evaluate_given(self._settings, x, ys, S, self._alpha if stop else None)[0]
        ys = ys[:len(p)]
        if self._log is not None:
            self._log.record_batch(np.minimum(ys, x), np.maximum(ys, x), {len(S): len(p)}, p,
                                   [S] * len(p))
        return to_mask(ys[~(p > self._alpha)].tolist())
