"""k-trees: random construction, incremental extension and recognition.

A k-tree is a (k+1)-clique, or a k-tree plus a new vertex joined to a k-clique of it (Arnborg,
Corneil & Proskurowski 1987). k-trees are the maximal graphs of treewidth k; a graph has treewidth at
most k iff it is a subgraph of a k-tree. Bounded-treewidth learners (Nie et al. 2014; Scanagatta et
al. 2016, k-G/k-A*) grow a k-tree one vertex at a time with this construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from graphs._checks import GraphError, as_symmetric
from graphs.treedec import TreeDecomposition


def _check_k(k: int, n: int | None = None) -> None:
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise GraphError(f"k must be an integer >= 1, got {k!r}")
    if n is not None and n < k + 1:
        raise GraphError(f"a k-tree with k={k} needs at least k+1={k + 1} vertices, got n={n}")


@dataclass(frozen=True, eq=False)
class KTree:
    """A k-tree built by construction, possibly on part of a larger vertex universe.

    ``adjacency``: symmetric boolean matrix over the universe ``0..N-1`` (vertices not yet inserted are
    isolated); ``order``: the inserted vertices in insertion order (the first k+1 form the root clique);
    ``attachments[t]``: the k-clique (sorted tuple) that vertex ``order[k + 1 + t]`` was joined to.
    Incremental learners (k-G/k-A*) start from :func:`complete_k_tree` and call :meth:`attach`.
    """

    k: int
    adjacency: np.ndarray
    order: tuple[int, ...]
    attachments: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        """Number of inserted vertices."""
        return len(self.order)

    def cliques(self) -> list[tuple[int, ...]]:
        """The n - k maximal (k+1)-cliques: the root clique, then each vertex with its attachment clique."""
        root = tuple(sorted(self.order[: self.k + 1]))
        added = self.order[self.k + 1 :]
        return [root] + [tuple(sorted((v, *c))) for v, c in zip(added, self.attachments)]

    def k_cliques(self) -> list[tuple[int, ...]]:
        """All k-cliques (sorted tuples) a new vertex may be attached to, in creation order."""
        seen: dict[tuple[int, ...], None] = {}
        for cl in self.cliques():
            for u in cl:
                seen.setdefault(tuple(x for x in cl if x != u), None)
        return list(seen)

    def tree_decomposition(self) -> TreeDecomposition:
        """Width-k tree decomposition of the inserted part: bags are the maximal cliques; a vertex's bag
        hangs from the first bag that contains its attachment clique."""
        cl = self.cliques()
        bags = tuple(frozenset(c) for c in cl)
        first: dict[tuple[int, ...], int] = {}
        edges = []
        for b, c in enumerate(cl):
            if b > 0:
                edges.append((first[self.attachments[b - 1]], b))
            for u in c:
                first.setdefault(tuple(x for x in c if x != u), b)
        return TreeDecomposition(bags, tuple(edges))

    def attach(self, clique: Iterable[int], vertex: int | None = None) -> "KTree":
        """A new k-tree with ``vertex`` joined to the k-clique ``clique`` of this one. ``vertex`` must be
        a universe vertex not yet inserted; by default a new vertex ``N`` is appended to the universe."""
        c = tuple(sorted(int(v) for v in clique))
        N = self.adjacency.shape[0]
        inserted = set(self.order)
        if len(c) != self.k or len(set(c)) != self.k:
            raise GraphError(f"attachment needs {self.k} distinct vertices, got {c}")
        if any(v not in inserted for v in c):
            raise GraphError(f"attachment vertices {c} are not all in the k-tree")
        if self.adjacency[np.ix_(c, c)].sum() != self.k * (self.k - 1):
            raise GraphError(f"vertices {c} do not form a clique of the k-tree")
        if vertex is None:
            vertex = N
            A = np.zeros((N + 1, N + 1), dtype=bool)
            A[:N, :N] = self.adjacency
        else:
            vertex = int(vertex)
            if not 0 <= vertex < N or vertex in inserted:
                raise GraphError(f"vertex {vertex} is outside 0..{N - 1} or already in the k-tree")
            A = self.adjacency.copy()
        A[vertex, list(c)] = A[list(c), vertex] = True
        return KTree(self.k, A, self.order + (vertex,), self.attachments + (c,))


def complete_k_tree(k: int, vertices: Iterable[int] | None = None, n: int | None = None) -> KTree:
    """The smallest k-tree: a (k+1)-clique on ``vertices`` (default ``0..k``) inside a universe of ``n``
    vertices (default: just large enough)."""
    _check_k(k)
    order = tuple(range(k + 1)) if vertices is None else tuple(int(v) for v in vertices)
    N = max(order, default=-1) + 1 if n is None else int(n)
    if len(order) != k + 1 or len(set(order)) != k + 1 or any(not 0 <= v < N for v in order):
        raise GraphError(f"the root clique needs {k + 1} distinct vertices in 0..{N - 1}, got {order}")
    A = np.zeros((N, N), dtype=bool)
    A[np.ix_(order, order)] = True
    np.fill_diagonal(A, False)
    return KTree(k, A, order, ())


def random_k_tree(n: int, k: int, seed: int = 0) -> KTree:
    """A random k-tree on ``n`` vertices: a random root (k+1)-clique, then each remaining vertex (in a
    random order) joined to a k-clique drawn uniformly among the current ones. (Uniform over
    constructions, not over labelled k-trees; Nie et al. 2014 use Dandelion codes for the latter.)"""
    _check_k(k, n)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n).tolist()
    A = np.zeros((n, n), dtype=bool)
    root = perm[: k + 1]
    A[np.ix_(root, root)] = True
    np.fill_diagonal(A, False)
    kcl = [tuple(sorted(x for x in root if x != u)) for u in root]
    attachments = []
    for v in perm[k + 1 :]:
        c = kcl[rng.integers(len(kcl))]
        A[v, list(c)] = A[list(c), v] = True
        attachments.append(c)
        kcl.extend(tuple(sorted((v, *(x for x in c if x != u)))) for u in c)
    return KTree(k, A, tuple(perm), tuple(attachments))


def check_k_tree(G, k: int) -> list[int]:
    """Verify that ``G`` is a k-tree; returns a construction order (reverse of a peeling order) or raises
    ``ValueError`` giving the reason. Peels simplicial vertices of degree exactly k until a (k+1)-clique
    remains (a k-tree with more than k+1 vertices always has one, and removing it leaves a k-tree)."""
    M = as_symmetric(G, "G")
    n = M.shape[0]
    _check_k(k, n)
    m = int(M.sum()) // 2
    expected = k * n - k * (k + 1) // 2
    if m != expected:
        raise GraphError(f"a k-tree with n={n}, k={k} has {expected} edges, this graph has {m}")
    nbrs = [set(np.flatnonzero(M[v]).tolist()) for v in range(n)]

    def peelable(v: int) -> bool:
        nb = list(nbrs[v])
        return len(nb) == k and all(b in nbrs[a] for i, a in enumerate(nb) for b in nb[i + 1 :])

    alive = n
    stack = [v for v in range(n) if peelable(v)]
    removed = np.zeros(n, dtype=bool)
    peeled = []
    while stack and alive > k + 1:
        v = stack.pop()
        if removed[v] or not peelable(v):
            continue
        removed[v] = True
        peeled.append(v)
        alive -= 1
        for u in nbrs[v]:
            nbrs[u].discard(v)
            if peelable(u):
                stack.append(u)
        nbrs[v] = set()
    rest = np.flatnonzero(~removed).tolist()
    if alive > k + 1:
        raise GraphError(
            f"not a k-tree (k={k}): no simplicial vertex of degree {k} among the {alive} remaining vertices"
        )
    if any(len(nbrs[v]) != k for v in rest):
        raise GraphError(f"not a k-tree (k={k}): the last {k + 1} vertices do not form a clique")
    return rest + peeled[::-1]


def is_k_tree(G, k: int) -> bool:
    """True iff ``G`` is a k-tree (see :func:`check_k_tree`); invalid ``k`` still raises."""
    _check_k(k)
    try:
        check_k_tree(G, k)
    except GraphError as err:
        if "k must be" in str(err):
            raise
        return False
    return True
