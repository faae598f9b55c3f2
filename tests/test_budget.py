"""--budget: one wall-clock budget for restriction, scoring and solving (pipeline.budget)."""

from __future__ import annotations

import json

import pytest

import hybridbn
from pipeline.budget import MIN_SOLVE_SECONDS, RESTRICT_SHARE, restrict_config, solve_config
from pipeline.cache import Artifact
from pipeline.cli import main
from pipeline.config import RunConfig
from pipeline.grid import _param_columns, parse_grid


def spent(restrict: float, scores: float) -> dict[str, Artifact]:
    return {"restrict": Artifact("restrict", "r", seconds=restrict), "scores": Artifact("scores", "s", seconds=scores)}


@pytest.mark.parametrize("budget,time_limit,used,expected", [
    (10.0, None, (1.0, 2.0), 7.0),            # the solver gets what is left
    (10.0, 4.0, (1.0, 2.0), 4.0),             # --time-limit caps it
    (10.0, None, (6.0, 7.0), MIN_SOLVE_SECONDS),  # over budget: still a DAG
    (None, 4.0, (100.0, 100.0), 4.0),         # no budget: the time limit as given
])
def test_solver_gets_what_restriction_and_scoring_left(budget, time_limit, used, expected):
    cfg = RunConfig(network="asia", budget=budget, time_limit=time_limit).validated()
    assert solve_config(cfg, spent(*used)).time_limit == pytest.approx(expected)


def test_cops_gets_at_most_its_share():
    cops = RunConfig(network="asia", method="cops", budget=20.0).validated()
    assert restrict_config(cops).cops_time_limit == RESTRICT_SHARE * 20.0
    assert restrict_config(RunConfig(network="asia", method="cops", budget=20.0, cops_time_limit=3.0)
                           .validated()).cops_time_limit == 3.0
    pc = RunConfig(network="asia", budget=20.0).validated()
    assert restrict_config(pc) == pc


def test_run_records_what_each_stage_got_and_reruns_from_the_cache(tmp_path, capsys):
    argv = ["--network", "asia", "--rows", "500", "--budget", "30", "--cache-dir", str(tmp_path / "c"),
            "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "budget" in out and "solver time limit" in out
    folder = next((tmp_path / "o").iterdir())
    record = json.loads((folder / "result.json").read_text())
    budget, stages = record["budget"], record["stages"]
    assert budget["seconds"] == 30 and record["config"]["budget"] == 30
    left = 30 - stages["restrict"]["seconds"] - stages["scores"]["seconds"]
    assert budget["stages"]["solve"]["limit"] == pytest.approx(left, abs=1e-3)
    assert stages["solve"]["meta"]["result"]["status"] == "optimal" and record["result"]["gap"] == 0
    assert budget["used"] == pytest.approx(sum(stages[s]["seconds"] for s in ("restrict", "scores", "solve")))
    again = hybridbn.learn("asia", rows=500, budget=30, cache_dir=tmp_path / "c")
    assert all(again.cached.values()) and again.budget == budget


def test_anytime_solver_and_score_file_runs_take_the_budget(tmp_path):
    result = hybridbn.learn("asia", rows=300, solver="kg", treewidth=2, budget=2, cache_dir=tmp_path / "c")
    limit = result.budget["stages"]["solve"]["limit"]
    assert result.solver_result["time_limit"] == limit and MIN_SOLVE_SECONDS <= limit <= 2
    path = result.write_scores(tmp_path / "a.jkl")
    from_file = hybridbn.learn(str(path), budget=5, cache_dir=tmp_path / "c")
    assert from_file.budget["stages"]["solve"]["limit"] == pytest.approx(5 - from_file.times["scores"], abs=1e-3)


@pytest.mark.parametrize("argv,message", [
    (["--budget", "0"], "--budget must be a positive number of seconds"),
    (["--budget", "inf"], "--budget must be a positive number of seconds"),
    (["--budget", "soon"], "argument --budget: invalid float value: 'soon'"),
    (["--budget", "10", "--solver", "ges"], "--budget needs a solver with a time limit (ilp, kg, kastar), not --solver ges"),
])
def test_bad_budget_is_a_one_line_error(capsys, tmp_path, argv, message):
    try:
        status = main(["--network", "asia", *argv, "--cache-dir", str(tmp_path / "c")])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "c").exists()


def test_grid_key():
    grid = parse_grid('networks = ["asia"]\nbudget = 60\n', name="g")
    assert [cfg.budget for cfg in grid.configs] == [60.0]
    assert _param_columns(grid.configs[0])["budget"] == 60.0  # a column of the results table
    with pytest.raises(ValueError, match="--budget must be a positive"):
        parse_grid('networks = ["asia"]\nbudget = -1\n', name="g")
