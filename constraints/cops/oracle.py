"""Memoised, counting independence oracle over bit-set conditioning sets.

Implements the counting convention of the cops-and-robbers reference implementation
(``docs/references.md``, "What is counted"): a query ``(a, X, b)`` is keyed by
``(min(a, b), max(a, b), X)``, repeated queries are free, and the reported figure is the
number of distinct keys per conditioning-set size ``|X|``.  One oracle serves a whole run.
The wall clock is checked every ``check_every`` calls (cached calls included); past the limit,
or past a :class:`hybridbn.deadline.Deadline` the run was given, :class:`OracleTimeout` is raised
(a deadline that marks a caller's safe points may raise its own exception instead).

The underlying test is either a plain ``indep(x, y, S) -> bool`` with ``S`` a sorted tuple, or
a :class:`BitsetIndependence` (e.g. ``graphs.dsep.DSeparation``) that takes the conditioning set
as a bit set and can answer all queries of one node against a set of nodes in one pass (a
:class:`StoppingIndependence` also up to the first dependent node only, as a sequence of single
calls would).  The batch methods :meth:`CountingOracle.dependents` and
:meth:`CountingOracle.all_independent` count every pair exactly as the same sequence of single
calls would, so counts do not depend on which kind of test is used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from graphs.bitsets import to_tuple
from hybridbn.deadline import Deadline, passed
from hybridbn.errors import HybridBNError

IndepFn = Callable[[int, int, tuple[int, ...]], bool]

#: Node indices accepted when the caller does not give ``n_vars`` (cops' MAX_VARS).
DEFAULT_N_VARS = 1024


@runtime_checkable
class BitsetIndependence(Protocol):
    """An independence test on bit sets (True = independent), e.g. ``graphs.dsep.DSeparation``."""

    def separated_bits(self, x: int, y: int, cond: int) -> bool:
        """True iff nodes ``x`` and ``y`` are independent given the node set ``cond``."""

    def connected_bits(self, x: int, targets: int, cond: int) -> int:
        """The nodes of ``targets`` dependent on ``x`` given ``cond`` (all three disjoint)."""


@runtime_checkable
class StoppingIndependence(BitsetIndependence, Protocol):
    """A :class:`BitsetIndependence` that can stop at the first dependent node, for a test whose
    every answer leaves a trace (``constraints.cops.data_oracle``: the p-values are recorded)."""

    def first_connected(self, x: int, targets: int, cond: int) -> int:
        """The lowest node of ``targets`` dependent on ``x`` given ``cond`` as a one-bit set (0:
        none); the targets above it are not asked."""


class OracleTimeout(HybridBNError):
    """Raised by :class:`CountingOracle` once its time limit has passed."""


class _TupleIndependence:
    """:class:`BitsetIndependence` over a plain ``indep(x, y, S)``: one call per pair, ``x < y``."""

    def __init__(self, indep: IndepFn) -> None:
        self._indep = indep

    def separated_bits(self, x: int, y: int, cond: int) -> bool:
        return bool(self._indep(x, y, to_tuple(cond)))

    def connected_bits(self, x: int, targets: int, cond: int) -> int:
        indep, S = self._indep, to_tuple(cond)
        out = 0
        while targets:
            low = targets & -targets
            y = low.bit_length() - 1
            if not (indep(x, y, S) if x < y else indep(y, x, S)):
                out |= low
            targets ^= low
        return out


class CountingOracle:
    """Memoised ``indep(a, b, X)`` on bit sets, counting distinct queries by ``|X|``.

    ``indep`` is the underlying independence decision (True = independent): a
    :class:`BitsetIndependence`, or ``indep(x, y, S)`` with ``S`` a sorted tuple; either way it
    is asked once per distinct key, with ``x < y``.  Node indices must be below ``n_vars``
    (default ``DEFAULT_N_VARS``).

    The memo holds one row list per conditioning set X.  A query from node ``a`` (the node whose
    pairs a batch asks) is stored in ``rows[a]``: bit ``b`` when the pair ``{a, b}`` was asked,
    bit ``n_vars + b`` when the answer was "dependent"; ``rows[n_vars]`` holds the nodes with a
    non-empty row.  A pair is stored once, in the row of the node it was first asked from, so a
    lookup from ``a`` reads ``rows[a]`` with bit operations and checks ``rows[b]`` only for the
    ``b`` that were themselves asked from.
    """

    def __init__(
        self,
        indep: IndepFn | BitsetIndependence,
        time_limit: float | None = None,
        check_every: int = 1000,
        n_vars: int | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        if check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        if n_vars is not None and n_vars < 1:
            raise ValueError(f"n_vars must be >= 1, got {n_vars}")
        # a plain indep() is asked one pair at a time, so all_independent() must not batch it
        self._batch = isinstance(indep, BitsetIndependence)
        self._test = indep if self._batch else _TupleIndependence(indep)
        self._first = indep.first_connected if isinstance(indep, StoppingIndependence) else self._first_of_all
        self._n = DEFAULT_N_VARS if n_vars is None else int(n_vars)
        self._all = (1 << self._n) - 1
        self._memo: dict[int, list[int]] = {}
        self._counts: list[int] = []
        self._calls = 0
        self._check_every = check_every
        self._limit_at = None if time_limit is None else time.monotonic() + time_limit
        self._deadline = deadline
        self._timed = time_limit is not None or deadline is not None

    def _check_clock(self) -> None:
        """:class:`OracleTimeout` past the time limit or the deadline."""
        if (self._limit_at is not None and time.monotonic() > self._limit_at) or passed(self._deadline):
            raise OracleTimeout(f"time limit reached after {self._calls} oracle calls")

    def _tick(self, n_calls: int) -> None:
        """Count ``n_calls`` calls; check the clock if a multiple of ``check_every`` was reached.

        A batch is counted as a whole (``dependents`` before it runs, ``all_independent`` after),
        so a timeout may come up to one batch (at most n calls) away from where single calls
        would raise it; the counts of finished runs are unaffected.
        """
        before = self._calls
        self._calls = before + n_calls
        if self._timed and self._calls // self._check_every != before // self._check_every:
            self._check_clock()

    def _first_of_all(self, x: int, targets: int, cond: int) -> int:
        """:meth:`StoppingIndependence.first_connected` from ``connected_bits``, which answers
        the targets above the first dependent one too (they are neither stored nor counted)."""
        connected = self._test.connected_bits(x, targets, cond)
        return connected & -connected

    def _rows(self, x: int, ys: int, cond: int) -> list[int]:
        """The memo rows of ``cond`` (created empty); checks that ``x`` and ``ys`` are node indices."""
        if not 0 <= x < self._n or ys & ~self._all:
            raise ValueError(f"node index out of range 0..{self._n - 1}: {x}, {ys:#x}")
        rows = self._memo.get(cond)
        if rows is None:
            rows = self._memo[cond] = [0] * (self._n + 1)
        return rows

    def _lookup(self, rows: list[int], x: int, ys: int) -> tuple[int, int]:
        """(the pairs ``{x, y}``, ``y`` in ``ys``, not asked yet; those known to be dependent)."""
        n = self._n
        row = rows[x]
        new = ys & ~row
        dependent = ys & row >> n
        others = new & rows[n]  # asked from the other side?
        while others:
            low = others & -others
            theirs = rows[low.bit_length() - 1]
            if theirs >> x & 1:
                new ^= low
                if theirs >> (n + x) & 1:
                    dependent |= low
            others ^= low
        return new, dependent

    def _store(self, rows: list[int], x: int, new: int, connected: int, cond: int) -> None:
        """Record the answers for the new pairs ``{x, y}``, ``y`` in ``new`` (``connected`` = dependent)."""
        n = self._n
        rows[x] |= new | connected << n
        rows[n] |= 1 << x
        size = cond.bit_count()
        counts = self._counts
        while len(counts) <= size:
            counts.append(0)
        counts[size] += new.bit_count()

    def __call__(self, a: int, b: int, cond: int) -> bool:
        """True iff ``a`` and ``b`` are independent given the node set ``cond`` (a bit set)."""
        self._calls += 1
        if self._timed and self._calls % self._check_every == 0:
            self._check_clock()
        if not 0 <= b < self._n:
            raise ValueError(f"node index out of range 0..{self._n - 1}: {b}")
        rows = self._rows(a, 0, cond)
        new, dependent = self._lookup(rows, a, 1 << b)
        if not new:
            return not dependent
        independent = bool(self._test.separated_bits(min(a, b), max(a, b), cond))
        self._store(rows, a, 1 << b, 0 if independent else 1 << b, cond)
        return independent

    def dependents(self, x: int, ys: int, cond: int) -> int:
        """The nodes ``y`` of ``ys`` with ``x`` and ``y`` dependent given ``cond`` (bit sets).

        The same as calling ``self(y, x, cond)`` for every ``y`` of ``ys`` in increasing order
        (each is a call and, if new, a distinct test); the new ones are answered together by one
        ``connected_bits`` of the underlying test.  ``x`` must not be in ``ys`` or ``cond``.
        """
        if not ys:
            return 0
        self._tick(ys.bit_count())
        rows = self._rows(x, ys, cond)
        new, dependent = self._lookup(rows, x, ys)
        if new:
            connected = self._test.connected_bits(x, new, cond)
            self._store(rows, x, new, connected, cond)
            dependent |= connected
        return dependent

    def all_independent(self, x: int, ys: int, cond: int) -> bool:
        """``all(self(x, y, cond) for y in ys)`` in increasing order, stopping at the first dependent ``y``.

        Only the queries made are counted.  With a :class:`BitsetIndependence` the new ones are
        answered by one ``first_connected`` (:class:`StoppingIndependence`) or ``connected_bits``;
        a plain ``indep`` is asked one pair at a time.  ``x`` must not be in ``ys`` or ``cond``.
        """
        rows = self._rows(x, ys, cond)
        new, dependent = self._lookup(rows, x, ys)
        if new and not self._batch:
            rest = ys
            while rest:
                low = rest & -rest
                if not self(x, low.bit_length() - 1, cond):
                    return False
                rest ^= low
            return True
        if new:  # the answers of the new pairs below the first known dependent one
            asked = new & (dependent & -dependent) - 1 if dependent else new
            first = self._first(x, asked, cond)
            if first:  # stop at the first new dependent pair if it comes first
                asked &= (first << 1) - 1
            self._store(rows, x, asked, first, cond)
            dependent |= first
        # the queries made: every y up to the first dependent one (all of ys if none is)
        first = dependent & -dependent
        self._tick((ys & (first << 1) - 1 if first else ys).bit_count())
        return not dependent

    @property
    def tests_by_order(self) -> list[int]:
        """Distinct queries per conditioning-set size (index = size)."""
        return list(self._counts)

    @property
    def n_distinct(self) -> int:
        """Number of distinct queries so far."""
        return sum(self._counts)

    @property
    def n_calls(self) -> int:
        """Number of calls so far, cached ones included."""
        return self._calls
