"""Node sets of up to 128 nodes as two ``uint64`` words ``(lo, hi)``, for the engine's numba kernels.

Node v is bit v of ``lo`` (v < 64) or bit v - 64 of ``hi``; the Python side converts a
``graphs.bitsets`` int with :func:`to_words` and back with :func:`from_words`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hybridbn.word_bits import popcount, trailing_zeros

#: Largest network the engine takes (node sets are two 64-bit words).
MAX_ENGINE_VARS = 128

ZERO = np.uint64(0)
ONE = np.uint64(1)


@njit(inline="always")
def bit(v):
    if v < 64:
        return ONE << np.uint64(v), ZERO
    return ZERO, ONE << np.uint64(v - 64)


@njit(inline="always")
def lowest(lo, hi):
    """Index of the smallest node of a non-empty set."""
    if lo:
        return np.int64(trailing_zeros(lo))
    return np.int64(64 + trailing_zeros(hi))


@njit(inline="always")
def size(lo, hi):
    return np.int64(popcount(lo) + popcount(hi))


@njit(inline="always")
def has(lo, hi, v):
    if v < 64:
        return (lo >> np.uint64(v)) & ONE
    return (hi >> np.uint64(v - 64)) & ONE


@njit(inline="always")
def up_to(lo, hi, v):
    """The nodes of (lo, hi) with index <= v."""
    if v < 63:
        return lo & ((ONE << np.uint64(v + 1)) - ONE), ZERO
    if v == 63:
        return lo, ZERO
    if v < 127:
        return lo, hi & ((ONE << np.uint64(v - 63)) - ONE)
    return lo, hi


@njit(inline="always")
def union_rows(rows, lo, hi):
    """Union of ``rows[v]`` over the nodes v of (lo, hi)."""
    ol = ZERO
    oh = ZERO
    while lo:
        v = trailing_zeros(lo)
        ol |= rows[v, 0]
        oh |= rows[v, 1]
        lo &= lo - ONE
    while hi:
        v = trailing_zeros(hi) + np.uint64(64)
        ol |= rows[v, 0]
        oh |= rows[v, 1]
        hi &= hi - ONE
    return ol, oh


@njit(inline="always")
def mix(a, b, c):
    """64-bit hash of up to three words (splitmix64 finaliser)."""
    h = a * np.uint64(0x9E3779B97F4A7C15) ^ (b + np.uint64(0x632BE59BD9B4E019)) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= c * np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return h


def to_words(mask: int) -> tuple[np.uint64, np.uint64]:
    """The two words of a node set given as a Python int."""
    return np.uint64(mask & 0xFFFFFFFFFFFFFFFF), np.uint64(mask >> 64)


def from_words(lo, hi) -> int:
    """The node set of two words as a Python int."""
    return int(lo) | int(hi) << 64
