"""bench/cops_pc_baseline.py: the PC baseline of the cops comparison (Figure 1)."""

import sys
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))  # after the packages

from cops_pc_baseline import run_pc  # noqa: E402
from bayesnet.catalog import load_network  # noqa: E402
from graphs.dsep import DSeparation  # noqa: E402
from graphs.pdag import dag_to_cpdag  # noqa: E402


def test_pc_baseline_counts_and_cpdag():
    A = load_network("asia").adjacency
    ds = DSeparation(A)
    pc = run_pc(lambda x, y, S: ds.separated(x, y, S), A.shape[0])
    assert pc.status == "ok"
    assert np.array_equal(pc.cpdag, dag_to_cpdag(A))
    assert sum(pc.tests_by_order) == pc.n_distinct_tests
    # PC's largest conditioning set is below the maximum degree
    assert len(pc.tests_by_order) - 1 <= int((A | A.T).sum(axis=1).max()) - 1
