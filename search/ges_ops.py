"""GES operators on CPDAGs: Insert(X, Y, T) and Delete(X, Y, H) (Chickering 2002).

References: D. M. Chickering, "Optimal structure identification with greedy search", JMLR 3
(2002) 507-554, Theorems 15 (Insert) and 17 (Delete), Definitions 12-13; D. M. Chickering and
C. Meek, "Selective greedy equivalence search", UAI 2015, Figure 2 (the delete operator).

Notation for a CPDAG ``P`` (project convention: ``P[i, j] & ~P[j, i]`` is ``i -> j``,
``P[i, j] & P[j, i]`` is ``i - j``): ``Pa_Y`` the directed parents of ``Y``, ``Ne_Y`` its
undirected neighbours, ``NA_{Y,X} = Ne_Y ∩ Adj_X``.

* ``Insert(X, Y, T)``, ``X``, ``Y`` non-adjacent, ``T ⊆ Ne_Y \\ Adj_X``. Valid iff (1)
  ``NA_{Y,X} ∪ T`` is a clique and (2) every semi-directed path from ``Y`` to ``X`` contains a
  node of ``NA_{Y,X} ∪ T``. Score difference
  ``s(Y, NA_{Y,X} ∪ T ∪ Pa_Y ∪ {X}) - s(Y, NA_{Y,X} ∪ T ∪ Pa_Y)``. Transformation: add
  ``X -> Y`` and orient ``T - Y`` as ``T -> Y``.
* ``Delete(X, Y, H)``, ``X - Y`` or ``X -> Y``, ``H ⊆ NA_{Y,X}``. Valid iff ``NA_{Y,X} \\ H``
  is a clique. Score difference ``s(Y, (NA_{Y,X} \\ H) ∪ Pa_Y \\ {X}) -
  s(Y, (NA_{Y,X} \\ H) ∪ Pa_Y ∪ {X})``. Transformation: remove the edge, orient ``Y - H`` as
  ``Y -> H`` and ``X - H`` as ``X -> H`` for every ``H`` in ``H``.

After either transformation the PDAG is completed back to a CPDAG through a consistent
extension (``graphs.pdag.pdag_to_dag``) followed by ``graphs.pdag.dag_to_cpdag`` (Chickering
2002, section 4). Variable sets are bitmasks (``graphs.bitsets``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

import numpy as np

from graphs.pdag import dag_to_cpdag, pdag_to_dag
from graphs.bitsets import bits, column_masks, submasks_decreasing
from hybridbn.errors import HybridBNError
from search.chordal import clique_subsets, is_clique
from search.score_cache import LocalScoreCache


class GESOperatorError(HybridBNError, ValueError):
    """An operator that does not apply to the given CPDAG."""


@dataclass(frozen=True)
class CPDAGMasks:
    """Per-node bitmask views of a CPDAG: directed parents/children, undirected neighbours, adjacents."""

    pa: list[int]
    ch: list[int]
    ne: list[int]
    adj: list[int]

    @classmethod
    def of(cls, P: np.ndarray) -> "CPDAGMasks":
        """Masks of the CPDAG ``P``."""
        P = np.asarray(P, dtype=bool)
        directed = P & ~P.T
        return cls(
            pa=column_masks(directed),
            ch=column_masks(directed.T),
            ne=column_masks(P & P.T),
            adj=column_masks(P | P.T),
        )


def complete_pdag(P: np.ndarray) -> np.ndarray:
    """CPDAG of the equivalence class of a PDAG that admits a consistent extension."""
    return dag_to_cpdag(pdag_to_dag(P))


# --------------------------------------------------------------------------------------- insert


def insert_delta(cache: LocalScoreCache, m: CPDAGMasks, x: int, y: int, t: int) -> float:
    """Score difference of ``Insert(x, y, T)`` (``t`` the bitmask of ``T``)."""
    rest = (m.ne[y] & m.adj[x]) | t | m.pa[y]
    return cache.score_mask(y, rest | (1 << x)) - cache.score_mask(y, rest)


def insert_path_ok(m: CPDAGMasks, x: int, y: int, t: int) -> bool:
    """Validity condition (2) of Insert: every semi-directed path ``Y ~> X`` meets ``NA_{Y,X} ∪ T``.

    A semi-directed path follows undirected edges and directed edges forwards; it is searched
    from ``Y`` with the nodes of ``NA_{Y,X} ∪ T`` removed.
    """
    blocked = (m.ne[y] & m.adj[x]) | t
    seen = 1 << y
    frontier = 1 << y
    target = 1 << x
    while frontier:
        nxt = 0
        for u in bits(frontier):
            nxt |= m.ch[u] | m.ne[u]
        nxt &= ~seen & ~blocked
        if nxt & target:
            return False
        seen |= nxt
        frontier = nxt
    return True


def insert_candidates(
    cache: LocalScoreCache, m: CPDAGMasks, x: int, y: int, palim: int | None = None
) -> list[tuple[float, int]]:
    """``(delta, T)`` for every valid ``Insert(x, y, T)``, in enumeration order.

    ``T`` ranges over cliques ``T ⊆ Ne_Y \\ Adj_X`` extending ``NA_{Y,X}`` to a clique
    (condition 1); those failing the path condition (2) are dropped before scoring, so only
    operators GES may apply cost score evaluations. With ``palim``, sets giving ``Y`` more
    than ``palim`` parents are skipped.
    """
    na = m.ne[y] & m.adj[x]
    if not is_clique(na, m.adj):
        return []
    out = []
    for t in clique_subsets(m.ne[y] & ~m.adj[x], m.adj, base=na):
        if palim is not None and (na | t | m.pa[y]).bit_count() + 1 > palim:
            continue
        if insert_path_ok(m, x, y, t):
            out.append((insert_delta(cache, m, x, y, t), t))
    return out


def apply_insert(P: np.ndarray, x: int, y: int, t: Iterable[int]) -> np.ndarray:
    """CPDAG after ``Insert(x, y, T)`` (add ``x -> y``, orient ``T -> y``, complete)."""
    Q = np.array(P, dtype=bool, copy=True)
    if Q[x, y] or Q[y, x]:
        raise GESOperatorError(f"Insert({x}, {y}, .): {x} and {y} are already adjacent")
    Q[x, y] = True
    for v in t:
        if not (Q[v, y] and Q[y, v]):
            raise GESOperatorError(f"Insert({x}, {y}, T): {v} in T is not an undirected neighbour of {y}")
        Q[y, v] = False
    return complete_pdag(Q)


# --------------------------------------------------------------------------------------- delete


def delete_deltas(cache: LocalScoreCache, m: CPDAGMasks, x: int, y: int, hs: Sequence[int]) -> list[float]:
    """Score differences of ``Delete(x, y, H)`` for each ``H`` bitmask in ``hs``."""
    na = m.ne[y] & m.adj[x]
    base = m.pa[y] & ~(1 << x)
    xbit = 1 << x
    score = cache.score_mask
    out = []
    for h in hs:
        rest = (na & ~h) | base
        out.append(score(y, rest) - score(y, rest | xbit))
    return out


def all_delete_subsets(m: CPDAGMasks, x: int, y: int) -> list[int]:
    """Every ``H ⊆ NA_{Y,X}`` with ``NA_{Y,X} \\ H`` a clique: the full BES operator set of an edge."""
    na = m.ne[y] & m.adj[x]
    if is_clique(na, m.adj):  # fast path, e.g. in the complete graph
        return list(submasks_decreasing(na))
    return [na & ~c for c in clique_subsets(na, m.adj)]


def insertable_pairs(m: CPDAGMasks, adjacency_allowed: np.ndarray | None = None) -> Iterator[tuple[int, int]]:
    """Non-adjacent ordered pairs ``(x, y)`` (``y`` ascending, then ``x``) that may become adjacent."""
    n = len(m.adj)
    for y in range(n):
        for x in range(n):
            if x == y or m.adj[y] >> x & 1:
                continue
            if adjacency_allowed is not None and not adjacency_allowed[x, y]:
                continue
            yield x, y


def deletable_pairs(m: CPDAGMasks) -> list[tuple[int, int]]:
    """Ordered pairs ``(X, Y)`` with ``X -> Y`` or ``X - Y``: the edges a Delete can remove."""
    n = len(m.adj)
    return [(x, y) for y in range(n) for x in bits(m.pa[y] | m.ne[y])]


def apply_delete(P: np.ndarray, x: int, y: int, h: Iterable[int]) -> np.ndarray:
    """CPDAG after ``Delete(x, y, H)`` (Chickering & Meek 2015, Figure 2), completed."""
    Q = np.array(P, dtype=bool, copy=True)
    if not Q[x, y]:
        raise GESOperatorError(f"Delete({x}, {y}, .): there is no edge {x} -> {y} or {x} - {y}")
    Q[x, y] = Q[y, x] = False
    for v in h:
        if not (Q[v, y] and Q[y, v]) or not (Q[v, x] or Q[x, v]):
            raise GESOperatorError(f"Delete({x}, {y}, H): {v} in H is not in NA_{{{y},{x}}}")
        Q[v, y] = False
        Q[v, x] = False
    return complete_pdag(Q)
