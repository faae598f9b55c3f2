"""Skeleton and CPDAG from a tree decomposition of the moral graph (section 3.2).

Talvitie & Parviainen, section 3.2, with the orders of the authors' implementation
(``docs/references.md``, "Postprocessing"): subsumed bags are dropped, the bags are
made cliques, an edge a - b is deleted when some subset of a bag holding a or b (minus a, b)
separates them, and the recorded separators orient the v-structures before the Meek rules.
"""

from __future__ import annotations

import numpy as np

from graphs.bitsets import bits, submasks_increasing
from constraints.cops.oracle import CountingOracle


def maximal_bags(bags: list[int]) -> list[int]:
    """Drop every bag contained in another one (swap-with-last; of equal bags the first met goes)."""
    out = list(bags)
    i = 0
    while i < len(out):
        b = out[i]
        if any(j != i and b & ~out[j] == 0 for j in range(len(out))):
            out[i] = out[-1]
            out.pop()
        else:
            i += 1
    return out


def bag_supergraph(bags: list[int], n_vars: int) -> list[int]:
    """Adjacency bit sets of the graph in which every bag is a clique."""
    adj = [0] * n_vars
    for bag in bags:
        for v in bits(bag):
            adj[v] |= bag & ~(1 << v)
    return adj


def prune_skeleton(
    oracle: CountingOracle, bags: list[int], n_vars: int
) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Skeleton adjacency (bit sets) and separators ``(a, b, X)`` found, in the order found.

    For b = 0..n-1 and each earlier neighbour a, every bag holding a or b is tried in the order
    of ``bags``; subsets of ``bag - {a, b}`` go in increasing bit-mask order and the first
    independence deletes the edge.
    """
    adj = bag_supergraph(bags, n_vars)
    seps: list[tuple[int, int, int]] = []
    for b in range(n_vars):
        bbit = 1 << b
        for a in bits(adj[b] & (bbit - 1)):
            pair = (1 << a) | bbit
            if _find_separator(oracle, a, b, pair, bags, seps):
                adj[a] &= ~bbit
                adj[b] &= ~(1 << a)
    return adj, seps


def _find_separator(oracle, a, b, pair, bags, seps) -> bool:
    for bag in bags:
        if not bag & pair:
            continue
        rest = bag & ~pair
        if not rest:
            continue
        for cond in submasks_increasing(rest):
            if oracle(a, b, cond):
                seps.append((a, b, cond))
                return True
    return False


def orient_v_structures_dropping_conflicts(adj: list[int], seps: list[tuple[int, int, int]]) -> np.ndarray:
    """PDAG with a -> v <- b for every separator (a, b, X) and common neighbour v not in X.

    Every skeleton edge starts as two arcs; orienting deletes the arcs v -> a and v -> b.
    Conflicting v-structures are not resolved: an edge oriented both ways loses both arcs, as
    in the reference implementation.
    """
    pdag = adjacency_matrix(adj)
    for a, b, cond in seps:
        for v in bits(adj[a] & adj[b] & ~cond):
            pdag[v, a] = False
            pdag[v, b] = False
    return pdag


def adjacency_matrix(adj: list[int]) -> np.ndarray:
    """Symmetric boolean matrix of adjacency bit sets."""
    n = len(adj)
    out = np.zeros((n, n), dtype=bool)
    for v in range(n):
        for u in bits(adj[v]):
            out[v, u] = True
    return out
