"""Continuous columns cut into intervals, as bnlearn's ``discretize`` (Scutari 2010).

Three methods, each giving the interior cut points ``c_1 < ... < c_{k-1}`` of a column; a value
``x`` falls in interval ``i`` when ``c_i < x <= c_{i+1}`` (right-closed, the lowest closed on both
sides, R's ``cut(..., include.lowest=TRUE)``):

* ``quantile``: the empirical quantiles at ``1/k, ..., (k-1)/k`` (R's type 7, numpy's ``linear``);
  equal quantiles are merged and no interval is left empty, so a column with many ties may get
  fewer intervals (bnlearn refuses such a column).
* ``interval``: ``k`` intervals of equal width over ``[min, max]``.
* ``hartemink``: Hartemink's information-preserving discretisation (Hartemink 2001, thesis ch. 3;
  Scutari & Denis 2014, Algorithm 6.1): start from ``ibreaks`` quantile intervals per column, then
  sweep over the columns in turn, each sweep merging, in each column that still has more than
  its ``k`` intervals, the pair of adjacent intervals whose merge keeps the largest sum of mutual
  information with every other column (the others at their current intervals, discrete columns
  as they are), until every column has its ``k``. Ties go to the lowest pair.

A column's plan comes from the ``--discretize`` spec (:func:`parse_spec`): one method for every
continuous-like column (``quantile``), per column (``x=interval:4,y=hartemink``), or both (an
entry without a column applies to the columns not named); ``:N`` sets the number of intervals,
``--breaks`` the default (3, as bnlearn). Missing cells stay missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayesnet.dataset import DataError, continuous_like, numeric_values

QUANTILE, INTERVAL, HARTEMINK = "quantile", "interval", "hartemink"
METHODS = (QUANTILE, INTERVAL, HARTEMINK)
HARTEMINK_INITIAL_BREAKS = 60
"""Quantile intervals Hartemink's method starts from (bnlearn's ``ibreaks``)."""


@dataclass(frozen=True)
class Plan:
    """What to discretize: ``columns`` maps a named column to its ``(method, breaks)``; ``default``
    applies to every other continuous-like column (None: to none)."""

    columns: dict[str, tuple[str, int]] = field(default_factory=dict)
    default: tuple[str, int] | None = None


def parse_spec(spec: str | None, breaks: int = 3) -> Plan:
    """The :class:`Plan` of a ``--discretize`` spec (see the module docstring); ``breaks``: the
    intervals of an entry without ``:N``. Raises :class:`DataError` naming the bad entry."""
    if spec is None:
        return Plan()
    if not isinstance(spec, str):
        raise DataError(f"--discretize must be text such as 'quantile' or 'x=interval:4,y=hartemink', got {spec!r}")
    columns: dict[str, tuple[str, int]] = {}
    default = None
    for entry in spec.split(","):
        name, equals, rule = entry.strip().rpartition("=")
        name = name.strip()
        if equals and not name:
            raise DataError(f"--discretize {entry.strip()!r}: no column before '='")
        method = _rule(entry.strip(), rule, breaks)
        if not equals:
            if default is not None:
                raise DataError(f"--discretize {spec!r}: more than one method for all columns; name the columns "
                                "of the others (column=method)")
            default = method
        elif name in columns:
            raise DataError(f"--discretize {spec!r}: column {name!r} is given twice")
        else:
            columns[name] = method
    return Plan(columns, default)


def _rule(entry: str, rule: str, breaks: int) -> tuple[str, int]:
    """``(method, breaks)`` of ``method[:N]``."""
    method, colon, count = (part.strip() for part in rule.partition(":"))
    method = method.lower()
    if method not in METHODS:
        raise DataError(f"--discretize {entry!r}: unknown method {method!r}; methods are {', '.join(METHODS)}")
    if not colon:
        return method, int(breaks)
    if not count.isdigit() or int(count) < 2:
        raise DataError(f"--discretize {entry!r}: the number of intervals after ':' must be an integer of at "
                        f"least 2, got {count!r}")
    return method, int(count)


# ------------------------------------------------------------------------------ cut points

def quantile_cuts(values: np.ndarray, breaks: int) -> np.ndarray:
    """Interior cut points at the empirical quantiles ``1/breaks, ..., (breaks-1)/breaks`` of the
    finite ``values`` (numpy's ``linear``, R's type 7), without duplicates and without a cut that
    closes an empty interval (ties, or a gap the interpolation falls into); one at the minimum
    leaves the tied minimum an interval of its own."""
    x = np.asarray(values, dtype=np.float64)
    cuts = np.unique(np.quantile(x, np.arange(1, breaks) / breaks))
    cuts = cuts[cuts < x.max()]
    counts = np.bincount(interval_codes(x, cuts), minlength=cuts.size + 1)
    return cuts[counts[:-1] > 0]


def interval_cuts(values: np.ndarray, breaks: int) -> np.ndarray:
    """Interior cut points of ``breaks`` intervals of equal width over ``[min, max]``."""
    x = np.asarray(values, dtype=np.float64)
    low, high = float(x.min()), float(x.max())
    if low == high:
        return np.empty(0)
    return low + (high - low) * np.arange(1, breaks) / breaks


def interval_codes(values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """The interval of each value, ``i`` for ``cuts[i-1] < x <= cuts[i]`` (NaN: -1)."""
    x = np.asarray(values, dtype=np.float64)
    codes = np.searchsorted(cuts, x, side="left").astype(np.int64)
    codes[np.isnan(x)] = -1
    return codes


def interval_labels(cuts: np.ndarray, low: float, high: float) -> list[str]:
    """bnlearn's state names of the intervals: ``[low,c1]``, ``(c1,c2]``, ..., ``(c_k,high]``, the
    numbers with 6 significant digits (more where two would read alike)."""
    points = [low, *map(float, cuts), high]
    for digits in (6, 10, 17):
        text = [f"{p:.{digits}g}" for p in points]
        if len(set(text[1:-1])) == len(cuts):
            break
    if len(points) == 2:
        return [f"[{text[0]},{text[1]}]"]
    return [f"[{text[0]},{text[1]}]"] + [f"({a},{b}]" for a, b in zip(text[1:-1], text[2:])]


# ----------------------------------------------------------------------------- Hartemink

def _xlogx(counts: np.ndarray) -> np.ndarray:
    """``n log n`` elementwise, 0 for 0."""
    counts = np.asarray(counts, dtype=np.float64)
    return counts * np.log(np.where(counts > 0, counts, 1.0))


def merge_losses(table: np.ndarray, blocks: int = 1) -> np.ndarray:
    """``N * (MI(X; Y) - MI(X'; Y))`` for each merge of adjacent rows ``l, l + 1`` of the
    contingency table ``table[x, y]`` into ``X'`` (never negative: a merge loses information).
    Only the two rows change: ``N MI = sum_xy n_xy log n_xy - sum_x n_x log n_x + (terms of y)``.
    ``blocks``: ``table`` is that many tables of the same rows side by side, and the result the
    sum of their losses."""
    pair = table[:-1] + table[1:]
    cells = _xlogx(table).sum(axis=1)
    merged_cells = _xlogx(pair).sum(axis=1)
    rows = _xlogx(table.sum(axis=1) / blocks)
    merged_rows = _xlogx(pair.sum(axis=1) / blocks)
    return (cells[:-1] + cells[1:] - merged_cells) - blocks * (rows[:-1] + rows[1:] - merged_rows)


def _missing_coded(codes: np.ndarray, missing_code: int) -> np.ndarray:
    """``codes`` with -1 (missing) replaced by ``missing_code``."""
    return np.where(codes < 0, missing_code, codes).astype(np.int64)


def _table(codes: np.ndarray, n_codes: int, other: np.ndarray, n_other: int) -> np.ndarray:
    """Contingency table of two code vectors (no negative code)."""
    return np.bincount(codes * n_other + other, minlength=n_codes * n_other).reshape(n_codes, n_other)


def _merged(table: np.ndarray, pair: int, axis: int) -> np.ndarray:
    """``table`` with its rows (``axis`` 0) or columns (1) ``pair`` and ``pair + 1`` added up."""
    table = np.moveaxis(table, axis, 0)
    out = np.delete(table, pair + 1, axis=0)
    out[pair] = table[pair] + table[pair + 1]
    return np.moveaxis(out, 0, axis)


def hartemink_cuts(columns: list[np.ndarray], breaks: list[int], others: list[np.ndarray] = (),
                   ibreaks: int = HARTEMINK_INITIAL_BREAKS) -> list[np.ndarray]:
    """Hartemink's cut points of each of ``columns`` (float arrays, NaN missing) into its
    ``breaks[i]`` intervals (see the module docstring), the mutual information taken with the
    other columns and the discrete ``others`` (codes ``0..r-1``, -1 missing, a state of its own
    here). A column's rows with a missing value take no part in its merges. The contingency
    tables are counted once and merged with their intervals, which gives the same counts."""
    cuts = [quantile_cuts(x[~np.isnan(x)], ibreaks) for x in columns]
    sizes = [c.size + 1 for c in cuts]
    codes = [_missing_coded(interval_codes(x, c), k) for x, c, k in zip(columns, cuts, sizes)]  # missing: last
    fixed = [_missing_coded(o, int(o.max(initial=0)) + 1) for o in others]
    present = [~np.isnan(x) for x in columns]
    # tables[i][j]: column i (its present rows) against column j (its missing cells in the last
    # column) for j != i; wide[i]: against the fixed others, side by side (their columns never merge)
    tables = [{j: _table(codes[i][present[i]], sizes[i], codes[j][present[i]], sizes[j] + 1)
               for j in range(len(columns)) if j != i} for i in range(len(columns))]
    wide = [np.hstack([np.zeros((sizes[i], 0), dtype=np.int64)]
                      + [_table(codes[i][present[i]], sizes[i], o[present[i]], int(o.max(initial=0)) + 1)
                         for o in fixed]) for i in range(len(columns))]
    while True:
        merged = False
        for i in range(len(columns)):
            if sizes[i] <= breaks[i]:
                continue
            losses = sum((merge_losses(table) for table in tables[i].values()), np.zeros(sizes[i] - 1))
            if fixed:
                losses = losses + merge_losses(wide[i], len(fixed))
            best = int(np.argmin(losses))  # the lowest pair among equal losses
            tables[i] = {j: _merged(table, best, 0) for j, table in tables[i].items()}
            wide[i] = _merged(wide[i], best, 0)
            for j in range(len(columns)):
                if j != i:
                    tables[j][i] = _merged(tables[j][i], best, 1)
            cuts[i] = np.delete(cuts[i], best)
            sizes[i] -= 1
            merged = True
        if not merged:
            return cuts


# ------------------------------------------------------------------------------ a table

def discretize_frame(frame: pd.DataFrame, plan: Plan, keep=()) -> tuple[pd.DataFrame, dict[str, dict]]:
    """``frame`` with the columns of ``plan`` (the named ones, and with a default every other
    continuous-like column not in ``keep``, :func:`bayesnet.dataset.continuous_like`) replaced by
    ordered categoricals of their intervals, and the record of each: method, breaks asked, the
    intervals made, the cut points. A named column that is not numeric is a :class:`DataError`."""
    chosen = {}
    for name, column in frame.items():
        name = str(name)
        if name in plan.columns:
            values = numeric_values(column)
            if values is None:
                example = next((v for v in column.dropna() if numeric_values(pd.Series([v])) is None), None)
                raise DataError(f"--discretize: column {name!r} is not numeric (e.g. {example!r}), so it cannot be "
                                "cut into intervals; leave it out of --discretize")
            chosen[name] = (values, *plan.columns[name])
        elif plan.default is not None and name not in set(keep) and continuous_like(column):
            chosen[name] = (numeric_values(column), *plan.default)
    for name, (values, _, _) in chosen.items():
        if np.isnan(values).all():
            raise DataError(f"--discretize: column {name!r} has no value to cut into intervals")
    cuts = {name: (quantile_cuts if method == QUANTILE else interval_cuts)(values[~np.isnan(values)], breaks)
            for name, (values, method, breaks) in chosen.items() if method != HARTEMINK}
    joint = [name for name, (_, method, _) in chosen.items() if method == HARTEMINK]
    if joint:
        others = [pd.factorize(column)[0] for name, column in frame.items()
                  if str(name) not in joint and str(name) not in cuts]
        others += [interval_codes(chosen[name][0], c) for name, c in cuts.items()]
        found = hartemink_cuts([chosen[name][0] for name in joint], [chosen[name][2] for name in joint], others)
        cuts.update(zip(joint, found))
    out = frame.copy()
    record = {}
    for name, (values, method, breaks) in chosen.items():
        present = values[~np.isnan(values)]
        labels = interval_labels(cuts[name], float(present.min()), float(present.max()))
        codes = interval_codes(values, cuts[name])
        out[name] = pd.Categorical.from_codes(codes, categories=labels, ordered=True)
        record[name] = {"method": method, "breaks": breaks, "intervals": len(labels),
                        "cuts": [float(c) for c in cuts[name]]}
    return out, record
