"""Learning inside a fixed chordal supergraph: families restricted to its cliques.

A DAG's moral graph contains the clique ``{v} ∪ pa(v)`` of every family, so it is a subgraph of a
chordal graph ``H`` iff every family lies inside a clique of ``H``, i.e. inside one of its maximal
cliques (the bags of a tree decomposition of ``H``). Restricting the score table to those
families and solving the ordinary ILP gives the best DAG whose moral graph is a subgraph of
``H``: with ``H`` a k-tree this is the inner problem of S2/S2+ (Nie, Mauá, de Campos & Ji 2014,
section 4; Scanagatta et al. 2016, section 5, who solve it with GOBNILP), solved exactly; with
the bags of a tree decomposition of width ``k`` the learned DAG has treewidth at most ``k``.
Dropping families never invalidates score pruning here: a subset of a clique is a clique.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import numpy as np

from graphs._checks import GraphError, as_symmetric
from graphs.ktree import KTree, check_k_tree
from graphs.treedec import TreeDecomposition, elimination_fill, validate_tree_decomposition
from graphs.treewidth import greedy_elimination_order
from ilp.options import ILPOptions
from ilp.problem import ILPInputError
from ilp.result import ILPResult
from ilp.solve import solve_ilp
from scores.table import ScoreTable

logger = logging.getLogger(__name__)


class TreewidthInputError(ILPInputError):
    """A treewidth bound, k-tree, chordal graph or tree decomposition that cannot be used."""


def check_width(k, n: int) -> int:
    """``k`` as an int if ``1 <= k <= n - 1``; else :class:`TreewidthInputError`."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TreewidthInputError(f"treewidth bound k must be an int, got {k!r}")
    if k < 1:
        raise TreewidthInputError(f"treewidth bound k must be >= 1, got {k}")
    if k > n - 1:
        raise TreewidthInputError(
            f"treewidth bound k={k} exceeds n - 1 = {n - 1} (every graph on {n} vertices has "
            f"treewidth <= {n - 1}); use k <= {n - 1}, or no treewidth bound"
        )
    return int(k)


def chordal_cliques(G) -> list[frozenset[int]]:
    """The maximal cliques of the chordal graph ``G`` (the maximal sets of a vertex with its later
    neighbours along a perfect elimination order); :class:`TreewidthInputError` if ``G`` is not
    chordal. Min-fill finds a zero-fill order exactly on chordal graphs (eliminating a
    simplicial vertex leaves a chordal graph, and chordal graphs have one; Fulkerson & Gross 1965).
    """
    try:
        M = as_symmetric(G, "chordal graph")
    except GraphError as err:
        raise TreewidthInputError(str(err)) from err
    order = greedy_elimination_order(M, "min_fill")
    later = elimination_fill(M, order)
    n_fill = sum(len(h) for h in later) - int(M.sum()) // 2
    if n_fill:
        raise TreewidthInputError(f"graph is not chordal: an elimination order needs {n_fill} fill edges")
    bags = {frozenset(h | {v}) for v, h in zip(order, later)}
    return sorted((b for b in bags if not any(b < c for c in bags)), key=sorted)


def ktree_cliques(G, k: int) -> list[frozenset[int]]:
    """The maximal cliques of the k-tree ``G``; :class:`TreewidthInputError` if it is not one."""
    try:
        check_k_tree(G, k)
    except GraphError as err:
        raise TreewidthInputError(f"not a {k}-tree: {err}") from err
    return chordal_cliques(G)


def restrict_to_bags(table: ScoreTable, bags: Iterable[Iterable[int]]) -> ScoreTable:
    """The families ``W -> v`` of ``table`` with ``{v} ∪ W`` inside some bag (the empty parent set
    always stays). Raises :class:`TreewidthInputError` for an out-of-range vertex or a child left
    with no family."""
    n = table.n_vars
    bags = [np.asarray([int(u) for u in bag], dtype=np.int64) for bag in bags]
    for bag in bags:
        bad = bag[(bag < 0) | (bag >= n)]
        if bad.size:
            raise TreewidthInputError(f"bag has vertices outside 0..{n - 1}: {bad[:10].tolist()}")
    keep = table.sizes == 0
    for bag in bags:
        keep |= table.within(bag)
    left = np.bincount(table.child[keep], minlength=n)
    if not left.all():
        v = int(np.argmin(left))
        raise TreewidthInputError(f"child {table.label(v)!r} has no candidate parent set inside the given cliques")
    logger.debug("restricted to %d bags: %d families dropped", len(bags), table.n_candidates - keep.sum())
    return table.select(keep, {**table.meta, "restricted_to_bags": len(bags)})


def structure_bags(within, n: int, k: int | None = None) -> list[frozenset[int]]:
    """Validated bags of ``within`` over vertices ``0..n-1``: a :class:`graphs.ktree.KTree`, a
    :class:`graphs.treedec.TreeDecomposition`, or a symmetric adjacency matrix of a chordal graph
    (of a k-tree when ``k`` is given). Raises :class:`TreewidthInputError` with the reason."""
    if k is not None:
        check_width(k, n)
    if isinstance(within, KTree):
        if k is not None and k != within.k:
            raise TreewidthInputError(f"k={k} given for a {within.k}-tree")
        k, within = within.k, within.adjacency
    if isinstance(within, TreeDecomposition):
        graph = np.zeros((n, n), dtype=bool)
        for bag in within.bags:
            members = [u for u in bag if 0 <= u < n]
            graph[np.ix_(members, members)] = True
        np.fill_diagonal(graph, False)
        try:
            width = validate_tree_decomposition(graph, within.bags, within.edges)
        except GraphError as err:
            raise TreewidthInputError(f"not a tree decomposition of {n} vertices: {err}") from err
        if k is not None and width > k:
            raise TreewidthInputError(f"tree decomposition has width {width} > k={k}")
        return list(within.bags)
    M = np.asarray(within)
    if M.ndim != 2 or M.shape != (n, n):
        raise TreewidthInputError(f"expected a {n} x {n} adjacency matrix, got shape {M.shape}")
    return chordal_cliques(M) if k is None else ktree_cliques(M, k)


def solve_ilp_within(table: ScoreTable, within, options: ILPOptions = ILPOptions(), *,
                     k: int | None = None, **inputs) -> ILPResult:
    """Best DAG whose moral graph is a subgraph of the chordal graph (k-tree) or lies within the
    bags of the tree decomposition ``within`` (see :func:`structure_bags`), exactly, by
    :func:`ilp.solve_ilp` on the restricted table; ``options`` and the keyword ``inputs``
    (arcs, ``palim``, ``extend``, ``time_limit``) go to :func:`ilp.solve_ilp`."""
    bags = structure_bags(within, table.n_vars, k)
    return solve_ilp(restrict_to_bags(table, bags), options, **inputs)
