"""Moral graph of a DAG (Lauritzen & Spiegelhalter 1988)."""

from __future__ import annotations

import numpy as np

from graphs._checks import as_adjacency


def moral_graph(A) -> np.ndarray:
    """Symmetric boolean matrix of the moral graph of DAG ``A``: the skeleton plus an edge between
    every two parents of a common child ("marrying" the parents). Cost O(sum of |pa(v)|^2)."""
    M = as_adjacency(A)
    G = M | M.T
    for c in np.flatnonzero(M.sum(axis=0) >= 2).tolist():
        pa = np.flatnonzero(M[:, c])
        G[np.ix_(pa, pa)] = True
    np.fill_diagonal(G, False)
    return G
