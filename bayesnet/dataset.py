"""Discrete datasets: a state-code matrix with variable names and ordered state names.

Every column becomes categorical. State order: a pandas categorical keeps its category order;
any other column is ordered by value — numerically when every value reads as a number (so
``1, 2, 10``), otherwise in natural order (digit runs compared as numbers, so ``x2 < x10``).
State names are strings. The code matrix uses the smallest unsigned dtype that holds the
largest code (uint8 up to 256 states, then uint16, ...).

Rejected with :class:`DataError` (the message names the column): empty data, duplicate column
names, missing values, and *continuous-looking* columns — every value reads as a number, at
least one is not an integer, and there are more than ``MAX_FRACTIONAL_STATES`` distinct values.
A column with a single state only triggers a :class:`DataWarning`.

CSV files are read as text with only empty fields counting as missing, so states such as
``NA`` or ``None`` (a hailfinder state) survive; parquet and feather keep categorical order.
"""

from __future__ import annotations

import logging
import re
import warnings
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hybridbn.errors import HybridBNError, error_reason

logger = logging.getLogger(__name__)

#: A numeric column with a non-integer value and more distinct values than this is continuous.
MAX_FRACTIONAL_STATES = 20
_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".feather": "feather"}
_DIGITS = re.compile(r"(\d+)")


class DataError(HybridBNError, ValueError):
    """Data that cannot be used as a discrete dataset."""


class DataFileNotFoundError(DataError, FileNotFoundError):
    """The data file does not exist."""


class DataWarning(UserWarning):
    """Suspicious but usable data (e.g. a column with a single state)."""


def code_dtype(max_arity: int) -> np.dtype:
    """Smallest unsigned integer dtype holding the codes ``0..max_arity-1``."""
    return np.min_scalar_type(max(int(max_arity) - 1, 0))


def transpose_codes(codes: np.ndarray, block: int = 256) -> np.ndarray:
    """C-contiguous transpose of a 2-D code matrix, copied in cache-friendly blocks."""
    out = np.empty(codes.shape[::-1], dtype=codes.dtype)
    for start in range(0, codes.shape[0], block):
        out[:, start : start + block] = codes[start : start + block].T
    return out


@dataclass
class Dataset:
    """``data[i, v]`` is the state code of variable ``names[v]`` in row ``i``."""

    data: np.ndarray
    names: list[str]
    states: list[list[str]]

    def __post_init__(self) -> None:
        if self.data.ndim != 2 or self.data.dtype.kind != "u":
            raise DataError(
                f"data must be a 2-D unsigned integer array, got {self.data.dtype} {self.data.shape}"
            )
        if not len(self.names) == len(self.states) == self.data.shape[1]:
            raise DataError(
                f"{self.data.shape[1]} columns but {len(self.names)} names and {len(self.states)} state lists"
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Dataset):
            return NotImplemented
        return (self.names == other.names and self.states == other.states
                and np.array_equal(self.data, other.data))

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.data.shape[0])

    @property
    def n_vars(self) -> int:
        """Number of variables (columns)."""
        return int(self.data.shape[1])

    @property
    def arities(self) -> np.ndarray:
        """State counts as an int64 array."""
        return np.array([len(s) for s in self.states], dtype=np.int64)

    def validate(self) -> None:
        """Raise :class:`DataError` if a code is outside its column's states."""
        if self.n_rows == 0:
            return
        too_big = np.flatnonzero(self.data.max(axis=0) >= self.arities)
        if too_big.size:
            j = int(too_big[0])
            raise DataError(f"column {self.names[j]!r} has a code beyond its {len(self.states[j])} states")

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, warn: bool = True) -> "Dataset":
        """Discretised dataset from a DataFrame (rules in the module docstring); ``warn``: a
        :class:`DataWarning` names the columns with a single state."""
        if frame.shape[0] == 0 or frame.shape[1] == 0:
            raise DataError(f"empty data: {frame.shape[0]} rows, {frame.shape[1]} columns")
        names = [str(c) for c in frame.columns]
        dups = sorted(n for n, k in Counter(names).items() if k > 1)
        if dups:
            raise DataError(f"duplicate column names: {', '.join(repr(d) for d in dups)}")
        columns = [_encode_column(name, column) for name, (_, column) in zip(names, frame.items())]
        states = [s for _, s in columns]
        constant = [f"{name!r} ({s[0]!r})" for name, s in zip(names, states) if len(s) == 1]
        if warn and constant:
            warnings.warn(f"{len(constant)} column(s) with a single state carry no information: "
                          f"{', '.join(constant[:10])}{' ...' if len(constant) > 10 else ''}",
                          DataWarning, stacklevel=2)
        codes = np.empty(frame.shape[::-1], dtype=code_dtype(max(len(s) for s in states)))
        for j, (column_codes, _) in enumerate(columns):
            codes[j] = column_codes
        return cls(data=transpose_codes(codes), names=names, states=states)

    def to_frame(self) -> pd.DataFrame:
        """DataFrame of ordered categoricals whose categories are the state names."""
        columns = transpose_codes(self.data)  # contiguous per-variable codes
        frame = {}
        for j, name in enumerate(self.names):
            dtype = pd.CategoricalDtype(self.states[j], ordered=True)
            codes = columns[j].astype(np.int8 if len(self.states[j]) < 128 else np.int64)
            frame[name] = pd.Categorical.from_codes(codes, dtype=dtype)
        return pd.DataFrame(frame, copy=False)


def _encode_column(name: str, column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """State codes and ordered state names of one column."""
    categorical = isinstance(column.dtype, pd.CategoricalDtype)
    codes = column.cat.codes.to_numpy() if categorical else None
    missing = codes < 0 if categorical else column.isna().to_numpy()
    if missing.any():
        rows = np.flatnonzero(missing)[:5].tolist()
        raise DataError(
            f"column {name!r}: {int(missing.sum())} of {len(column)} rows are missing (first rows {rows}); "
            "--missing drop (missing='drop' in Python) drops the rows with a missing cell"
        )
    if categorical:
        states = [str(c) for c in column.cat.categories]
    else:
        try:
            values = pd.unique(column.to_numpy())
        except TypeError:  # lists, dicts or arrays in the cells
            raise DataError(f"column {name!r} holds values that are not single states "
                            f"(e.g. {column.iloc[0]!r})") from None
        order, states = _order_states(name, values, column.dtype)
        codes = pd.Categorical(column, categories=values[order]).codes
    if len(set(states)) != len(states):
        raise DataError(f"column {name!r}: distinct values with the same text {sorted(states)}")
    stripped = Counter(state.strip() for state in states)
    padded = sorted(state for state in states if stripped[state.strip()] > 1)
    if padded:
        raise DataError(f"column {name!r}: states that differ only in surrounding spaces {padded}; "
                        "clean the file (e.g. no space after the separator)")
    return codes, states


def _order_states(name: str, values: np.ndarray, dtype) -> tuple[np.ndarray, list[str]]:
    """Order of the distinct ``values`` and their state names."""
    if dtype.kind == "b":
        order = np.argsort(values.astype(bool), kind="stable")
        return order, [str(bool(v)) for v in values[order]]
    if dtype.kind in "iuf":
        numbers = values.astype(np.float64)
        if not np.isfinite(numbers).all():
            raise DataError(f"column {name!r} holds infinite values; discrete states must be finite")
        _check_discrete(name, numbers)
        order = np.argsort(numbers, kind="stable")
        integral = dtype.kind in "iu" or bool(np.all(numbers == np.round(numbers)))
        labels = [str(int(v)) if integral else repr(float(v)) for v in values[order]]
        return order, labels
    labels = [str(v) for v in values]
    numbers = [_as_number(s) for s in labels]
    if all(x is not None for x in numbers):
        _check_discrete(name, np.array(numbers))
        order = np.array(sorted(range(len(labels)), key=lambda i: (numbers[i], labels[i])), dtype=np.int64)
    else:
        order = np.array(sorted(range(len(labels)), key=lambda i: _natural_key(labels[i])), dtype=np.int64)
    return order, [labels[i] for i in order]


def _check_discrete(name: str, numbers: np.ndarray) -> None:
    if numbers.size > MAX_FRACTIONAL_STATES and not np.all(numbers == np.round(numbers)):
        raise DataError(
            f"column {name!r} looks continuous: {numbers.size} distinct numeric values with "
            f"fractions (at most {MAX_FRACTIONAL_STATES} allowed); discretise it first"
        )


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


def _natural_key(text: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part]


def _format(path: Path) -> str:
    suffixes = path.suffixes
    key = suffixes[-2] if len(suffixes) >= 2 and suffixes[-1] == ".gz" else path.suffix
    fmt = _FORMATS.get(key.lower())
    if fmt is None or (fmt != "csv" and suffixes[-1] == ".gz"):
        raise DataError(
            f"{path}: unsupported data format {path.suffix!r}; use .csv, .csv.gz, .parquet or .feather"
        )
    return fmt


def drop_missing(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` without the rows that have a missing cell, and how many rows were dropped."""
    keep = frame.notna().all(axis=1).to_numpy()
    return frame.loc[keep].reset_index(drop=True), int((~keep).sum())


READ_ERRORS = (ValueError, OSError, EOFError, zlib.error, pd.errors.ParserError)
"""What reading a damaged, truncated, unreadable or malformed file raises (mapped to DataError)."""


def _read_error(path: Path, fmt: str, exc: BaseException) -> DataError:
    return DataError(f"{path}: cannot read {fmt} file: {error_reason(exc)}")


def data_columns(path: str | Path) -> list[str]:
    """Column names of a data file, from its header (CSV) or schema (parquet, feather)."""
    path = Path(path)
    fmt = _format(path)
    try:
        if fmt == "csv":
            return [str(c) for c in pd.read_csv(path, nrows=0, dtype=str).columns]
        import pyarrow.ipc
        import pyarrow.parquet

        schema = pyarrow.parquet.read_schema(path) if fmt == "parquet" else pyarrow.ipc.open_file(path).schema
        return [str(c) for c in schema.names]
    except READ_ERRORS as exc:
        raise _read_error(path, fmt, exc) from None


def read_frame(path: str | Path) -> pd.DataFrame:
    """The raw table of a CSV, parquet or feather file (chosen by extension), not yet encoded."""
    path = Path(path)
    fmt = _format(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"data file not found: {path}")
    try:
        if fmt == "csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
            # read_csv renames duplicate headers ("a", "a.1"); restore them so they are reported
            header = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False)
            frame.columns = header.iloc[0].tolist()
        elif fmt == "parquet":
            frame = pd.read_parquet(path)
        else:
            frame = pd.read_feather(path)
    except READ_ERRORS as exc:
        raise _read_error(path, fmt, exc) from exc
    if fmt == "csv" and frame.shape[1] == 1:
        sep = next((c for c in ";\t|" if c in str(frame.columns[0])), None)
        if sep is not None:
            raise DataError(f"{path}: one column named {frame.columns[0]!r}: the file seems separated by "
                            f"{sep!r}, but CSV files must be separated by commas")
    return frame


def read_dataset(path: str | Path, missing: str = "reject") -> Dataset:
    """Read a CSV, parquet or feather file (chosen by extension) as a :class:`Dataset`."""
    return encode_frame(read_frame(path), missing, source=str(path))[0]


def encode_frame(frame: pd.DataFrame, missing: str = "reject", source: str | None = None) -> tuple[Dataset, int]:
    """The :class:`Dataset` of a raw table and the number of rows dropped: with ``missing="drop"``
    the rows with a missing cell go first, with ``"reject"`` they are an error. ``source`` (a file
    name) prefixes error messages."""
    dropped = 0
    if missing == "drop":
        frame, dropped = drop_missing(frame)
        if dropped:
            logger.info("%s: dropped %d rows with a missing cell", source or "data", dropped)
    try:
        dataset = Dataset.from_frame(frame)
    except DataError as exc:
        raise DataError(f"{source}: {exc}" if source else str(exc)) from None
    logger.info("read %s: %d rows, %d variables", source or "data", dataset.n_rows, dataset.n_vars)
    return dataset, dropped


def write_dataset(dataset: Dataset, path: str | Path) -> None:
    """Write ``dataset`` as CSV (state names), parquet or feather (ordered categoricals)."""
    path = Path(path)
    fmt = _format(path)
    frame = dataset.to_frame()
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_feather(path)
