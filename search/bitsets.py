"""Variable sets as Python ``int`` bitmasks (bit ``v`` set iff variable ``v`` is in the set).

The GES/SGES operator loops manipulate many small sets; integer masks make union, difference,
subset tests and hashing (for the score cache and operator memos) cheap and exact.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np


def to_mask(nodes: Iterable[int]) -> int:
    """Bitmask of an iterable of variable indices."""
    m = 0
    for v in nodes:
        m |= 1 << int(v)
    return m


def bits(mask: int) -> Iterator[int]:
    """Indices of the set bits of ``mask`` in increasing order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def to_tuple(mask: int) -> tuple[int, ...]:
    """Sorted tuple of the indices in ``mask`` (the parent-set convention of the project)."""
    return tuple(bits(mask))


def column_masks(M: np.ndarray) -> list[int]:
    """``masks[j]`` = bitmask of the rows ``i`` with ``M[i, j]`` True (e.g. the parents of ``j``)."""
    M = np.asarray(M, dtype=bool)
    return [to_mask(np.flatnonzero(M[:, j])) for j in range(M.shape[1])]


def submasks(mask: int) -> Iterator[int]:
    """All subsets of ``mask``, from ``mask`` itself down to the empty set."""
    sub = mask
    while True:
        yield sub
        if sub == 0:
            return
        sub = (sub - 1) & mask
