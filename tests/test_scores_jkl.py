"""Round trips and error messages of the GOBNILP/BLIP .jkl score-table format."""

import numpy as np
import pytest

from scores.candidates import build_score_table
from scores.jkl import JKLError, read_jkl, write_jkl
from scores.table import ScoreTable


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    data = rng.integers(0, 3, size=(200, 5)).astype(np.uint8)
    data[:, 1] = (data[:, 0] + (rng.random(200) < 0.2)) % 3
    return build_score_table(data, np.full(5, 3), "bdeu", palim=2, names=["A", "B", "C", "D", "E"])


def test_round_trip_by_index(table, tmp_path):
    path = tmp_path / "t.jkl"
    write_jkl(table, path)
    back = read_jkl(path)
    assert back.names is None and back.n_vars == table.n_vars
    assert back.families == table.families  # bit-identical scores
    assert path.read_text().splitlines()[0] == "5"


def test_round_trip_by_name(table, tmp_path):
    path = tmp_path / "t.jkl"
    write_jkl(table, path, use_names=True)
    back = read_jkl(path)
    assert back.names == table.names and back.families == table.families


def test_reads_comments_blank_lines_and_any_block_order(tmp_path):
    path = tmp_path / "t.jkl"
    path.write_text("# made by hand\n3\n\nz 1\n-1.5 0\nx 2\n-3 1 z\n-4 0\n# middle\ny 1\n-2.25 2 x z\n")
    back = read_jkl(path)
    assert back.names == ["z", "x", "y"]
    assert back.families == [{(): -1.5}, {(0,): -3.0, (): -4.0}, {(0, 1): -2.25}]


@pytest.mark.parametrize("text,message", [
    ("", "empty file"),
    ("2 3\n", "line 1: first line"),
    ("two\n", "line 1: number of variables must be an integer"),
    ("2\n0 1\n-1 0\n", "announces 2 variables but has 1"),
    ("1\n0 2\n-1 0\n", "line 2: variable '0' announces 2 parent sets"),
    ("2\n0 1\n-1 0\n1 1\nabc 0\n", "line 5: score must be a number"),
    ("2\n0 1\n-1 0\n1 1\n-2 2 0\n", "line 5: says 2 parents but lists 1"),
    ("2\na 1\n-1 0\nb 1\n-2 1 c\n", "line 5: unknown parent 'c'"),
    ("2\na 1\n-1 1 a\nb 1\n-2 0\n", "line 3: invalid parent set"),
    ("2\n0 2\n-1 0\n-1.5 0\n1 1\n-2 0\n", "line 4: parent set"),
    ("2\n0 1\n-1 0\n1\n", "line 4: expected '<variable> <number of parent sets>'"),
])
def test_malformed_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.jkl"
    path.write_text(text)
    with pytest.raises(JKLError, match=message):
        read_jkl(path)


def test_names_with_spaces_are_refused(tmp_path):
    table = ScoreTable.from_families([{(): -1.0}], names=["has space"])
    with pytest.raises(JKLError, match="whitespace"):
        write_jkl(table, tmp_path / "x.jkl", use_names=True)


def test_digit_names_are_not_renumbered(tmp_path):
    """Names that look like indices keep their variables (the block order numbers them)."""
    table = ScoreTable.from_families([{(): -1.0, (2,): -0.5}, {(): -2.0}, {(): -3.0, (1,): -2.5}],
                       names=["2", "0", "1"])
    path = tmp_path / "digits.jkl"
    write_jkl(table, path, use_names=True)
    back = read_jkl(path)
    assert back.names == ["2", "0", "1"] and back.families == table.families


def test_gzip_and_blip_headers(table, tmp_path):
    path = tmp_path / "t.jkl.gz"
    write_jkl(table, path)
    import gzip

    text = gzip.open(path, "rt").read()
    assert text.startswith("5\n")
    blip = tmp_path / "blip.jkl.gz"
    with gzip.open(blip, "wt") as handle:
        handle.write("# method: is\n# score: bdeu\n# max in-degree: 2\n" + text)
    assert read_jkl(blip).families == read_jkl(path).families == table.families
    (tmp_path / "plain.jkl.gz").write_text(text)
    with pytest.raises(JKLError, match="plain.jkl.gz: cannot read as a .jkl text file"):
        read_jkl(tmp_path / "plain.jkl.gz")
