"""The columnar score table: order invariant, validation, families view, column edits, cache round trip."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from helpers import random_table

from pipeline.core.cache import StageCache
from scores.candidates import build_score_table
from scores.table import ScoreTable, ScoreTableError, family_ids

FAMILIES = [
    {(): -5.0, (1,): -3.0, (2,): -3.0, (1, 2): -4.0},
    {(): -2.0},
    {(0, 1): -1.0, (): -6.0},
]


def _columns(table: ScoreTable):
    return table.child, table.parent_ptr, table.parents, table.score


def _assert_same(a: ScoreTable, b: ScoreTable):
    assert a.n_vars == b.n_vars and a.names == b.names
    for x, y in zip(_columns(a), _columns(b)):
        np.testing.assert_array_equal(x, y)


def test_rows_are_grouped_by_child_by_decreasing_score_ties_in_given_order():
    table = ScoreTable.from_families(FAMILIES, names=["a", "b", "c"])
    table.validate()
    assert table.child.tolist() == [0, 0, 0, 0, 1, 2, 2]
    assert table.score.tolist() == [-3.0, -3.0, -4.0, -5.0, -2.0, -1.0, -6.0]
    assert table.parent_ptr.tolist() == [0, 1, 2, 4, 4, 4, 6, 6]
    assert table.parents.tolist() == [1, 2, 1, 2, 0, 1]
    assert table.families == FAMILIES  # the view holds the same sets and scores
    assert list(table.families[0]) == [(1,), (2,), (1, 2), ()]
    assert table.n_candidates == 7 and table.child_ptr.tolist() == [0, 4, 5, 7]
    assert table.score_of([(2, 1), (), ()]) == -4.0 - 2.0 - 6.0 and table.row_of(2, (1, 0)) == 5
    with pytest.raises(KeyError):
        table.score_of([(0,), (), ()])


def test_from_columns_sorts_rows_given_in_any_order():
    shuffled = ScoreTable.from_columns(3, [2, 0, 1, 0], [0, 2, 2, 2, 3], [0, 1, 2], [-1.0, -5.0, -2.0, -3.0])
    assert shuffled.child.tolist() == [0, 0, 1, 2]
    assert shuffled.families == [{(2,): -3.0, (): -5.0}, {(): -2.0}, {(0, 1): -1.0}]


@pytest.mark.parametrize(
    "columns, match",
    [
        (([0, 1], [0, 0, 0], [], [-2.0, -1.0]), None),  # valid
        (([1, 0], [0, 0, 0], [], [-1.0, -1.0]), "grouped by child"),
        (([0, 0, 1], [0, 0, 0, 0], [], [-2.0, -1.0, -1.0]), "decreasing score"),
        (([0, 1], [0, 2, 2], [1, 1], [-1.0, -1.0]), "invalid parent set"),  # repeated parent
        (([0, 1], [0, 2, 2], [2, 1], [-1.0, -1.0]), "invalid parent set"),  # not ascending
        (([0, 1], [0, 1, 1], [0], [-1.0, -1.0]), "invalid parent set"),  # the child itself
        (([0, 1], [0, 1, 1], [2], [-1.0, -1.0]), "invalid parent set"),  # out of range
        (([0, 1], [0, 0, 1], [], [-1.0, -1.0]), "columns disagree"),
        (([0, 1], [0, 0], [], [-1.0, -1.0]), "columns disagree"),
        (([0, 0], [0, 0, 0], [], [-1.0, -2.0]), "no candidate"),
        (([0, 1], [0, 0, 0], [], [-1.0, np.inf]), "non-finite"),
    ],
)
def test_validate_checks_every_row(columns, match):
    child, ptr, parents, score = (np.asarray(c) for c in columns)
    table = ScoreTable(2, child.astype(np.int32), ptr.astype(np.int64), parents.astype(np.int32), score)
    if match is None:
        table.validate()
    else:
        with pytest.raises(ScoreTableError, match=match):
            table.validate()


@pytest.mark.parametrize("seed", range(4))
def test_within_keeps_the_rows_whose_child_and_parents_all_lie_in_the_nodes(seed):
    table = random_table(6, seed, palim=3, keep=0.5)
    for size in range(7):
        for nodes in itertools.combinations(range(6), size):
            expected = [v in nodes and set(ps) <= set(nodes) for v, fam in enumerate(table.families) for ps in fam]
            assert table.within(nodes).tolist() == expected


def test_family_ids_are_equal_for_equal_families_in_lexicographic_order():
    families = np.array([[2, 0, -1], [0, 1, 2], [2, 0, -1], [0, -1, -1], [0, 1, 3], [1, 0, 2], [0, 1, 2]])
    ids = family_ids(families)
    rows = [tuple(r) for r in families.tolist()]
    assert ids.tolist() == [sorted(set(rows)).index(r) for r in rows]
    assert family_ids(np.zeros((0, 2), dtype=np.int64)).size == 0


def test_kernel_output_equals_its_families_rebuilt():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 3, size=(300, 6)).astype(np.uint8)
    data[:, 5] = (data[:, 0] + data[:, 1]) % 3
    table = build_score_table(data, np.full(6, 3), score="bdeu", palim=2, names=list("abcdef"))
    table.validate()
    _assert_same(table, ScoreTable.from_families(table.families, table.names))


def test_cache_round_trip_and_older_pandas_frames(tmp_path):
    table = ScoreTable.from_families(FAMILIES, names=["a", "b", "c"])
    cache = StageCache(tmp_path)
    stored = cache.get_or_compute("scores", "1", {}, {}, lambda: ({"table": table.to_arrow()}, {}))
    loaded = cache.load("scores", stored.key)
    assert loaded.cached
    _assert_same(ScoreTable.from_arrow(loaded.frames["table"], 3, names=table.names), table)
    # caches written before the columnar table hold a pandas frame with rows in kernel order
    old = pd.DataFrame([(v, list(ps), s) for v, fam in enumerate(FAMILIES) for ps, s in fam.items()],
                       columns=["child", "parents", "score"]).astype({"child": "int32"})
    older = cache.get_or_compute("scores", "0", {}, {}, lambda: ({"table": old}, {}))
    frame = cache.load("scores", older.key).frames["table"]
    assert isinstance(frame, pd.DataFrame)
    _assert_same(ScoreTable.from_arrow(frame, 3, names=table.names), table)
