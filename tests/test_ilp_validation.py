"""ILP input validation: clear ILPInputError (a ValueError) before the solver starts."""

from __future__ import annotations

import numpy as np
import pytest

from ilp import ILPInfeasibleError, ILPInputError, ILPOptions, solve_ilp
from ilp.problem import build_problem
from scores.table import ScoreTable


def _table() -> ScoreTable:
    fams = [
        {(): -10.0, (1,): -8.0, (2,): -9.0},
        {(): -10.0, (0,): -7.0, (0, 2): -6.0},
        {(): -10.0, (1,): -9.5},
    ]
    return ScoreTable.from_families(fams, names=["a", "b", "c"])


def test_error_is_value_error():
    assert issubclass(ILPInputError, ValueError)
    assert issubclass(ILPInfeasibleError, ILPInputError)


@pytest.mark.parametrize(
    "table, match",
    [
        (ScoreTable.from_families([]), "children"),
        (ScoreTable(2, np.array([0, 2], np.int32), np.zeros(3, np.int64), np.zeros(0, np.int32), np.zeros(2)),
         "children outside"),
        (ScoreTable.from_families([{(): 0.0}, {}]), "no candidate"),
        (ScoreTable.from_families([{(): 0.0}, {(1,): 0.0}]), "invalid parent set"),
        (ScoreTable.from_families([{(): 0.0}, {(): float("nan")}]), "non-finite"),
    ],
)
def test_malformed_tables(table, match):
    with pytest.raises(ILPInputError, match=match):
        solve_ilp(table)


def test_the_family_problem_is_the_table_of_the_families_left_by_the_options():
    table = _table()
    problem = build_problem(table, required_arcs=[("a", "b")], forbidden_arcs=[("c", "a")], palim=1)
    expected = [(v, ps, s) for v, fam in enumerate(table.families) for ps, s in fam.items()
                if len(ps) <= 1 and (v != 1 or 0 in ps) and (v != 0 or 2 not in ps)]
    assert isinstance(problem, ScoreTable) and problem.names == ["a", "b", "c"]
    problem.validate()
    rows = [(v, problem.parents_of(f), s) for f, (v, s) in enumerate(zip(problem.child.tolist(), problem.score.tolist()))]
    assert rows == expected == [(0, (1,), -8.0), (0, (), -10.0), (1, (0,), -7.0), (2, (1,), -9.5), (2, (), -10.0)]
    assert problem.child_ptr.tolist() == [0, 2, 3, 5] and problem.member_row.tolist() == [0, 2, 3]
    assert problem.child.dtype == problem.parents.dtype == np.int64  # the plugin kernels' one compiled version


def test_not_a_table():
    with pytest.raises(ILPInputError, match="ScoreTable"):
        solve_ilp({"families": []})


def test_contradictory_arcs():
    with pytest.raises(ILPInputError, match="both required and forbidden"):
        solve_ilp(_table(), required_arcs=[("a", "b")], forbidden_arcs=[(0, 1)])


def test_required_cycle():
    with pytest.raises(ILPInputError, match="cycle"):
        solve_ilp(_table(), required_arcs=[(0, 1), (1, 2), (2, 0)])
    with pytest.raises(ILPInputError, match="cycle"):
        solve_ilp(_table(), required_arcs=[(0, 1), (1, 0)])


def test_child_left_without_candidates():
    with pytest.raises(ILPInputError, match="'c' has no candidate parent set left"):
        solve_ilp(_table(), required_arcs=[("a", "c")])
    with pytest.raises(ILPInputError, match="'b' has no candidate parent set left.*palim=1"):
        solve_ilp(_table(), required_arcs=[("c", "b")], palim=1)
    table = ScoreTable.from_families([{(): 0.0}, {(0,): -1.0}])
    with pytest.raises(ILPInputError, match="'1' has no candidate"):
        solve_ilp(table, forbidden_arcs=[(0, 1)])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"required_arcs": [(0, 0)]}, "self-loop"),
        ({"required_arcs": [(0, 5)]}, "not in 0..2"),
        ({"forbidden_arcs": [("a", "zz")]}, "unknown variable"),
        ({"forbidden_arcs": [(0,)]}, "pair"),
        ({"palim": -1}, "palim"),
        ({"time_limit": 0}, "time_limit"),
        ({"memory_limit": -3}, "^memory_limit must be positive \\(megabytes\\) or None, got -3$"),
    ],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(ILPInputError, match=match):
        solve_ilp(_table(), **kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"seed": -1}, "^seed must be a non-negative integer, got -1$"),
        ({"seed": 1.5}, "^seed must be a non-negative integer, got 1.5$"),
        ({"dp_max_vars": -1}, "^dp_max_vars must be a non-negative int"),
        ({"subip_root_every": -1}, "^subip_root_every must be a non-negative integer, got -1$"),
        ({"arc_form_min_saving": -5}, "^arc_form_min_saving must be a non-negative integer, got -5$"),
        ({"steepest_edge_min_families": -1}, "^steepest_edge_min_families must be a non-negative integer, got -1$"),
        ({"restarts": -1}, "^restarts must be a non-negative integer, got -1$"),
        ({"restart_min_fixed": 1.5}, "^restart_min_fixed must lie between 0 and 1, got 1.5$"),
        ({"restart_min_fixed": True}, "^restart_min_fixed must be a number, got True$"),
        ({"inout_weight": 0}, "^inout_weight must be a positive number up to 1, got 0$"),
        ({"inout_weight": "0.8"}, "^inout_weight must be a number, got '0.8'$"),
        ({"sepa_freq": -2}, "^sepa_freq must be an integer of at least -1, got -2$"),
        ({"sinks_freq": True}, "^sinks_freq must be an integer of at least -1, got True$"),
        ({"root_rounds": -2}, "^root_rounds must be an integer of at least -1, got -2$"),
        ({"arc_vars": 1}, "^arc_vars must be True or False, got 1$"),
        ({"subip_time_limit": 0}, "^subip_time_limit must be a positive number, got 0$"),
        ({"subip_time_limit": "5"}, "^subip_time_limit must be a number"),
        ({"scip_params": {1: 2}}, "^scip_params must be a dict of SCIP parameter names"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ILPInputError, match=match):
        ILPOptions(**kwargs)


def test_options_are_one_frozen_object():
    params = {"limits/nodes": 5}
    options = ILPOptions(seed=3, scip_params=params)
    params["limits/nodes"] = 7  # the caller's dict stays theirs
    assert options.scip_params == {"limits/nodes": 5}
    with pytest.raises(AttributeError):
        options.seed = 4
    with pytest.raises(TypeError, match="threads"):  # no thread count: SCIP runs the plugins on one
        ILPOptions(threads=2)
    with pytest.raises(ILPInputError, match="options must be an ILPOptions, got dict"):
        solve_ilp(_table(), {"seed": 3})


def test_infeasible_restricted_table():
    # Each child's only candidate has the other as parent: every choice is a 2-cycle.
    table = ScoreTable.from_families([{(1,): -1.0}, {(0,): -1.0}])
    with pytest.raises(ILPInfeasibleError, match="acyclic"):
        solve_ilp(table)


def test_options_are_honoured():
    table = _table()
    free = solve_ilp(table)
    assert free.parent_sets == [(2,), (0, 2), ()]  # -9 - 6 - 10 beats every other DAG
    res = solve_ilp(table, required_arcs=[("a", "b")], forbidden_arcs=[("c", "b")])
    assert res.parent_sets == [(2,), (0,), ()]
    assert res.objective == pytest.approx(-26.0)
    assert solve_ilp(table, palim=0).parent_sets == [(), (), ()]


def test_no_dual_bound_is_written_as_null():
    import math

    import numpy as np

    from ilp.result import ILPResult

    res = ILPResult(dag=np.zeros((2, 2), dtype=bool), parent_sets=[(), ()], objective=-3.0,
                    dual_bound=math.inf, gap=math.inf, status="timelimit", names=["a", "b"])
    record = res.to_dict()
    assert record["dual_bound"] is None and record["gap"] is None
    finite = ILPResult(dag=res.dag, parent_sets=[(), ()], objective=-3.0, dual_bound=-2.5, gap=1 / 6,
                       status="timelimit", names=["a", "b"]).to_dict()
    assert finite["dual_bound"] == -2.5 and finite["gap"] == pytest.approx(1 / 6)
