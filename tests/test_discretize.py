"""Discretization of continuous columns (bnlearn's ``discretize``): quantile and interval cut points
with known answers, Hartemink's merges against brute force, the spec and a table's record."""

import itertools

import numpy as np
import pandas as pd
import pytest

from bayesnet.dataset import DataError
from bayesnet.discretize import (HARTEMINK, INTERVAL, QUANTILE, Plan, discretize_frame, hartemink_cuts,
                                 interval_codes, interval_cuts, interval_labels, merge_losses, parse_spec,
                                 quantile_cuts)


def mutual_information(x: np.ndarray, y: np.ndarray) -> float:
    """Plug-in mutual information (nats) of two code vectors, from their joint frequencies."""
    joint = pd.crosstab(x, y).to_numpy() / len(x)
    px, py = joint.sum(axis=1, keepdims=True), joint.sum(axis=0, keepdims=True)
    nonzero = joint > 0
    return float(np.sum(joint[nonzero] * np.log(joint[nonzero] / (px @ py)[nonzero])))


def correlated(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    b = a + 0.5 * rng.normal(size=n)
    c = np.sin(2 * b) + 0.3 * rng.normal(size=n)
    return a, b, c


# ------------------------------------------------------------------------ marginal methods

def test_quantile_cut_points_of_a_known_sample():
    x = np.arange(1.0, 13.0)  # R: quantile(1:12, c(1/3, 2/3)) = 4.666667, 8.333333
    cuts = quantile_cuts(x, 3)
    np.testing.assert_allclose(cuts, [14 / 3, 25 / 3])
    np.testing.assert_array_equal(interval_codes(x, cuts), [0] * 4 + [1] * 4 + [2] * 4)
    assert interval_labels(cuts, 1.0, 12.0) == ["[1,4.66667]", "(4.66667,8.33333]", "(8.33333,12]"]
    np.testing.assert_allclose(quantile_cuts(np.arange(1.0, 101.0), 4), [25.75, 50.5, 75.25])


def test_quantile_ties_merge_intervals_and_a_tied_minimum_is_its_own():
    x = np.array([0.0] * 7 + [1.0, 2.0])
    cuts = quantile_cuts(x, 3)  # both quantiles are 0
    np.testing.assert_array_equal(cuts, [0.0])
    np.testing.assert_array_equal(interval_codes(x, cuts), [0] * 7 + [1] * 2)
    assert interval_labels(cuts, 0.0, 2.0) == ["[0,0]", "(0,2]"]
    assert quantile_cuts(np.array([0.0] + [5.0] * 8), 3).size == 0  # both at the maximum: one interval
    assert quantile_cuts(np.array([2.0] * 5), 3).size == 0


def test_interval_widths_are_equal_and_values_fall_right_closed():
    rng = np.random.default_rng(1)
    x = rng.uniform(-3, 7, 500)
    cuts = interval_cuts(x, 5)
    edges = np.concatenate([[x.min()], cuts, [x.max()]])
    np.testing.assert_allclose(np.diff(edges), (x.max() - x.min()) / 5)
    np.testing.assert_allclose(interval_cuts(np.array([0.0, 10.0]), 4), [2.5, 5.0, 7.5])
    np.testing.assert_array_equal(interval_codes(np.array([0.0, 2.5, 2.6, 10.0, np.nan]), np.array([2.5, 5.0, 7.5])),
                                  [0, 0, 1, 3, -1])
    assert interval_cuts(np.array([4.0, 4.0]), 3).size == 0


def test_labels_get_more_digits_where_six_read_alike():
    cuts = np.array([1.0000001, 1.0000002])
    labels = interval_labels(cuts, 0.0, 2.0)
    assert len(set(labels)) == 3 and labels[1] == "(1.0000001,1.0000002]"


# ----------------------------------------------------------------------------- Hartemink

def test_merge_losses_are_the_information_each_merge_loses():
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 6, 300), rng.integers(0, 3, 300)
    y = np.where(rng.random(300) < 0.5, x % 3, y)
    table = pd.crosstab(x, y).to_numpy()
    before = mutual_information(x, y)
    for pair, loss in enumerate(merge_losses(table)):
        merged = np.where(x > pair, x - 1, x)
        assert loss == pytest.approx(300 * (before - mutual_information(merged, y)), abs=1e-9)
        assert loss >= -1e-9
    other = pd.crosstab(x, rng.integers(0, 4, 300)).to_numpy()  # the same rows: side by side, the sum
    np.testing.assert_allclose(merge_losses(np.hstack([table, other]), 2), merge_losses(table) + merge_losses(other))


def test_hartemink_reaches_the_breaks_only_by_removing_initial_cuts():
    columns = list(correlated())
    for breaks in (2, 3, 5):
        found = hartemink_cuts(columns, [breaks] * 3, ibreaks=20)
        for x, cuts in zip(columns, found):
            assert cuts.size == breaks - 1
            assert set(cuts) <= set(quantile_cuts(x, 20))  # merges only: never a new interval
    a, b, _ = columns
    assert [c.size for c in hartemink_cuts([a, b], [4, 2], ibreaks=10)] == [3, 1]
    few = np.array([0.0, 1.0] * 200)  # two values: fewer intervals than asked stay as they are
    assert hartemink_cuts([few, a], [3, 3], ibreaks=10)[0].size == 1


def test_one_merge_is_the_best_of_all_partitions_by_brute_force():
    a, b, _ = correlated(300, seed=5)
    y = interval_codes(b, quantile_cuts(b, 3))
    initial = quantile_cuts(a, 5)  # 5 intervals merged into 4: one greedy merge is the optimum
    (found,) = hartemink_cuts([a], [4], others=[y], ibreaks=5)
    best = max(itertools.combinations(initial, 3),
               key=lambda kept: mutual_information(interval_codes(a, np.array(kept)), y))
    np.testing.assert_allclose(found, best)


def test_sweeps_merge_each_column_in_turn_as_a_brute_force_replay():
    a, b, c = correlated(250, seed=7)
    columns, breaks, ibreaks = [a, b, c], [2, 3, 2], 6
    cuts = [quantile_cuts(x, ibreaks) for x in columns]
    while any(k.size + 1 > t for k, t in zip(cuts, breaks)):
        for i, x in enumerate(columns):
            if cuts[i].size + 1 <= breaks[i]:
                continue
            others = [interval_codes(columns[j], cuts[j]) for j in range(3) if j != i]

            def kept_information(removed, i=i, x=x, others=others):
                codes = interval_codes(x, np.delete(cuts[i], removed))
                return sum(mutual_information(codes, o) for o in others)

            scores = [kept_information(r) for r in range(cuts[i].size)]
            best = int(np.flatnonzero(np.isclose(scores, max(scores), rtol=0, atol=1e-12))[0])
            cuts[i] = np.delete(cuts[i], best)
    for want, got in zip(cuts, hartemink_cuts(columns, breaks, ibreaks=ibreaks)):
        np.testing.assert_allclose(got, want)


# ------------------------------------------------------------------------------- the spec

def test_spec_for_all_columns_per_column_or_both():
    assert parse_spec(None) == Plan()
    assert parse_spec("quantile") == Plan({}, (QUANTILE, 3))
    assert parse_spec("Interval:5", breaks=4) == Plan({}, (INTERVAL, 5))
    assert parse_spec("x=interval:4, y = hartemink", breaks=6) == Plan({"x": (INTERVAL, 4), "y": (HARTEMINK, 6)})
    assert parse_spec("hartemink,a=b=quantile") == Plan({"a=b": (QUANTILE, 3)}, (HARTEMINK, 3))


@pytest.mark.parametrize("spec, message", [
    ("kmeans", "unknown method 'kmeans'; methods are quantile, interval, hartemink"),
    ("x=quantile:1", "at least 2, got '1'"),
    ("x=quantile:three", "got 'three'"),
    ("=quantile", "no column before '='"),
    ("quantile,interval", "more than one method for all columns"),
    ("x=quantile,x=interval", "column 'x' is given twice"),
    ("x=quantile,", "unknown method ''"),
])
def test_bad_specs_name_the_entry(spec, message):
    with pytest.raises(DataError, match=message):
        parse_spec(spec)


# ------------------------------------------------------------------------------- a table

def test_a_table_is_cut_as_planned_and_recorded():
    a, b, c = correlated(300, seed=3)
    a[[4, 9]] = np.nan
    frame = pd.DataFrame({"a": a, "b": [f"{v:.4f}" for v in b], "c": c, "k": np.arange(300) % 3,
                          "few": np.round(c, 0)})
    out, record = discretize_frame(frame, parse_spec("quantile,c=interval:4"))
    assert set(record) == {"a", "b", "c"}  # 'k' and 'few' have at most 20 values: left as they are
    assert record["c"]["method"] == INTERVAL and record["c"]["intervals"] == 4
    assert record["a"] == {"method": QUANTILE, "breaks": 3, "intervals": 3,
                           "cuts": list(quantile_cuts(a[~np.isnan(a)], 3))}
    assert out["a"].cat.ordered and list(out["a"].cat.categories)[0].startswith("[")
    assert out["a"].isna().sum() == 2 and out["b"].notna().all()  # missing cells stay missing
    assert (out["k"] == frame["k"]).all() and (out["few"] == frame["few"]).all()
    counts = out["a"].value_counts(sort=False).to_numpy()
    assert counts.sum() == 298 and counts.max() - counts.min() <= 1
    kept, record = discretize_frame(frame, parse_spec("quantile"), keep=["a"])
    assert "a" not in record and kept["a"].dtype == float


def test_hartemink_in_a_table_uses_the_other_columns():
    a, b, c = correlated(300, seed=4)
    frame = pd.DataFrame({"a": a, "b": b, "c": c, "d": np.where(b > 0, "up", "down")})
    out, record = discretize_frame(frame, parse_spec("c=quantile,hartemink:2"))
    others = [pd.factorize(frame["d"])[0], interval_codes(c, quantile_cuts(c, 3))]
    want = hartemink_cuts([a, b], [2, 2], others)
    np.testing.assert_allclose(record["a"]["cuts"], want[0])
    np.testing.assert_allclose(record["b"]["cuts"], want[1])
    assert out["b"].cat.categories.size == 2


def test_a_named_column_must_be_numeric():
    frame = pd.DataFrame({"x": ["1.5", "2.5", "high"], "y": [1.0, 2.0, np.nan]})
    with pytest.raises(DataError, match="column 'x' is not numeric \\(e.g. 'high'\\)"):
        discretize_frame(frame, parse_spec("x=quantile"))
    with pytest.raises(DataError, match="column 'y' has no value"):
        discretize_frame(frame.assign(y=np.nan), parse_spec("y=interval"))
