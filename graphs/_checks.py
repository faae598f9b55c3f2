"""Input validation shared by the graph modules (square boolean adjacency matrices)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hybridbn.errors import HybridBNError


class GraphError(HybridBNError, ValueError):
    """Raised on malformed graph input (wrong shape, self-loops, bad node indices)."""


def as_adjacency(A, name: str = "A") -> np.ndarray:
    """Return ``A`` as a square boolean numpy array; raise :class:`GraphError` otherwise."""
    M = np.asarray(A)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise GraphError(f"{name} must be a square 2-D adjacency matrix, got shape {M.shape}")
    if M.dtype != bool:
        if not (np.issubdtype(M.dtype, np.integer) or np.issubdtype(M.dtype, np.floating)):
            raise GraphError(f"{name} must be boolean or 0/1 numeric, got dtype {M.dtype}")
        if M.size and not np.isin(M, (0, 1)).all():
            raise GraphError(f"{name} must contain only 0/1 entries")
        M = M.astype(bool)
    if M.diagonal().any():
        loops = np.flatnonzero(M.diagonal()).tolist()
        raise GraphError(f"{name} has self-loops at nodes {loops[:10]}")
    return M


def as_symmetric(G, name: str = "G") -> np.ndarray:
    """Return ``G`` as a symmetric boolean adjacency matrix (an undirected graph)."""
    M = as_adjacency(G, name)
    if not np.array_equal(M, M.T):
        raise GraphError(f"{name} must be symmetric (an undirected graph)")
    return M


def node_set(x, n: int, name: str) -> list[int]:
    """Normalise an int or an iterable of ints to a sorted list of distinct valid node indices."""
    if isinstance(x, (int, np.integer)):
        items = [int(x)]
    elif isinstance(x, Iterable) and not isinstance(x, (str, bytes)):
        items = [int(v) for v in x]
    else:
        raise GraphError(f"{name} must be an int or an iterable of ints, got {type(x).__name__}")
    bad = [v for v in items if not 0 <= v < n]
    if bad:
        raise GraphError(f"{name} has node indices out of range 0..{n - 1}: {bad[:10]}")
    return sorted(set(items))
