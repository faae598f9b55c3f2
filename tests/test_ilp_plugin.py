"""The plugin protocol of ``ilp.plugin``: errors raised in SCIP callbacks surface after the solve,
statistics reach the result, rows added through ``add_cut`` count and keep the optimum."""

from __future__ import annotations

import pytest
from helpers import random_table
from pyscipopt import SCIP_HEURTIMING, SCIP_RESULT, Heur, Sepa

from ilp import ILPOptions, solve_ilp
from ilp.plugin import Plugin, guarded, plugin_stats, raise_plugin_error

SCIP = ILPOptions(dp_max_vars=0)


class FailingHeur(Plugin, Heur):
    """Raises ``error`` on its ``fail_at``-th call."""

    def __init__(self, error: Exception, fail_at: int = 1):
        super().__init__(probe_calls=0)
        self.raised = error
        self.fail_at = fail_at

    @guarded
    def heurexec(self, heurtiming, nodeinfeasible):
        self.stats["probe_calls"] += 1
        if self.stats["probe_calls"] == self.fail_at:
            raise self.raised
        return {"result": SCIP_RESULT.DIDNOTFIND}


class ConvexitySepa(Plugin, Sepa):
    """Adds each child's convexity row ``sum_f x_f <= 1`` again as a cut (valid, redundant)."""

    def __init__(self, fm):
        super().__init__(convexity_cuts=0)
        self.fm = fm

    @guarded
    def sepaexeclp(self):
        for v in range(self.fm.problem.n_vars):
            fams = self.fm.problem.families_of(v).tolist()
            self.add_cut([self.model.getTransformedVar(self.fm.x[f]) for f in fams], None, 1.0,
                         "convexity_cuts", pool=False)
        return {"result": SCIP_RESULT.SEPARATED}


def include_heur(plugin):
    def extend(fm):
        fm.model.includeHeur(plugin, "probe", "test heuristic", "p", priority=1, freq=1,
                             timingmask=SCIP_HEURTIMING.DURINGLPLOOP)
        return [plugin]

    return extend


def test_a_callback_error_is_raised_after_the_solve_as_the_original_exception():
    error = ValueError("boom in heurexec")
    with pytest.raises(ValueError, match="boom in heurexec") as caught:
        solve_ilp(random_table(10, seed=2), SCIP, extend=include_heur(FailingHeur(error)))
    assert caught.value is error


def test_plugin_statistics_reach_the_result():
    table = random_table(10, seed=2)
    plain = solve_ilp(table, SCIP)
    probe = FailingHeur(ValueError("never"), fail_at=0)
    res = solve_ilp(table, SCIP, extend=include_heur(probe))
    assert res.stats["probe_calls"] == probe.stats["probe_calls"] >= 1
    assert res.objective == plain.objective
    assert res.stats["greedy_calls"] >= 1 and "sinks_calls" in res.stats  # the core plugins' own


def test_cuts_added_by_a_separator_are_counted_and_keep_the_optimum():
    table = random_table(10, seed=3)
    plain = solve_ilp(table, SCIP)
    sepas = []

    def extend(fm):
        sepas.append(ConvexitySepa(fm))
        fm.model.includeSepa(sepas[0], "convexity", "test separator", priority=1, freq=0)
        return sepas

    res = solve_ilp(table, SCIP, extend=extend)
    assert res.stats["convexity_cuts"] >= table.n_vars and res.stats["convexity_cuts"] % table.n_vars == 0
    assert res.objective == pytest.approx(plain.objective, abs=1e-9)
    assert res.status == "optimal"


class FakeModel:
    def __init__(self):
        self.interrupts = 0

    def interruptSolve(self):
        self.interrupts += 1


def test_guarded_keeps_the_first_error_and_interrupts_each_time():
    class Probe(Plugin):
        def __init__(self):
            super().__init__(calls=0)
            self.model = FakeModel()

        @guarded
        def callback(self, error):
            self.stats["calls"] += 1
            raise error

    probe, first, second = Probe(), KeyError("first"), KeyError("second")
    assert probe.callback(first) == {"result": SCIP_RESULT.DIDNOTRUN}
    assert probe.callback(second) == {"result": SCIP_RESULT.DIDNOTRUN}
    assert probe.error is first and probe.model.interrupts == 2 and probe.stats == {"calls": 2}
    quiet = Plugin(other=1)
    with pytest.raises(KeyError) as caught:
        raise_plugin_error([quiet, probe])
    assert caught.value is first
    raise_plugin_error([quiet])  # no error kept: nothing raised
    assert plugin_stats([quiet, probe]) == {"other": 1, "calls": 2}
