"""Output of the restriction stage: which unordered pairs may be adjacent, and why.

A :class:`Restriction` holds, per unordered pair ``{u, v}`` (``u < v``): allowed or forbidden,
the p-value and conditioning set of the test that decided it, and that set's size (the
order).  Convention shared by every learner here (PC, PMMS, MMPC): the record is the test with
the *largest* p-value the algorithm ran on the pair (first one on ties).  For a forbidden pair
this is a separating set (p > alpha); for an allowed pair it is the weakest evidence of
dependence seen.  Pairs never tested get ``p_value = NaN``, ``sepset = []``, ``order = -1``.

``status`` is ``"ok"`` for a finished learner and ``"timeout"`` (the cops' word) for one a
deadline stopped: it then allows every pair it had not yet separated, a superset of the
skeleton it would have found.
"""

from __future__ import annotations

from hybridbn.errors import HybridBNError

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

RECORD_COLUMNS = ["u", "v", "allowed", "p_value", "sepset", "order"]
_ATTRS_KEY = "restriction"


class RestrictionError(HybridBNError, ValueError):
    """Invalid restriction data (shape, asymmetry, malformed frame)."""


@dataclass
class Restriction:
    """Skeleton restriction: symmetric ``allowed`` matrix, per-pair records and counts."""

    n_vars: int
    allowed: np.ndarray
    records: pd.DataFrame
    tests_by_order: dict[int, int] = field(default_factory=dict)
    removed_by_order: dict[int, int] = field(default_factory=dict)
    time_seconds: float = 0.0
    method: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"

    def __post_init__(self):
        A = np.asarray(self.allowed, dtype=bool)
        if A.shape != (self.n_vars, self.n_vars):
            raise RestrictionError(f"allowed must be ({self.n_vars}, {self.n_vars}), got {A.shape}")
        if not np.array_equal(A, A.T):
            raise RestrictionError("allowed must be symmetric (a skeleton restriction)")
        np.fill_diagonal(A, False)
        self.allowed = A

    @property
    def n_tests(self) -> int:
        return int(sum(self.tests_by_order.values()))

    @property
    def n_allowed(self) -> int:
        """Number of allowed unordered pairs (edges of the learned skeleton)."""
        return int(np.triu(self.allowed, 1).sum())

    def same_result(self, other: "Restriction") -> bool:
        """Same skeleton, test and removal counts, status and per-pair records (p-values and
        separating sets); time and parameters aside (e.g. two execution paths of one method)."""
        return (np.array_equal(self.allowed, other.allowed) and self.tests_by_order == other.tests_by_order
                and self.removed_by_order == other.removed_by_order and self.status == other.status
                and self.records.drop(columns="sepset").equals(other.records.drop(columns="sepset"))
                and list(self.records["sepset"]) == list(other.records["sepset"]))

    def skeleton(self) -> np.ndarray:
        """The learned skeleton as a symmetric boolean adjacency matrix."""
        return self.allowed.copy()

    def allowed_parents(self) -> np.ndarray:
        """``allowed[p, c]``: True iff ``p`` may be a parent of ``c`` (diagonal False)."""
        return self.allowed.copy()

    def forbidden_edges(self) -> list[tuple[int, int]]:
        """Forbidden unordered pairs ``(u, v)`` with ``u < v``, sorted."""
        u, v = np.nonzero(np.triu(~self.allowed, 1))
        return list(zip(u.tolist(), v.tolist()))

    def meta(self) -> dict[str, Any]:
        """JSON-serialisable summary (everything except the records)."""
        return {
            "n_vars": self.n_vars,
            "method": self.method,
            "params": self.params,
            "tests_by_order": {str(k): int(c) for k, c in sorted(self.tests_by_order.items())},
            "removed_by_order": {str(k): int(c) for k, c in sorted(self.removed_by_order.items())},
            "time_seconds": float(self.time_seconds),
            "n_tests": self.n_tests,
            "n_allowed": self.n_allowed,
            "status": self.status,
        }

    def to_frame(self) -> pd.DataFrame:
        """Records frame (one row per unordered pair) with :meth:`meta` as JSON in ``attrs``."""
        frame = self.records.copy()
        frame.attrs[_ATTRS_KEY] = json.dumps(self.meta())
        return frame

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, meta: dict[str, Any] | None = None) -> "Restriction":
        """Inverse of :meth:`to_frame`; ``meta`` defaults to the JSON stored in ``frame.attrs``."""
        missing = [c for c in RECORD_COLUMNS if c not in frame.columns]
        if missing:
            raise RestrictionError(f"restriction frame lacks columns {missing}")
        if meta is None:
            if _ATTRS_KEY not in frame.attrs:
                raise RestrictionError("restriction frame carries no metadata; pass meta=")
            meta = json.loads(frame.attrs[_ATTRS_KEY])
        n = int(meta["n_vars"])
        u = frame["u"].to_numpy(dtype=np.int64)
        v = frame["v"].to_numpy(dtype=np.int64)
        if len(frame) != n * (n - 1) // 2 or np.any(u >= v) or np.any(v >= n):
            raise RestrictionError(f"restriction frame must have one row per pair u < v of {n} variables")
        A = np.zeros((n, n), dtype=bool)
        ok = frame["allowed"].to_numpy(dtype=bool)
        A[u[ok], v[ok]] = True
        A |= A.T
        records = pd.DataFrame({
            "u": u, "v": v, "allowed": ok,
            "p_value": frame["p_value"].to_numpy(dtype=float),
            "sepset": [[int(s) for s in sep] for sep in frame["sepset"]],
            "order": frame["order"].to_numpy(dtype=np.int64),
        })
        return cls(
            n_vars=n, allowed=A, records=records,
            tests_by_order={int(k): c for k, c in meta.get("tests_by_order", {}).items()},
            removed_by_order={int(k): c for k, c in meta.get("removed_by_order", {}).items()},
            time_seconds=float(meta.get("time_seconds", 0.0)),
            method=meta.get("method", ""), params=dict(meta.get("params", {})), status=meta.get("status", "ok"),
        )


class PairLog:
    """Wraps a CI test and keeps, per unordered pair, the test with the largest p-value.

    Also counts the distinct tests the algorithm asked for, by order (independent of whether a
    shared memo already held them).  ``build`` turns the log into a :class:`Restriction`.
    ``keep`` (symmetric) marks the pairs that must stay adjacent (required by expert knowledge):
    the log answers p = 0 for them without testing, and the learners never pick them to test.
    ``distinct=True`` says that the caller asks each test at most once (it memoises them
    itself), so every call is counted and no key is kept (``seen`` is None).
    """

    def __init__(self, test, n_vars: int, keep: np.ndarray | None = None, distinct: bool = False):
        self.test = test
        self.n_vars = int(n_vars)
        self.keep = np.zeros((n_vars, n_vars), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
        self.best_p = np.full((n_vars, n_vars), np.nan)
        self.best_set: dict[tuple[int, int], tuple[int, ...]] = {}
        self.seen: set[tuple[int, int, frozenset]] | None = None if distinct else set()
        self.tests_by_order: dict[int, int] = {}

    def __call__(self, x: int, y: int, S=()) -> float:
        """p-value of ``x _||_ y | S``, logged against the pair (0, untested, for a ``keep`` pair)."""
        if self.keep[x, y]:
            return 0.0
        u, v = (x, y) if x < y else (y, x)
        S = tuple(S)
        new = self.seen is None
        if not new:
            key = (u, v, frozenset(S))
            new = key not in self.seen
            self.seen.add(key)
        if new:
            self.tests_by_order[len(S)] = self.tests_by_order.get(len(S), 0) + 1
        res = self.test(u, v, S)
        p = res.p_value
        best = self.best_p[u, v]
        if not p <= best:  # also true while best is NaN
            self.best_p[u, v] = p
            self.best_set[(u, v)] = tuple(sorted(S))
        return p

    def record_batch(self, us, vs, tests_by_order: dict[int, int], best_p, best_sets) -> None:
        """Log distinct tests asked after all those logged so far, never asked before:
        ``tests_by_order[k]`` of order ``k``, and per pair ``(us[i], vs[i])`` the first of them
        with the largest p-value, ``best_p[i]`` (NaN: none on that pair), with set ``best_sets[i]``."""
        for order, count in tests_by_order.items():
            if count:
                self.tests_by_order[order] = self.tests_by_order.get(order, 0) + int(count)
        best_p = np.asarray(best_p, dtype=float)
        better = np.flatnonzero(~np.isnan(best_p) & ~(best_p <= self.best_p[us, vs]))
        self.best_p[us[better], vs[better]] = best_p[better]
        if not self.best_set and isinstance(best_sets, np.ndarray) and best_sets.shape[1:] == (0,):
            return  # all sets empty, build's default (PC's level 0: tens of millions of pairs)
        for i in better.tolist():
            self.best_set[(int(us[i]), int(vs[i]))] = tuple(int(s) for s in best_sets[i])

    def build(self, allowed: np.ndarray, time_seconds: float, method: str,
              params: dict[str, Any], status: str = "ok") -> Restriction:
        """Restriction with this log's records for the final symmetric ``allowed`` matrix."""
        n = self.n_vars
        u, v = np.triu_indices(n, 1)
        sepsets = [list(self.best_set.get((a, b), ())) for a, b in zip(u.tolist(), v.tolist())]
        p = self.best_p[u, v]
        order = np.array([len(s) for s in sepsets], dtype=np.int64)
        order[np.isnan(p)] = -1
        ok = np.asarray(allowed, dtype=bool)[u, v]
        records = pd.DataFrame({"u": u.astype(np.int64), "v": v.astype(np.int64), "allowed": ok,
                                "p_value": p, "sepset": sepsets, "order": order})
        removed = {int(k): int(c) for k, c in zip(*np.unique(order[~ok], return_counts=True))}
        return Restriction(n_vars=n, allowed=np.asarray(allowed, dtype=bool).copy(), records=records,
                           tests_by_order=dict(sorted(self.tests_by_order.items())),
                           removed_by_order=removed, time_seconds=time_seconds, method=method,
                           params=params, status=status)
