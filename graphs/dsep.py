"""d-separation in DAGs by the Bayes-ball reachability algorithm
(Shachter 1998; Koller & Friedman 2009, Alg. 3.1 "Reachable")."""

from __future__ import annotations

import numpy as np

from graphs._checks import GraphError, as_adjacency, node_set
from graphs.bitsets import column_masks, to_mask, union_over
from graphs.dag import is_acyclic


class DSeparation:
    """A DAG's parent/child sets precomputed (as int bitmasks) for repeated d-separation queries.

    >>> ds = DSeparation(A); ds.separated(0, 3, [1, 2])
    """

    def __init__(self, A, check_acyclic: bool = True):
        M = as_adjacency(A)
        if (M & M.T).any():
            raise GraphError("d-separation needs a DAG, got undirected edges")
        if check_acyclic and not is_acyclic(M):
            raise GraphError("d-separation needs a DAG, got a directed cycle")
        self.n = M.shape[0]
        # parent / child sets of every node as Python-int bitmasks
        self._pa = column_masks(M)
        self._ch = column_masks(M.T)

    def _ancestors(self, z: int) -> int:
        anc = frontier = z
        while frontier:
            frontier = union_over(self._pa, frontier) & ~anc
            anc |= frontier
        return anc

    def reachable(self, x, S=()) -> set[int]:
        """Nodes d-connected to some node of ``x`` given ``S``, including the nodes of ``x`` not in ``S``.

        Bayes ball: a trail arriving "up" (from a child) at an unobserved node passes to its parents and
        children; arriving "down" (from a parent) it passes to the children if the node is unobserved and
        to the parents if the node is in ``S`` or has a descendant in ``S`` (an active collider).
        """
        found = self._reach(self._as_mask(x, "x"), self._as_mask(S, "S"), 0)
        return {v for v in range(self.n) if found >> v & 1}

    def _reach(self, x: int, z: int, stop: int) -> int:
        """Bitmask version of the Bayes ball, one breadth-first layer of (node, direction) states at a time."""
        anc = self._ancestors(z)
        pa, ch, union = self._pa, self._ch, union_over
        up, down = x, 0  # frontier: arrived from a child (moving up) / from a parent (moving down)
        seen_up = seen_down = found = 0
        while up or down:
            seen_up |= up
            seen_down |= down
            found |= (up | down) & ~z
            if found & stop:
                break
            free_up = up & ~z
            new_up = union(pa, free_up | (down & anc))
            new_down = union(ch, free_up | (down & ~z))
            up = new_up & ~seen_up
            down = new_down & ~seen_down
        return found

    def _as_mask(self, nodes, name: str) -> int:
        if isinstance(nodes, (int, np.integer)) and 0 <= nodes < self.n:
            return 1 << int(nodes)
        return to_mask(node_set(nodes, self.n, name))

    def separated(self, x, y, S=()) -> bool:
        """True iff ``x`` and ``y`` (ints or iterables) are d-separated given ``S`` in the DAG.

        Raises ``ValueError`` if ``x`` and ``y`` overlap, or either overlaps ``S``.
        """
        xm, ym, zm = self._as_mask(x, "x"), self._as_mask(y, "y"), self._as_mask(S, "S")
        if xm & ym or zm & (xm | ym):
            what = "x and y overlap" if xm & ym else "S overlaps x or y"
            bad = (xm & ym) or (zm & (xm | ym))
            raise GraphError(f"{what}: {[v for v in range(self.n) if bad >> v & 1]}")
        return not self._reach(xm, zm, ym) & ym


def d_separated(A, x, y, S=()) -> bool:
    """True iff ``x`` and ``y`` are d-separated given ``S`` in DAG ``A`` (Bayes ball; Shachter 1998).

    For many queries on the same DAG build a :class:`DSeparation` once and call ``separated``.
    """
    return DSeparation(A).separated(x, y, S)
