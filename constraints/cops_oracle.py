"""Memoised, counting independence oracle over bit-set conditioning sets.

Implements the counting convention of the cops-and-robbers reference implementation
(``cops-reference-conventions.md``, "Counting CI tests"): a query ``(a, X, b)`` is keyed by
``(min(a, b), max(a, b), X)``, repeated queries are free, and the reported figure is the
number of distinct keys per conditioning-set size ``|X|``.  One oracle serves a whole run.
The wall clock is checked every ``check_every`` calls (cached calls included); past the limit
:class:`OracleTimeout` is raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from graphs.bitsets import to_tuple

IndepFn = Callable[[int, int, tuple[int, ...]], bool]


class OracleTimeout(Exception):
    """Raised by :class:`CountingOracle` once its time limit has passed."""


class CountingOracle:
    """Memoised ``indep(a, b, X)`` on bit sets, counting distinct queries by ``|X|``.

    ``indep(x, y, S)`` is the underlying independence decision (True = independent) with ``S``
    a sorted tuple of node indices; it is called once per distinct key.
    """

    def __init__(
        self,
        indep: IndepFn,
        time_limit: float | None = None,
        check_every: int = 1000,
    ) -> None:
        if check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        self._indep = indep
        self._memo: dict[tuple[int, int, int], bool] = {}
        self._counts: list[int] = []
        self._calls = 0
        self._check_every = check_every
        self._deadline = None if time_limit is None else time.monotonic() + time_limit

    def __call__(self, a: int, b: int, cond: int) -> bool:
        """True iff ``a`` and ``b`` are independent given the node set ``cond`` (a bit set)."""
        self._calls += 1
        if self._deadline is not None and self._calls % self._check_every == 0:
            if time.monotonic() > self._deadline:
                raise OracleTimeout(f"time limit reached after {self._calls} oracle calls")
        key = (a, b, cond) if a < b else (b, a, cond)
        hit = self._memo.get(key)
        if hit is None:
            hit = bool(self._indep(key[0], key[1], to_tuple(cond)))
            self._memo[key] = hit
            size = cond.bit_count()
            while len(self._counts) <= size:
                self._counts.append(0)
            self._counts[size] += 1
        return hit

    @property
    def tests_by_order(self) -> list[int]:
        """Distinct queries per conditioning-set size (index = size)."""
        return list(self._counts)

    @property
    def n_distinct(self) -> int:
        """Number of distinct queries so far."""
        return len(self._memo)

    @property
    def n_calls(self) -> int:
        """Number of calls so far, cached ones included."""
        return self._calls
