"""Node sets as Python ints used as bit sets (bit ``i`` set iff node ``i`` is in the set).

Arbitrary-precision ints give constant-time union, difference and subset tests for a few
hundred nodes and hash cheaply as memo keys; the cops-and-robbers learner (Talvitie &
Parviainen, section 3.1) and the GES/SGES operator loops (Chickering & Meek 2015) both rely on
that. Every iteration here runs in increasing index order, as the cops reference
implementation does (``docs/references.md``, cops-and-robbers test counting).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np


def to_mask(nodes: Iterable[int]) -> int:
    """Bit set of the given node indices."""
    mask = 0
    for v in nodes:
        v = int(v)
        if v < 0:
            raise ValueError(f"node indices must be non-negative, got {v}")
        mask |= 1 << v
    return mask


def bits(mask: int) -> Iterator[int]:
    """Node indices of ``mask`` in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def to_tuple(mask: int) -> tuple[int, ...]:
    """Sorted tuple of the node indices of ``mask`` (the project's parent-set convention)."""
    return tuple(bits(mask))


def lowest(mask: int) -> int:
    """Smallest node index of a non-empty ``mask``."""
    if not mask:
        raise ValueError("lowest() of an empty set")
    return (mask & -mask).bit_length() - 1


def union_over(masks: list[int], sel: int) -> int:
    """Union of ``masks[i]`` over the indices ``i`` in ``sel`` (e.g. all parents of a node set)."""
    out = 0
    while sel:
        low = sel & -sel
        out |= masks[low.bit_length() - 1]
        sel ^= low
    return out


def union_pair_over(first: list[int], second: list[int], sel: int) -> tuple[int, int]:
    """``(union_over(first, sel), union_over(second, sel))`` in one pass over ``sel``."""
    a = b = 0
    while sel:
        low = sel & -sel
        i = low.bit_length() - 1
        a |= first[i]
        b |= second[i]
        sel ^= low
    return a, b


def column_masks(M: np.ndarray) -> list[int]:
    """``masks[j]`` = bit set of the rows ``i`` with ``M[i, j]`` True (e.g. the parents of ``j``)."""
    M = np.asarray(M, dtype=bool)
    return [to_mask(np.flatnonzero(M[:, j])) for j in range(M.shape[1])]


def submasks_increasing(mask: int) -> Iterator[int]:
    """Every subset of ``mask`` in increasing integer order, starting with the empty set.

    The ``sub = (sub - mask) & mask`` enumeration of the cops reference implementation:
    {}, {s1}, {s2}, {s1, s2}, {s3}, ... (not ordered by size).
    """
    sub = 0
    while True:
        yield sub
        sub = (sub - mask) & mask
        if sub == 0:
            return


def submasks_decreasing(mask: int) -> Iterator[int]:
    """Every subset of ``mask`` in decreasing integer order, from ``mask`` down to the empty set."""
    sub = mask
    while True:
        yield sub
        if sub == 0:
            return
        sub = (sub - 1) & mask
