"""Expert knowledge: required and forbidden arcs and temporal tiers, read, checked and applied.

Files (CSV with a header; blank lines are skipped):

* ``--required FILE`` / ``--forbidden FILE``: ``source,target`` per line, an arc
  ``source -> target`` (bnlearn's whitelist / blacklist). An optional ``directed`` column
  (true/false) marks an undirected line: a forbidden one forbids both directions, a required one
  requires the two variables to be adjacent in either direction. Listing a required pair in both
  directions means the same undirected requirement.
* ``--tiers FILE``: ``variable,tier`` per line, an integer tier (Tetrad's tiers): no arc from a
  later tier to an earlier one; variables in no tier are unconstrained.

In Python (``hybridbn.learn``) the same knowledge may be given as objects: arcs as a list of
``(source, target)`` pairs (or ``(source, target, directed)`` triples) or a DataFrame with those
columns; tiers as a dict ``{variable: tier}``, a list of lists of variables (tier 0 first) or a
DataFrame ``variable, tier``. :func:`knowledge_rows` turns them into the rows a file would hold,
which pass the same checks; messages name the keyword and the item (``required[2]``).

A forbidden or tier-excluded direction of an undirected requirement leaves the other direction
required. Contradictions (an arc both required and excluded, a cycle of required arcs) are found
from the files alone; unknown variable names once the data's names are known. Every stage reads
:class:`KnowledgeMatrices`: the restriction keeps the required adjacencies, the scores stage
scores only parent sets within ``allowed`` that contain the ``required`` parents, the solvers
check the learned DAG against them.
"""

from __future__ import annotations

import csv
import itertools
import hashlib
import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from graphs.dag import adjacency_from_parents, find_cycle
from hybridbn.errors import HybridBNError
from hybridbn.solving import ADJACENCY, ARCS
from pipeline.core.declarations import SOLVER
from scores.table import ScoreTable, family_ids, offsets, segment_indices

TRUE_WORDS = {"true", "yes", "1", "t", "y"}
FALSE_WORDS = {"false", "no", "0", "f", "n"}


class KnowledgeError(HybridBNError, ValueError):
    """A malformed or contradictory knowledge file; the message names the option and the line."""


@dataclass(frozen=True)
class Arc:
    source: str
    target: str
    where: str  # "--required FILE line N", for messages

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


@dataclass(frozen=True)
class Knowledge:
    """Parsed knowledge by variable name: required arcs, required adjacencies, forbidden arcs, tiers."""

    required: tuple[Arc, ...] = ()
    adjacent: tuple[Arc, ...] = ()  # undirected requirements: source - target
    forbidden: tuple[Arc, ...] = ()
    tiers: tuple[tuple[str, int, str], ...] = ()  # (variable, tier, where)

    @property
    def empty(self) -> bool:
        return not (self.required or self.adjacent or self.forbidden or self.tiers)

    def digest(self) -> str:
        """Content hash (names only, order-free) for the cache keys of the stages it affects."""
        content = {"required": sorted((a.source, a.target) for a in self.required),
                   "adjacent": sorted(sorted((a.source, a.target)) for a in self.adjacent),
                   "forbidden": sorted((a.source, a.target) for a in self.forbidden),
                   "tiers": sorted((v, t) for v, t, _ in self.tiers)}
        return _sha(content)

    def adjacency_digest(self) -> str | None:
        """Hash of the required adjacencies alone (all a CI restriction depends on), None if none."""
        pairs = sorted({tuple(sorted((a.source, a.target))) for a in self.required + self.adjacent})
        return _sha(pairs) if pairs else None

    @property
    def directional(self) -> bool:
        """Whether some constraint concerns one direction of a pair only (tiers, one-way arcs)."""
        one_way = {(a.source, a.target) for a in self.forbidden}
        return bool(self.required or self.tiers or any((t, s) not in one_way for s, t in one_way))

    def matrices(self, names: list[str]) -> "KnowledgeMatrices":
        """The constraints as boolean matrices over ``names``; an unknown name raises."""
        index = {name: i for i, name in enumerate(names)}

        def at(name: str, where: str) -> int:
            if name not in index:
                raise KnowledgeError(f"{where}: unknown variable {name!r} (not a variable of the data or score file)")
            return index[name]

        n = len(names)
        required = np.zeros((n, n), dtype=bool)
        adjacent = np.zeros((n, n), dtype=bool)
        allowed = ~np.eye(n, dtype=bool)
        for a in self.required:
            required[at(a.source, a.where), at(a.target, a.where)] = True
        for a in self.adjacent:
            adjacent[at(a.source, a.where), at(a.target, a.where)] = True
        for a in self.forbidden:
            allowed[at(a.source, a.where), at(a.target, a.where)] = False
        tier = np.full(n, -1, dtype=np.int64)
        for name, t, where in self.tiers:
            tier[at(name, where)] = t
        tiered = tier >= 0
        allowed &= ~(np.outer(tiered, tiered) & (tier[:, None] > tier[None, :]))
        adjacent |= adjacent.T
        return KnowledgeMatrices(names=list(names), required=required, adjacent=adjacent | required | required.T,
                                 allowed=allowed)


@dataclass
class KnowledgeMatrices:
    """``required[p, c]``: arc p -> c must be in the DAG; ``adjacent``: symmetric, pairs that must be
    adjacent (required arcs included); ``allowed[p, c]``: p may be a parent of c (no forbidden arc, no
    tier violation, diagonal False)."""

    names: list[str]
    required: np.ndarray
    adjacent: np.ndarray
    allowed: np.ndarray

    @property
    def undirected(self) -> np.ndarray:
        """Required adjacencies of no fixed direction, as pairs ``u < v``."""
        free = self.adjacent & ~(self.required | self.required.T)
        return np.argwhere(np.triu(free, 1))

    def restrict(self, allowed: np.ndarray | None) -> np.ndarray:
        """A restriction's ``allowed[p, c]`` (None: every arc) with the required adjacencies put
        back and the forbidden and tier-excluded arcs taken out."""
        base = np.ones_like(self.allowed) if allowed is None else np.asarray(allowed, dtype=bool)
        return (base | self.adjacent) & self.allowed

    def filter_table(self, table):
        """A score table (:class:`scores.table.ScoreTable`) without the parent sets the knowledge
        excludes: exact for forbidden arcs and tiers (a subset of an allowed set is allowed); for
        required arcs only if the table was not pruned (a set holding a required parent may have been
        pruned in favour of a subset without it)."""
        return table.select(table.respecting(self.allowed, self.required))

    def violations(self, dag: np.ndarray) -> list[str]:
        """The constraints a DAG (``dag[p, c]`` for p -> c) breaks, as readable arcs."""
        name = self.names
        out = [f"required {name[p]} -> {name[c]} missing" for p, c in np.argwhere(self.required & ~dag)]
        out += [f"forbidden {name[p]} -> {name[c]} present" for p, c in np.argwhere(dag & ~self.allowed)]
        out += [f"required adjacency {name[u]} - {name[v]} missing"
                for u, v in np.argwhere(np.triu(self.adjacent & ~(dag | dag.T), 1))]
        return out


def _sha(content) -> str:
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------- reading

ARC_COLUMNS, TIER_COLUMNS = ("source", "target", "directed"), ("variable", "tier")
Rows = tuple[tuple[str, ...], ...]
"""Knowledge given as objects, as the rows a file would hold: a header, then one tuple a line."""


def knowledge_rows(value, option: str) -> str | Rows:
    """A file name as it is, or knowledge objects as :data:`Rows` (hashable, so a run
    configuration can hold them): ``option`` ``required`` / ``forbidden`` take ``(source,
    target[, directed])`` items or a DataFrame of those columns, ``tiers`` a dict ``{variable:
    tier}``, a list of lists of variables (tier 0 first) or a DataFrame ``variable, tier``."""
    if isinstance(value, (str, Path)):
        return str(value)
    if hasattr(value, "columns") and hasattr(value, "itertuples"):  # a DataFrame
        header = tuple(str(c).strip().lower() for c in value.columns)
        return (header, *(tuple(_text(x) for x in row) for row in value.itertuples(index=False)))
    if option == "tiers":
        if isinstance(value, dict):
            return (TIER_COLUMNS, *((_text(v), _text(t)) for v, t in value.items()))
        if isinstance(value, (list, tuple)) and all(isinstance(t, (list, tuple, set)) for t in value):
            return (TIER_COLUMNS, *((_text(v), str(t)) for t, tier in enumerate(value) for v in tier))
        raise KnowledgeError(f"tiers must be a dict {{variable: tier}}, a list of lists of variables or a "
                             f"DataFrame with columns variable, tier; got {type(value).__name__}")
    if isinstance(value, (list, tuple)) and all(isinstance(a, (list, tuple)) for a in value):
        widths = {len(a) for a in value}
        if not widths <= {2, 3}:
            raise KnowledgeError(f"{option}: each arc must be a (source, target) pair or a (source, target, "
                                 f"directed) triple; got {next(a for a in value if len(a) not in (2, 3))!r}")
        width = max(widths, default=2)
        return (ARC_COLUMNS[:width], *(tuple(_text(x) for x in a) + ("true",) * (width - len(a)) for a in value))
    raise KnowledgeError(f"{option} must be a file name, a list of (source, target) pairs or a DataFrame with "
                         f"columns source, target (optional directed); got {type(value).__name__}")


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _rows(source: str | Path | Rows, option: str, columns: tuple[str, ...], optional: tuple[str, ...] = ()):
    """``(where, {column: text})`` for each non-blank data line of a CSV knowledge file, or each
    item of knowledge given as objects (:func:`knowledge_rows`)."""
    if not isinstance(source, (str, Path)):
        keyword = option.lstrip("-")
        header, *items = source
        _check_header(list(header), columns, optional, f"{keyword}: columns")
        for number, row in enumerate(items):
            yield from _checked_line(f"{keyword}[{number}]", header, row, columns)
        return
    path = Path(source)
    if not path.is_file():
        raise KnowledgeError(f"{option}: file not found: {path}")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        lines = [(i, row) for i, row in enumerate(csv.reader(handle), 1) if any(c.strip() for c in row)]
    if not lines:
        raise KnowledgeError(f"{option} {path}: empty file (expected a header {','.join(columns)})")
    head_line, header = lines[0]
    header = [h.strip().lower() for h in header]
    _check_header(header, columns, optional, f"{option} {path} line {head_line}: header")
    for number, row in lines[1:]:
        yield from _checked_line(f"{option} {path} line {number}", header, row, columns)


def _check_header(header: list[str], columns: tuple[str, ...], optional: tuple[str, ...], where: str) -> None:
    unknown = [h for h in header if h not in columns + optional]
    if unknown or any(c not in header for c in columns) or len(set(header)) != len(header):
        raise KnowledgeError(f"{where} must be {','.join(columns)}"
                             + (f" (optional column {', '.join(optional)})" if optional else "")
                             + f", got {','.join(header)!r}")


def _checked_line(where: str, header, row, columns: tuple[str, ...]):
    """``(where, {column: text})`` of one line with as many fields as the header, none required empty."""
    if len(row) != len(header):
        raise KnowledgeError(f"{where}: expected {len(header)} fields, got {len(row)}")
    values = {h: c.strip() for h, c in zip(header, row)}
    if any(not values[c] for c in columns):
        raise KnowledgeError(f"{where}: empty field")
    yield where, values


def read_arcs(source: str | Path | Rows, option: str) -> tuple[list[Arc], list[Arc]]:
    """Directed and undirected arcs of a ``source,target[,directed]`` file or of their rows."""
    directed, undirected = [], []
    for where, row in _rows(source, option, ("source", "target"), ("directed",)):
        arc = Arc(row["source"], row["target"], where)
        if arc.source == arc.target:
            raise KnowledgeError(f"{arc.where}: {arc} is a self-loop")
        flag = row.get("directed", "true").lower()
        if flag not in TRUE_WORDS | FALSE_WORDS:
            raise KnowledgeError(f"{arc.where}: directed must be true or false, got {row['directed']!r}")
        (directed if flag in TRUE_WORDS else undirected).append(arc)
    return directed, undirected


def _item(where: str) -> str:
    """The short place of ``where``: ``line 4`` of ``--tiers FILE line 4``, ``tiers[2]`` as it is."""
    return " ".join(where.split(" ")[-2:]) if " line " in where else where


def read_tiers(source: str | Path | Rows, option: str = "--tiers") -> list[tuple[str, int, str]]:
    """``(variable, tier, where)`` of a ``variable,tier`` file or its rows (integer tiers, each
    variable once)."""
    out, seen = [], {}
    for where, row in _rows(source, option, ("variable", "tier")):
        try:
            tier = int(row["tier"])
        except ValueError:
            raise KnowledgeError(f"{where}: tier must be an integer, got {row['tier']!r}") from None
        if tier < 0:
            raise KnowledgeError(f"{where}: tier must be a non-negative integer, got {tier}")
        if row["variable"] in seen:
            raise KnowledgeError(f"{where}: variable {row['variable']!r} already has a tier "
                                 f"({seen[row['variable']]})")
        seen[row["variable"]] = _item(where)
        out.append((row["variable"], tier, where))
    return out


def read_knowledge(required: str | Path | None = None, forbidden: str | Path | None = None,
                   tiers: str | Path | None = None) -> Knowledge:
    """Read and cross-check the knowledge files (see the module docstring); raises :class:`KnowledgeError`."""
    req, adj = read_arcs(required, "--required") if required is not None else ([], [])
    fdir, fund = read_arcs(forbidden, "--forbidden") if forbidden is not None else ([], [])
    forbid = fdir + fund + [Arc(a.target, a.source, a.where) for a in fund]
    tier_list = read_tiers(tiers) if tiers is not None else []
    tier_of = {v: t for v, t, _ in tier_list}
    banned = {(a.source, a.target): a for a in forbid}

    def exclusion(s: str, t: str) -> str | None:
        """Why ``s -> t`` cannot be an arc (None: it can)."""
        if (s, t) in banned:
            return f"forbidden ({banned[(s, t)].where})"
        if s in tier_of and t in tier_of and tier_of[s] > tier_of[t]:
            return f"against the tiers ({s} in tier {tier_of[s]}, {t} in tier {tier_of[t]})"
        return None

    both_ways = {(a.source, a.target) for a in req} & {(a.target, a.source) for a in req}
    adj += [a for a in req if (a.source, a.target) in both_ways and a.source < a.target]
    req = [a for a in req if (a.source, a.target) not in both_ways]
    directed, undirected = list(req), []
    for a in adj:
        out, back = exclusion(a.source, a.target), exclusion(a.target, a.source)
        if out and back:
            raise KnowledgeError(f"{a.where}: required adjacency {a.source} - {a.target} contradicts "
                                 f"{a} {out} and {a.target} -> {a.source} {back}")
        if out or back:
            directed.append(Arc(a.target, a.source, a.where) if out else a)
        else:
            undirected.append(a)
    for a in directed:
        why = exclusion(a.source, a.target)
        if why:
            raise KnowledgeError(f"{a.where}: required arc {a} is {why}")
    _check_acyclic(directed)
    return Knowledge(required=_unique(directed), adjacent=_unique(undirected), forbidden=_unique(forbid),
                     tiers=tuple(tier_list))


def _unique(arcs: list[Arc]) -> tuple[Arc, ...]:
    seen: dict[tuple[str, str], Arc] = {}
    for a in arcs:
        seen.setdefault((a.source, a.target), a)
    return tuple(seen.values())


def _check_acyclic(arcs: list[Arc]) -> None:
    names = sorted({a.source for a in arcs} | {a.target for a in arcs})
    index = {n: i for i, n in enumerate(names)}
    A = np.zeros((len(names), len(names)), dtype=bool)
    for a in arcs:
        A[index[a.source], index[a.target]] = True
    cycle = find_cycle(A)
    if cycle is not None:
        shown = ", ".join(f"{names[u]} -> {names[v]}" for u, v in zip(cycle, cycle[1:] + cycle[:1]))
        raise KnowledgeError(f"--required: the required arcs form a directed cycle: {shown}")


def knowledge_of(cfg) -> Knowledge:
    """The knowledge named by a run configuration's ``required``, ``forbidden`` and ``tiers`` (files
    or :data:`Rows`); the files are read once per process while their size and modification time
    stay the same."""
    paths = (cfg.required, cfg.forbidden, cfg.tiers)
    try:
        stamps = tuple(_stamp(Path(p)) if isinstance(p, str) else None for p in paths)
    except OSError:  # a missing or unreadable file: read_knowledge gives the error
        return read_knowledge(*paths)
    return _read_stamped(paths, stamps)


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


@lru_cache(maxsize=32)
def _read_stamped(paths, stamps) -> Knowledge:
    """:func:`read_knowledge` memoised on the files' stamps (``stamps`` only keys the memo)."""
    return read_knowledge(*paths)


def check_solver(knowledge: Knowledge, solver: str, treewidth: int | None) -> None:
    """Refuse, before any work, a solver that cannot honour this knowledge: undirected
    requirements need the ``adjacency`` tag (and no treewidth bound: the bounded ILP takes no
    adjacency rows), required arcs, one-way forbidden arcs and tiers the ``arcs`` tag
    (:data:`hybridbn.solving.TAGS`)."""
    tags = SOLVER[solver].tags
    if knowledge.adjacent and (ADJACENCY not in tags or treewidth is not None):
        a = knowledge.adjacent[0]
        raise KnowledgeError(f"--required: the undirected requirement {a.source} - {a.target} ({a.where}) "
                             f"is enforced by --solver {_either(ADJACENCY)} without --treewidth only; give it a "
                             "direction")
    if ARCS not in tags and knowledge.directional:
        raise KnowledgeError(f"--solver {solver} searches equivalence classes and cannot honour required arcs, "
                             f"one-way forbidden arcs or tiers; use --solver {_either(ARCS)} "
                             "(GES takes forbidden pairs, listed both ways or with directed=false)")


def _either(tag: str) -> str:
    """The solvers with ``tag``, as a message lists them (``ilp, kg or tabu``)."""
    *others, last = (m.name for m in SOLVER.methods if tag in m.tags)
    return f"{', '.join(others)} or {last}" if others else last


# ------------------------------------------------------------------------------- CI restriction

def keep_adjacent(restriction, adjacent: np.ndarray):
    """``restriction`` (a :class:`constraints.restriction.Restriction`) with every required pair allowed
    (the learners already keep them: their ``keep`` pairs are never tested; this is the guarantee)."""
    adjacent = np.asarray(adjacent, dtype=bool)
    if not (adjacent & ~restriction.allowed).any():
        return restriction
    records = restriction.records.copy()
    records["allowed"] = records["allowed"].to_numpy(dtype=bool) | adjacent[records["u"], records["v"]]
    return replace(restriction, allowed=restriction.allowed | adjacent, records=records)


# ------------------------------------------------------------------------------------- solvers

def solver_arcs(know: KnowledgeMatrices) -> dict[str, list[tuple[int, int]]]:
    """The knowledge as the plain arcs a solver takes (:class:`hybridbn.solving.SolveInputs`):
    ``required_arcs``, ``forbidden_arcs`` (every arc the knowledge excludes) and
    ``adjacent_pairs`` (the undirected requirements ``u - v``, ``u < v``)."""
    excluded = ~know.allowed & ~np.eye(len(know.names), dtype=bool)
    return {"required_arcs": [tuple(a) for a in np.argwhere(know.required).tolist()],
            "forbidden_arcs": [tuple(a) for a in np.argwhere(excluded).tolist()],
            "adjacent_pairs": [tuple(a) for a in know.undirected.tolist()]}


def check_solution(know: KnowledgeMatrices, parent_sets, solver: str) -> None:
    """Raise if a solver's DAG breaks the knowledge (it cannot honour it on this table)."""
    broken = know.violations(adjacency_from_parents(list(parent_sets), len(know.names)))
    if broken:
        raise KnowledgeError(f"--solver {solver} could not honour the knowledge: {'; '.join(broken[:5])}"
                             + (f" (and {len(broken) - 5} more)" if len(broken) > 5 else ""))


def add_adjacency_families(table, know: KnowledgeMatrices, allowed: np.ndarray, build):
    """``table`` plus, for each child ``c`` with undirected requirements ``c - p`` (p in P), the families
    of ``c`` that contain each non-empty ``R`` of P, pruned given ``R`` (a set dominated by a subset
    without a required neighbour may be the one that makes the pair adjacent).

    ``build(allowed, required)`` scores a table (the scores stage's options); only ``c`` gets parents.
    """
    parts = [table]
    free = know.adjacent & ~(know.required | know.required.T)
    for c in np.flatnonzero(free.any(axis=0)).tolist():
        partners = [p for p in np.flatnonzero(free[:, c]).tolist() if allowed[p, c]]
        for size in range(1, len(partners) + 1):
            for extra in itertools.combinations(partners, size):
                narrowed, need = np.zeros_like(allowed), np.zeros_like(allowed)
                narrowed[:, c], need[:, c] = allowed[:, c], know.required[:, c]
                need[list(extra), c] = True
                try:
                    built = build(narrowed, need)
                except ValueError:  # more required parents than the parent limit
                    continue
                parts.append(built.select(built.child == c))
    return _union(parts, table.names, table.meta)


def _union(tables: list[ScoreTable], names, meta) -> ScoreTable:
    """The rows of ``tables`` (over the same variables), a family held by several kept once, at its
    first place with its last score (as ``dict.update`` merges them), in the table's order."""
    child = np.concatenate([t.child for t in tables])
    sizes = np.concatenate([t.sizes for t in tables])
    members = np.concatenate([t.parents for t in tables])
    score = np.concatenate([t.score for t in tables])
    ptr, row = offsets(sizes), np.repeat(np.arange(child.size), sizes)
    family = np.full((child.size, int(sizes.max(initial=0)) + 1), -1, dtype=np.int64)  # child, parents, -1 pad
    family[:, 0] = child
    family[row, 1 + np.arange(members.size) - ptr[row]] = members
    ids = family_ids(family)
    first = np.unique(ids, return_index=True)[1]
    last = np.zeros(first.size, dtype=np.int64)
    np.maximum.at(last, ids, np.arange(child.size))
    keep = np.sort(first)
    kept_members = members[segment_indices(ptr[keep], sizes[keep])]
    return ScoreTable.from_columns(tables[0].n_vars, child[keep], offsets(sizes[keep]), kept_members,
                                   score[last[ids[keep]]], names, meta)
