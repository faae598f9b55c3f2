"""Choosing a setting by cross-validation (``--select``): Perks' CPTs and the log-likelihood by
hand, the folds, the candidates' parsing and validation, the held-out log-likelihood of the
empty network against a direct computation, and ``--select`` through the API, the CLI and grids;
``--score auto``: the sign test, its choice against the spelt-out setting, where it falls back
to BDeu, and a stop in its cross-validation."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import hybridbn
from bayesnet.catalog import load_network
from bayesnet.dataset import Dataset
from bayesnet.fitting import fit_cpts, log_likelihood
from bayesnet.sampling import forward_sample
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig, candidate_configs
from pipeline.core.declarations import ConfigError
from pipeline.apps.grid import parse_grid, run_grid
from pipeline.apps.selection import fold_of_rows
from pipeline.core.overrides import parse_candidates, parse_overrides
from pipeline.core.stages import restrict_params, score_params

ASIA = {"rows": 400, "seed": 2}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


# ------------------------------------------------------------------- CPTs and likelihood
def test_perks_cpts_by_hand():
    frame = pd.DataFrame({"a": ["x", "x", "y", "y", "y"], "b": ["u", "v", "u", "u", "w"]})
    data = Dataset.from_frame(frame)
    dag = np.array([[0, 1], [0, 0]], dtype=bool)  # a -> b
    network = fit_cpts(dag, data, method="perks")
    np.testing.assert_allclose(network.cpts[0], [(2 + 1 / 2) / 6, (3 + 1 / 2) / 6])
    np.testing.assert_allclose(network.cpts[1][0], np.array([1, 1, 0]) / 3 + 1 / 3 / 3)   # a = x: u, v
    np.testing.assert_allclose(network.cpts[1][1], (np.array([2, 0, 1]) + 1 / 3) / 4)      # a = y: u, u, w


def test_log_likelihood_is_the_sum_of_each_rows_log_probability():
    network = load_network("asia")
    data = forward_sample(network, 50, seed=4)
    by_row = 0.0
    for row in data.data:
        for v, (ps, cpt) in enumerate(zip(network.parents, network.cpts)):
            by_row += np.log(cpt[tuple(int(row[p]) for p in ps) + (int(row[v]),)])
    assert log_likelihood(network, data) == pytest.approx(by_row, rel=1e-12)
    other = Dataset(data=data.data, names=data.names[::-1], states=data.states[::-1])
    with pytest.raises(ValueError, match="differ"):
        log_likelihood(network, other)


# ------------------------------------------------------------------------------- folds
def test_every_row_is_in_one_fold_and_the_folds_differ_by_at_most_one_row():
    fold = fold_of_rows(103, 5, seed=7)
    sizes = np.bincount(fold, minlength=5)
    assert sizes.sum() == 103 and sizes.max() - sizes.min() <= 1
    np.testing.assert_array_equal(fold, fold_of_rows(103, 5, seed=7))
    assert (fold != fold_of_rows(103, 5, seed=8)).any()
    with pytest.raises(ConfigError, match="--folds 6 exceeds the 5 rows"):
        fold_of_rows(5, 6, seed=0)


# -------------------------------------------------------------------------- candidates
def test_overrides_are_typed_by_their_declarations():
    assert parse_overrides("palim=none, ess=10, method=None, within_bags=true, test=X2") == {
        "palim": None, "ess": 10.0, "method": "none", "within_bags": True, "test": "x2"}
    candidates = parse_candidates("method=none; score=qnml,ess=2;")
    assert candidates == [{"method": "none"}, {"score": "qnml", "ess": 2.0}, {}]


def test_a_run_option_reaches_the_candidates_whose_method_takes_it():
    """The recommended ``--alpha 0.5 --select "method=none; score=qnml"``: the PC candidate tests
    at 0.5, the unrestricted one has no test, so its stages are those of a run without --alpha."""
    run = RunConfig(network="asia", structure_prior=1, select="method=none; score=qnml")
    (_, unrestricted), (_, pc_qnml) = candidate_configs(replace(run, alpha=0.5).validated())
    (_, unrestricted_at_default), _ = candidate_configs(run.validated())
    assert restrict_params(unrestricted) == restrict_params(unrestricted_at_default) == {"method": "none"}
    assert restrict_params(pc_qnml)["alpha"] == 0.5 and score_params(pc_qnml)["score"] == "qnml"
    assert score_params(unrestricted) == score_params(unrestricted_at_default)


@pytest.mark.parametrize("select,message", [
    ("method=none", "at least two candidates"),
    ("palim; method=none", "'palim' is not key=value"),
    ("frobnicate=1; method=none", "'frobnicate' is not an option"),
    ("palim=x; method=none", "palim must be an integer"),
    ("rows=10; method=none", "cannot set rows"),
    ("bootstrap=3; method=none", "cannot set bootstrap"),
    ("method=nonex; method=none", "candidate 'method=nonex': --method must be one of"),
    ("palim=-1; method=none", "candidate 'palim=-1': --palim"),
])
def test_bad_candidates_fail_before_any_work(select, message):
    with pytest.raises(ConfigError, match=message):
        RunConfig(network="asia", select=select).validated()


def test_selection_needs_data_folds_need_selection():
    with pytest.raises(ConfigError, match="--folds applies"):
        RunConfig(network="asia", score="bdeu", folds=3).validated()
    with pytest.raises(ConfigError, match="--scores FILE.jkl has none"):
        RunConfig(scores="t.jkl", select="palim=1; palim=2").validated()
    with pytest.raises(ConfigError, match="exceeds --rows"):
        RunConfig(network="asia", rows=4, folds=5, select="palim=1; palim=2").validated()
    with pytest.raises(ConfigError, match="--folds"):
        RunConfig(network="asia", folds=1, select="palim=1; palim=2").validated()


# ---------------------------------------------------------------------------- selection
def test_the_empty_network_loses_and_its_held_out_likelihood_is_exact(cache_dir):
    result = hybridbn.learn("asia", **ASIA, select="palim=0; method=none", folds=4, cache_dir=cache_dir,
                            stage="solve")
    table = result.selection.table()
    assert table["chosen"].tolist() == [False, True] and result.config.method == "none"
    # the empty network's held-out log-likelihood, fold by fold, from the training counts
    data = forward_sample(load_network("asia"), ASIA["rows"], seed=ASIA["seed"]).data.astype(np.int64)
    fold = fold_of_rows(len(data), 4, seed=ASIA["seed"])
    for k in range(4):
        train, test = data[fold != k], data[fold == k]
        expected = sum(np.log((np.bincount(train[:, v], minlength=2)[test[:, v]] + 1 / 2) / (len(train) + 1)).sum()
                       for v in range(data.shape[1]))
        assert table.loc[0, f"fold_{k}"] == pytest.approx(expected, rel=1e-12)
    assert table.loc[0, "log_likelihood_per_row"] == pytest.approx(table.filter(like="fold_").loc[0].sum() / 400)


def test_the_run_is_the_chosen_candidates_and_a_pool_gives_the_same_table(cache_dir, tmp_path):
    chosen = hybridbn.learn("asia", **ASIA, select="score=bic; score=qnml,structure_prior=1", cache_dir=cache_dir,
                            stage="solve")
    label = chosen.selection.labels[chosen.selection.chosen]
    direct = hybridbn.learn("asia", **ASIA, **parse_overrides(label), cache_dir=cache_dir, stage="solve")
    np.testing.assert_array_equal(chosen.adjacency, direct.adjacency)
    values = chosen.selection.log_likelihood.sum(axis=1)
    assert chosen.selection.chosen == int(np.argmax(values))
    pooled = hybridbn.learn("asia", **ASIA, select="score=bic; score=qnml,structure_prior=1", cache_dir=tmp_path,
                            stage="solve", n_jobs=2)
    np.testing.assert_array_equal(pooled.selection.log_likelihood, chosen.selection.log_likelihood)


def test_cli_writes_the_selection_and_reports_it(cli, dirs, tmp_path):
    status, out, _ = cli("--network", "asia", "--rows", "300", "--select", "palim=0; palim=2", "--folds", "3",
                         "--quiet", *dirs)
    assert status == 0 and "selection : palim=2 by 3-fold held-out log-likelihood" in out
    folder = next((tmp_path / "out").iterdir())
    table = pd.read_csv(folder / "selection.csv")
    assert table["candidate"].tolist() == ["palim=0", "palim=2"] and table["chosen"].tolist() == [False, True]
    assert json.loads((folder / "selection.json").read_text())["chosen"] == "palim=2"
    status, _, err = cli("--network", "asia", "--select", "palim=0; palim=2", "--stage", "scores", *dirs)
    assert status == 2 and "--select" in err and err.count("\n") == 1


def test_grid_key_select(cache_dir):
    grid = parse_grid('networks = ["asia"]\nrows = [300]\nselect = "palim=0; palim=2"\nfolds = 3\nbaseline = false')
    row = run_grid(grid, StageCache(cache_dir)).iloc[0]
    assert row["status"] == "optimal" and row["selected"] == "palim=2" and row["cv_log_likelihood"] < 0
    direct = hybridbn.learn("asia", rows=300, palim=2, cache_dir=cache_dir, stage="solve")
    assert row["objective"] == pytest.approx(direct.objective)


def test_dask_selection_matches_serial(cache_dir, tmp_path):
    distributed = pytest.importorskip("distributed")
    from pipeline.core.executors import DaskExecutor
    from pipeline.apps.selection import run_selection
    from pipeline.core.stages import data_stage

    serial = hybridbn.learn("asia", **ASIA, select="palim=1; palim=2", folds=3, cache_dir=cache_dir, stage="solve")
    cfg = RunConfig(network="asia", **ASIA, select="palim=1; palim=2", folds=3).validated()
    cache = StageCache(tmp_path / "dask")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        on_dask = run_selection(cfg, cache, data_stage(cache, cfg), executor=DaskExecutor(client))
    np.testing.assert_array_equal(serial.selection.log_likelihood, on_dask.log_likelihood)
    assert on_dask.chosen == serial.selection.chosen


# ------------------------------------------------------------------------- --score auto
def test_sign_test_and_the_rule_that_leaves_the_reference():
    from pipeline.apps.selection import sign_test_p, unless_consistently_better

    assert sign_test_p(5, 5) == 1 / 32 and sign_test_p(0, 5) == 1.0
    assert sign_test_p(9, 10) == pytest.approx(11 / 1024) and sign_test_p(8, 10) == pytest.approx(56 / 1024)
    better_in_total_only = np.array([[-10.0, -10, -10, -10, -10], [-1.0, -1, -1, -1, -11]])
    assert unless_consistently_better(better_in_total_only) == 0   # 4 of 5 folds: p = 0.19
    assert unless_consistently_better(better_in_total_only[:, :4]) == 0   # 4 of 4 folds: p = 1/16
    slightly_on_every_fold = np.array([[-10.0] * 5, [-9.999] * 5])
    assert unless_consistently_better(slightly_on_every_fold) == 1
    assert unless_consistently_better(np.hstack([slightly_on_every_fold] * 2)) == 1   # 10 of 10


@pytest.mark.parametrize("network, rows, score", [("child", 1000, "qnml"), ("child", 500, "bdeu")])
def test_score_auto_learns_bdeu_unless_qnml_predicts_better_on_every_fold(cache_dir, network, rows, score):
    result = hybridbn.learn(network, rows=rows, cache_dir=cache_dir, stage="solve")
    better = result.selection.log_likelihood[1] > result.selection.log_likelihood[0]
    assert result.selection.rule == "sign test" and result.config.score == score
    assert result.selection.chosen == int(better.all())
    spelt_out = {"score": "qnml", "structure_prior": 1.0} if score == "qnml" else {"score": "bdeu"}
    direct = hybridbn.learn(network, rows=rows, cache_dir=cache_dir, stage="solve", **spelt_out)
    np.testing.assert_array_equal(result.adjacency, direct.adjacency)
    assert result.objective == pytest.approx(direct.objective)


def test_score_auto_is_bdeu_where_the_run_cannot_cross_validate(cache_dir, tmp_path):
    from pipeline.apps.selection import AUTO_MAX_VARIABLES, auto_score_decidable

    cfg = RunConfig(network="asia").validated()
    assert cfg.score == "auto" and auto_score_decidable(cfg, 5000, AUTO_MAX_VARIABLES)
    assert not auto_score_decidable(cfg, 5000, AUTO_MAX_VARIABLES + 1)
    assert not auto_score_decidable(cfg, 9, 8)   # fewer than two rows per fold
    assert not auto_score_decidable(cfg, 5000, 2)   # too few variables for the arc prior E = 1
    for bounded in ({"time_limit": 60}, {"budget": 60}, {"select": "palim=1; palim=2"}, {"scores": "t.jkl"}):
        source = {} if "scores" in bounded else {"network": "asia"}
        assert RunConfig(**source, **bounded).validated().score == "bdeu"
    assert RunConfig(network="asia", score="qnml").validated().score == "qnml"
    early = hybridbn.learn("asia", rows=400, cache_dir=cache_dir, stage="scores")
    assert early.config.score == "bdeu" and early.selection is None
    timed = hybridbn.learn("asia", rows=400, time_limit=60, cache_dir=cache_dir, stage="solve")
    assert timed.config.score == "bdeu" and timed.selection is None
    with pytest.raises(ConfigError, match="--folds 5 or more"):
        RunConfig(network="asia", folds=4).validated()
    assert RunConfig(network="asia", folds=10).validated().folds == 10


def test_a_stop_in_the_auto_cross_validation_keeps_bdeus_network(cache_dir, monkeypatch):
    import signal

    import pipeline.apps.learn as learn_module
    from pipeline.core.stopping import StageStopped

    def stopped(*args, **kwargs):
        raise StageStopped("selection", signal.SIGTERM, during="the selection (3 of 10 networks learned)")

    monkeypatch.setattr(learn_module, "select_config", stopped)
    with pytest.warns(UserWarning, match="this is BDeu's network"):
        result = hybridbn.learn("child", rows=1000, cache_dir=cache_dir, stage="solve")
    assert result.stopped_in == "selection" and result.config.score == "bdeu"
    assert "3 of 10 networks" in result.selection.summary()
    monkeypatch.undo()
    bdeu = hybridbn.learn("child", rows=1000, score="bdeu", cache_dir=cache_dir, stage="solve")
    np.testing.assert_array_equal(result.adjacency, bdeu.adjacency)


def test_cli_reports_the_auto_choice(cli, dirs, tmp_path):
    status, out, _ = cli("--network", "child", "--rows", "1000", "--quiet", *dirs)
    assert status == 0 and "selection : score=qnml,structure_prior=1 by --score auto" in out
    assert "better on 5 of 5 folds (sign test p = 0.031" in out
    folder = next((tmp_path / "out").iterdir())
    assert json.loads((folder / "selection.json").read_text())["rule"] == "sign test"


def test_a_rerun_reads_the_cached_held_out_values_not_the_folds(cache_dir, monkeypatch):
    import pipeline.apps.selection as selection_module

    first = hybridbn.learn("child", rows=1000, cache_dir=cache_dir, stage="solve")
    monkeypatch.setattr(selection_module, "cross_validate", lambda *a, **k: pytest.fail("the folds were read again"))
    again = hybridbn.learn("child", rows=1000, cache_dir=cache_dir, stage="solve")
    np.testing.assert_array_equal(again.selection.log_likelihood, first.selection.log_likelihood)
    assert again.selection.statuses == first.selection.statuses and again.config == first.config
