"""Order-based treewidth-bounded structure learning: the machinery shared by k-G and k-A*.

Scanagatta, Corani, de Campos & Zaffalon (NIPS 2016), "Learning bounded treewidth Bayesian networks
with thousands of variables", section 3: sample an order of the variables; learn the first ``k + 1``
variables exactly (their DAG has treewidth at most ``k``) and start the k-tree as their clique; add the
remaining variables one at a time, each with a parent set inside a k-clique of the growing k-tree, to
which the new variable is then joined. The moral graph of the DAG stays a subgraph of the k-tree, so
the DAG has treewidth at most ``k``. Orders that differ only in the arrangement of their first
``k + 1`` variables are equivalent ("pruning orders"): each class is explored once. The anytime loop
keeps the best DAG over the explored orders. Section 4 defines the W-score (:func:`w_score`).

Per child, the candidate parent sets of size at most ``k`` are kept sorted by decreasing score in
padded integer arrays (:class:`CandidateLists`), so "the best parent set that is a clique of the
k-tree" is one vectorised test over a child's candidates (:meth:`GrowingKTree.feasible`).
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphs.dag import adjacency_from_parents
from graphs.ktree import KTree
from graphs.moral import moral_graph
from graphs.treedec import TreeDecomposition, validate_tree_decomposition
from hybridbn.errors import HybridBNError
from hybridbn.interrupt import stop_requested
from hybridbn.progress import REPORT_INTERVAL, Callback, Throttle, check_callback, progress_record
from hybridbn.solving import check_time_limit
from ilp.exact_dp import ExactDPError, exact_optimum
from scores.table import ParentSet, ScoreTable

logger = logging.getLogger(__name__)

ENUMERATE_LIMIT = 200_000
"""Order spaces with at most this many equivalence classes are enumerated (in a random order, so an
exhaustive run ends with status ``"exhausted"``); larger ones are sampled with duplicate rejection."""

ROOT_SOLVERS = ("dp", "ilp")
"""Exact learners for the first ``k + 1`` variables: Silander-Myllymäki DP or the GOBNILP-style ILP
(the paper uses Cussens 2011); both return an optimal DAG of the sub-table."""

TOL = 1e-9
"""Relative margin used when comparing scores and bounds."""


class BoundedSearchError(HybridBNError, ValueError):
    """Bad input to a treewidth-bounded learner, or no bounded DAG exists for the table."""


@dataclass
class BoundedResult:
    """A DAG of treewidth at most ``k`` with its certificate and search statistics.

    ``dag[p, c]`` is the arc ``p -> c``; ``score`` is ``table.score_of(parent_sets)``; ``ktree`` is the
    k-tree whose subgraph the moral graph is, and ``decomposition`` its tree decomposition, validated
    against the moral graph (width ``k``); ``order`` is the variable order that produced the DAG;
    ``n_orders`` counts the order classes explored; ``status`` is why the search stopped
    (``"time_limit"``, ``"max_orders"``, ``"exhausted"`` or ``"userinterrupt"``: a stop request of
    :mod:`hybridbn.interrupt`); ``stats`` holds further counters and
    ``history``, the ``(seconds, n_orders, score)`` of every improvement.
    """

    dag: np.ndarray
    parent_sets: list[ParentSet]
    score: float
    k: int
    ktree: KTree
    decomposition: TreeDecomposition
    order: tuple[int, ...]
    n_orders: int
    time_s: float
    status: str
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class OrderSolution:
    """The DAG found for one order: ``parent_sets`` per variable (global indices), the k-cliques the
    non-root variables ``order[k+1:]`` were joined to, and whether it is optimal for that order."""

    score: float
    parent_sets: list[ParentSet]
    attachments: list[tuple[int, ...]]
    proved: bool = False


def check_k(table: ScoreTable, k: int) -> None:
    """Raise :class:`BoundedSearchError` unless ``1 <= k <= n - 1`` (and the table is valid)."""
    table.validate()
    n = table.n_vars
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise BoundedSearchError(f"treewidth bound k must be an integer, got {k!r}")
    if k < 1:
        raise BoundedSearchError(f"treewidth bound k must be >= 1, got {k}")
    if k > n - 1:
        raise BoundedSearchError(f"treewidth bound k={k} exceeds n - 1 = {n - 1} for {n} variables")


def w_score(score: float, reference: float) -> float:
    """W-score of section 4: the relative worsening ``(G - T) / |G|`` of a bounded score ``T`` against
    the unbounded optimum (or best known) ``G``; 0 is best. The paper prints ``(G - T) / G`` for
    negative ``G`` and ``T`` while calling ``W`` a non-negative worsening, so the magnitude is meant."""
    if not (np.isfinite(score) and np.isfinite(reference)) or reference == 0:
        raise BoundedSearchError(f"W-score needs finite scores and a non-zero reference, got {score}, {reference}")
    return float((reference - score) / abs(reference))


# ------------------------------------------------------------------------------ candidate lists
@dataclass(frozen=True)
class CandidateLists:
    """Per child the candidate parent sets of size ``<= k``, by decreasing score (ties: smaller set,
    then lexicographic). ``parents[v]`` is ``(m_v, k)`` int, padded with the sentinel ``n``.
    :meth:`from_table` raises :class:`BoundedSearchError` when a child has no such set."""

    n: int
    k: int
    parents: list[np.ndarray]
    scores: list[np.ndarray]
    sets: list[list[ParentSet]]

    @classmethod
    def from_table(cls, table: ScoreTable, k: int) -> "CandidateLists":
        n = table.n_vars
        table = table.select(table.sizes <= k)
        missing = np.flatnonzero(np.diff(table.child_ptr) == 0)
        if missing.size:
            label = table.names[missing[0]] if table.names else int(missing[0])
            raise BoundedSearchError(f"child {label!r} has no candidate parent set of at most k={k} parents")
        padded = np.full((table.n_candidates, k), n, dtype=np.int64)
        position = np.arange(table.parents.size) - table.parent_ptr[table.member_row]
        padded[table.member_row, position] = table.parents
        # by child, decreasing score, smaller set, lexicographic (padding equal within a size)
        order = np.lexsort((*padded.T[::-1], table.sizes, -table.score, table.child))
        bounds = table.child_ptr[1:-1]
        parents = np.split(padded[order], bounds)
        sets = [[tuple(int(p) for p in row if p < n) for row in arr.tolist()] for arr in parents]
        return cls(n, k, parents, np.split(table.score[order], bounds), sets)

    def best_given_order(self, order: Sequence[int]) -> np.ndarray:
        """``best[i]``: the best score of ``order[i]`` with parents among ``order[:i]`` (``-inf`` if
        none), the admissible per-variable estimate of k-A* (section 3.1)."""
        pos = np.empty(self.n + 1, dtype=np.int64)
        pos[np.asarray(order)] = np.arange(self.n)
        pos[self.n] = -1
        best = np.full(self.n, -np.inf)
        for i, v in enumerate(order):
            ok = np.flatnonzero((pos[self.parents[v]] < i).all(axis=1))
            if ok.size:
                best[i] = self.scores[v][ok[0]]
        return best


# ------------------------------------------------------------------------------ growing k-tree
class GrowingKTree:
    """A k-tree under construction (Patil 1986 inductive definition, section 2.2), mutable and cheap.

    ``adj`` is ``(n+1, n+1)`` boolean: edges among inserted vertices, ``True`` on the diagonal of
    inserted vertices, and an all-``True`` sentinel row/column ``n`` (the padding of
    :class:`CandidateLists`). ``cliques`` are the (k+1)-cliques in creation order, ``vertex_cliques[u]``
    the indices of those containing ``u``; ``added`` and ``attachments`` record the joined vertices and
    their k-cliques.
    """

    def __init__(self, n: int, k: int, root: Sequence[int]):
        self.n, self.k = n, k
        self.adj = np.zeros((n + 1, n + 1), dtype=bool)
        self.adj[n, :] = self.adj[:, n] = True
        root = tuple(sorted(int(v) for v in root))
        self.adj[np.ix_(root, root)] = True
        self.root = root
        self.cliques: list[frozenset[int]] = []
        self.vertex_cliques: list[list[int]] = [[] for _ in range(n)]
        self.added: list[int] = []
        self.attachments: list[tuple[int, ...]] = []
        self._add_clique(root)

    def _add_clique(self, clique) -> None:
        idx = len(self.cliques)
        self.cliques.append(frozenset(clique))
        for u in clique:
            self.vertex_cliques[u].append(idx)

    def attach(self, v: int, q: tuple[int, ...]) -> None:
        """Join the new vertex ``v`` to the k-clique ``q`` (a sorted tuple of inserted vertices)."""
        self.adj[v, q] = self.adj[q, v] = True
        self.adj[v, v] = True
        self.added.append(v)
        self.attachments.append(q)
        self._add_clique((v, *q))

    def k_cliques(self) -> list[tuple[int, ...]]:
        """Every k-clique a new vertex may be joined to (sorted tuples), in creation order: the k-subsets
        of the root clique, then for each attachment ``q`` of ``v`` the sets ``q - {u} + {v}``."""
        out = [tuple(x for x in self.root if x != u) for u in self.root]
        for v, q in zip(self.added, self.attachments):
            out.extend(new_k_cliques(v, q))
        return out

    def feasible(self, cand: CandidateLists, v: int) -> np.ndarray:
        """Boolean mask over ``v``'s candidates: the parent set is a clique of the k-tree. A set of at
        most ``k`` vertices is a clique of a k-tree iff it lies in one of its k-cliques."""
        P = cand.parents[v]
        ok = np.ones(P.shape[0], dtype=bool)
        for i in range(self.k):
            for j in range(i, self.k):
                ok &= self.adj[P[:, i], P[:, j]]
        return ok

    def cliques_containing(self, parents: ParentSet) -> list[int]:
        """Indices of the (k+1)-cliques that contain the vertex set ``parents``."""
        if not parents:
            return list(range(len(self.cliques)))
        pivot = min(parents, key=lambda p: len(self.vertex_cliques[p]))
        return [c for c in self.vertex_cliques[pivot] if all(p in self.cliques[c] for p in parents)]

    def to_ktree(self, order: Sequence[int]) -> KTree:
        """The finished k-tree as a :class:`graphs.ktree.KTree` over the ``n`` variables."""
        A = self.adj[: self.n, : self.n].copy()
        np.fill_diagonal(A, False)
        return KTree(self.k, A, tuple(int(v) for v in order), tuple(self.attachments))


def new_k_cliques(v: int, q: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The k-cliques created by joining ``v`` to the k-clique ``q``: ``q - {u} + {v}`` for ``u`` in ``q``."""
    return [tuple(sorted((v, *(x for x in q if x != u)))) for u in q]


# ------------------------------------------------------------------------------ search context
class SearchContext:
    """What one anytime run shares across orders: the table, candidate lists, root cache and RNG."""

    def __init__(self, table: ScoreTable, k: int, seed: int, root_solver: str, deadline: float):
        if root_solver not in ROOT_SOLVERS:
            raise BoundedSearchError(f"root_solver must be one of {ROOT_SOLVERS}, got {root_solver!r}")
        self.table, self.k, self.n = table, k, table.n_vars
        self.cand = CandidateLists.from_table(table, k)
        self.rng = np.random.default_rng(seed)
        self.pick = random.Random(int(self.rng.integers(2**63))).randrange
        self.root_solver = root_solver
        self.deadline = deadline
        self.counters: dict[str, int] = {}
        self._roots: dict[tuple[int, ...], tuple[float, list[ParentSet]] | None] = {}

    def count(self, key: str, by: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + by

    def may_go_on(self) -> bool:
        """Whether time is left and no stop was requested (:mod:`hybridbn.interrupt`)."""
        return time.perf_counter() < self.deadline and stop_requested() is None

    def root(self, first: Sequence[int]) -> tuple[float, list[ParentSet]] | None:
        """Optimal DAG over the variables ``first`` (families with parents inside them): its score and
        the parent sets of those variables in global indices; ``None`` when there is none. Memoised."""
        key = tuple(sorted(int(v) for v in first))
        if key not in self._roots:
            self._roots[key] = learn_root(self.table, key, self.root_solver)
        return self._roots[key]

    def start(self, order: Sequence[int]) -> tuple[GrowingKTree, list[ParentSet | None], float] | None:
        """The k-tree, parent sets (``None`` = not yet assigned) and score after the root step."""
        first = order[: self.k + 1]
        root = self.root(first)
        if root is None:
            return None
        score, sets = root
        parent_sets: list[ParentSet | None] = [None] * self.n
        for v, ps in zip(sorted(first), sets):
            parent_sets[v] = ps
        return GrowingKTree(self.n, self.k, first), parent_sets, score


def learn_root(table: ScoreTable, variables: tuple[int, ...], solver: str) -> tuple[float, list[ParentSet]] | None:
    """Exact learning of the first ``k + 1`` variables of an order (section 3, "Initialization"):
    the optimum of the sub-table of families whose parents lie in ``variables`` (sorted)."""
    inside = table.select(table.within(variables))
    if not np.diff(inside.child_ptr)[list(variables)].all():
        return None
    local = np.zeros(table.n_vars, dtype=np.int64)
    local[list(variables)] = np.arange(len(variables))  # renumbered 0..k in the order of variables
    sub = ScoreTable.from_columns(len(variables), local[inside.child], inside.parent_ptr, local[inside.parents],
                                  inside.score)
    if solver == "ilp":
        from ilp import ILPInfeasibleError, solve_ilp  # SCIP is loaded only when asked for

        try:
            res = solve_ilp(sub)
        except ILPInfeasibleError:
            return None
        score, sets = res.objective, res.parent_sets
    else:
        try:
            score, sets = exact_optimum(sub)
        except ExactDPError:
            return None
    return float(score), [tuple(variables[p] for p in ps) for ps in sets]


# ------------------------------------------------------------------------------ orders
class OrderSampler:
    """Distinct equivalence classes of orders (same first ``k + 1`` as a set, same rest) in random
    order. Small spaces are enumerated and shuffled; large ones are sampled, rejecting duplicates."""

    def __init__(self, n: int, k: int, rng: np.random.Generator, enumerate_limit: int = ENUMERATE_LIMIT):
        self.n, self.k, self.rng = n, k, rng
        self.total = math.perm(n, n - k - 1)
        self.n_duplicates = 0
        self.n_served = 0
        self._classes = None
        if self.total <= enumerate_limit:
            classes = [first + rest for first in itertools.combinations(range(n), k + 1)
                       for rest in itertools.permutations([v for v in range(n) if v not in first])]
            self._classes = [classes[i] for i in rng.permutation(len(classes))]
        self._seen: set[bytes] = set()

    def next(self) -> tuple[int, ...] | None:
        """The next unexplored class as an order, or ``None`` when all have been served."""
        if self.n_served >= self.total:
            return None
        if self._classes is not None:
            order = self._classes[self.n_served]
        else:
            while True:
                perm = self.rng.permutation(self.n)
                perm[: self.k + 1].sort()
                key = perm.tobytes()
                if key not in self._seen:
                    break
                self.n_duplicates += 1
            self._seen.add(key)
            order = tuple(perm.tolist())
        self.n_served += 1
        return order


# ------------------------------------------------------------------------------ anytime loop
def check_limits(time_limit: float | None, max_orders: int | None) -> None:
    check_time_limit(time_limit, BoundedSearchError)
    if max_orders is not None and (isinstance(max_orders, bool) or not isinstance(max_orders, (int, np.integer))
                                   or max_orders < 1):
        raise BoundedSearchError(f"max_orders must be a positive integer, got {max_orders!r}")


def anytime_search(
    table: ScoreTable,
    k: int,
    solve_order: Callable[[SearchContext, tuple[int, ...], float], OrderSolution | None],
    *,
    time_limit: float | None,
    max_orders: int | None,
    seed: int,
    root_solver: str,
    progress: Callback | None,
    name: str,
) -> BoundedResult:
    """Explore order classes until the time limit or a stop request (one order is always tried),
    ``max_orders`` or exhaustion, keeping the best DAG; ``progress`` (a callable or ``None``)
    receives a progress record (:mod:`hybridbn.progress`; ``orders`` explored, solver ``name``)
    about once a second and a last one with the ``status``.

    ``solve_order(ctx, order, best_score)`` returns the DAG of one order (or ``None``); ``best_score``
    is the incumbent (``-inf`` at first), which a solver may use to prune. Without ``time_limit`` and
    ``max_orders`` the whole space is explored, which is refused when it is not enumerable.
    """
    check_k(table, k)
    check_limits(time_limit, max_orders)
    progress = check_callback(progress)
    start = time.perf_counter()
    deadline = start + time_limit if time_limit is not None else math.inf
    ctx = SearchContext(table, k, seed, root_solver, deadline)
    sampler = OrderSampler(table.n_vars, k, ctx.rng)
    if time_limit is None and max_orders is None and sampler.total > ENUMERATE_LIMIT:
        raise BoundedSearchError(
            f"{sampler.total} order classes cannot be explored exhaustively: give time_limit or max_orders")
    best: OrderSolution | None = None
    best_order: tuple[int, ...] = ()
    history: list[tuple[float, int, float]] = []
    n_orders = 0
    throttle = Throttle(REPORT_INTERVAL, time.perf_counter)

    def record(**extra):
        return progress_record("solve", name, time.perf_counter() - start, limit=time_limit,
                               primal=None if best is None else best.score, orders=n_orders, **extra)

    while True:
        if max_orders is not None and n_orders >= max_orders:
            status = "max_orders"
            break
        if n_orders and not ctx.may_go_on():  # the first order is always tried
            status = "time_limit" if stop_requested() is None else "userinterrupt"
            break
        order = sampler.next()
        if order is None:
            status = "exhausted"
            break
        sol = solve_order(ctx, order, -math.inf if best is None else best.score)
        n_orders += 1
        if sol is not None and (best is None or sol.score > best.score + TOL * abs(best.score)):
            best, best_order = sol, order
            history.append((time.perf_counter() - start, n_orders, sol.score))
            logger.info("%s: order %d improves to %.6f", name, n_orders, sol.score)
        if progress is not None and throttle.ready():
            progress(record())
    if progress is not None:
        progress(record(status=status))
    if best is None:
        why = {"time_limit": "the time limit was reached", "userinterrupt": "a stop was requested"}.get(
            status, "some child lacks a usable parent set")
        raise BoundedSearchError(f"no treewidth-{k} DAG found in {n_orders} orders: {why}")
    stats = {"duplicates_rejected": sampler.n_duplicates, "order_classes": sampler.total,
             "history": history, **ctx.counters}
    return finish(table, k, best, best_order, n_orders, time.perf_counter() - start, status, stats)


def finish(table: ScoreTable, k: int, sol: OrderSolution, order: tuple[int, ...], n_orders: int,
           elapsed: float, status: str, stats: dict[str, Any]) -> BoundedResult:
    """Assemble the result and certify it: rebuild the k-tree, produce its tree decomposition and
    validate it against the moral graph of the DAG (width must be at most ``k``)."""
    n = table.n_vars
    tree = GrowingKTree(n, k, order[: k + 1])
    for v, q in zip(order[k + 1 :], sol.attachments):
        tree.attach(v, q)
    ktree = tree.to_ktree(order)
    dec = ktree.tree_decomposition()
    dag = adjacency_from_parents(sol.parent_sets, n)
    width = validate_tree_decomposition(moral_graph(dag), dec.bags, dec.edges)
    if width > k:
        raise RuntimeError(f"internal error: decomposition of width {width} > k={k}")
    score = table.score_of(sol.parent_sets)
    return BoundedResult(dag, list(sol.parent_sets), score, k, ktree, dec, order, n_orders, elapsed, status, stats)
