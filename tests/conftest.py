"""Fixtures shared by the test modules (plain helper functions are in helpers.py)."""

import pytest

from pipeline.cli import main


@pytest.fixture
def cli(capsys):
    """``run.py``'s ``main`` as a function: ``cli(*argv) -> (status, stdout, stderr)``."""
    def run(*argv):
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return run


@pytest.fixture
def dirs(tmp_path):
    """``--cache-dir`` and ``--output-dir`` options inside the test's temporary folder."""
    return ["--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / "out")]
