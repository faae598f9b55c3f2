"""Score tables in the ``.jkl`` text format of GOBNILP and BLIP (Jaakkola et al. 2010).

Layout (blank lines and lines starting with ``#`` are ignored)::

    <n>                                  number of variables
    <var> <m>                            a child and its number of candidate parent sets
    <score> <k> <parent_1> ... <parent_k>   m such lines
    ...                                  one block per variable

Variables are named either by index (``0 .. n-1``, what BLIP writes) or by name (what GOBNILP
accepts as long as the same names are used in children and parents). :func:`write_jkl` writes
indices by default and names with ``use_names=True``; :func:`read_jkl` treats both alike: the
variables are numbered in the order of their blocks and the tokens are their names, so a file
whose names happen to be digits (``"1"`` before ``"0"``) is never renumbered. A file whose
blocks are ``0, 1, ..., n-1`` in that order (BLIP's) reads with no names. A ``.gz`` file is
read and written gzip-compressed. Scores are written with ``repr`` so they read back
bit-identical.
"""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import numpy as np

from hybridbn.errors import HybridBNError
from scores.table import ScoreTable, offsets

logger = logging.getLogger(__name__)


class JKLError(HybridBNError, ValueError):
    """A malformed ``.jkl`` file (the message carries the line number)."""


def write_jkl(table: ScoreTable, path: str | Path, use_names: bool = False) -> None:
    """Write ``table`` to ``path`` (children by index, or by name with ``use_names``)."""
    path = Path(path)
    path.write_bytes(jkl_bytes(table, use_names, compress=path.suffix == ".gz"))
    logger.debug("wrote %d families of %d variables to %s", table.n_candidates, table.n_vars, path)


def jkl_bytes(table: ScoreTable, use_names: bool = False, compress: bool = False) -> bytes:
    """The ``.jkl`` text of ``table`` as bytes, gzip-compressed with ``compress``."""
    if use_names:
        if table.names is None:
            raise JKLError("use_names=True needs a table with variable names")
        bad = [name for name in table.names if not name_writable(name)]
        if bad:
            raise JKLError(f"variable names cannot be written to .jkl (whitespace, empty or '#'): {bad[:5]}")
        label = list(table.names)
    else:
        label = [str(v) for v in range(table.n_vars)]
    members = [label[p] for p in table.parents.tolist()]
    ptr, score, child_ptr = table.parent_ptr.tolist(), table.score.tolist(), table.child_ptr.tolist()
    lines = [str(table.n_vars)]
    for v in range(table.n_vars):
        lines.append(f"{label[v]} {child_ptr[v + 1] - child_ptr[v]}")
        for f in range(child_ptr[v], child_ptr[v + 1]):  # by decreasing score, the table's order
            lines.append(" ".join([repr(score[f]), str(ptr[f + 1] - ptr[f]), *members[ptr[f]:ptr[f + 1]]]))
    data = ("\n".join(lines) + "\n").encode()
    return gzip.compress(data) if compress else data


def name_writable(name: str) -> bool:
    """Whether a variable name can stand in a ``.jkl`` file (one token, not a comment)."""
    return bool(name) and not any(ch.isspace() for ch in name) and not name.startswith("#")


def read_jkl(path: str | Path) -> ScoreTable:
    """Read a ``.jkl`` file into a :class:`ScoreTable` (names kept unless they are ``0 .. n-1``
    in block order)."""
    lines = [(no, line.split()) for no, line in enumerate(_read_text(path).splitlines(), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise JKLError(f"{path}: empty file")
    try:
        columns, names = _parse(lines)
    except JKLError as exc:
        raise JKLError(f"{path}: {exc}") from None
    return ScoreTable.from_columns(*columns, names, meta={"source": str(path)})


def _parse(lines: list[tuple[int, list[str]]]) -> tuple[tuple, list[str] | None]:
    """The table's columns ``(n_vars, child, parent_ptr, parents, score)`` and names of the
    non-comment ``(line number, tokens)`` lines, rows in block order."""
    no, tokens = lines[0]
    n_vars = _int(tokens[0], no, "number of variables") if len(tokens) == 1 else _fail(
        no, f"first line must hold only the number of variables, got {' '.join(tokens)!r}")
    if n_vars < 1:
        _fail(no, f"number of variables must be >= 1, got {n_vars}")
    blocks: list[tuple[int, str, list[tuple[int, float, list[str]]]]] = []
    at = 1
    while at < len(lines):
        no, tokens = lines[at]
        if len(tokens) != 2:
            _fail(no, f"expected '<variable> <number of parent sets>', got {' '.join(tokens)!r}")
        count = _int(tokens[1], no, "number of parent sets")
        rows = []
        for row_no, row in lines[at + 1: at + 1 + count]:
            if len(row) < 2:
                _fail(row_no, f"expected '<score> <k> <parents...>', got {' '.join(row)!r}")
            score = _float(row[0], row_no)
            k = _int(row[1], row_no, "number of parents")
            if len(row) != 2 + k:
                _fail(row_no, f"says {k} parents but lists {len(row) - 2}")
            rows.append((row_no, score, row[2:]))
        if len(rows) != count:
            _fail(no, f"variable {tokens[0]!r} announces {count} parent sets but the file ends after {len(rows)}")
        blocks.append((no, tokens[0], rows))
        at += 1 + count
    if len(blocks) != n_vars:
        _fail(lines[0][0], f"announces {n_vars} variables but has {len(blocks)} blocks")
    index = {b[1]: i for i, b in enumerate(blocks)}
    if len(index) != n_vars:
        _fail(blocks[0][0], "a variable has more than one block")
    sets, scores = [], []
    for v, (_, name, rows) in enumerate(blocks):
        seen = set()
        for row_no, score, parents in rows:
            try:
                ps = tuple(sorted(index[p] for p in parents))
            except KeyError as err:
                _fail(row_no, f"unknown parent {err.args[0]!r}")
            if v in ps or len(set(ps)) != len(ps):
                _fail(row_no, f"invalid parent set {parents} for {name!r}")
            if ps in seen:
                _fail(row_no, f"parent set {parents} of {name!r} listed twice")
            seen.add(ps)
            sets.append(ps)
            scores.append(score)
    names = [b[1] for b in blocks]
    if names == [str(i) for i in range(n_vars)]:  # BLIP's indices: no names to keep
        names = None
    child = np.repeat(np.arange(n_vars), [len(rows) for _, _, rows in blocks])
    parent_ptr = offsets(np.fromiter(map(len, sets), dtype=np.int64, count=len(sets)))
    return (n_vars, child, parent_ptr, [p for ps in sets for p in ps], scores), names


def _read_text(path: str | Path) -> str:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"score file not found: {path}")
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt") as handle:
                return handle.read()
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:  # e.g. not gzip, or binary
        raise JKLError(f"{path}: cannot read as a .jkl text file: {exc}") from None


def _fail(no: int, message: str):
    raise JKLError(f"line {no}: {message}")


def _int(token: str, no: int, what: str) -> int:
    try:
        return int(token)
    except ValueError:
        _fail(no, f"{what} must be an integer, got {token!r}")


def _float(token: str, no: int) -> float:
    try:
        return float(token)
    except ValueError:
        _fail(no, f"score must be a number, got {token!r}")
