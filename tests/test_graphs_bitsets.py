"""Node sets as int bit sets (graphs.bitsets): order of iteration and subset enumeration."""

from itertools import combinations

import numpy as np
import pytest

from graphs.bitsets import (bits, column_masks, lowest, submasks_decreasing, submasks_increasing, to_mask,
                            to_tuple, union_over, union_pair_over)


def test_roundtrip_and_order():
    mask = to_mask([5, 0, 3, 70])
    assert mask == (1 << 0) | (1 << 3) | (1 << 5) | (1 << 70)
    assert list(bits(mask)) == [0, 3, 5, 70]
    assert to_tuple(mask) == (0, 3, 5, 70)
    assert lowest(mask) == 0 and lowest(mask & ~1) == 3
    assert list(bits(0)) == []


def test_bad_input():
    with pytest.raises(ValueError):
        to_mask([-1])
    with pytest.raises(ValueError):
        lowest(0)


@pytest.mark.parametrize("members", [(), (2,), (1, 4), (0, 2, 3, 7), (3, 64, 65, 100)])
def test_submasks_are_all_subsets_in_increasing_integer_order(members):
    mask = to_mask(members)
    subs = list(submasks_increasing(mask))
    expected = sorted(to_mask(c) for r in range(len(members) + 1) for c in combinations(members, r))
    assert subs == expected
    if len(members) >= 3:  # not ordered by size: {s1, s2} comes before {s3}
        a, b, c = members[:3]
        assert subs.index(to_mask([a, b])) < subs.index(to_mask([c]))


@pytest.mark.parametrize("members", [(), (1,), (0, 2, 5)])
def test_submasks_decreasing_is_the_reverse_order(members):
    mask = to_mask(members)
    assert list(submasks_decreasing(mask)) == list(submasks_increasing(mask))[::-1]


def test_column_masks_are_parent_sets():
    M = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=bool)
    assert [to_tuple(m) for m in column_masks(M)] == [(), (0,), (0, 1)]


def test_union_over_selected_masks():
    masks = [to_mask([1]), to_mask([2, 3]), 0, to_mask([0])]
    assert union_over(masks, to_mask([0, 1])) == to_mask([1, 2, 3])
    assert union_over(masks, 0) == 0


def test_union_pair_over_is_two_unions():
    rng = np.random.default_rng(3)
    first = [int(v) for v in rng.integers(0, 1 << 40, 40)]
    second = [int(v) for v in rng.integers(0, 1 << 40, 40)]
    for sel in [0, 1, (1 << 40) - 1] + [int(v) for v in rng.integers(0, 1 << 40, 20)]:
        assert union_pair_over(first, second, sel) == (union_over(first, sel), union_over(second, sel))
