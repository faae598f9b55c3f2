"""Node sets as Python ints used as bit sets (bit ``i`` set iff node ``i`` is in the set).

The cops-and-robbers learner (Talvitie & Parviainen, section 3.1) assumes constant-time set
operations on subsets of the node set; arbitrary-precision ints give that for a few hundred
nodes and hash cheaply as memo keys.  Every iteration here runs in increasing index order,
as the authors' implementation does (``cops-reference-conventions.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def to_bitset(nodes: Iterable[int]) -> int:
    """Bit set of the given node indices."""
    mask = 0
    for v in nodes:
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
    """Sorted tuple of the node indices of ``mask``."""
    return tuple(bits(mask))


def lowest(mask: int) -> int:
    """Smallest node index of a non-empty ``mask``."""
    if not mask:
        raise ValueError("lowest() of an empty set")
    return (mask & -mask).bit_length() - 1


def submasks_increasing(mask: int) -> Iterator[int]:
    """Every subset of ``mask`` in increasing integer order, starting with the empty set.

    This is the ``sub = (sub - mask) & mask`` enumeration of the reference implementation:
    {}, {s1}, {s2}, {s1, s2}, {s3}, ... (not ordered by size).
    """
    sub = 0
    while True:
        yield sub
        sub = (sub - mask) & mask
        if sub == 0:
            return
