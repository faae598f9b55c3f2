"""Selective Greedy Equivalence Search (SGES), Chickering & Meek (UAI 2015; arXiv 1506.02849).

SGES = poly-FES followed by selective BES (SBES, Figure 3 of the paper). SBES is BES restricted
to the delete operators produced by Selective-Generate-Ops (Figure 5, section 4.3): given an
equivalence-invariant hereditary (EIH) property known to hold in the generative DAG, a delete
``Delete(X, Y, H)`` makes every node of ``H`` a common child of ``X`` and ``Y``, so any ``H``
containing a clique larger than a bound ``b`` cannot be consistent with the property and is not
generated. The bound ``b`` on cliques inside ``H`` for each supported property (section 4.2):

* ``("parents", k)`` — every node has at most ``k`` parents: the lowest node of a clique of size
  ``m`` in ``H`` has ``m - 1 + 2`` parents, so ``b = k - 1``;
* ``("clique", k)`` — every clique of the DAG has at most ``k`` nodes: a clique of ``H`` plus
  ``X`` is a clique, so ``b = k - 1`` (the paper states the looser ``b = k``; both generate every
  consistent operator, Proposition 1);
* ``("vwidth", k)`` — v-width at most ``k`` (largest clique among the common children of a
  non-adjacent pair): ``b = k``.

(``b`` is clamped at 0: the empty ``H`` is always generated.) Per edge, the maximal cliques of
the chordal graph on ``NA_{Y,X}`` are found by maximum-cardinality search; for each clique ``C``
whose complement ``H0 = NA_{Y,X} \\ C`` has no clique larger than ``b`` (the Prune step), the
operators ``H0 ∪ S`` for ``S ⊆ C``, ``|S| <= b`` are generated. The number of score evaluations
is polynomial in the number of variables and exponential in ``b`` (Proposition 2).

poly-FES is either ordinary FES (``start="empty"``) or the paper's trivial poly-FES that returns
the no-independence (complete) CPDAG without score calls (``start="complete"``).
"""

from __future__ import annotations

import logging
from itertools import combinations
from typing import Sequence

import numpy as np

from graphs.bitsets import bits, to_mask
from hybridbn.progress import Callback
from search.chordal import max_clique_size, maximal_cliques
from search.ges import (
    GESError,
    GESResult,
    as_cache,
    backward_search,
    check_allowed,
    check_palim,
    Monitor,
    check_start,
    complete_start,
    finish,
    forward_search,
)
from search.ges_ops import CPDAGMasks
from search.score_cache import LocalScore, LocalScoreCache

logger = logging.getLogger(__name__)

PROPERTIES = ("parents", "clique", "vwidth")
"""Names of the supported EIH properties (section 4.2)."""

STARTS = ("empty", "complete")


class SGESBoundError(GESError):
    """An unusable SGES property bound."""


def parse_bound(bound: tuple[str, int] | str) -> tuple[str, int]:
    """``("parents", 3)`` or ``"parents:3"`` -> ``("parents", 3)``; clear errors otherwise."""
    if isinstance(bound, str):
        name, sep, value = bound.partition(":")
        if not sep:
            raise SGESBoundError(f"bound {bound!r} must look like 'NAME:K', NAME one of {', '.join(PROPERTIES)}")
        try:
            k = int(value)
        except ValueError:
            raise SGESBoundError(f"bound {bound!r}: K must be an integer, got {value!r}") from None
    else:
        try:
            name, k = bound
        except (TypeError, ValueError):
            raise SGESBoundError(f"bound must be (name, k) or 'name:k', got {bound!r}") from None
    name = str(name).strip().lower()
    if name not in PROPERTIES:
        raise SGESBoundError(f"unknown SGES property {name!r}; known: {', '.join(PROPERTIES)}")
    if isinstance(k, bool) or int(k) != k:
        raise SGESBoundError(f"SGES bound for {name!r} must be an integer, got {k!r}")
    if k < 0:
        raise SGESBoundError(f"SGES bound for {name!r} must be >= 0, got {k}")
    return name, int(k)


def clique_bound(name: str, k: int) -> int:
    """Largest clique size ``b`` allowed inside ``H`` under the property ``(name, k)``."""
    name, k = parse_bound((name, k))
    return max(k if name == "vwidth" else k - 1, 0)


def selective_generate_ops(na: int, adj: Sequence[int], b: int) -> list[int]:
    """Selective-Generate-Ops (Figure 5): candidate ``H`` bitmasks for one edge.

    ``na`` is ``NA_{Y,X}`` as a bitmask, ``adj`` the bitmask adjacency lists of the CPDAG and
    ``b`` the clique bound. Every generated ``H`` leaves ``NA_{Y,X} \\ H`` a clique (valid).
    Order: cliques in MCS order, subsets by size then index; duplicates removed.
    """
    ops: dict[int, None] = {}
    for c in maximal_cliques(na, adj):
        h0 = na & ~c
        if max_clique_size(h0, adj) > b:  # Prune: H0 ⊆ H already holds a too-large clique
            continue
        members = list(bits(c))
        for size in range(min(b, len(members)) + 1):
            for s in combinations(members, size):
                ops.setdefault(h0 | to_mask(s), None)
    return list(ops)


def selective_generator(b: int):
    """Delete-subset generator for :func:`search.ges.backward_search` with clique bound ``b``."""

    def generate(m: CPDAGMasks, x: int, y: int) -> list[int]:
        return selective_generate_ops(m.ne[y] & m.adj[x], m.adj, b)

    return generate


def sges(
    local_score: LocalScore | LocalScoreCache,
    n_vars: int,
    bound: tuple[str, int] | str = ("parents", 3),
    *,
    start: str | np.ndarray = "empty",
    allowed: np.ndarray | None = None,
    palim: int | None = None,
    progress: Callback | None = None,
) -> GESResult:
    """Selective GES: poly-FES then SBES with the property ``bound`` (Chickering & Meek 2015, Fig. 3).

    ``bound`` is ``(name, k)`` or ``"name:k"`` with name in ``parents``, ``clique``, ``vwidth``.
    ``start="empty"`` runs ordinary FES (with ``allowed`` / ``palim`` as in
    :func:`search.ges.ges`); ``start="complete"`` starts SBES from the complete CPDAG (over the
    allowed adjacencies when ``allowed`` is given); an array is used as the initial CPDAG for FES.
    Stop requests and ``progress`` work as in :func:`search.ges.ges`.
    """
    name, k = parse_bound(bound)
    b = clique_bound(name, k)
    n_vars = int(n_vars)
    cache = as_cache(local_score, n_vars)
    adjacency_allowed = check_allowed(allowed, n_vars)
    palim = check_palim(palim)
    if isinstance(start, str):
        if start not in STARTS:
            raise GESError(f"start must be one of {STARTS} or a CPDAG array, got {start!r}")
        if start == "complete":
            P = complete_start(n_vars, adjacency_allowed)
        else:
            P = np.zeros((n_vars, n_vars), dtype=bool)
    else:
        P = check_start(start, n_vars)
    monitor = Monitor("sges", cache, P, progress)
    n_ins = 0
    if not (isinstance(start, str) and start == "complete"):
        P, n_ins = forward_search(cache, P, adjacency_allowed=adjacency_allowed, palim=palim, monitor=monitor)
    n_fwd = cache.n_evaluations
    P, n_del = backward_search(cache, P, selective_generator(b), monitor)
    logger.info(
        "SGES(%s<=%d, b=%d): %d inserts, %d deletes, %d distinct local scores",
        name, k, b, n_ins, n_del, cache.n_evaluations,
    )
    return finish(cache, P, n_fwd, n_ins, n_del, monitor)
