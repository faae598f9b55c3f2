"""Conditional-independence tests on discrete data: G2 and Pearson X2, and a d-separation oracle.

Statistics (Su 2023, section 5.2; Spirtes, Glymour & Scheines 2000), summed over the strata
``z`` of the conditioning set ``S`` that occur in the data:

* G2 = 2 sum n_xyz log(n_xyz n_z / (n_xz n_yz))  (= 2 N MI, bnlearn's ``mi``);
* X2 = sum (n_xyz - e_xyz)^2 / e_xyz with e_xyz = n_xz n_yz / n_z  (no Yates correction).

p-values are ``chi2.sf(statistic, dof)`` (computed with ``scipy.special.chdtrc``).

Degrees of freedom (``docs/references.md``, degrees of freedom of G2 and X2):

* ``df_adjust="adf"`` (default): per observed stratum ``(a_x - 1)(a_y - 1)`` where ``a_x``/``a_y``
  count the rows/columns of that stratum's table with a positive margin (clamped at >= 1),
  summed over strata; strata with no rows contribute 0.  This is bnlearn's ``mi-adf``/``x2-adf``
  and causal-learn's convention; Tetrad differs only in also dropping sparse rows/columns
  (``minCountPerCell``) and in setting a stratum's 0 to 1.
* ``df_adjust="none"``: ``(r_x - 1)(r_y - 1) q_S`` with declared arities and ``q_S`` the
  product of the arities of ``S`` (bnlearn's ``mi``/``x2``).

Conventions (documented decisions):

* Minimum-sample rule: if ``n_rows < min_rows_per_df * dof`` the test is not trusted.  With
  ``insufficient="dependent"`` (default, as MMHC, Tsamardinos et al. 2006) it returns ``p = 0``,
  so a restriction stage never forbids an edge for lack of data; ``"independent"`` returns
  ``p = 1`` (pcalg's convention).  ``min_rows_per_df=0`` disables the rule.
* ``dof == 0``: if ``x`` or ``y`` takes a single value in the data there is nothing to test and
  ``p = 1``.  Otherwise a conditional test whose strata leave no row and column with two observed
  levels has no degrees of freedom, and its table of counts tells why
  (:func:`_explained_by_strata`).  If ``x`` takes one value in every stratum (``x`` is
  determined by ``S``, as with deterministic nodes), ``x _||_ y | S`` holds in the sample
  whatever the graph, and the edge ``x - y`` is redundant unless ``x`` and ``S`` are
  *information equivalent* for ``y`` (Lemeire, Meganck, Cartella & Liu 2012): unless
  ``y _||_ S | x`` holds too, so that the data cannot tell whether ``y`` is linked to ``x`` or to
  ``S``.  So the complement test ``y _||_ S | x`` (the same table with ``x`` as the strata) decides:
  rejected at ``alpha`` with degrees of freedom that the minimum-sample rule trusts, ``p = 1``;
  else undecided (a copy of ``S`` leaves the complement no degrees of freedom either).  A
  variable that also determines ``S`` on at least half of the rows (a copy there, such as a
  finding and the child whose "absent" state it pins) is undecided as well.  When ``y``
  is determined too, both complements must be rejected.  If neither variable is determined
  (strata of a row or two each), the test is undecided as well.  An undecided test follows
  ``insufficient`` (``p = 0`` by default: Tetrad likewise reports such a test as not
  independent); with ``min_rows_per_df=0``, ``p = 1`` as in bnlearn and causal-learn.

Every test object memoises results by ``(min(x, y), max(x, y), frozenset(S))`` and counts
``calls`` and distinct computed tests per conditioning-set size in ``tests_by_order``;
``unmemoised`` computes a test without either, for callers with a memo of their own.
"""

from __future__ import annotations

import ctypes
import logging
import math
from collections import Counter
from typing import Iterable, NamedTuple

import numpy as np
import scipy.special.cython_special as _cython_special
from numba import njit

from graphs.dsep import d_separated
from hybridbn.checks import check_significance
from hybridbn.errors import HybridBNError

logger = logging.getLogger(__name__)

STATISTICS = ("g2", "x2")
DF_ADJUSTS = ("adf", "none")
INSUFFICIENT = ("dependent", "independent")

# Dense stratum tables are used while q_S * r_x * r_y stays below this many cells (or 4 n_rows);
# beyond it only the observed strata are kept (np.unique on the stratum codes): :func:`_dense`.
_DENSE_CELLS = 1 << 16
# Tables of at most this many cells are counted in four interleaved copies (:func:`_count_table`).
_INTERLEAVED_CELLS = 4096
# Stratum codes are compressed before their mixed-radix product could overflow int64.
_MAX_CODE = 1 << 40


@njit(cache=True)
def _dense(cells, n_rows):
    """Whether a stratified table of ``cells`` cells (``q_S * r_x * r_y``) is counted over the
    stratum codes as they are; beyond ``max(_DENSE_CELLS, 4 n_rows)`` the observed strata are
    ranked first."""
    return cells <= max(_DENSE_CELLS, 4 * n_rows)


class CITestError(HybridBNError, ValueError):
    """Invalid arguments to a conditional-independence test."""


class CIResult(NamedTuple):
    """Outcome of one test: p-value, statistic and the degrees of freedom used."""

    p_value: float
    statistic: float
    dof: int


@njit(cache=True)
def _stratum_codes(cols, zs, zr):
    """Mixed-radix code of each row's configuration of the variables ``zs`` (radices ``zr``)."""
    n = cols.shape[1]
    key = np.zeros(n, dtype=np.int64)
    for j in range(zs.shape[0]):
        col = cols[zs[j]]
        r = zr[j]
        for i in range(n):
            key[i] = key[i] * r + col[i]
    return key


@njit(cache=True)
def _count_table(xcol, ycol, key, q, rx, ry):
    """The (q, rx, ry) table of counts.  Small tables are counted in four interleaved copies
    (rows i mod 4) that are summed at the end: consecutive rows then rarely increment the same
    memory cell, which otherwise serialises the loop (about 1.7x faster at 5000 rows)."""
    cells = q * rx * ry
    n = xcol.shape[0]
    if cells > _INTERLEAVED_CELLS:
        counts = np.zeros((q, rx, ry), dtype=np.int64)
        for i in range(n):
            counts[key[i], xcol[i], ycol[i]] += 1
        return counts
    flat = np.zeros(4 * cells, dtype=np.int32)
    n4 = n - n % 4
    for i in range(0, n4, 4):
        flat[(key[i] * rx + xcol[i]) * ry + ycol[i]] += 1
        flat[cells + (key[i + 1] * rx + xcol[i + 1]) * ry + ycol[i + 1]] += 1
        flat[2 * cells + (key[i + 2] * rx + xcol[i + 2]) * ry + ycol[i + 2]] += 1
        flat[3 * cells + (key[i + 3] * rx + xcol[i + 3]) * ry + ycol[i + 3]] += 1
    for i in range(n4, n):
        flat[(key[i] * rx + xcol[i]) * ry + ycol[i]] += 1
    counts = np.empty(cells, dtype=np.int64)
    for c in range(cells):
        counts[c] = flat[c] + flat[cells + c] + flat[2 * cells + c] + flat[3 * cells + c]
    return counts.reshape((q, rx, ry))


@njit(cache=True)
def _table_statistic(counts, pearson):
    """(statistic, adjusted dof) of a (q, rx, ry) table of counts, summed over its strata."""
    q, rx, ry = counts.shape
    nx = np.empty(rx, dtype=np.int64)
    ny = np.empty(ry, dtype=np.int64)
    stat = 0.0
    dof = 0
    for k in range(q):
        nx[:] = 0
        ny[:] = 0
        for a in range(rx):
            for b in range(ry):
                c = counts[k, a, b]
                nx[a] += c
                ny[b] += c
        nz = 0
        ax = 0
        for a in range(rx):
            nz += nx[a]
            if nx[a] > 0:
                ax += 1
        if nz == 0:
            continue
        ay = 0
        for b in range(ry):
            if ny[b] > 0:
                ay += 1
        dof += (ax - 1) * (ay - 1)
        for a in range(rx):
            if nx[a] == 0:
                continue
            for b in range(ry):
                if ny[b] == 0:
                    continue
                c = counts[k, a, b]
                if pearson:
                    e = nx[a] * ny[b] / nz
                    stat += (c - e) * (c - e) / e
                elif c > 0:
                    stat += c * np.log(c * nz / (nx[a] * ny[b]))
    if not pearson:
        stat *= 2.0
    return stat, dof


def _chdtrc_c():
    """scipy's ``chdtrc(dof, x)`` as a ctypes function of its C entry point (3rd arg: 0)."""
    capsule = _cython_special.__pyx_capi__["chdtrc"]
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))
    return ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_int)(address)


CHDTRC = _chdtrc_c()


@njit(cache=True)
def _determined(counts, axis):
    """Whether the variable on ``axis`` (1: ``x``, 2: ``y``) of a ``(q, r_x, r_y)`` table of counts
    takes one value in every observed stratum."""
    for k in range(counts.shape[0]):
        margin = counts[k].sum(axis=2 - axis)  # over the other variable
        if np.count_nonzero(margin) > 1:
            return False
    return True


@njit(cache=True)
def _mostly_copy(counts, axis):
    """Whether the variable on ``axis`` (1: ``x``, 2: ``y``) of a ``(q, r_x, r_y)`` table, one
    that ``S`` determines, determines ``S`` in turn on at least half of the rows: its values seen
    in a single stratum hold that many (a copy of ``S`` on those rows)."""
    copied, rows = 0, 0
    for i in range(counts.shape[axis]):
        strata, seen = 0, 0
        for k in range(counts.shape[0]):
            here = counts[k, i, :].sum() if axis == 1 else counts[k, :, i].sum()
            if here > 0:
                strata += 1
                seen += here
        rows += seen
        if strata == 1:
            copied += seen
    return 2 * copied >= rows


@njit(cache=True)
def _strata_tell_more(table, n, min_rows_per_df, zero_dof_alpha, pearson, chdtrc):
    """Whether a ``(r_d, r_o, q)`` table (strata: the values of a variable determined by ``S``;
    rows: the other variable; columns: the strata of ``S``) rejects that the other variable is
    independent of ``S`` given the determined one, with degrees of freedom that the
    minimum-sample rule trusts and at level ``zero_dof_alpha``."""
    stat, dof = _table_statistic(table, pearson)
    return dof > 0 and n >= min_rows_per_df * dof and chdtrc(float(dof), max(stat, 0.0), 0) <= zero_dof_alpha


@njit(cache=True)
def _explained_by_strata(counts, n, min_rows_per_df, zero_dof_alpha, pearson, chdtrc):
    """Whether a ``(q, r_x, r_y)`` table with no degrees of freedom shows ``x _||_ y | S``: a
    variable determined by ``S`` that is not information equivalent to ``S`` for the other one
    (module docstring; Lemeire et al. 2012)."""
    x_fixed, y_fixed = _determined(counts, 1), _determined(counts, 2)
    if not (x_fixed or y_fixed):  # strata too sparse to show either variable varying
        return False
    if (x_fixed and _mostly_copy(counts, 1)) or (y_fixed and _mostly_copy(counts, 2)):
        return False  # on most rows the data cannot tell the variable from S
    if x_fixed and not _strata_tell_more(np.transpose(counts, (1, 2, 0)), n, min_rows_per_df, zero_dof_alpha,
                                         pearson, chdtrc):
        return False
    return not y_fixed or _strata_tell_more(np.transpose(counts, (2, 1, 0)), n, min_rows_per_df, zero_dof_alpha,
                                            pearson, chdtrc)


@njit(cache=True)
def _p_value(counts, S, arities, n, both_vary, adf, min_rows_per_df, dependent, zero_dof_alpha, pearson,
             chdtrc):
    """(p, statistic, dof) of the ``(q, r_x, r_y)`` table of counts of ``x _||_ y | S`` under the
    test's conventions (module docstring); the one place the statistic, the zero-dof and the
    minimum-sample rules meet, for :class:`CITest` and the batch kernels."""
    stat, dof_adf = _table_statistic(counts, pearson)
    if adf:
        dof = float(dof_adf)
    else:
        dof = float((counts.shape[1] - 1) * (counts.shape[2] - 1))
        for j in range(S.shape[0]):
            dof *= arities[S[j]]
    stat = max(stat, 0.0)
    if dof == 0.0 and (S.shape[0] == 0 or min_rows_per_df == 0.0 or not both_vary
                       or _explained_by_strata(counts, n, min_rows_per_df, zero_dof_alpha, pearson, chdtrc)):
        return 1.0, stat, dof
    if dof == 0.0 or n < min_rows_per_df * dof:
        return (0.0 if dependent else 1.0), stat, dof
    return chdtrc(dof, stat, 0), stat, dof


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise CITestError(f"unknown {name} {value!r}; expected one of {', '.join(choices)}")


class _MemoTest:
    """Shared memo and counters; subclasses implement ``_compute(x, y, S)`` with S sorted."""

    def __init__(self, n_vars: int):
        self.n_vars = int(n_vars)
        self.calls = 0
        self.tests_by_order: Counter[int] = Counter()
        self._memo: dict[tuple[int, int, frozenset], CIResult] = {}

    def __call__(self, x: int, y: int, S: Iterable[int] = ()) -> CIResult:
        self.calls += 1
        x, y = int(x), int(y)
        if x > y:
            x, y = y, x
        fs = frozenset(S)
        key = (x, y, fs)
        res = self._memo.get(key)
        if res is None:
            res = self._memo[key] = self._checked(x, y, fs)
            self.tests_by_order[len(fs)] += 1
        return res

    def unmemoised(self, x: int, y: int, S: Iterable[int] = ()) -> CIResult:
        """The test without the memo and the counters, for a caller that memoises the tests
        itself (the cops' ``CountingOracle`` asks each distinct test once): nothing is kept."""
        x, y = int(x), int(y)
        return self._checked(min(x, y), max(x, y), frozenset(S))

    def _checked(self, x: int, y: int, S: frozenset) -> CIResult:
        self._validate(x, y, S)
        return self._compute(x, y, sorted(S))

    def _validate(self, x: int, y: int, S: frozenset) -> None:
        n = self.n_vars
        if x == y or not (0 <= x < n and 0 <= y < n):
            raise CITestError(f"need two distinct variables in 0..{n - 1}, got {x} and {y}")
        if x in S or y in S or any(not (0 <= int(s) < n) for s in S):
            raise CITestError(f"conditioning set {sorted(S)} must be variables in 0..{n - 1} other than {x}, {y}")

    @property
    def n_tests(self) -> int:
        """Number of distinct tests computed so far."""
        return sum(self.tests_by_order.values())

    def _compute(self, x: int, y: int, S: list[int]) -> CIResult:  # pragma: no cover - abstract
        raise NotImplementedError


class CITest(_MemoTest):
    """G2 / X2 test of ``x _||_ y | S`` on a discrete data matrix (see module docstring).

    ``alpha`` is the level of the complement tests that decide a test with no degrees of freedom
    left (the restriction's own significance level)."""

    def __init__(self, data, arities, statistic: str = "g2", df_adjust: str = "adf",
                 min_rows_per_df: float = 5, insufficient: str = "dependent", alpha: float = 0.05):
        _check_choice("statistic", statistic, STATISTICS)
        _check_choice("df_adjust", df_adjust, DF_ADJUSTS)
        _check_choice("insufficient", insufficient, INSUFFICIENT)
        data = np.asarray(data)
        arities = np.asarray(arities, dtype=np.int64)
        if data.ndim != 2 or arities.shape != (data.shape[1],):
            raise CITestError(f"data must be (n_rows, n_vars) with one arity per column; got data "
                              f"{data.shape} and arities {arities.shape}")
        if not np.issubdtype(data.dtype, np.integer):
            raise CITestError(f"data must hold integer state codes, got dtype {data.dtype}")
        if np.any(arities < 1):
            raise CITestError("arities must be >= 1")
        if data.size and (data.min() < 0 or np.any(data.max(axis=0) >= arities)):
            bad = np.flatnonzero(data.max(axis=0) >= arities)
            raise CITestError(f"state codes out of range 0..arity-1 in columns {bad.tolist()[:10]}")
        if min_rows_per_df < 0:
            raise CITestError(f"min_rows_per_df must be >= 0, got {min_rows_per_df}")
        self.alpha = check_significance(alpha, CITestError)
        super().__init__(data.shape[1])
        self.statistic = statistic
        self.df_adjust = df_adjust
        self.min_rows_per_df = float(min_rows_per_df)
        self.insufficient = insufficient
        self.arities = arities
        self.n_rows = data.shape[0]
        self._cols = np.ascontiguousarray(data.T)
        self._zero_key = np.zeros(self.n_rows, dtype=np.int64)
        self._narrow: np.ndarray | None = None
        # variables with at least two observed values (a constant one is independent of all)
        self.varies = (data.min(axis=0) != data.max(axis=0)) if data.size else np.zeros(data.shape[1], bool)

    def _compact_cols(self) -> np.ndarray:
        """The (n_vars, n_rows) state codes in the narrowest unsigned type (for batch kernels)."""
        if self._narrow is None:
            top = int(self.arities.max()) if self.arities.size else 1
            dtype = np.uint8 if top <= 1 << 8 else np.uint16 if top <= 1 << 16 else np.int64
            self._narrow = np.ascontiguousarray(self._cols, dtype=dtype)
        return self._narrow

    def _strata(self, S: list[int]) -> tuple[np.ndarray, int]:
        """Stratum index of every row and the number of strata (dense or observed-only)."""
        if not S:
            return self._zero_key, 1
        q = 1
        for s in S:
            q *= int(self.arities[s])
        if q <= _MAX_CODE:
            zs = np.asarray(S, dtype=np.int64)
            key = _stratum_codes(self._cols, zs, self.arities[zs])
        else:  # compress every few columns so the mixed-radix code never overflows
            key, q = self._zero_key, 1
            for s in S:
                r = int(self.arities[s])
                if q * r > _MAX_CODE:
                    _, key = np.unique(key, return_inverse=True)
                    q = int(key.max()) + 1
                key = key * r + self._cols[s]
                q *= r
        return key, q

    def _compute(self, x: int, y: int, S: list[int]) -> CIResult:
        rx, ry = int(self.arities[x]), int(self.arities[y])
        key, q = self._strata(S)
        q_declared = math.prod(int(self.arities[s]) for s in S)  # exact: _strata may compress q
        if not _dense(q * rx * ry, self.n_rows):
            _, key = np.unique(key, return_inverse=True)
            q = int(key.max()) + 1 if key.size else 1
        counts = _count_table(self._cols[x], self._cols[y], key, q, rx, ry)
        p, stat, kernel_dof = _p_value(counts, np.asarray(S, dtype=np.int64), self.arities, self.n_rows,
                                       bool(self.varies[x] and self.varies[y]), self.df_adjust == "adf",
                                       self.min_rows_per_df, self.insufficient == "dependent", self.alpha,
                                       self.statistic == "x2", CHDTRC)
        dof = int(kernel_dof) if self.df_adjust == "adf" else (rx - 1) * (ry - 1) * q_declared  # exact int
        return CIResult(float(p), float(stat), dof)


class DSeparationOracle(_MemoTest):
    """Exact CI oracle for a DAG: p = 1.0 if ``x`` and ``y`` are d-separated by ``S``, else 0.0.

    The statistic is 0.0 (separated) or inf (connected) and dof is 0; same memo and counters
    as :class:`CITest`.
    """

    def __init__(self, dag_adjacency):
        A = np.asarray(dag_adjacency, dtype=bool)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise CITestError(f"DAG adjacency must be square, got shape {A.shape}")
        super().__init__(A.shape[0])
        self.dag = A

    def _compute(self, x: int, y: int, S: list[int]) -> CIResult:
        if d_separated(self.dag, x, y, S):
            return CIResult(1.0, 0.0, 0)
        return CIResult(0.0, float("inf"), 0)
