"""d-separation in DAGs by the Bayes-ball reachability algorithm
(Shachter 1998; Koller & Friedman 2009, Alg. 3.1 "Reachable").

:meth:`DSeparation.separated` takes node lists and validates them; the bit-set methods
:meth:`DSeparation.separated_bits` and :meth:`DSeparation.connected_bits` take a conditioning
set as an int bit set and answer many queries of one source at once, for callers that issue
millions of queries (the cops-and-robbers learner's exact oracle, ``constraints.cops.oracle``).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from graphs._checks import GraphError, as_adjacency, node_set
from graphs.bitsets import column_masks, to_mask, union_over, union_pair_over
from graphs.dag import is_acyclic


class DSeparation:
    """A DAG's parent/child sets precomputed (as int bitmasks) for repeated d-separation queries.

    >>> ds = DSeparation(A); ds.separated(0, 3, [1, 2])
    """

    #: conditioning sets whose :class:`_Given` tables are kept (the cache is emptied when full)
    GIVEN_CACHE = 256

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
        self._given: dict[int, _Given] = {}

    def _ancestors(self, z: int) -> int:
        return _closure(self._pa, z)

    @property
    def parent_masks(self) -> list[int]:
        """Parents of every node as bit sets (a copy)."""
        return list(self._pa)

    @property
    def child_masks(self) -> list[int]:
        """Children of every node as bit sets (a copy)."""
        return list(self._ch)

    @property
    def ancestor_masks(self) -> list[int]:
        """Ancestors of every node, the node included, as bit sets (a copy)."""
        return list(self._anc_of)

    @cached_property
    def _anc_of(self) -> list[int]:
        """``_anc_of[v]``: ancestors of node ``v``, ``v`` included (bit sets), for the bit-set queries."""
        return [self._ancestors(1 << v) for v in range(self.n)]

    @cached_property
    def _desc_of(self) -> list[int]:
        """``_desc_of[v]``: descendants of node ``v``, ``v`` included (bit sets)."""
        return [_closure(self._ch, 1 << v) for v in range(self.n)]

    def connected_bits(self, x: int, targets: int, z: int) -> int:
        """The nodes of ``targets`` d-connected to node ``x`` given the node set ``z`` (bit sets).

        ``x``, ``targets`` and ``z`` must be disjoint; nothing is validated (:meth:`separated` is
        the checked query).  Answers all targets at once from the Bayes-ball reachable set of
        ``x`` (Koller & Friedman, Alg. 3.1), computed in closed form.  With A = An(z) (``z``
        included), the ball's moves (up from a child, down from a parent) give:

        * the nodes the ball leaves in both directions -- every node outside ``z`` reached
          moving up, and every node of A \\ z reached at all -- form F(x): the non-A ancestors
          of ``x`` (nothing in ``z`` blocks them), plus, for every node of A \\ z met, its
          connected component in the undirected graph on A \\ z whose edges are the DAG's
          edges and the pairs of parents of a common child in ``z`` (the ball enters a node of A
          from either side, and bounces off ``z`` to the parents); the ball never leaves A
          once inside, as A is ancestral;
        * every other node reached lies outside A, reached moving down from F(x), and then so
          are all of its descendants (none is in ``z`` or has a descendant in ``z``): a target
          t outside F(x) is reached iff an ancestor of t (t included) outside A is a child of
          a node of F(x).

        The components depend on ``z`` alone and are cached per conditioning set
        (:class:`_Given`), so the many sources queried with one cop set share them.
        """
        given = self._given.get(z)
        if given is None:
            if len(self._given) >= self.GIVEN_CACHE:
                self._given.clear()
            given = self._given[z] = _Given(self, z)
        if given.inner >> x & 1:
            reach, kids = given.component(x)
        else:  # x outside A: its ancestors outside A, then the components they have parents in
            reach = self._anc_of[x] & ~given.anc_z
            entry, kids = union_pair_over(self._pa, self._ch, reach)
            entry &= given.inner
            while entry:
                comp, comp_kids = given.component((entry & -entry).bit_length() - 1)
                reach |= comp
                kids |= comp_kids
                entry &= ~comp
        hits = targets & reach
        rest = targets & ~reach & ~given.anc_z
        if rest:
            kids &= ~given.anc_z & ~reach  # where the ball leaves A for good, moving down
            hits |= self._below(rest, kids)
        return hits

    def _below(self, targets: int, tops: int) -> int:
        """The nodes of ``targets`` that are descendants of ``tops`` or in it (loops over the smaller set)."""
        if targets.bit_count() <= tops.bit_count():
            anc, hits = self._anc_of, 0
            while targets:
                low = targets & -targets
                if anc[low.bit_length() - 1] & tops:
                    hits |= low
                targets ^= low
            return hits
        return targets & union_over(self._desc_of, tops)

    def separated_bits(self, x: int, y: int, z: int) -> bool:
        """True iff nodes ``x`` and ``y`` are d-separated given the bit set ``z`` (unchecked, fast)."""
        return not self.connected_bits(x, 1 << y, z)

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


def _closure(step: list[int], start: int) -> int:
    """``start`` and every node reachable from it along ``step`` (parents: ancestors; children:
    descendants), as a bit set."""
    seen = frontier = start
    while frontier:
        frontier = union_over(step, frontier) & ~seen
        seen |= frontier
    return seen


class _Given:
    """The part of :meth:`DSeparation.connected_bits` that depends only on the conditioning set z.

    ``anc_z`` is A = An(z) (``z`` included), ``inner`` is A \\ z; ``component(e)`` is the
    connected component of ``e`` in the graph on A \\ z with the DAG's edges and the pairs of
    parents of a common child in ``z``, with the children of its nodes, computed on first use.
    """

    __slots__ = ("_pa", "_ch", "z", "anc_z", "inner", "_components")

    def __init__(self, ds: DSeparation, z: int) -> None:
        self._pa, self._ch, self.z = ds._pa, ds._ch, z
        a = union_over(ds._anc_of, z)
        self.anc_z = a
        self.inner = a & ~z
        self._components: list[tuple[int, int]] = []

    def component(self, e: int) -> tuple[int, int]:
        """(component of node ``e`` of A \\ z, union of the children of its nodes)."""
        for comp in self._components:
            if comp[0] >> e & 1:
                return comp
        pa, ch, z, inner = self._pa, self._ch, self.z, self.inner
        comp = frontier = 1 << e
        kids = wed = 0
        while frontier:
            up, down = union_pair_over(pa, ch, frontier)
            kids |= down
            spouses = down & z & ~wed  # children in z not seen yet: marry their parents
            wed |= spouses
            up |= union_over(pa, spouses)
            frontier = (up | down) & inner & ~comp
            comp |= frontier
        self._components.append((comp, kids))
        return comp, kids


def d_separated(A, x, y, S=()) -> bool:
    """True iff ``x`` and ``y`` are d-separated given ``S`` in DAG ``A`` (Bayes ball; Shachter 1998).

    For many queries on the same DAG build a :class:`DSeparation` once and call ``separated``.
    """
    return DSeparation(A).separated(x, y, S)
