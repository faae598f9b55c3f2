"""The single-run CLI (``run.py [options]``): reports, outputs, cache re-use and bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

from pipeline.apps.cli import main

ROOT = Path(__file__).resolve().parents[1]


class StageLine(NamedTuple):
    seconds: float
    cached: bool
    details: str


_STAGE_LINE = re.compile(r"(data|restrict|scores|solve|evaluate)\s+(\d+\.\d+)s\s+(cached\s+)?(.*)")


def _stage_lines(out: str) -> dict[str, StageLine]:
    """The report's stage lines by stage: time, whether it came from the cache, and its details."""
    found = {}
    for line in out.splitlines():
        if match := _STAGE_LINE.fullmatch(line.strip()):
            stage, seconds, cached, details = match.groups()
            found[stage] = StageLine(float(seconds), cached is not None, details)
    return found


def _messages(err: str) -> list[str]:
    """stderr without the run's header and progress lines (tests/test_cli_progress_signals.py)."""
    return [line for line in err.splitlines() if not line.startswith(("learning ", "solve  ", "pictures  "))]


def test_list_networks(cli):
    status, out, _ = cli("--list-networks")
    assert status == 0
    header, _rule, *body = out.splitlines()
    rows = {fields[0]: dict(zip(header.split(), fields)) for fields in map(str.split, body)}
    assert (rows["asia"]["n_vars"], rows["asia"]["n_edges"]) == ("8", "8")
    assert (rows["alarm"]["n_vars"], rows["alarm"]["n_edges"]) == ("37", "46")


def test_full_run_writes_outputs_and_second_run_hits_cache(cli, dirs, tmp_path):
    argv = ["--network", "asia", "--rows", "500", "--seed", "1", *dirs]
    status, out, err = cli(*argv)
    assert status == 0, err
    lines = _stage_lines(out)
    assert set(lines) == {"data", "restrict", "scores", "solve", "evaluate"}
    assert not any(line.cached for line in lines.values())
    evaluate = lines["evaluate"].details
    assert "SHD" in evaluate and "F1" in evaluate and "reversed" in evaluate
    assert "tests" in lines["restrict"].details and "candidate parent sets" in lines["scores"].details
    assert "status optimal" in lines["solve"].details
    folders = list((tmp_path / "out").iterdir())
    assert len(folders) == 1 and folders[0].name.startswith("asia-")
    files = {p.name for p in folders[0].iterdir()}
    assert files == {"edges.csv", "network.dot", "network.bif", "model.txt", "result.json", "network.png",
                     "network.svg", "comparison.png", "comparison.svg", "selection.csv", "selection.json"}
    record = json.loads((folders[0] / "result.json").read_text())
    assert record["config"]["rows"] == 500 and record["stages"]["solve"]["meta"]["result"]["gap"] == 0
    edges = pd.read_csv(folders[0] / "edges.csv")
    assert len(edges) == record["stages"]["solve"]["meta"]["result"]["n_edges"]
    from bayesnet.bif import read_bif

    fitted = read_bif(folders[0] / "network.bif")
    assert fitted.n_edges == len(edges) and fitted.n_vars == 8

    status, out2, _ = cli(*argv)  # every stage now comes from the cache
    lines2 = _stage_lines(out2)
    assert status == 0 and all(line.cached for line in lines2.values())
    # same figures, same times (recorded when first computed)
    assert {stage: line._replace(cached=True) for stage, line in lines.items()} == lines2


def test_stage_restrict_and_scores_print_counts(cli, dirs):
    base = ["--network", "cancer", "--rows", "300", *dirs]
    status, out, _ = cli(*base, "--stage", "restrict", "--method", "pc", "--alpha", "0.05",
                         "--max-order", "1")
    assert status == 0
    assert set(_stage_lines(out)) == {"data", "restrict"}
    assert "tests (by order 0:" in out and "edges removed by order" in out
    status, out, _ = cli(*base, "--stage", "scores", "--score", "bic", "--palim", "2")
    assert status == 0 and set(_stage_lines(out)) == {"data", "restrict", "scores"}
    assert "candidate parent sets kept" in out


def test_user_data_file_has_no_truth(cli, dirs, tmp_path):
    frame = pd.DataFrame({"a": ["x", "y"] * 50, "b": ["u", "u", "v", "v"] * 25, "c": ["p"] * 60 + ["q"] * 40})
    path = tmp_path / "my data.csv"
    frame.to_csv(path, index=False)
    status, out, err = cli("--data", str(path), "--method", "none", *dirs)
    assert status == 0, err
    assert "no true network" in out and "SHD" not in out


def test_network_from_a_bif_file_is_sampled_and_evaluated(cli, dirs, tmp_path, monkeypatch):
    from bayesnet.bif import write_bif
    from bayesnet.catalog import load_network

    net = load_network("asia")
    write_bif(net, tmp_path / "mine.bif")
    monkeypatch.chdir(tmp_path)  # a relative path, as a user types it
    argv = ["--network", "mine.bif", "--rows", "400", *dirs]
    status, out, err = cli(*argv)
    assert status == 0, err
    lines = _stage_lines(out)
    assert "SHD" in lines["evaluate"].details
    folders = list((tmp_path / "out").iterdir())
    assert len(folders) == 1 and folders[0].name.startswith("mine-")
    status, same, _ = cli("--network", "asia", "--rows", "400", "--stage", "data", *dirs)
    assert not _stage_lines(same)["data"].cached  # keyed by file content, not name
    net.cpts[0][:] = [0.5, 0.5]  # an edited file is a new network: its data are sampled again
    write_bif(net, tmp_path / "mine.bif")
    status, again, _ = cli(*argv, "--stage", "data")
    assert status == 0 and not _stage_lines(again)["data"].cached


def test_names_without_a_model_string_and_both_cpt_estimates(cli, dirs, tmp_path):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 300)
    frame = pd.DataFrame({"dose[mg]": a, "ratio a:b": a ^ (rng.random(300) < 0.1), "c": rng.integers(0, 3, 300)})
    path = tmp_path / "odd.csv"
    frame.to_csv(path, index=False)
    folders = {}
    for cpt in ("bayes", "mle"):
        status, out, err = cli("--data", str(path), "--method", "none", "--cpt", cpt, *dirs)
        assert status == 0, err
        assert "model.txt not written" in err
        folders[cpt] = Path(out.split("learned network written to ")[1].splitlines()[0].strip().rstrip("/"))
    assert folders["mle"].name == folders["bayes"].name + "-mle"
    for cpt, folder in folders.items():
        assert {p.name for p in folder.iterdir()} == {"edges.csv", "network.dot", "network.bif", "result.json",
                                                      "network.png", "network.svg", "selection.csv",
                                                      "selection.json"}  # no truth to compare
        assert json.loads((folder / "result.json").read_text())["cpt"] == cpt
    from bayesnet.bif import read_bif

    assert read_bif(folders["mle"] / "network.bif").variables == ["dose[mg]", "ratio a:b", "c"]


def test_no_cache_recomputes_and_writes_nothing(cli, tmp_path):
    argv = ["--network", "cancer", "--rows", "200", "--stage", "data", "--no-cache",
            "--cache-dir", str(tmp_path / "c")]
    for _ in range(2):
        status, out, _ = cli(*argv)
        assert status == 0 and "cached" not in out
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--network", "nosuchnet"], "known networks: alarm"),
        (["--network", "/nonexistent/net.bif"], "network file not found"),
        (["--data", "/nonexistent/file.csv"], "not found"),
        (["--network", "asia", "--alpha", "1.5"], "--alpha must lie strictly between 0 and 1"),
        (["--network", "asia", "--alpha", "0"], "--alpha"),
        (["--network", "asia", "--palim", "-1"], "--palim"),
        (["--network", "asia", "--rows", "0"], "--rows"),
        (["--network", "asia", "--ess", "0"], "--ess"),
        (["--network", "asia", "--max-order", "-2"], "--max-order"),
        (["--network", "asia", "--time-limit", "-5"], "--time-limit"),
        (["--network", "asia", "--time-limit", "inf"], "--time-limit must be a positive number of seconds"),
        (["--network", "asia", "--ess", "nan"], "--ess must be a positive number up to 1e+06"),
        (["--network", "asia", "--cops-time-limit", "5"], "--cops-time-limit applies to --method cops only"),
        (["--network", "asia", "--method", "cops", "--cops-time-limit", "0"], "--cops-time-limit must be"),
        (["--network", "asia", "--method", "magic"], "invalid choice"),
        (["--network", "asia", "--rows", "many"], "invalid int value"),
        (["--network", "asia", "--palim", "x"], "--palim: expected an integer or 'none', got 'x'"),
        (["--network", "asia", "--structure-prior", "x"], "--structure-prior: expected a number or 'none'"),
        (["--network", "asia", "--structure-prior", "0"], "--structure-prior must be a positive number, got 0"),
        (["--network", "asia", "--structure-prior", "4"], "at most 3.5 is allowed"),
        ([], "exactly one of --network"),
        (["--network", "asia", "--data", "x.csv"], "exactly one of --network"),
    ],
)
def test_bad_input_is_one_line_error(capsys, tmp_path, argv, message):
    try:
        status = main([*argv, "--cache-dir", str(tmp_path)])
    except SystemExit as exc:  # argparse rejects the value itself
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2
    assert message in err and "Traceback" not in err
    assert len(_messages(err)) == 1


def test_data_error_is_one_line(cli, dirs, tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": ["x", None, "y"], "b": ["u", "v", "u"]}).to_csv(path, index=False)
    status, _, err = cli("--data", str(path), *dirs)
    assert status == 2 and "'a'" in err and len(_messages(err)) == 1


def test_malformed_network_file_is_one_line_error(cli, dirs, tmp_path):
    path = tmp_path / "bad.bif"
    path.write_text("network x { }\nvariable a { type discrete [ 2 ] { y, n }; }\n"
                    "probability ( a ) { table 0.5; }\n")
    status, _, err = cli("--network", str(path), *dirs)
    assert status == 2 and "line 3" in err and len(_messages(err)) == 1


def test_unwritable_cache_dir(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    status, _, err = cli("--network", "asia", "--cache-dir", str(blocker / "cache"))
    assert status == 1 and err.startswith("error: cannot write to cache directory")


def test_subprocess_help_and_debug_traceback(tmp_path):
    help_out = subprocess.run([sys.executable, "run.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert help_out.returncode == 0 and "examples:" in help_out.stdout and "--max-order" in help_out.stdout
    bad = subprocess.run([sys.executable, "run.py", "--network", "nope", "--debug", "--cache-dir", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" in bad.stderr


@pytest.mark.parametrize("method", ["pmms", "mmpc", "none"])
def test_other_restriction_methods(cli, dirs, method):
    status, out, err = cli("--network", "cancer", "--rows", "300", "--method", method,
                           "--stage", "solve", "--time-limit", "30", *dirs)
    assert status == 0, err
    lines = _stage_lines(out)
    assert set(lines) == {"data", "restrict", "scores", "solve"} and "status optimal" in lines["solve"].details
    assert ("no restriction" in lines["restrict"].details) == (method == "none")


def test_cops_time_limit_keeps_what_was_found(cli, dirs, tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "noise.csv"  # 150 independent binary columns: chance dependences keep the cops busy
    pd.DataFrame(rng.integers(0, 2, (200, 150)), columns=[f"v{i}" for i in range(150)]).to_csv(path, index=False)
    status, out, err = cli("--data", str(path), "--method", "cops", "--cops-time-limit", "0.1",
                           "--stage", "restrict", *dirs)
    assert status == 0, err
    assert "time limit 0.1 s" in out and "cops timeout" in _stage_lines(out)["restrict"].details
    assert "before a decomposition: nothing is forbidden" in err
    status, out, err = cli("--data", str(path), "--method", "cops", "--stage", "restrict",
                           "--cops-time-limit", "0.1", *dirs)
    assert _stage_lines(out)["restrict"].cached


def test_corrupted_stage_is_recomputed_with_warning(cli, dirs, tmp_path):
    argv = ["--network", "cancer", "--rows", "300", "--stage", "scores", *dirs]
    assert cli(*argv)[0] == 0
    table = next((tmp_path / "cache" / "scores").glob("*/table.*.parquet"))
    table.write_bytes(table.read_bytes()[:-40])  # truncated
    status, out, err = cli(*argv)
    assert status == 0 and "corrupt" in err and _messages(err)[0].startswith("WARNING")
    lines = _stage_lines(out)
    assert lines["data"].cached and lines["restrict"].cached and not lines["scores"].cached
    status, out, err = cli(*argv)
    assert _stage_lines(out)["scores"].cached and _messages(err) == []
