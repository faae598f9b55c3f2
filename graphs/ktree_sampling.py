"""Uniform sampling of labelled k-trees through a bijective code (the S2 learner's k-tree proposals,
Nie, Mauá, de Campos & Ji 2014; Nie, de Campos & Ji 2015), who use the Dandelion code of Caminiti,
Fusco & Petreschi (2010).

A k-tree on ``n`` vertices has exactly ``k (n - k) + 1`` k-cliques (``k + 1`` in its first
(k+1)-clique, ``k`` more per further vertex), so a uniform pair (k-tree, one of its k-cliques) has a
uniform k-tree. Such a pair is a k-subset ``Q`` (the root clique) and a *Rényi k-tree* rooted at
``Q``, which is coded by its characteristic tree (Caminiti et al.): nodes ``0`` (for
``Q``) and ``1..m`` (the ``m = n - k`` other vertices in increasing order), where node ``v``'s parent
is the vertex ``u`` of its attachment k-clique ``K_v`` that was added last (``0`` when ``K_v = Q``),
and the edge carries the label ``j`` in ``1..k`` such that ``K_v = K_u + {u} - {K_u[j]}`` (``K_u``
sorted). Trees on ``0..m`` rooted at ``0`` with such labels are counted by ``(1 + k m)^(m - 1)``; we
code them by a Prüfer sequence of length ``m - 1`` over the ``1 + k m`` symbols "node 0" and
"node u, label j" (each symbol names the parent of the smallest remaining leaf and the label of that
edge), where Caminiti et al. use the linear-time Dandelion code; the two codes are different
bijections onto the same trees, so a uniform sequence gives the same distribution. Hence
``C(n, k) (1 + k (n - k))^(n - k - 1) = T(n, k) (k (n - k) + 1)`` with
``T(n, k) = C(n, k) (k (n - k) + 1)^(n - k - 2)`` the number of labelled k-trees (Beineke & Pippert
1969), which :func:`k_tree_count` gives and the tests check by enumerating every code.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from graphs._checks import GraphError
from graphs.ktree import KTree, complete_k_tree


def k_tree_count(n: int, k: int) -> int:
    """The number of labelled k-trees on ``n >= k + 1`` vertices (Beineke & Pippert 1969)."""
    if n == k + 1:
        return 1
    return math.comb(n, k) * (k * (n - k) + 1) ** (n - k - 2)


def code_length(n: int, k: int) -> tuple[int, int]:
    """``(length, symbols)`` of the codes of :func:`decode_k_tree` for ``n`` vertices: a k-subset and
    a sequence of ``n - k - 1`` symbols in ``0 .. k (n - k)``."""
    return n - k - 1, k * (n - k) + 1


def decode_k_tree(n: int, k: int, root: tuple[int, ...], code) -> tuple[list[int], list[tuple[int, ...]]]:
    """The k-tree of the root k-subset ``root`` and a code (module docstring) as a construction:
    ``(order, attachments)``, ``order`` all ``n`` vertices with ``root`` first and its first ``k + 1``
    a clique, ``attachments[t]`` the k-clique (sorted tuple) that ``order[k + 1 + t]`` is joined to.

    Symbol ``0`` names node 0; symbol ``1 + (u - 1) k + (j - 1)`` names node ``u`` with label ``j``.
    """
    root = tuple(sorted(int(v) for v in root))
    m = n - k
    length, symbols = code_length(n, k)
    code = [int(s) for s in code]
    if len(root) != k or len(set(root)) != k or not all(0 <= v < n for v in root):
        raise GraphError(f"the root clique needs {k} distinct vertices in 0..{n - 1}, got {root}")
    if len(code) != length or any(not 0 <= s < symbols for s in code):
        raise GraphError(f"a code for n={n}, k={k} has {length} symbols in 0..{symbols - 1}, got {code}")
    in_root = set(root)
    vertex = [None] + [v for v in range(n) if v not in in_root]  # node u = 1..m is vertex[u]
    nodes = [0 if s == 0 else 1 + (s - 1) // k for s in code] + [0]
    labels = [0 if s == 0 else 1 + (s - 1) % k for s in code] + [0]
    # Prüfer decoding with node 0 never a leaf: the smallest leaf takes the next symbol as its parent
    remaining = [0] * (m + 1)
    for u in nodes:
        remaining[u] += 1
    leaves = [u for u in range(1, m + 1) if remaining[u] == 0]
    heapq.heapify(leaves)
    parent, label = [0] * (m + 1), [0] * (m + 1)
    for u, j in zip(nodes, labels):
        leaf = heapq.heappop(leaves)
        parent[leaf], label[leaf] = u, j
        remaining[u] -= 1
        if u and remaining[u] == 0:
            heapq.heappush(leaves, u)
    # attachments top-down (depth first): K_v = K_u + {u} - {K_u[j]}; the root's children attach to Q.
    # Children as index ranges of one sorted array, not one list per node (a per-node container
    # costs garbage-collector passes over everything the caller holds).
    by_parent = np.argsort(np.asarray(parent[1:]), kind="stable") + 1
    first_child = np.searchsorted(np.asarray(parent)[by_parent], np.arange(m + 2)).tolist()
    by_parent = by_parent.tolist()
    clique: list[tuple[int, ...]] = [root] * (m + 1)
    order_nodes, frontier = [], by_parent[first_child[0]: first_child[1]]
    while frontier:
        u = frontier.pop()
        order_nodes.append(u)
        p = parent[u]
        if p:
            drop = clique[p][label[u] - 1]
            clique[u] = tuple(sorted([vertex[p], *(x for x in clique[p] if x != drop)]))
        frontier.extend(by_parent[first_child[u]: first_child[u + 1]])
    order = list(root) + [vertex[u] for u in order_nodes]
    return order, [clique[u] for u in order_nodes[1:]]


def sample_k_tree_construction(n: int, k: int, rng: np.random.Generator
                               ) -> tuple[list[int], list[tuple[int, ...]]]:
    """A uniformly random labelled k-tree on ``0..n-1`` as a construction ``(order, attachments)``
    (:func:`decode_k_tree` of a uniform root k-subset and a uniform code)."""
    if not 1 <= k <= n - 1:
        raise GraphError(f"a k-tree needs 1 <= k <= n - 1, got k={k}, n={n}")
    root = tuple(sorted(rng.choice(n, size=k, replace=False).tolist()))
    length, symbols = code_length(n, k)
    return decode_k_tree(n, k, root, rng.integers(0, symbols, size=length).tolist())


def k_tree_from_construction(n: int, k: int, order, attachments) -> KTree:
    """The :class:`graphs.ktree.KTree` of a construction (root ``order[:k + 1]``, then attachments)."""
    tree = complete_k_tree(k, order[: k + 1], n)
    for v, clique in zip(order[k + 1:], attachments):
        tree = tree.attach(clique, v)
    return tree


def uniform_k_tree(n: int, k: int, seed: int = 0) -> KTree:
    """A uniformly random labelled k-tree on ``n`` vertices (unlike :func:`graphs.ktree.random_k_tree`,
    which is uniform over constructions, not over k-trees)."""
    order, attachments = sample_k_tree_construction(n, k, np.random.default_rng(seed))
    return k_tree_from_construction(n, k, order, attachments)
