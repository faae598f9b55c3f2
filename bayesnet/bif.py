"""Reader and writer for the BIF 0.15 interchange format (as used by the bnlearn repository).

Grammar handled (``//`` and ``/* */`` comments allowed anywhere between tokens; names are bare
words or double-quoted strings with ``\\"`` escapes)::

    network NAME { property ...; }
    variable NAME { type discrete [ K ] { s1, s2, ... }; property ...; }
    probability ( CHILD | P1, P2, ... ) {
        (p1_state, p2_state, ...) v1, ..., vK;     // one row per parent configuration
        table v1, v2, ...;                          // or the whole table at once
        default v1, ..., vK;                        // rows not listed otherwise
        property ...;
    }

A ``table`` lists the values with the first variable of the block (the child) varying slowest
and the last parent fastest (the convention of JavaBayes/pgmpy). Variables must be declared
before the probability blocks that use them. Rows must sum to 1 within ``ROW_SUM_TOL``; they are
then renormalised exactly. Every error is a :class:`BIFError` whose message starts with the line.
"""

from __future__ import annotations

import gzip
import logging
import re
import zlib
from pathlib import Path

import numpy as np

from bayesnet.network import ROW_SUM_TOL, Network
from graphs.dag import find_cycle
from hybridbn.errors import HybridBNError, error_reason

logger = logging.getLogger(__name__)

_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_BARE = r"(?:[^\s{}()\[\];,|\"/]|/(?![/*]))+"
_WORD = re.compile(r'"((?:[^"\\\n]|\\.)*)"|(' + _BARE + ")")
_BARE_FULL = re.compile(_BARE)
_ESCAPE = re.compile(r"\\(.)")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PROPERTY = re.compile(r'(?:"(?:[^"\\]|\\.)*"|[^";])*;', re.S)  # up to a ';' outside quotes


class BIFError(HybridBNError, ValueError):
    """A malformed BIF file; ``line`` is the 1-based line of the problem."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


class _Cursor:
    """Position in the BIF text with token-level helpers; errors carry the line number."""

    def __init__(self, text: str, source: str):
        self.text = text
        self.pos = 0
        self.prefix = f"{source}: " if source else ""

    def error(self, message: str, pos: int | None = None) -> BIFError:
        line = self.text.count("\n", 0, self.pos if pos is None else pos) + 1
        return BIFError(f"{self.prefix}line {line}: {message}", line)

    def _found(self) -> str:
        if self.pos >= len(self.text):
            return "end of file"
        return repr(self.text[self.pos : self.pos + 20].split("\n")[0])

    def skip(self) -> None:
        self.pos = _SKIP.match(self.text, self.pos).end()

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def accept(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def expect(self, char: str, context: str) -> None:
        if not self.accept(char):
            raise self.error(f"expected {char!r} {context}, found {self._found()}")

    def _match(self, pattern: re.Pattern, expected: str) -> re.Match:
        """Consume what ``pattern`` matches after blanks and comments."""
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {expected}, found {self._found()}")
        self.pos = m.end()
        return m

    def word(self, what: str) -> str:
        m = self._match(_WORD, what)
        quoted = m.group(1)
        return m.group(2) if quoted is None else _ESCAPE.sub(r"\1", quoted)

    def until(self, char: str, context: str) -> tuple[str, int]:
        """Raw text up to ``char`` (consumed) and its start position."""
        self.skip()
        start = self.pos
        end = self.text.find(char, start)
        if end < 0:
            raise self.error(f"expected {char!r} {context}, found end of file")
        self.pos = end + 1
        return self.text[start:end], start

    def property_text(self, context: str) -> None:
        """Consume the text of a ``property`` statement up to its ';' (quoted text may hold ';')."""
        self._match(_PROPERTY, f"';' {context}")

    def name_list(self, close: str, what: str) -> list[str]:
        """Comma-separated names up to the closing character (consumed)."""
        names = [self.word(what)]
        while not self.accept(close):
            self.expect(",", f"or {close!r} between {what}s")
            names.append(self.word(what))
        return names

    def numbers(self, context: str) -> tuple[np.ndarray, int]:
        """Comma/space-separated floats up to ';' (consumed) and their start position."""
        raw, start = self.until(";", context)
        if "/" in raw:
            raw = _COMMENT.sub(" ", raw)
        tokens = raw.replace(",", " ").split()
        try:
            values = np.array(tokens, dtype=np.float64)
        except ValueError:
            bad = next(t for t in tokens if not _is_float(t))
            raise self.error(f"invalid probability value {bad!r} {context}", start) from None
        return values, start


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _parse(text: str, source: str, default_name: str) -> Network:
    cur = _Cursor(text, source)
    name = default_name
    variables: list[str] = []
    states: list[list[str]] = []
    state_index: list[dict[str, int]] = []
    index: dict[str, int] = {}
    parents: dict[int, list[int]] = {}
    cpts: dict[int, np.ndarray] = {}
    block_at: dict[int, int] = {}
    while not cur.at_end():
        kw_pos = cur.pos
        kw = cur.word("'network', 'variable' or 'probability'")
        if kw == "network":
            declared = cur.word("network name")
            if declared != "unknown" or not default_name:
                name = declared
            cur.expect("{", "after the network name")
            _skip_properties(cur, "network block")
        elif kw == "variable":
            vname = cur.word("variable name")
            if vname in index:
                raise cur.error(f"duplicate variable {vname!r}", kw_pos)
            vstates = _parse_variable(cur, vname)
            index[vname] = len(variables)
            variables.append(vname)
            states.append(vstates)
            state_index.append({s: i for i, s in enumerate(vstates)})
        elif kw == "probability":
            child, ps, cpt = _parse_probability(cur, index, variables, states, state_index)
            if child in cpts:
                raise cur.error(f"duplicate probability block for {variables[child]!r}", kw_pos)
            parents[child], cpts[child], block_at[child] = ps, cpt, kw_pos
        else:
            raise cur.error(f"expected 'network', 'variable' or 'probability', found {kw!r}", kw_pos)
    missing = [v for v in range(len(variables)) if v not in cpts]
    if missing:
        raise cur.error(
            f"missing probability block for {len(missing)} variable(s): "
            f"{', '.join(repr(variables[v]) for v in missing[:10])}"
        )
    if not variables:
        raise cur.error("no variables declared")
    network = Network(
        name=name,
        variables=variables,
        states=states,
        parents=[parents[v] for v in range(len(variables))],
        cpts=[cpts[v] for v in range(len(variables))],
    )
    cycle = find_cycle(network.adjacency)
    if cycle:
        path = " -> ".join(variables[v] for v in cycle + cycle[:1])
        raise cur.error(f"the parents form a directed cycle: {path}", block_at[cycle[0]])
    return network


def _skip_properties(cur: _Cursor, context: str) -> None:
    """Consume ``property ...;`` statements up to the closing '}' of a block."""
    while not cur.accept("}"):
        if cur.word(f"'property' or '}}' in the {context}") != "property":
            raise cur.error(f"expected 'property' or '}}' in the {context}")
        cur.property_text(f"to end the property in the {context}")


def _parse_variable(cur: _Cursor, vname: str) -> list[str]:
    cur.expect("{", f"after 'variable {vname}'")
    vstates: list[str] | None = None
    while not cur.accept("}"):
        pos = cur.pos
        kw = cur.word(f"'type', 'property' or '}}' in variable {vname!r}")
        if kw == "property":
            cur.property_text(f"to end the property of {vname!r}")
            continue
        if kw != "type":
            raise cur.error(f"expected 'type', 'property' or '}}' in variable {vname!r}, found {kw!r}", pos)
        kind = cur.word("variable type")
        if kind != "discrete":
            raise cur.error(f"variable {vname!r}: only discrete variables are supported, found {kind!r}")
        cur.expect("[", "before the number of states")
        count_pos = cur.pos
        count = cur.word("the number of states")
        if not count.isdigit():
            raise cur.error(
                f"variable {vname!r}: number of states must be an integer, found {count!r}", count_pos
            )
        cur.expect("]", "after the number of states")
        cur.expect("{", "before the state names")
        vstates = cur.name_list("}", "state name")
        cur.expect(";", f"after the states of {vname!r}")
        if len(vstates) != int(count):
            raise cur.error(f"variable {vname!r} declares {count} states but lists {len(vstates)}", pos)
        if len(set(vstates)) != len(vstates):
            raise cur.error(f"variable {vname!r} has duplicate state names", pos)
    if vstates is None:
        raise cur.error(f"variable {vname!r} has no 'type discrete' declaration")
    cur.accept(";")
    return vstates


def _parse_probability(cur, index, variables, states, state_index):
    """Child index, parent list and CPT of one ``probability ( ... ) { ... }`` block."""
    cur.expect("(", "after 'probability'")

    def lookup(pos: int, vname: str) -> int:
        if vname not in index:
            raise cur.error(f"unknown variable {vname!r} in probability block", pos)
        return index[vname]

    cur.skip()
    child = lookup(cur.pos, cur.word("variable name"))
    ps: list[int] = []
    if cur.accept("|"):
        while True:
            cur.skip()
            ps.append(lookup(cur.pos, cur.word("parent name")))
            if cur.accept(")"):
                break
            cur.expect(",", "or ')' between parent names")
    else:
        cur.expect(")", f"or '|' after {variables[child]!r}")
    cname = variables[child]
    if len(set(ps)) != len(ps) or child in ps:
        raise cur.error(f"probability block for {cname!r} repeats a variable")
    cur.expect("{", f"to open the probability block of {cname!r}")
    block_pos = cur.pos
    r = len(states[child])
    radix = [len(states[p]) for p in ps]
    q = int(np.prod(radix, dtype=np.int64))
    table = np.zeros((q, r))
    filled = np.zeros(q, dtype=bool)
    default = None
    context = f"in the probability block of {cname!r}"
    while not cur.accept("}"):
        if cur.peek() == "(":
            row_pos = cur.pos
            config = _parse_config(cur, ps, variables, state_index, radix, cname)
            values, pos = cur.numbers(context)
            if values.size != r:
                raise cur.error(f"expected {r} values for {cname!r}, found {values.size}", pos)
            if filled[config]:
                raise cur.error(f"parent configuration listed twice for {cname!r}", row_pos)
            table[config] = values
            filled[config] = True
            continue
        pos = cur.pos
        kw = cur.word(f"'(', 'table', 'default', 'property' or '}}' {context}")
        if kw == "property":
            cur.property_text(f"to end the property {context}")
        elif kw in ("table", "default"):
            values, vpos = cur.numbers(context)
            expected = q * r if kw == "table" else r
            if values.size != expected:
                raise cur.error(
                    f"expected {expected} values in the {kw} of {cname!r}, found {values.size}", vpos
                )
            if kw == "table":
                table[:] = values.reshape(r, q).T
                filled[:] = True
            else:
                default = values
        else:
            raise cur.error(
                f"expected '(', 'table', 'default', 'property' or '}}' {context}, found {kw!r}", pos
            )
    cur.accept(";")
    if not filled.all():
        if default is None:
            first = int(np.flatnonzero(~filled)[0])
            raise cur.error(
                f"missing CPT row for {cname!r} at parent configuration "
                f"{_config_label(first, ps, states, radix)} ({int((~filled).sum())} of {q} rows missing)",
                block_pos,
            )
        table[~filled] = default
    invalid = np.flatnonzero(~np.isfinite(table).all(axis=1) | (table < 0).any(axis=1))
    if invalid.size:
        raise cur.error(
            f"CPT row of {cname!r} at parent configuration "
            f"{_config_label(int(invalid[0]), ps, states, radix)} has a negative or non-finite value",
            block_pos,
        )
    sums = table.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOL)
    if bad.size:
        row = int(bad[0])
        raise cur.error(
            f"CPT row of {cname!r} at parent configuration {_config_label(row, ps, states, radix)} "
            f"sums to {sums[row]:.8g}, not 1 (tolerance {ROW_SUM_TOL})",
            block_pos,
        )
    table /= sums[:, None]
    return child, ps, table.reshape(tuple(radix) + (r,))


def _parse_config(cur, ps, variables, state_index, radix, cname) -> int:
    """Mixed-radix index (last parent fastest) of a ``(s1, s2, ...)`` row label."""
    cur.pos += 1
    raw, start = cur.until(")", f"to close a parent configuration of {cname!r}")
    if '"' in raw or "/" in raw:
        cur.pos = start
        names = cur.name_list(")", "parent state")
    else:
        names = [s.strip() for s in raw.split(",")]
    if len(names) != len(ps):
        raise cur.error(
            f"parent configuration of {cname!r} has {len(names)} states for {len(ps)} parents", start
        )
    config = 0
    for p, base, sname in zip(ps, radix, names):
        code = state_index[p].get(sname)
        if code is None:
            raise cur.error(f"parent {variables[p]!r} of {cname!r} has no state {sname!r}", start)
        config = config * base + code
    return config


def _config_label(config: int, ps, states, radix) -> str:
    codes = np.unravel_index(config, radix) if radix else ()
    return "(" + ", ".join(states[p][int(c)] for p, c in zip(ps, codes)) + ")"


def read_bif(source: str | Path) -> Network:
    """Parse a BIF network from a path (``.bif`` or ``.bif.gz``) or from BIF text.

    A string containing '{' or a newline is taken as text, anything else as a path. For files,
    a network declared as ``unknown`` is named after the file.
    """
    if isinstance(source, str) and ("{" in source or "\n" in source):
        return _parse(source, "", "")
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"BIF file not found: {path}")
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:  # unreadable, truncated, not text
        raise BIFError(f"cannot read BIF file {path}: {error_reason(exc)}", 0) from None
    stem = path.name.split(".")[0]
    network = _parse(text, str(path), stem)
    logger.debug("read %s: %d variables, %d arcs", path, network.n_vars, network.n_edges)
    return network


def _quote(name: str) -> str:
    if _BARE_FULL.fullmatch(name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _values(row: np.ndarray) -> str:
    return ", ".join(map(repr, row.tolist()))


def format_bif(network: Network) -> str:
    """BIF text of ``network``; floats are written repr-exact so reading back is lossless."""
    out = [f"network {_quote(network.name or 'unknown')} {{\n}}\n"]
    for v, name in enumerate(network.variables):
        st = ", ".join(_quote(s) for s in network.states[v])
        k = len(network.states[v])
        out.append(f"variable {_quote(name)} {{\n  type discrete [ {k} ] {{ {st} }};\n}}\n")
    for v, name in enumerate(network.variables):
        ps = network.parents[v]
        cpt = np.asarray(network.cpts[v], dtype=np.float64)
        rows = cpt.reshape(-1, cpt.shape[-1])
        if not ps:
            out.append(f"probability ( {_quote(name)} ) {{\n  table {_values(rows[0])};\n}}\n")
            continue
        head = ", ".join(_quote(network.variables[p]) for p in ps)
        out.append(f"probability ( {_quote(name)} | {head} ) {{\n")
        labels = [[_quote(s) for s in network.states[p]] for p in ps]
        for row, codes in zip(rows, np.ndindex(*cpt.shape[:-1])):
            config = ", ".join(lab[c] for lab, c in zip(labels, codes))
            out.append(f"  ({config}) {_values(row)};\n")
        out.append("}\n")
    return "".join(out)


def write_bif(network: Network, path: str | Path) -> None:
    """Write ``network`` as BIF (gzip-compressed if the path ends in ``.gz``)."""
    path = Path(path)
    text = format_bif(network)
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
