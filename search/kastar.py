"""k-A*: optimal treewidth-bounded DAG for each sampled order by A* search.

Scanagatta, Corani, de Campos & Zaffalon (NIPS 2016), section 3.1. Along an order, a state is the DAG
and k-tree after placing a prefix of the variables; its successors choose a k-clique ``Q`` of the
k-tree for the next variable, which takes its best parent set inside ``Q`` and is joined to ``Q``.
``g`` is the score of the placed families and ``h`` the sum, over the unplaced variables, of their
best parent sets among their predecessors in the order, ignoring the k-tree: an admissible and
consistent estimate, so the first goal popped is optimal for the order. We maximise scores, so the
bound ``g + h`` plays the role of ``-f``.

Additions to the paper's description, which keep its optimum: the k-G DAG of the order (section 3.2)
is the first incumbent; states whose bound cannot beat the incumbent, or the best DAG of earlier
orders, are not generated (so an order whose root bound cannot beat it is skipped at once); ties in
``f`` go to deeper states; a state's estimate is tightened when it is first taken from the open list
(placed parents must already be a clique of the k-tree, :func:`_refined_suffix`), which keeps it
admissible and consistent. ``max_expansions`` caps the search per order: the better of the incumbent
and a greedy completion of the most promising open state is returned, not proved optimal.
"""

from __future__ import annotations

import heapq
import logging
import math

import numpy as np

from hybridbn.progress import Callback
from scores.table import ScoreTable
from search.kgreedy import complete_greedily
from search.ktree_search import (TOL, BoundedResult, BoundedSearchError, GrowingKTree, OrderSolution,
                                 SearchContext, anytime_search, new_k_cliques)

logger = logging.getLogger(__name__)


def _margin(x: float) -> float:
    return TOL * abs(x) if math.isfinite(x) else 0.0


def _path(node) -> list[tuple]:
    """The ``(k-clique, candidate index)`` steps from the root to ``node`` (a linked ``(parent, q, f)``)."""
    steps = []
    while node is not None:
        node, q, f = node
        steps.append((q, f))
    return steps[::-1]


def _rebuild(ctx: SearchContext, order: tuple[int, ...], steps: list[tuple]) -> GrowingKTree:
    tree = GrowingKTree(ctx.n, ctx.k, order[: ctx.k + 1])
    for v, (q, _) in zip(order[ctx.k + 1 :], steps):
        tree.attach(v, q)
    return tree


def _successors(ctx: SearchContext, tree: GrowingKTree, kq: list[tuple[int, ...]],
                v: int) -> list[tuple[tuple[int, ...], int]]:
    """For every k-clique ``Q`` (of ``kq``, those of ``tree``) holding some candidate of ``v``:
    ``(Q, index of v's best candidate inside Q)``."""
    cand = ctx.cand
    ok = np.flatnonzero(tree.feasible(cand, v))
    if not ok.size:
        return []
    Q = np.array(kq)
    choice = np.full(len(kq), -1, dtype=np.int64)
    for f in ok.tolist():
        inside = choice < 0
        for p in cand.sets[v][f]:
            inside &= (Q == p).any(axis=1)
        choice[inside] = f
        if (choice >= 0).all():
            break
    return [(kq[i], int(choice[i])) for i in np.flatnonzero(choice >= 0).tolist()]


def _complete_top(ctx: SearchContext, order: tuple[int, ...], root_sets: list, top: tuple,
                  incumbent: OrderSolution | None) -> OrderSolution | None:
    """When A* stops early: complete the most promising open state greedily; keep the better DAG."""
    _, neg_depth, _, g, node, _, _ = top
    steps = _path(node)
    parent_sets = list(root_sets)
    for v, (_, f) in zip(order[ctx.k + 1 :], steps):
        parent_sets[v] = ctx.cand.sets[v][f]
    sol = complete_greedily(ctx, _rebuild(ctx, order, steps), order, -neg_depth, parent_sets, g)
    if sol is not None and (incumbent is None or sol.score > incumbent.score):
        return sol
    return incumbent


def _refined_suffix(ctx: SearchContext, tree: GrowingKTree, order: tuple[int, ...], pos: np.ndarray,
                    depth: int) -> np.ndarray:
    """Suffix sums (length ``n + 1``) of a tighter admissible estimate for the variables at positions
    ``>= depth``: their best parent set among their predecessors whose already placed members form a
    clique of ``tree`` (edges among placed vertices never change later). ``-inf`` marks a dead end."""
    cand, n = ctx.cand, ctx.n
    free = np.ones(n + 1, dtype=bool)
    free[list(order[:depth])] = False
    adj = tree.adj | free[:, None] | free[None, :]
    best = np.zeros(n + 1)
    for j in range(depth, n):
        P = cand.parents[order[j]]
        ok = (pos[P] < j).all(axis=1)
        for a in range(ctx.k):
            for b in range(a + 1, ctx.k):
                ok &= adj[P[:, a], P[:, b]]
        idx = int(ok.argmax())
        best[j] = cand.scores[order[j]][idx] if ok[idx] else -math.inf
    return np.cumsum(best[::-1])[::-1]


def astar_order(ctx: SearchContext, order: tuple[int, ...], best_score: float = -math.inf,
                max_expansions: int | None = None) -> OrderSolution | None:
    """The k-A* DAG of one order: optimal over the order's search space (``proved``) unless
    ``max_expansions`` states have been taken from the open list or the time limit or a stop
    request (:mod:`hybridbn.interrupt`) comes first, or ``None`` when it cannot beat ``best_score``
    (or the order admits no DAG).

    A state enters the open list with its parent's estimate; when first taken out, its estimate is
    tightened by :func:`_refined_suffix` and it is put back unless it is still the most promising.
    """
    k, n, cand = ctx.k, ctx.n, ctx.cand
    started = ctx.start(order)
    if started is None:
        ctx.count("orders_infeasible")
        return None
    tree, root_sets, root_score = started
    best = cand.best_given_order(order)
    h = np.append(np.cumsum(best[::-1])[::-1], 0.0)
    if not math.isfinite(h[k + 1]):
        ctx.count("orders_infeasible")
        return None
    bound = root_score + float(h[k + 1])
    if bound <= best_score + _margin(best_score):
        ctx.count("orders_pruned_by_bound")
        return None
    pos = np.full(n + 1, -1, dtype=np.int64)
    pos[list(order)] = np.arange(n)
    incumbent = complete_greedily(ctx, tree, order, k + 1, list(root_sets), root_score)
    target = max(best_score, incumbent.score if incumbent is not None else -math.inf)
    threshold = target + _margin(target)
    goal = None
    heap = [(-bound, -(k + 1), 0, root_score, None, h, True)]
    pushed = expansions = 0
    proved = True
    last = None  # (node, tree, k-cliques) of the state taken out last; its child extends it in place
    while heap:
        neg_ub, neg_depth, _, g, node, hsuf, refined = heap[0]
        if -neg_ub <= threshold:
            break
        if (max_expansions is not None and expansions >= max_expansions) or not ctx.may_go_on():
            proved = False
            break
        heapq.heappop(heap)
        expansions += 1
        depth = -neg_depth
        if last is not None and node is last[0]:
            _, tree, kq = last
        elif last is not None and node is not None and node[0] is last[0]:
            _, tree, kq = last
            tree.attach(order[depth - 1], node[1])
            kq.extend(new_k_cliques(order[depth - 1], node[1]))
        else:
            tree = _rebuild(ctx, order, _path(node))
            kq = tree.k_cliques()
        last = (node, tree, kq)
        if not refined:
            hsuf = _refined_suffix(ctx, tree, order, pos, depth)
            ub = g + float(hsuf[depth])
            if ub <= threshold:
                continue
            if heap and ub < -heap[0][0]:
                pushed += 1
                heapq.heappush(heap, (-ub, neg_depth, pushed, g, node, hsuf, True))
                continue
        v = order[depth]
        for q, f in _successors(ctx, tree, kq, v):
            g2 = g + float(cand.scores[v][f])
            ub = g2 + float(hsuf[depth + 1])
            if ub <= threshold:
                continue
            child = (node, q, f)
            if depth + 1 == n:
                target, goal = g2, child
                threshold = target + _margin(target)
            else:
                pushed += 1
                heapq.heappush(heap, (-ub, -(depth + 1), pushed, g2, child, hsuf, False))
    ctx.count("astar_expansions", expansions)
    ctx.count("orders_proved", int(proved))
    logger.debug("k-A* order: %d states taken, %d pushed, proved=%s", expansions, pushed, proved)
    if not proved:
        incumbent = _complete_top(ctx, order, root_sets, heap[0], incumbent)
    if goal is None or (incumbent is not None and incumbent.score > target):
        if incumbent is not None:
            incumbent.proved = proved
        return incumbent
    steps = _path(goal)
    parent_sets = list(root_sets)
    for v, (_, f) in zip(order[k + 1 :], steps):
        parent_sets[v] = cand.sets[v][f]
    return OrderSolution(target, parent_sets, [q for q, _ in steps], proved)


def k_astar(
    table: ScoreTable,
    k: int,
    *,
    time_limit: float | None = None,
    max_orders: int | None = None,
    seed: int = 0,
    max_expansions: int | None = 2_000,
    root_solver: str = "dp",
    progress: Callback | None = None,
) -> BoundedResult:
    """Learn a DAG of treewidth at most ``k`` with k-A* (Scanagatta et al. 2016, section 3.1).

    Like :func:`search.kgreedy.k_greedy`, but each order is solved optimally by A* (at most
    ``max_expansions`` states taken from the open list per order, ``None``: no cap; a stop request
    ends the current order's search too); ``stats`` counts the orders proved optimal, skipped by the
    bound, and the expansions. Raises
    :class:`search.ktree_search.BoundedSearchError` on bad input.
    """
    if max_expansions is not None and (isinstance(max_expansions, bool) or not isinstance(max_expansions, int)
                                       or max_expansions < 1):
        raise BoundedSearchError(f"max_expansions must be a positive integer or None, got {max_expansions!r}")

    def solve(ctx: SearchContext, order: tuple[int, ...], best_score: float) -> OrderSolution | None:
        return astar_order(ctx, order, best_score, max_expansions)

    return anytime_search(table, k, solve, time_limit=time_limit, max_orders=max_orders, seed=seed,
                          root_solver=root_solver, progress=progress, name="k-A*")
