"""k-G: greedy treewidth-bounded structure learning over sampled orders.

Scanagatta, Corani, de Campos & Zaffalon (NIPS 2016), section 3.2: along an order, each new variable
takes the highest-scoring parent set that is a subset of a k-clique of the current k-tree, and is
joined to such a k-clique (chosen at random among those containing the parent set, as BLIP's
``BrutalGreedySearcher`` breaks ties). The anytime loop over orders is in :mod:`search.ktree_search`.
"""

from __future__ import annotations

from hybridbn.progress import Callback
from scores.table import ScoreTable
from search.ktree_search import (BoundedResult, GrowingKTree, OrderSolution, SearchContext, anytime_search)


def complete_greedily(ctx: SearchContext, tree: GrowingKTree, order: tuple[int, ...], start: int,
                      parent_sets: list, score: float) -> OrderSolution | None:
    """Add ``order[start:]`` to ``tree`` greedily (section 3.2), extending ``parent_sets`` (modified in
    place) and ``score``; ``None`` if some variable has no candidate inside a k-clique."""
    cand = ctx.cand
    for v in order[start:]:
        ok = tree.feasible(cand, v)
        idx = int(ok.argmax())
        if not ok[idx]:
            return None
        ps = cand.sets[v][idx]
        holders = tree.cliques_containing(ps)
        clique = tree.cliques[holders[ctx.pick(len(holders))]]
        free = sorted(clique.difference(ps))
        drop = free[ctx.pick(len(free))]
        tree.attach(v, tuple(sorted(clique - {drop})))
        parent_sets[v] = ps
        score += float(cand.scores[v][idx])
    return OrderSolution(score, parent_sets, tree.attachments)


def greedy_order(ctx: SearchContext, order: tuple[int, ...], best_score: float = float("-inf")) -> OrderSolution | None:
    """The k-G DAG of one order: exact root on ``order[:k+1]``, then greedy additions."""
    started = ctx.start(order)
    if started is None:
        ctx.count("orders_infeasible")
        return None
    tree, parent_sets, score = started
    sol = complete_greedily(ctx, tree, order, ctx.k + 1, parent_sets, score)
    if sol is None:
        ctx.count("orders_infeasible")
    return sol


def k_greedy(
    table: ScoreTable,
    k: int,
    *,
    time_limit: float | None = None,
    max_orders: int | None = None,
    seed: int = 0,
    root_solver: str = "dp",
    progress: Callback | None = None,
) -> BoundedResult:
    """Learn a DAG of treewidth at most ``k`` with k-G (Scanagatta et al. 2016, section 3.2).

    Explores order classes until ``time_limit`` seconds, ``max_orders`` orders, or the whole space
    (only allowed when small) and returns the best DAG with its validated tree decomposition.
    ``root_solver`` (``"dp"`` or ``"ilp"``) learns the first ``k + 1`` variables of each order exactly.
    A stop request (:mod:`hybridbn.interrupt`) ends the search after the current order with status
    ``"userinterrupt"``; ``progress`` (a callable or ``None``) receives progress records
    (:mod:`hybridbn.progress`: best score so far as ``primal``, ``orders`` explored) about once a second.
    Raises :class:`search.ktree_search.BoundedSearchError` (a ``ValueError``) on bad input
    (``k < 1``, ``k > n - 1``, bad limits) or when no bounded DAG exists.
    """
    return anytime_search(table, k, greedy_order, time_limit=time_limit, max_orders=max_orders, seed=seed,
                          root_solver=root_solver, progress=progress, name="k-G")
