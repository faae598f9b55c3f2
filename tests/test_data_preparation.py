"""Real data as users bring it (issue 53, point 5): continuous and many-valued numeric columns named
in one message and discretized on request, missing cells kept as a state, a loud warning when
dropping rows removes many, the record in result.json, and unchanged cache keys without them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import hybridbn
from bayesnet.dataset import MISSING_STATE
from pipeline.core.stages import dataset_of


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def survey(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A continuous income, a whole-number score that follows it, and a binary group."""
    rng = np.random.default_rng(seed)
    income = rng.lognormal(3, 0.5, n)
    score = np.round(40 + 2 * np.log(income) * 5 + rng.normal(0, 4, n)).astype(int)
    group = np.where(score + rng.normal(0, 5, n) > np.median(score), "high", "low")
    return pd.DataFrame({"income": income.round(2), "score": score, "group": group})


def test_continuous_and_many_valued_columns_are_named_in_one_line_with_the_options(cli, dirs, tmp_path):
    path = tmp_path / "survey.csv"
    survey().to_csv(path, index=False)
    status, out, err = cli("--data", str(path), *dirs)
    *_, last = err.splitlines()
    assert status == 2 and err.count("error:") == 1
    assert last.startswith("error: 2 numeric columns have more than 20 distinct values") and "'income'" in last
    assert "'score' (" in last and "--discretize quantile" in last and "--drop 'income' 'score'" in last
    status, out, _ = cli("--data", str(path), "--discretize", "quantile", "--score", "bdeu", "--palim", "1", *dirs)
    assert status == 0 and "400 rows x 3 variables (2 discretized: income quantile 3, score quantile 3)" in out
    (record,) = (tmp_path / "out").glob("*/result.json")
    meta = json.loads(record.read_text())["stages"]["data"]["meta"]
    assert meta["discretized"]["income"]["method"] == "quantile" and len(meta["discretized"]["income"]["cuts"]) == 2
    status, _, err = cli("--data", str(path), "--discretize", "income=kmeans", *dirs)
    assert status == 2 and "unknown method 'kmeans'" in err
    status, _, err = cli("--data", str(path), "--breaks", "4", *dirs)
    assert status == 2 and "--breaks applies to the columns of --discretize" in err
    status, _, err = cli("--network", "asia", "--discretize", "quantile", *dirs)
    assert status == 2 and "--discretize cuts numeric columns of --data" in err


def test_python_discretizes_per_column_under_keys_of_their_own(cache):
    frame = survey()
    with pytest.raises(ValueError, match=r"discretize='quantile'.*drop=\['income', 'score'\]") as error:
        hybridbn.learn(frame, cache_dir=cache)
    assert "--" not in str(error.value)
    with pytest.raises(ValueError, match="^discretize names 'wage', which is not a column"):
        hybridbn.learn(frame, discretize="wage=quantile", cache_dir=cache)
    per_column = hybridbn.learn(frame, discretize="income=interval:4,score=hartemink", stage="data", cache_dir=cache)
    meta = per_column.artifacts["data"].meta["discretized"]
    assert (meta["income"]["method"], meta["income"]["intervals"]) == ("interval", 4)
    assert (meta["score"]["method"], meta["score"]["intervals"]) == ("hartemink", 3)
    states = dataset_of(per_column.artifacts["data"]).states
    assert len(states[0]) == 4 and states[0][0].startswith("[") and states[0][1].startswith("(")
    more = hybridbn.learn(frame, discretize="income=interval:4,score=hartemink", breaks=5, stage="data",
                          cache_dir=cache)
    assert more.artifacts["data"].meta["discretized"]["score"]["intervals"] == 5
    assert more.artifacts["data"].key != per_column.artifacts["data"].key and not more.cached["data"]
    again = hybridbn.learn(frame, discretize="income=interval:4,score=hartemink", breaks=3, stage="data",
                           cache_dir=cache)  # the default --breaks is no key of its own
    assert again.cached["data"] and again.artifacts["data"].key == per_column.artifacts["data"].key


def test_missing_cells_kept_as_a_state_or_dropped_with_a_warning(cache, tmp_path):
    frame = survey().astype(object)
    frame.loc[frame.index % 3 == 0, "group"] = None  # a third of the rows
    with pytest.warns(UserWarning, match=r"removed 134 of 400 rows \(34%\), learning from 266"):
        dropped = hybridbn.learn(frame, discretize="quantile", missing="drop", stage="data", cache_dir=cache)
    assert dropped.artifacts["data"].meta["n_rows"] == 266
    kept = hybridbn.learn(frame, discretize="quantile", missing="state", stage="data", cache_dir=cache)
    meta = kept.artifacts["data"].meta
    assert meta["n_rows"] == 400 and meta["n_missing_cells"] == 134
    network = hybridbn.learn(frame, discretize="quantile", missing="state", palim=1, score="bdeu", cache_dir=cache)
    assert network.parameters().states[network.names.index("group")] == ["high", "low", MISSING_STATE]
    with pytest.raises(ValueError, match="missing must be one of reject, drop, state, em; got .impute."):
        hybridbn.learn(frame, missing="impute", cache_dir=cache)
