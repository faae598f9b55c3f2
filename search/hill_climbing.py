"""Hill climbing and tabu search over DAGs, as bnlearn's ``hc`` and ``tabu`` (Scutari 2010).

Greedy search in the space of DAGs (Russell & Norvig 2009, chapter 4; Daly & Shen 2007 for the
cached score deltas): each step applies the legal single-arc addition, deletion or reversal of
largest score change, ties broken as bnlearn breaks them (additions, then deletions, then
reversals, each by parent and then child; a later move wins only by more than the tolerance below),
so that both take the same path. **The search moves within the table's families.** A move is legal
when the graph stays acyclic and each changed child gets a family of the table: the new parent set
itself when it is a row, otherwise (the table pruned it) the best row inside it that keeps the arc
just added, which exact pruning (``scores.candidates``) guarantees to score at least as well, as
``bps`` does in Silander & Myllymäki (2006). So each child always holds a table family, the DAG's
score is the sum of its rows, and on an unpruned table the search is exactly bnlearn's. Parent sets
larger than the table's largest family are not reached; the table also enforces the parent limit,
the restriction and forbidden arcs. Required arcs are neither deleted nor reversed (the families
without them are dropped), forbidden arcs never added.

* **Hill climbing** stops at a local optimum: no move improves the score by more than a
  tolerance of ``TOL`` times the largest absolute family score (float noise, e.g. reversing a
  covered arc under a score-equivalent score, is not an improvement).
* **Tabu search** (``tabu > 0``) takes the best improving move that does not return to one of
  the last ``tabu`` graphs visited; where there is none, the best such move that does not
  improve, and it stops where it would need more than ``max_tabu`` of those since its last new
  best (bnlearn's rule); it returns the best DAG seen. Graphs are compared by a 64-bit Zobrist
  hash of their arc sets (a collision, odds about ``2^-64`` per pair, could only make one move tabu wrongly).
* **Random restarts**: after a climb ends, the best DAG so far is perturbed by ``perturb``
  random legal moves (each drawn uniformly among the legal additions, deletions and reversals)
  and the climb starts again, ``restarts`` times; the best DAG of all climbs is returned.
* ``max_iter`` bounds the moves of all climbs together (perturbations not counted); the search
  is anytime under ``time_limit``, checked between compiled chunks of about ``CHUNK_SECONDS``.

The climb itself is compiled (:mod:`search.hc_kernels`). :func:`hill_climb_on_data` runs the same
search on families scored on demand from the data, for problems whose full table would be too
large: the kernel flags the families a move would reach that are not yet scored, and they are
scored before the next move, so its path is the one of :func:`hill_climb` on the unpruned table.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphs.dag import adjacency_from_parents, find_cycle, is_acyclic, topological_order
from hybridbn.checks import check_parent_limit
from hybridbn.errors import HybridBNError
from hybridbn.interrupt import stop_requested
from hybridbn.progress import REPORT_INTERVAL, Callback, Throttle, Trajectory, check_callback, progress_record
from hybridbn.solving import check_time_limit
from scores.local import local_score_function
from scores.table import ParentSet, ScoreTable, offsets
from search import hc_kernels as hk

logger = logging.getLogger(__name__)

TOL = 1e-12
"""Relative tolerance, times the largest absolute family score of the store: a move must improve
the score, and beat an earlier move of the scan, by more than it."""

CHUNK_SECONDS = 0.25
"""Target seconds of one compiled chunk of steps: limits, stop requests and progress are checked between."""

TABU_LENGTH = 10
"""bnlearn's default tabu list length (``tabu``); ``max.tabu`` defaults to it."""


class HillClimbError(HybridBNError, ValueError):
    """Bad input to the hill climbing or tabu search."""


@dataclass
class HillClimbResult:
    """The best DAG found: one parent set per child and its score (the sum of its families' table
    scores); ``status`` is ``"converged"`` (every climb ended), ``"max_iter"``, ``"timelimit"``
    or ``"userinterrupt"`` (:mod:`hybridbn.interrupt`); ``n_iterations`` counts the moves of all
    climbs, ``n_restarts`` the restarts begun; ``trajectory`` holds the ``(seconds, best score,
    None)`` points of :class:`hybridbn.progress.Trajectory` (a heuristic has no bound);
    ``stats`` further counters (``families``: the families in the store)."""

    parent_sets: list[ParentSet]
    score: float
    status: str
    n_iterations: int
    n_restarts: int
    time_s: float
    trajectory: list[tuple[float, float | None, float | None]]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def dag(self) -> np.ndarray:
        """Adjacency matrix ``dag[p, v]`` of the arcs ``p -> v``."""
        return adjacency_from_parents(self.parent_sets, len(self.parent_sets))


@dataclass(frozen=True)
class SearchSettings:
    """How a search runs (bnlearn's names in brackets): ``tabu`` list length (``tabu``; 0: hill
    climbing), ``max_tabu`` moves that do not improve since the last new best (``max.tabu``,
    default ``tabu``), ``max_iter`` moves in all (``max.iter``; None: no limit), ``restarts``
    (``restart``), ``perturb`` random moves per restart (``perturb``), ``time_limit`` seconds,
    ``seed`` of the perturbations and the ``progress`` callback (:mod:`hybridbn.progress`)."""

    tabu: int = 0
    max_tabu: int | None = None
    max_iter: int | None = None
    restarts: int = 0
    perturb: int = 1
    time_limit: float | None = None
    seed: int = 0
    progress: Callback | None = None

    def __post_init__(self):
        for name, low in (("tabu", 0), ("restarts", 0), ("perturb", 0), ("seed", 0)):
            _check_int(name, getattr(self, name), low)
        for name, low in (("max_tabu", 1), ("max_iter", 0)):
            if getattr(self, name) is not None:
                _check_int(name, getattr(self, name), low)
        object.__setattr__(self, "time_limit", check_time_limit(self.time_limit, HillClimbError))
        object.__setattr__(self, "progress", check_callback(self.progress))

    @property
    def solver(self) -> str:
        return "tabu" if self.tabu else "hc"


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise HillClimbError(f"{name} must be an integer >= {low}, got {value!r}")


# ------------------------------------------------------------------------------------ store


def _allocate(capacity: int, width: int) -> hk.Families:
    slots = 1 << max(1, 2 * capacity - 1).bit_length()
    return hk.Families(np.zeros(capacity, np.int32), np.zeros(capacity, np.int32),
                       np.zeros((capacity, width), np.int32), np.zeros(capacity), np.zeros(slots, np.uint64),
                       np.full(slots, -1, np.int64), np.zeros(1, np.int64))


class FamilyStore:
    """The families the search may move to (:class:`search.hc_kernels.Families`), growing by doubling."""

    def __init__(self, capacity: int, width: int):
        self.arrays = _allocate(max(1, capacity), max(1, width))

    @classmethod
    def of_table(cls, table: ScoreTable) -> "FamilyStore":
        """Every row of ``table``; store row ``f`` is table row ``f``."""
        store = cls(table.n_candidates, int(table.sizes.max(initial=0)))
        hk.fill_families(store.arrays, table.child, table.parent_ptr, table.parents, table.score)
        return store

    @property
    def count(self) -> int:
        return int(self.arrays.count[0])

    def add(self, v: int, members: ParentSet, score: float) -> int:
        """Store the family ``members -> v`` (ascending) and return its row."""
        if self.count == self.arrays.child.size:
            old, self.arrays = self.arrays, _allocate(2 * self.count, self.arrays.members.shape[1])
            for new_col, old_col in zip(self.arrays[:4], old[:4]):
                new_col[:old_col.shape[0]] = old_col
            self.arrays.count[0] = old.count[0]
            hk.rehash(self.arrays)
        hk.insert_family(self.arrays, v, np.asarray(members, dtype=np.int32), float(score))
        return self.count - 1

    def parents(self, row: int) -> ParentSet:
        return tuple(self.arrays.members[row, :self.arrays.size[row]].tolist())

    def total(self, rows: np.ndarray) -> float:
        """Score of the DAG of these family rows, summed in child order (as ``ScoreTable.score_of``)."""
        return float(sum(self.arrays.score[rows].tolist()))


def candidate_moves(n: int, parent: np.ndarray, child: np.ndarray, required: np.ndarray) -> hk.Moves:
    """The :class:`search.hc_kernels.Moves` of the distinct arcs ``parent -> child``."""
    codes = np.unique(np.asarray(child, np.int64) * n + np.asarray(parent, np.int64))
    child, parent = codes // n, codes % n
    opposite = parent * n + child
    at = np.minimum(np.searchsorted(codes, opposite), max(codes.size - 1, 0))
    reverse = np.where(codes[at] == opposite, at, -1) if codes.size else at
    scan = np.lexsort((child, parent)).astype(np.int64)
    return hk.Moves(offsets(np.bincount(child, minlength=n)), parent.astype(np.int32), child.astype(np.int32),
                    reverse.astype(np.int64), required[parent, child], scan)


def _new_graph(n: int, width: int, n_moves: int, settings: SearchSettings) -> hk.Graph:
    words = np.zeros(2, np.uint64)
    words[hk.RNG] = np.uint64(settings.seed % 2 ** 64)
    return hk.Graph(parents=np.zeros((n, max(1, width)), np.int32), n_parents=np.zeros(n, np.int32),
                    row=np.zeros(n, np.int64), key=np.zeros(n, np.uint64), arc=np.zeros(n_moves, np.bool_),
                    delta=np.zeros(n_moves), target=np.zeros(n_moves, np.int64), best_row=np.zeros(n, np.int64),
                    tabu=np.zeros(max(1, settings.tabu), np.uint64), counters=np.zeros(6, np.int64), words=words,
                    values=np.zeros(2), need=np.zeros(n, np.bool_), rejected=np.zeros(3 * n_moves, np.int64),
                    seen=np.zeros(n, np.int64), stack=np.zeros(n, np.int32), work=np.zeros(width + 1, np.int32),
                    chosen=np.zeros(width + 1, np.int32))


# ----------------------------------------------------------------------------------- search


class _Search:
    """A store, its candidate moves and the current graph; with a ``scorer`` (the on-demand path,
    families of at most ``palim`` parents) the families flagged by the kernel are scored on the way."""

    def __init__(self, store: FamilyStore, moves: hk.Moves, settings: SearchSettings,
                 scorer: Callable[[int, ParentSet], float] | None = None, palim: int = -1):
        self.store, self.moves, self.settings, self.scorer = store, moves, settings, scorer
        self.open_palim = palim if scorer is not None else -1
        self.known = {}  # (child, parents) -> row, of the on-demand store
        n = moves.ptr.size - 1
        self.graph = _new_graph(n, store.arrays.members.shape[1], moves.parent.size, settings)

    def family(self, v: int, parents: ParentSet) -> int:
        """Row of a family of the on-demand store, scored and added when new."""
        key = (v, parents)
        if key not in self.known:
            self.known[key] = self.store.add(v, parents, self.scorer(v, parents))
        return self.known[key]

    def load(self, rows: np.ndarray) -> None:
        hk.load(self.store.arrays, self.moves, self.graph, rows, self.open_palim)
        self.serve()

    def serve(self) -> None:
        """Score the families the kernel flagged, then refresh those children's deltas."""
        g, moves = self.graph, self.moves
        while g.counters[hk.N_NEED]:
            children = np.flatnonzero(g.need).tolist()
            g.need[:] = False
            g.counters[hk.N_NEED] = 0
            for v in children:
                current = set(g.parents[v, :g.n_parents[v]].tolist())
                for q in range(moves.ptr[v], moves.ptr[v + 1]):
                    p = int(moves.parent[q])
                    if p in current and not moves.required[q]:
                        self.family(v, tuple(sorted(current - {p})))
                    elif p not in current and len(current) < self.open_palim:
                        self.family(v, tuple(sorted(current | {p})))
                hk.refresh_child(self.store.arrays, moves, g, v, self.open_palim)

    def climb(self, tol: float, max_steps: int) -> tuple[int, int]:
        s = self.settings
        reason, steps = hk.climb(self.store.arrays, self.moves, self.graph, s.tabu > 0,
                                 s.max_tabu or s.tabu or 1, tol, self.open_palim, max_steps)
        self.serve()
        return int(reason), int(steps)

    def perturb(self, rows: np.ndarray) -> None:
        """Make ``rows`` current, perturb it and begin a climb there."""
        self.load(rows)
        for _ in range(self.settings.perturb):
            if hk.perturb_once(self.store.arrays, self.moves, self.graph, self.open_palim):
                self.serve()
        hk.restart_climb(self.graph)

    def run(self, start: np.ndarray) -> HillClimbResult:
        """The anytime driver: compiled chunks of steps, restarts, limits, stop requests and
        progress records (about once a second, and a last one with the status)."""
        s, g, store = self.settings, self.graph, self.store
        t0 = time.perf_counter()
        tol = TOL * max(1.0, float(np.abs(store.arrays.score[:store.count]).max(initial=0.0)))
        self.load(start)
        hk.restart_climb(g)
        best_rows, best = g.row.copy(), store.total(g.row)
        trajectory = Trajectory()
        trajectory.add(0.0, best, None)
        iterations, restarts, chunk, status = 0, 0, 16, None
        throttle = Throttle(REPORT_INTERVAL, time.perf_counter)

        def record(**extra) -> dict:
            return progress_record("solve", s.solver, time.perf_counter() - t0, limit=s.time_limit, primal=best,
                                   iterations=iterations, restarts=restarts, **extra)

        while status is None:
            steps_cap = chunk if s.max_iter is None else min(chunk, s.max_iter - iterations)
            began = time.perf_counter()
            reason, steps = self.climb(tol, steps_cap)
            now = time.perf_counter()
            iterations += steps
            chunk = _next_chunk(chunk, now - began)
            climb_best = store.total(g.best_row)
            if climb_best > best:
                best_rows, best = g.best_row.copy(), climb_best
                trajectory.add(now - t0, best, None)
            if reason == hk.CONVERGED and restarts == s.restarts:
                status = "converged"
            elif s.max_iter is not None and iterations >= s.max_iter:
                status = "max_iter"
            elif s.time_limit is not None and time.perf_counter() - t0 >= s.time_limit:
                status = "timelimit"
            elif stop_requested() is not None:
                status = "userinterrupt"
            elif reason == hk.CONVERGED:
                restarts += 1
                self.perturb(best_rows)
            if s.progress is not None and status is None and throttle.ready():
                s.progress(record())
        if s.progress is not None:
            s.progress(record(status=status))
        elapsed = time.perf_counter() - t0
        logger.debug("%s: score %.6f after %d moves and %d restarts (%s, %.2f s)", s.solver, best, iterations,
                     restarts, status, elapsed)
        return HillClimbResult([store.parents(r) for r in best_rows.tolist()], best, status, iterations, restarts,
                               elapsed, trajectory.finish(elapsed, best, None), {"families": store.count})


def _next_chunk(chunk: int, seconds: float) -> int:
    """Steps of the next chunk, doubled or halved towards :data:`CHUNK_SECONDS`."""
    if seconds < CHUNK_SECONDS / 4:
        return min(2 * chunk, 1 << 24)
    if seconds > 2 * CHUNK_SECONDS:
        return max(1, chunk // 2)
    return chunk


# ------------------------------------------------------------------------------ knowledge


def _arc_matrix(arcs, n: int, what: str) -> np.ndarray:
    """Boolean ``(n, n)`` matrix of arcs given as ``(parent, child)`` index pairs."""
    mat = np.zeros((n, n), dtype=bool)
    for arc in arcs:
        try:
            p, v = (int(end) for end in arc)
        except (TypeError, ValueError):
            raise HillClimbError(f"{what} arc {arc!r} is not a (parent, child) pair of indices") from None
        if not (0 <= p < n and 0 <= v < n) or p == v:
            raise HillClimbError(f"{what} arc {arc!r} is not a pair of distinct nodes in 0..{n - 1}")
        mat[p, v] = True
    return mat


def _knowledge(n: int, required_arcs, forbidden_arcs) -> tuple[np.ndarray, np.ndarray]:
    """The required and forbidden arcs as boolean ``[p, v]`` matrices, checked against each other."""
    required = _arc_matrix(required_arcs, n, "required")
    forbidden = _arc_matrix(forbidden_arcs, n, "forbidden")
    if (required & forbidden).any():
        p, v = np.argwhere(required & forbidden)[0]
        raise HillClimbError(f"arc {p} -> {v} is both required and forbidden")
    cycle = find_cycle(required)
    if cycle is not None:
        raise HillClimbError(f"required arcs form a directed cycle: {cycle + cycle[:1]}")
    return required, forbidden


def _start_rows(n: int, start: Sequence[Iterable[int]],
                find: Callable[[int, ParentSet], int | None]) -> np.ndarray:
    """The store rows of a start DAG given as parent sets; ``find`` maps a family to its row."""
    if len(start) != n:
        raise HillClimbError(f"start must give one parent set per variable ({n}), got {len(start)}")
    sets = [tuple(sorted(int(p) for p in ps)) for ps in start]
    if not is_acyclic(adjacency_from_parents(sets, n)):
        raise HillClimbError("start is not acyclic")
    rows = []
    for v, ps in enumerate(sets):
        row = find(v, ps)
        if row is None:
            raise HillClimbError(f"start family {ps} -> {v} is not in the table (after the parent limit and the "
                                 "required and forbidden arcs)")
        rows.append(row)
    return np.asarray(rows, dtype=np.int64)


# ------------------------------------------------------------------------------- table path


def _default_start(table: ScoreTable, required: np.ndarray) -> np.ndarray:
    """bnlearn's start, the empty graph plus the required arcs, where those families are in the
    table; a child without that family takes its best family whose parents all precede it in a
    topological order of the required arcs (every family holds the required parents)."""
    position = np.empty(table.n_vars, dtype=np.int64)
    position[topological_order(required)] = np.arange(table.n_vars)
    earlier = np.bincount(table.member_row[position[table.parents] < position[table.child[table.member_row]]],
                          minlength=table.n_candidates) == table.sizes
    exact = table.sizes == required.sum(axis=0)[table.child]
    rows = []
    for v in range(table.n_vars):
        own = slice(table.child_ptr[v], table.child_ptr[v + 1])
        fits = np.flatnonzero(exact[own]) if exact[own].any() else np.flatnonzero(earlier[own])
        if not fits.size:
            raise HillClimbError(f"no start DAG: child {table.label(v)!r} has no family with only required "
                                 "parents or parents earlier in their order; pass start=")
        rows.append(table.child_ptr[v] + fits[0])
    return np.asarray(rows, dtype=np.int64)


def hill_climb(
    table: ScoreTable,
    *,
    tabu: int = 0,
    max_tabu: int | None = None,
    max_iter: int | None = None,
    restarts: int = 0,
    perturb: int = 1,
    required_arcs: Iterable[tuple[int, int]] = (),
    forbidden_arcs: Iterable[tuple[int, int]] = (),
    palim: int | None = None,
    start: Sequence[Iterable[int]] | None = None,
    time_limit: float | None = None,
    seed: int = 0,
    progress: Callback | None = None,
) -> HillClimbResult:
    """Hill climbing (``tabu=0``, bnlearn's ``hc``) or tabu search (``tabu > 0``, bnlearn's
    ``tabu``) over the DAGs whose families are rows of ``table`` (see the module docstring).

    ``required_arcs`` / ``forbidden_arcs`` are ``(parent, child)`` index pairs (as
    :func:`ilp.solve_ilp` takes them); ``palim`` drops families of more parents; ``start`` is one
    parent set per child (default: the empty graph plus the required arcs). ``progress`` (a
    callable or None) receives progress records (:mod:`hybridbn.progress`, solver ``"hc"`` or
    ``"tabu"``, the best score as ``primal``, plus ``iterations`` and ``restarts``) about once a
    second and a last one with the ``status``. Raises :class:`HillClimbError` on bad input and
    :class:`scores.table.ScoreTableError` on a malformed table.
    """
    settings = SearchSettings(tabu, max_tabu, max_iter, restarts, perturb, time_limit, seed, progress)
    if not isinstance(table, ScoreTable):
        raise HillClimbError(f"expected a ScoreTable, got {type(table).__name__}")
    table.validate()
    n = table.n_vars
    required, forbidden = _knowledge(n, required_arcs, forbidden_arcs)
    keep = table.respecting(~forbidden, required)
    palim = check_parent_limit(palim, HillClimbError)
    if palim is not None:
        keep &= table.sizes <= palim
    left = np.bincount(table.child[keep], minlength=n)
    if not left.all():
        raise HillClimbError(f"child {table.label(int(np.argmin(left)))!r} has no family left after the parent "
                             "limit and the required and forbidden arcs")
    kept = table if keep.all() else table.select(keep)
    store = FamilyStore.of_table(kept)
    moves = candidate_moves(n, kept.parents, kept.child[kept.member_row], required)

    def find(v: int, ps: ParentSet) -> int | None:
        try:
            return kept.row_of(v, ps)
        except KeyError:
            return None

    rows = _default_start(kept, required) if start is None else _start_rows(n, start, find)
    return _Search(store, moves, settings).run(rows)


def tabu_search(table: ScoreTable, *, tabu: int = TABU_LENGTH, max_tabu: int | None = None,
                **options) -> HillClimbResult:
    """Tabu search with bnlearn's defaults: a tabu list of 10 graphs, ``max_tabu = tabu``; the
    other options as :func:`hill_climb`."""
    _check_int("tabu", tabu, 1)
    return hill_climb(table, tabu=tabu, max_tabu=max_tabu, **options)


# -------------------------------------------------------------------------- on-demand path


def hill_climb_on_data(
    data: np.ndarray,
    arities: np.ndarray,
    score: str = "bdeu",
    ess: float = 1.0,
    structure_prior: float | None = None,
    *,
    allowed: np.ndarray | None = None,
    required_arcs: Iterable[tuple[int, int]] = (),
    forbidden_arcs: Iterable[tuple[int, int]] = (),
    palim: int | None = 3,
    start: Sequence[Iterable[int]] | None = None,
    **options,
) -> HillClimbResult:
    """:func:`hill_climb` (same ``options``: ``tabu``, ``max_tabu``, ``max_iter``, ``restarts``,
    ``perturb``, ``time_limit``, ``seed``, ``progress``) with families scored on demand by
    :func:`scores.local.local_score_function` and kept in a store, for problems whose full table
    would be too large. Families are those of at most ``palim`` parents (None: any) drawn from
    ``allowed[p, v]`` (default: all) less the forbidden arcs and holding the required parents;
    nothing is pruned."""
    settings = SearchSettings(**options)
    data = np.asarray(data)
    if data.ndim != 2:
        raise HillClimbError(f"data must be a (rows, variables) matrix, got shape {data.shape}")
    n = data.shape[1]
    allowed = np.ones((n, n), dtype=bool) if allowed is None else np.asarray(allowed)
    if allowed.shape != (n, n) or allowed.dtype != bool:
        raise HillClimbError(f"allowed must be a boolean ({n}, {n}) matrix, got {allowed.dtype} {allowed.shape}")
    required, forbidden = _knowledge(n, required_arcs, forbidden_arcs)
    allowed = allowed & ~forbidden & ~np.eye(n, dtype=bool)
    if (required & ~allowed).any():
        p, v = np.argwhere(required & ~allowed)[0]
        raise HillClimbError(f"required arc {p} -> {v} is not allowed")
    palim = check_parent_limit(palim, HillClimbError)
    palim = n - 1 if palim is None else palim
    if required.sum(axis=0).max(initial=0) > palim:
        raise HillClimbError(f"a child has more required parents than palim={palim}")
    scorer = local_score_function(data, arities, score, ess, structure_prior)
    parent, child = np.nonzero(allowed)
    search = _Search(FamilyStore(4 * n, palim), candidate_moves(n, parent, child, required), settings,
                     scorer=scorer, palim=palim)
    if start is None:
        start = [np.flatnonzero(required[:, v]) for v in range(n)]

    def find(v: int, ps: ParentSet) -> int | None:
        fits = len(ps) <= palim and allowed[list(ps), v].all() and set(np.flatnonzero(required[:, v])) <= set(ps)
        return search.family(v, ps) if fits else None

    return search.run(_start_rows(n, start, find))
