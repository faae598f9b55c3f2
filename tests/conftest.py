"""Fixtures shared by the test modules (plain helper functions are in helpers.py)."""

import pytest

from pipeline.apps.cli import main
from pipeline.core import kernels


@pytest.fixture(autouse=True, scope="session")
def kernels_compile_on_first_call():
    """No warm-up run before a kind of run's first stage: the tests compile every kernel they
    call anyway, and the warm-up (a whole pipeline run on bundled data, solvers to their time
    limit) would add one such run for each of the suite's dozens of kinds of run. The stamp file
    is marked as usual, so that subprocess runs skip their warm-up too, and is put back as it was
    afterwards. tests/test_startup.py tests the warm-up's bookkeeping and its configuration."""
    stamp = kernels.stamp_path()
    before = stamp.read_bytes() if stamp.exists() else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "compile_groups", lambda groups, run_stages, processes=1: [g.key for g in groups])
        yield
    if before is None:
        stamp.unlink(missing_ok=True)
    else:
        stamp.write_bytes(before)


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
