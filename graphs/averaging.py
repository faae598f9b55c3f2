"""Model averaging over bootstrap networks: arc strengths, inclusion threshold, averaged network.

Arc strengths follow Friedman, Goldszmidt & Wyner (1999) as bnlearn's ``boot.strength``
reports them, counted on the networks' CPDAGs: for a pair ``{i, j}``, ``strength`` is the
fraction of networks in which ``i`` and ``j`` are adjacent (either way), and ``direction[i, j]``
the mean, over those networks, of 1 for an arc ``i -> j``, 1/2 for an undirected edge and 0 for
``j -> i`` (0 when the pair is never adjacent).

The inclusion threshold is that of Scutari & Nagarajan (2013): the fraction ``p`` of significant
pairs minimises the L1 distance ``int_0^1 |F(t) - (1 - p)| dt`` between the empirical CDF ``F``
of the strengths and the ideal CDF of strengths that are all 0 or 1; the threshold is the
``1 - p`` quantile of the strengths, and a pair is significant when its strength exceeds it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from graphs._checks import GraphError, as_adjacency

TOLERANCE = 1e-12


def arc_strengths(pdags: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(strength, direction)`` matrices of a list of PDAGs (usually CPDAGs) on the same nodes."""
    if not len(pdags):
        raise GraphError("arc strengths need at least one network")
    graphs = [as_adjacency(P) for P in pdags]
    n = graphs[0].shape[0]
    adjacent = np.zeros((n, n))
    oriented = np.zeros((n, n))  # sum of 1 (i -> j), 1/2 (i - j), 0 (j -> i) over adjacent networks
    for P in graphs:
        if P.shape != (n, n):
            raise GraphError(f"networks have different sizes: {P.shape} vs {(n, n)}")
        adjacent += P | P.T
        oriented += np.where(P & P.T, 0.5, P.astype(float))
    strength = adjacent / len(graphs)
    direction = np.divide(oriented, adjacent, out=np.zeros((n, n)), where=adjacent > 0)
    return strength, direction


def strength_frame(strength: np.ndarray, direction: np.ndarray, names: Sequence[str]) -> pd.DataFrame:
    """Columns ``from``, ``to``, ``strength``, ``direction``: one row per ordered pair, as bnlearn's
    ``bn.strength`` (each pair twice, with the same strength), strongest first."""
    frm, to = np.nonzero(~np.eye(len(names), dtype=bool))
    frame = pd.DataFrame({"from": np.asarray(names, dtype=object)[frm], "to": np.asarray(names, dtype=object)[to],
                          "strength": strength[frm, to], "direction": direction[frm, to]})
    return frame.sort_values(["strength", "direction"], ascending=False, kind="stable").reset_index(drop=True)


def inclusion_threshold(strengths: Sequence[float]) -> float:
    """Scutari & Nagarajan's (2013) threshold of one strength per pair (see the module docstring).

    ``F`` is a step function, so the L1 distance is convex and piecewise linear in ``c = 1 - p``
    with its kinks at the values ``F`` takes: the minimisers form an interval between two of
    them, whose midpoint is taken (bnlearn's numerical minimiser lands inside it).
    """
    s = np.sort(np.asarray(strengths, dtype=float))
    if s.size == 0 or s[0] < 0 or s[-1] > 1:
        raise ValueError("strengths must be a non-empty list of numbers in [0, 1]")
    knots = np.unique(np.concatenate([[0.0], s[s < 1], [1.0]]))  # F is constant on [knots[k], knots[k + 1])
    levels = np.searchsorted(s, knots[:-1], side="right") / s.size
    lengths = np.diff(knots)
    candidates = np.unique(np.concatenate([[0.0, 1.0], levels]))
    distance = np.abs(levels[None, :] - candidates[:, None]) @ lengths
    best = candidates[distance <= distance.min() + TOLERANCE]
    c = (best.min() + best.max()) / 2
    rank = int(np.searchsorted(np.arange(1, s.size + 1) / s.size, c - TOLERANCE))  # type-1 quantile
    return float(s[min(rank, s.size - 1)])


def pair_strengths(strength: np.ndarray) -> np.ndarray:
    """The strengths of the unordered pairs ``i < j``."""
    return strength[np.triu_indices(strength.shape[0], k=1)]


def averaged_network(strength: np.ndarray, direction: np.ndarray, threshold: float) -> np.ndarray:
    """The averaged PDAG: pairs with strength above ``threshold`` (or equal to 1), each as the arc
    ``i -> j`` with ``direction[i, j] > 1/2``, or undirected when both directions are 1/2.

    Arcs are added in decreasing order of strength (ties: stronger direction, then node order);
    one that would close a directed cycle is left out (as bnlearn's ``averaged.network``), so the
    directed part is always acyclic.
    """
    n = strength.shape[0]
    keep = ((strength > threshold) | (strength >= 1 - TOLERANCE)) & (direction >= 0.5 - TOLERANCE)
    keep &= ~np.eye(n, dtype=bool)
    undirected = keep & keep.T
    P = undirected.copy()
    reach = np.eye(n, dtype=bool)  # reach[a, b]: a directed path a -> ... -> b
    arcs = [(i, j) for i, j in zip(*np.nonzero(keep & ~undirected))]
    arcs.sort(key=lambda a: (-strength[a], -direction[a], a))
    for i, j in arcs:
        if reach[j, i]:  # j already reaches i: i -> j would close a cycle
            continue
        P[i, j] = True
        reach |= np.outer(reach[:, i], reach[j, :])
    return P
