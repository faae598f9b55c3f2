"""Layered drawing layout of a DAG, for pictures drawn without Graphviz.

The classic three steps of Sugiyama, Tagawa & Toda (1981): nodes are put in layers so that every
arc points down, arcs spanning several layers are routed through dummy points, the order inside
each layer is chosen by barycentre sweeps that reduce crossings, and horizontal positions are
pulled towards the neighbours' mean while keeping the order and a minimum gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphs._checks import as_adjacency
from graphs.dag import topological_order


@dataclass(frozen=True)
class Layout:
    """Node centres ``x``, ``y`` (y decreases layer by layer) and, per arc spanning more than one
    layer, the bend points it passes through, top to bottom."""

    x: np.ndarray
    y: np.ndarray
    layer: np.ndarray
    bends: dict[tuple[int, int], list[tuple[float, float]]]


def assign_layers(dag, max_width: int | None = None) -> np.ndarray:
    """Longest-path layers (every arc goes at least one layer down), every node then moved down to
    just above its highest child (shorter arcs from the roots); with ``max_width``, a node that
    would make its layer hold more nodes is moved further down (in topological order, so every arc
    still points down), which keeps pictures of networks with many roots from being very wide."""
    A = as_adjacency(dag, "dag")
    order = topological_order(A)
    layer = np.zeros(A.shape[0], dtype=np.int64)
    for v in order:
        parents = np.flatnonzero(A[:, v])
        if len(parents):
            layer[v] = layer[parents].max() + 1
    for v in reversed(order):
        children = np.flatnonzero(A[v])
        if len(children):
            layer[v] = layer[children].min() - 1
    if max_width is not None:
        count: dict[int, int] = {}
        rank = {v: k for k, v in enumerate(order)}
        for v in sorted(order, key=lambda u: (layer[u], rank[u])):
            parents = np.flatnonzero(A[:, v])
            lv = max(layer[v], layer[parents].max() + 1 if len(parents) else 0)
            while count.get(lv, 0) >= max_width:
                lv += 1
            layer[v] = lv
            count[lv] = count.get(lv, 0) + 1
    return layer


def _crossings(upper: dict[int, float], lower: dict[int, float], links: list[tuple[int, int]]) -> int:
    """Crossings between two adjacent layers of the arcs ``links`` (upper node, lower node)."""
    if len(links) < 2:
        return 0
    a = np.array([upper[u] for u, _ in links])
    b = np.array([lower[v] for _, v in links])
    return int(np.count_nonzero((a[:, None] < a[None, :]) & (b[:, None] > b[None, :])))


def layered_layout(dag, widths, layer_gap: float = 1.0, node_gap: float = 0.25,
                   max_width: int | None = None, sweeps: int = 12) -> Layout:
    """Layout of a DAG whose node ``v`` is ``widths[v]`` wide (same unit as the gaps), with at
    most ``max_width`` nodes per layer (:func:`assign_layers`)."""
    A = as_adjacency(dag, "dag")
    n = A.shape[0]
    layer = assign_layers(A, max_width)
    width = list(np.asarray(widths, dtype=float))
    level = list(layer)
    links: list[tuple[int, int]] = []  # arcs between adjacent layers, dummies included
    chains: dict[tuple[int, int], list[int]] = {}
    for u, v in zip(*np.nonzero(A)):
        prev, chain = int(u), []
        for lv in range(layer[u] + 1, layer[v]):
            level.append(lv)
            width.append(0.0)
            chain.append(len(level) - 1)
            links.append((prev, chain[-1]))
            prev = chain[-1]
        links.append((prev, int(v)))
        if chain:
            chains[(int(u), int(v))] = chain
    n_layers = int(layer.max()) + 1 if n else 0
    rows = [[k for k in range(len(level)) if level[k] == lv] for lv in range(n_layers)]
    up: list[list[int]] = [[] for _ in level]
    down: list[list[int]] = [[] for _ in level]
    for u, v in links:
        down[u].append(v)
        up[v].append(u)
    by_gap = [[(u, v) for u, v in links if level[u] == lv] for lv in range(n_layers - 1)]

    def total_crossings(order):
        pos = [{k: i for i, k in enumerate(row)} for row in order]
        return sum(_crossings(pos[lv], pos[lv + 1], by_gap[lv]) for lv in range(n_layers - 1))

    best, best_crossings = [list(r) for r in rows], total_crossings(rows)
    for sweep in range(sweeps):
        downward = sweep % 2 == 0
        span = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
        for lv in span:
            ref = {k: i for i, k in enumerate(rows[lv - 1 if downward else lv + 1])}
            here = {k: i for i, k in enumerate(rows[lv])}
            nbrs = up if downward else down
            key = {k: np.mean([ref[m] for m in nbrs[k]]) if nbrs[k] else here[k] for k in rows[lv]}
            rows[lv] = sorted(rows[lv], key=lambda k: (key[k], here[k]))
        crossings = total_crossings(rows)
        if crossings < best_crossings:
            best, best_crossings = [list(r) for r in rows], crossings
    x = _positions(best, np.asarray(width), up, down, node_gap)
    y = -layer_gap * np.asarray(level, dtype=float)
    bends = {arc: [(float(x[k]), float(y[k])) for k in chain] for arc, chain in chains.items()}
    return Layout(x=x[:n], y=y[:n], layer=layer, bends=bends)


def _positions(rows, width, up, down, gap: float, rounds: int = 8) -> np.ndarray:
    """Horizontal centres: rows packed left to right, then pulled towards the mean of their
    neighbours in both adjacent layers, keeping each row's order and gaps (a quarter gap beside
    a bend point, which has no width)."""
    x = np.zeros(len(width))
    room = np.where(width > 0, gap / 2, gap / 8)  # each side's share of the gap
    for row in rows:
        need = _needs(width[row], room[row])
        x[row] = np.concatenate([[width[row[0]] / 2], width[row[0]] / 2 + np.cumsum(need)])
    for _ in range(rounds):
        for row in rows:
            target = np.array([np.mean(x[up[k] + down[k]]) if up[k] or down[k] else x[k] for k in row])
            x[row] = _keep_apart(target, _needs(width[row], room[row]))
    return x - (x - width / 2).min() if len(x) else x


def _needs(width: np.ndarray, room: np.ndarray) -> np.ndarray:
    """Least distance between the centres of neighbours in a row."""
    return (width[:-1] + width[1:]) / 2 + room[:-1] + room[1:]


def _keep_apart(target: np.ndarray, need: np.ndarray) -> np.ndarray:
    """Positions in the given order, the ``k+1``-th at least ``need[k]`` right of the ``k``-th,
    as close to ``target`` as a left-to-right and a right-to-left pass make them (averaged)."""
    forward, backward = target.copy(), target.copy()
    for i in range(1, len(target)):
        forward[i] = max(target[i], forward[i - 1] + need[i - 1])
    for i in range(len(target) - 2, -1, -1):
        backward[i] = min(target[i], backward[i + 1] - need[i])
    return (forward + backward) / 2
