"""Bit-set helpers of the cops-and-robbers learner."""

from itertools import combinations

import pytest

from constraints.bitset import bits, lowest, submasks_increasing, to_bitset, to_tuple


def test_roundtrip_and_order():
    mask = to_bitset([5, 0, 3, 70])
    assert mask == (1 << 0) | (1 << 3) | (1 << 5) | (1 << 70)
    assert list(bits(mask)) == [0, 3, 5, 70]
    assert to_tuple(mask) == (0, 3, 5, 70)
    assert lowest(mask) == 0 and lowest(mask & ~1) == 3
    assert list(bits(0)) == []


def test_bad_input():
    with pytest.raises(ValueError):
        to_bitset([-1])
    with pytest.raises(ValueError):
        lowest(0)


@pytest.mark.parametrize("members", [(), (2,), (1, 4), (0, 2, 3, 7), (3, 64, 65, 100)])
def test_submasks_are_all_subsets_in_increasing_integer_order(members):
    mask = to_bitset(members)
    subs = list(submasks_increasing(mask))
    expected = sorted(to_bitset(c) for r in range(len(members) + 1) for c in combinations(members, r))
    assert subs == expected
    if len(members) >= 3:  # not ordered by size: {s1, s2} comes before {s3}
        a, b, c = members[:3]
        assert subs.index(to_bitset([a, b])) < subs.index(to_bitset([c]))
