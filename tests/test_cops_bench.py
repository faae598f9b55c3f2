"""bench.cops_pc_baseline: the PC baseline of the cops comparison (Figure 1)."""

import numpy as np

from bayesnet.catalog import load_network
from bench.cops_pc_baseline import run_pc
from graphs.dsep import DSeparation
from graphs.pdag import dag_to_cpdag


def test_pc_baseline_counts_and_cpdag():
    A = load_network("asia").adjacency
    ds = DSeparation(A)
    pc = run_pc(lambda x, y, S: ds.separated(x, y, S), A.shape[0])
    assert pc.status == "ok"
    assert np.array_equal(pc.cpdag, dag_to_cpdag(A))
    assert sum(pc.tests_by_order) == pc.n_distinct_tests
    # PC's largest conditioning set is below the maximum degree
    assert len(pc.tests_by_order) - 1 <= int((A | A.T).sum(axis=1).max()) - 1
