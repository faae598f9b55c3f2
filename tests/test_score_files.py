"""Score files on the command line: ``--scores FILE.jkl`` solves a GOBNILP / BLIP table with any
table solver, ``--write-scores`` exports the scores stage's table; bad files and options give a
one-line error."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import hybridbn

# Written by hand in GOBNILP's format. Best DAG: B -> A (-5) with B alone (-8) beats A -> B
# (-6 - 10), and C takes both as parents (-4): total -17, arcs B->A, A->C, B->C.
GOBNILP_FILE = """\
3
A 2
-10 0
-5 1 B
B 2
-8 0
-6 1 A
C 3
-9 0
-4 2 A B
-7 1 A
"""


@pytest.mark.parametrize("solver", [["--solver", "ilp"], ["--solver", "kg", "--treewidth", "2"],
                                    ["--solver", "kastar", "--treewidth", "2", "--time-limit", "5"]])
def test_hand_written_gobnilp_file_is_solved_by_every_table_solver(cli, dirs, tmp_path, solver):
    path = tmp_path / "hand.jkl"
    path.write_text(GOBNILP_FILE)
    status, out, err = cli("--scores", str(path), *solver, *dirs)
    assert status == 0, err
    assert "7 parent sets of 3 variables read from" in out and "objective -17" in out
    folder = next((tmp_path / "out").iterdir())
    assert folder.name.startswith("hand-")
    files = {p.name for p in folder.iterdir()}
    assert {"edges.csv", "network.dot", "model.txt", "result.json"} <= files and "network.bif" not in files
    edges = pd.read_csv(folder / "edges.csv")
    assert sorted(zip(edges["source"], edges["target"])) == [("A", "C"), ("B", "A"), ("B", "C")]
    record = json.loads((folder / "result.json").read_text())
    assert record["result"]["objective"] == -17 and record["config"]["scores"] == str(path)
    if solver[1] == "ilp":
        assert record["result"]["dual_bound"] == -17 and record["result"]["gap"] == 0
    assert '"A" -> "C"' in (folder / "network.dot").read_text() or "A -> C" in (folder / "network.dot").read_text()


def test_index_file_with_blip_header_and_gzip(tmp_path):
    import gzip

    text = "# BLIP scorer.is\n" + GOBNILP_FILE.replace("A", "0").replace("B", "1").replace("C", "2")
    path = tmp_path / "idx.jkl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(text)
    result = hybridbn.learn(str(path), cache_dir=tmp_path / "cache")
    assert result.names == ["0", "1", "2"] and sorted(result.arcs) == [("0", "2"), ("1", "0"), ("1", "2")]
    assert result.objective == -17 and result.evaluation is None
    with pytest.raises(ValueError, match="parameters need data"):
        result.parameters()


def test_round_trip_write_scores_then_solve_the_file(cli, dirs, tmp_path):
    exported = tmp_path / "asia.jkl.gz"
    status, out, err = cli("--network", "asia", "--rows", "600", "--write-scores", str(exported), *dirs)
    assert status == 0, err
    objective = [line for line in out.splitlines() if line.startswith("solve")][0].split("objective ")[1].split(",")[0]
    first = {p.name for p in (tmp_path / "out").iterdir()}
    status, out2, err = cli("--scores", str(exported), *dirs)
    assert status == 0, err
    assert f"objective {objective}," in out2
    folder = next(p for p in (tmp_path / "out").iterdir() if p.name not in first)
    again = pd.read_csv(folder / "edges.csv")
    original = pd.read_csv(next(p for p in (tmp_path / "out").iterdir() if p.name in first) / "edges.csv")
    assert again.equals(original)  # same names, same arcs


def test_api_write_scores_matches_the_stage_table(tmp_path):
    from scores.jkl import read_jkl
    from pipeline.core.stages import table_of

    result = hybridbn.learn("asia", rows=300, stage="scores", cache_dir=tmp_path / "cache")
    back = read_jkl(result.write_scores(tmp_path / "a.jkl"))
    assert back.names == result.names
    assert back.families == table_of(result.artifacts["scores"]).families


@pytest.mark.parametrize("argv,message", [
    (["--scores", "x.txt"], "--scores must name a .jkl or .jkl.gz file, got 'x.txt'"),
    (["--scores", "nothere.jkl"], "--scores: file not found: nothere.jkl"),
    (["--scores", "{hand}", "--solver", "ges"], "--scores needs a solver that reads a score table"),
    (["--scores", "{hand}", "--network", "asia"], "give exactly one of"),
    (["--network", "asia", "--write-scores", "t.csv"], "--write-scores must name a .jkl or .jkl.gz file"),
    (["--network", "asia", "--solver", "ges", "--write-scores", "t.jkl"], "--write-scores needs the scores stage"),
    (["--network", "asia", "--stage", "restrict", "--write-scores", "t.jkl"], "--write-scores needs the scores stage"),
    (["--network", "asia", "--write-scores", "no/such/dir/t.jkl"], "--write-scores: folder not found"),
])
def test_bad_options_are_one_line_errors_before_any_work(cli, tmp_path, argv, message):
    hand = tmp_path / "hand.jkl"
    hand.write_text(GOBNILP_FILE)
    argv = [a.replace("{hand}", str(hand)) for a in argv]
    status, out, err = cli(*argv, "--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "o"))
    assert status == 2 and err.count("\n") == 1 and message in err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "o").exists()


def test_malformed_file_names_the_line(cli, dirs, tmp_path):
    bad = tmp_path / "bad.jkl"
    bad.write_text(GOBNILP_FILE.replace("-5 1 B", "-5 2 B"))
    status, out, err = cli("--scores", str(bad), "--quiet", *dirs)  # no header line
    assert status == 2 and err == f"error: {bad}: line 4: says 2 parents but lists 1\n"
    assert not (tmp_path / "out").exists()
