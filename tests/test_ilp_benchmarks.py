"""ILP optimum equals the exact DP optimum on BDeu score tables of small benchmark networks."""

from __future__ import annotations

import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from graphs.dag import is_acyclic
from ilp import ILPOptions, solve_ilp
from ilp.exact_dp import exact_optimum
from scores.candidates import build_score_table


@pytest.mark.parametrize("network, n_rows, palim", [
    ("cancer", 500, 2), ("asia", 1000, 2), ("asia", 1000, 3),
    ("sachs", 1000, 2), ("sachs", 2000, 3), ("child", 1000, 2), ("child", 1000, 3),
])
def test_ilp_matches_exact_dp_on_benchmarks(network, n_rows, palim):
    data = forward_sample(load_network(network), n_rows, seed=0)
    table = build_score_table(data.data, data.arities, score="bdeu", ess=1.0, palim=palim)
    res = solve_ilp(table, ILPOptions(dp_max_vars=0))  # SCIP, not the DP route of the portfolio
    score, _ = exact_optimum(table)
    assert res.status == "optimal" and res.gap == 0.0
    assert res.objective == pytest.approx(score, rel=1e-9)
    assert table.score_of(res.parent_sets) == pytest.approx(res.objective, rel=1e-12)
    assert is_acyclic(res.dag)
