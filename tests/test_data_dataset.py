"""Datasets from frames and files: categorical encoding, state order, errors and warnings."""

import warnings

import numpy as np
import pandas as pd
import pytest

from bayesnet.catalog import load_network
from bayesnet.dataset import (
    MAX_NUMERIC_STATES,
    MISSING_STATE,
    DataError,
    Dataset,
    DataWarning,
    continuous_like,
    drop_missing,
    encode_frame,
    numeric_values,
    read_dataset,
    read_frame,
    select_columns,
    write_dataset,
)
from bayesnet.sampling import forward_sample


def test_state_order_rules():
    frame = pd.DataFrame(
        {
            "ints": [1, 10, 2, 2],
            "numeric_text": ["1", "10", "2", "1"],
            "natural": ["x10", "x2", "x1", "x1"],
            "floats": [0.5, 1.5, 0.5, 0.5],
            "integral_floats": [3.0, 1.0, 1.0, 3.0],
            "bools": [True, False, True, True],
            "cat": pd.Categorical(["lo", "hi", "lo", "lo"], categories=["lo", "mid", "hi"]),
        }
    )
    ds = Dataset.from_frame(frame)
    assert ds.states == [
        ["1", "2", "10"],
        ["1", "2", "10"],
        ["x1", "x2", "x10"],
        ["0.5", "1.5"],
        ["1", "3"],
        ["False", "True"],
        ["lo", "mid", "hi"],  # categorical order kept, unused category kept
    ]
    np.testing.assert_array_equal(ds.data[:, 0], [0, 2, 1, 1])
    np.testing.assert_array_equal(ds.data[:, 6], [0, 2, 0, 0])
    assert ds.data.dtype == np.uint8 and (ds.n_rows, ds.n_vars) == (4, 7)
    np.testing.assert_array_equal(ds.arities, [3, 3, 3, 2, 2, 2, 3])
    out = ds.to_frame()
    assert all(isinstance(out[c].dtype, pd.CategoricalDtype) and out[c].cat.ordered for c in out)
    assert list(out["cat"].cat.categories) == ["lo", "mid", "hi"]
    assert list(out["ints"].astype(str)) == ["1", "10", "2", "2"]


@pytest.mark.parametrize("ext", ["csv", "csv.gz", "parquet", "feather"])
def test_file_round_trip_preserves_states(tmp_path, ext):
    # hailfinder has states such as "None" that pandas would read as missing by default
    ds = forward_sample(load_network("hailfinder"), 3000, seed=4)
    path = tmp_path / f"data.{ext}"
    write_dataset(ds, path)
    back = read_dataset(path)
    assert back.names == ds.names
    np.testing.assert_array_equal(back.to_frame().astype(str).to_numpy(), ds.to_frame().astype(str).to_numpy())
    if ext in ("parquet", "feather"):  # categorical order travels with the file
        assert back.states == ds.states
        np.testing.assert_array_equal(back.data, ds.data)


def test_csv_to_parquet_to_dataset_is_identical(tmp_path):
    csv = tmp_path / "in.csv"
    csv.write_text("a,b,c\nNA,01,x y\nNone,2,\"q,z\"\nNA,10,x y\n")
    first = read_dataset(csv)
    assert first.states == [["NA", "None"], ["01", "2", "10"], ["q,z", "x y"]]
    write_dataset(first, tmp_path / "mid.parquet")
    second = read_dataset(tmp_path / "mid.parquet")
    assert second == first
    assert second != Dataset(first.data[:2], first.names, first.states)


def test_missing_values_are_counted(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("a,b\n1,x\n2,\n3,\n")
    with pytest.raises(DataError, match=r"column 'b': 2 of 3 rows are missing"):
        read_dataset(csv)
    with pytest.raises(DataError, match="column 'f': 1 of 2 rows"):
        Dataset.from_frame(pd.DataFrame({"f": [1.0, np.nan]}))


def test_continuous_columns_are_rejected():
    rng = np.random.default_rng(0)
    values = rng.normal(size=100)
    with pytest.raises(DataError, match="column 'x' looks continuous"):
        Dataset.from_frame(pd.DataFrame({"x": values}))
    with pytest.raises(DataError, match="column 't' looks continuous"):
        Dataset.from_frame(pd.DataFrame({"t": [f"{v:.3f}" for v in values]}))
    # few fractional values, or many integers, are discrete
    few = np.round(values[: MAX_NUMERIC_STATES], 1) + 0.05
    assert Dataset.from_frame(pd.DataFrame({"x": few})).arities[0] <= MAX_NUMERIC_STATES
    assert Dataset.from_frame(pd.DataFrame({"i": np.arange(100) * 1.0})).arities[0] == 100


def test_many_states_widen_dtype():
    frame = pd.DataFrame({"big": [f"s{i}" for i in range(300)], "small": ["a", "b"] * 150})
    ds = Dataset.from_frame(frame)
    assert ds.data.dtype == np.uint16
    assert ds.states[0][:3] == ["s0", "s1", "s2"] and ds.states[0][-1] == "s299"
    assert Dataset.from_frame(frame.iloc[:256]).data.dtype == np.uint8  # codes 0..255


def test_single_state_column_warns():
    frame = pd.DataFrame({"k": ["only"] * 3, "v": ["a", "b", "a"], "z": [0, 0, 0]})
    with pytest.warns(DataWarning, match=r"2 column\(s\) with a single state .*: 'k' \('only'\), 'z' \('0'\)"):
        ds = Dataset.from_frame(frame)
    assert ds.arities.tolist() == [1, 2, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Dataset.from_frame(frame, warn=False)


@pytest.mark.parametrize(
    "column, message",
    [
        ([1.0, np.inf, 1.0, 2.0], "holds infinite values"),
        ([1.5, -np.inf, 1.5, 2.0], "holds infinite values"),
        ([[1], [2], [1], [2]], "not single states"),
        (["1", " 1", "2", "2"], r"differ only in surrounding spaces \[' 1', '1'\]"),
    ],
)
def test_values_that_are_not_states_are_rejected(column, message):
    with pytest.raises(DataError, match=message):
        Dataset.from_frame(pd.DataFrame({"a": column, "b": [0, 1, 0, 1]}))


def test_csv_with_another_separator_is_named(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;c\n0;1;0\n1;1;0\n")
    with pytest.raises(DataError, match="seems separated by ';'"):
        read_dataset(path)


def test_no_warning_for_ordinary_columns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = Dataset.from_frame(pd.DataFrame({"v": ["a", "b"]}))
    assert ds.arities.tolist() == [2]


def test_empty_and_duplicate_columns(tmp_path):
    with pytest.raises(DataError, match="empty data"):
        Dataset.from_frame(pd.DataFrame({"a": []}))
    with pytest.raises(DataError, match="empty data"):
        Dataset.from_frame(pd.DataFrame())
    csv = tmp_path / "dup.csv"
    csv.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(DataError, match="duplicate column names: 'a'"):
        read_dataset(csv)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="empty.csv"):
        read_dataset(empty)


def test_file_errors(tmp_path):
    with pytest.raises(DataError, match="unsupported data format '.xlsx'"):
        read_dataset(tmp_path / "d.xlsx")
    with pytest.raises(FileNotFoundError, match="data file not found"):
        read_dataset(tmp_path / "absent.csv")
    with pytest.raises(DataError, match="not found"):
        read_dataset(tmp_path / "absent.parquet")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(DataError, match="cannot read parquet"):
        read_dataset(broken)


def test_dataset_checks_shapes_and_codes():
    with pytest.raises(DataError, match="unsigned"):
        Dataset(np.zeros((2, 1), dtype=np.int64), ["a"], [["x"]])
    with pytest.raises(DataError, match="1 columns but 2 names"):
        Dataset(np.zeros((2, 1), dtype=np.uint8), ["a", "b"], [["x"]])
    ds = Dataset(np.array([[0], [2]], dtype=np.uint8), ["a"], [["x", "y"]])
    with pytest.raises(DataError, match="column 'a' has a code beyond"):
        ds.validate()


# ------------------------------------------------------------- columns that are no variable

def _two_variables(rows: int = 100) -> pd.DataFrame:
    return pd.DataFrame({"a": np.arange(rows) % 3, "b": np.arange(rows) % 2})


def test_select_columns_keeps_ordinary_variables_and_drops_the_named_ones():
    frame = _two_variables().assign(c=lambda f: (f.a + f.b) % 2)
    assert list(select_columns(frame).columns) == ["a", "b", "c"]
    assert list(select_columns(frame, drop=["b"]).columns) == ["a", "c"]


@pytest.mark.parametrize("header", ["", "  ", "Unnamed: 0"])
def test_index_column_of_to_csv_is_refused_by_name(header):
    frame = _two_variables().reset_index().rename(columns={"index": header})
    with pytest.raises(DataError, match=f"column {header!r} has .*header.*--drop {header!r}"):
        select_columns(frame)
    assert list(select_columns(frame, drop=[header]).columns) == ["a", "b"]


def test_csv_written_with_its_index_is_refused(tmp_path):
    path = tmp_path / "with_index.csv"
    _two_variables().to_csv(path)  # pandas writes the index under an empty header
    with pytest.raises(DataError, match="column '' has no header"):
        select_columns(read_frame(path))


def test_identifier_column_is_refused_unless_kept():
    frame = _two_variables().assign(id=np.arange(100))
    with pytest.raises(DataError, match="column 'id' has a different value in each of its 100 rows.*--keep 'id'"):
        select_columns(frame)
    assert list(select_columns(frame, keep=["id"]).columns) == ["a", "b", "id"]


def test_column_with_more_states_than_half_the_rows_is_refused():
    values = np.arange(100) // 2
    values[[0, 2]] = [500, 501]  # 52 states, most of them twice
    frame = _two_variables().assign(t=[f"s{v}" for v in values])
    with pytest.raises(DataError, match="column 't' has 52 states in 100 rows"):
        select_columns(frame)
    at_share = _two_variables().assign(t=[f"s{v}" for v in np.arange(100) // 2])
    assert select_columns(at_share).shape[1] == 3  # 50 states: at the share


def test_every_continuous_like_column_is_named_in_one_message_with_one_advice():
    rng = np.random.default_rng(0)
    frame = _two_variables(200).assign(
        lvrat=rng.normal(size=200), pirat=[f"{v:.3f}" for v in rng.uniform(size=200)],  # text reads as numbers
        score=rng.integers(30, 90, 200), age=rng.integers(0, 15, 200), id=np.arange(200))
    with pytest.raises(DataError) as error:
        select_columns(frame)
    message = str(error.value)
    assert message.startswith("3 numeric columns have more than 20 distinct values, too many to learn as states: "
                              "'lvrat' (200 values with fractions), 'pirat' (")
    assert "'score' (58 whole numbers)" in message and "'age'" not in message  # 15 values: a variable
    assert "--discretize quantile" in message and "--discretize 'lvrat=interval:4,pirat=hartemink'" in message
    assert "--drop 'lvrat' 'pirat' 'score' (drop=['lvrat', 'pirat', 'score'] in Python)" in message
    assert "--keep 'score' (keep=['score'] in Python)" in message  # whole numbers may be kept
    assert message.count("\n") == 0 and "column 'id' has a different value in each of its 200 rows" in message
    numeric = ["lvrat", "pirat", "score"]
    assert list(select_columns(frame, drop=["id"], discretized=numeric).columns) == ["a", "b", *numeric, "age"]
    assert select_columns(frame, drop=["id"], discretize_all=True).shape[1] == 6
    assert select_columns(frame, drop=["id", "lvrat", "pirat"], keep=["score"]).shape[1] == 4
    with pytest.raises(DataError, match="^column 'id' has a different value"):  # an identifier is not discretized
        select_columns(frame, discretize_all=True)
    with pytest.raises(DataError, match="--discretize names 'zzz', which is not a column"):
        select_columns(frame, discretized=["zzz"])
    with pytest.raises(DataError, match="--discretize names 'id', which --drop leaves out"):
        select_columns(frame, drop=["id"], discretized=["id"])


def test_several_identifiers_are_named_together():
    frame = _two_variables().assign(id=np.arange(100), code=[f"c{i}" for i in range(100)])
    with pytest.raises(DataError, match=r"^2 columns are no variables as they are: 'id' has a different value in "
                                        r"each of its 100 rows.*'code' has.*--drop 'id' 'code'.*--keep 'id' 'code'"):
        select_columns(frame)


def test_continuous_like_columns_are_numbers_with_many_values():
    rng = np.random.default_rng(1)
    assert continuous_like(pd.Series(rng.normal(size=50)))
    assert continuous_like(pd.Series(np.arange(50) % 25))
    assert not continuous_like(pd.Series(np.arange(50) % 20))
    assert not continuous_like(pd.Series([f"x{i}" for i in range(50)]))
    assert not continuous_like(pd.Series(pd.Categorical(np.arange(50))))
    assert continuous_like(pd.Series([str(i) if i % 7 else None for i in range(50)]))  # missing cells ignored
    np.testing.assert_array_equal(numeric_values(pd.Series(["1", "2.5", None])), [1.0, 2.5, np.nan])
    assert numeric_values(pd.Series(["1", "two"])) is None
    assert numeric_values(pd.Series([True, False])) is None
    assert numeric_values(pd.Series([1.0, np.inf])) is None


def test_few_rows_with_distinct_values_are_not_called_identifiers():
    frame = pd.DataFrame({"a": ["x", "y", "z"], "b": ["u", "u", "v"]})
    assert select_columns(frame).shape == (3, 2)


def test_fewer_than_two_variables_are_refused():
    with pytest.raises(DataError, match="at least 2 variables, and the data has 1 column$"):
        select_columns(_two_variables()[["a"]])
    with pytest.raises(DataError, match="has 1 column left after --drop"):
        select_columns(_two_variables(), drop=["a"])


def test_unknown_names_to_drop_or_keep_are_errors():
    with pytest.raises(DataError, match="--drop 'x' .* is not a column of the data; columns are 'a', 'b'"):
        select_columns(_two_variables(), drop=["x"])
    with pytest.raises(DataError, match="--keep 'y'"):
        select_columns(_two_variables(), keep=["y"])


# ------------------------------------------------------------------------------ missing cells

def test_missing_cells_as_a_state_of_their_own():
    frame = pd.DataFrame({"n": [3.0, np.nan, 1.0, 3.0], "t": ["b", "a", None, "a"],
                          "c": pd.Categorical(["lo", None, "hi", "lo"], categories=["lo", "hi"])})
    ds = Dataset.from_frame(frame, missing_state=True)
    assert ds.states == [["1", "3", MISSING_STATE], ["a", "b", MISSING_STATE], ["lo", "hi", MISSING_STATE]]
    np.testing.assert_array_equal(ds.data, [[1, 1, 0], [2, 0, 2], [0, 2, 1], [1, 0, 0]])
    assert Dataset.from_frame(frame.iloc[[0, 3]], missing_state=True, warn=False).states[0] == ["3"]  # none missing
    empty = Dataset.from_frame(pd.DataFrame({"e": [None, None]}), missing_state=True, warn=False)
    assert empty.states == [[MISSING_STATE]]
    many = pd.DataFrame({"m": [f"s{i:03d}" for i in range(200)] + [None]})  # codes beyond int8
    assert Dataset.from_frame(many, missing_state=True).data[-1, 0] == 200
    dataset, dropped = encode_frame(frame, "state")
    assert dataset == ds and dropped == 0
    with pytest.raises(DataError, match=r"--missing state \(missing='state' in Python\) keeps them"):
        Dataset.from_frame(frame)


def test_dropping_many_rows_warns_with_the_counts():
    frame = pd.DataFrame({"a": ["x", None, None, "y", "x"], "b": ["u", "v", "u", None, "v"]})
    with pytest.warns(DataWarning, match=r"s.csv: dropping the rows with a missing cell removed 3 of 5 rows \(60%\), "
                                         r"learning from 2; --missing state"):
        kept, dropped = drop_missing(frame, "s.csv")
    assert dropped == 3 and kept["a"].tolist() == ["x", "x"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert drop_missing(pd.concat([frame.iloc[:2]] + [frame.iloc[[0]]] * 8))[1] == 1  # 10 %: no warning
    with pytest.raises(DataError, match="every one of the 2 rows has a missing cell"):
        drop_missing(frame.iloc[[1, 3]])
