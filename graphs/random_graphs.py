"""Seeded random graphs for tests and benchmarks."""

from __future__ import annotations

import numpy as np

from graphs._checks import GraphError


def random_dag(n: int, edge_prob: float = 0.2, seed: int = 0, palim: int | None = None) -> np.ndarray:
    """Random DAG: a random topological order, each forward pair an arc with probability ``edge_prob``;
    with ``palim`` each node keeps a random subset of at most that many of its sampled parents."""
    if n < 0 or not 0.0 <= edge_prob <= 1.0:
        raise GraphError(f"need n >= 0 and 0 <= edge_prob <= 1, got n={n}, edge_prob={edge_prob}")
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < edge_prob, k=1)
    if palim is not None:
        for j in range(n):
            pa = np.flatnonzero(upper[:, j])
            if len(pa) > palim:
                upper[rng.choice(pa, len(pa) - palim, replace=False), j] = False
    perm = rng.permutation(n)
    A = np.zeros((n, n), dtype=bool)
    A[np.ix_(perm, perm)] = upper
    return A
