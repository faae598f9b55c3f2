"""Deadlines (``--budget``) in the restriction learners and the score table: a stopped run returns a
safe superset of the skeleton, or a table in which every child still has a parent set.

No timing: the deadlines are already past or run on a clock that ticks once per check.
"""

from __future__ import annotations

from itertools import count

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints import screening
from constraints.citests import CITest, DSeparationOracle
from constraints.pc import pc_skeleton
from constraints.pmms import mmpc, pmms
from hybridbn.deadline import Deadline
from pipeline.core.executors import LocalExecutor
from pipeline.core.split_scores import split_score_table
from scores.candidates import build_score_table

PAST = Deadline(0.0)
"""The start of the epoch: long passed."""


def after_checks(k: int) -> Deadline:
    """A deadline that passes at its ``k``-th check (a clock ticking once per reading)."""
    return Deadline(float(k), count(1).__next__)


def oracle(name: str) -> tuple[DSeparationOracle, int]:
    net = load_network(name)
    return DSeparationOracle(net.adjacency), net.n_vars


LEARNERS = {
    "pc": lambda test, n, **kw: pc_skeleton(test, n, max_order=2, batched=False, **kw),
    "pmms": lambda test, n, **kw: pmms(test, n, max_order=2, **kw),
    "mmpc": lambda test, n, **kw: mmpc(test, n, max_order=2, **kw),
}


@pytest.mark.parametrize("network", ["asia", "child"])
@pytest.mark.parametrize("method", sorted(LEARNERS))
def test_past_deadline_keeps_every_pair(method, network):
    test, n = oracle(network)
    cut = LEARNERS[method](test, n, deadline=PAST)
    assert cut.status == "timeout" and cut.n_allowed == n * (n - 1) // 2 and cut.n_tests == 0
    assert LEARNERS[method](test, n).status == "ok"


@pytest.mark.parametrize("network", ["asia", "child"])
@pytest.mark.parametrize("method", sorted(LEARNERS))
def test_a_later_deadline_gives_a_nested_superset_of_the_full_skeleton(method, network):
    """Stopped after k checks, the skeleton contains the full run's and the one stopped later."""
    test, n = oracle(network)
    full = LEARNERS[method](test, n).allowed
    previous, strictly_between = np.ones((n, n), dtype=bool), 0
    for k in range(1, 400, 7):
        cut = LEARNERS[method](test, n, deadline=after_checks(k))
        assert (cut.allowed >= full).all() and (cut.allowed <= previous).all()
        previous = cut.allowed
        if cut.status == "ok":
            assert np.array_equal(cut.allowed, full)
            break
        strictly_between += cut.n_allowed < n * (n - 1) // 2 and not np.array_equal(cut.allowed, full)
    assert strictly_between > 0


def test_batched_pc_stops_between_batches(monkeypatch):
    """Compiled PC-stable stops between batches of pairs (here about 40 per batch, the marginal
    screen's blocks of level 0 included) with a superset."""
    monkeypatch.setattr("constraints.pc._BATCH_PAIRS", 40)
    monkeypatch.setattr("constraints.pc.row_blocks", lambda n_vars, pairs=40: screening.row_blocks(n_vars, pairs))
    net = load_network("alarm")
    ds = forward_sample(net, 2000, seed=1)
    n = net.n_vars
    full = pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2)
    sizes = []
    for k in (1, 5, 12, 20):
        cut = pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2, deadline=after_checks(k))
        assert cut.status == "timeout" and (cut.allowed >= full.allowed).all()
        sizes.append(cut.n_allowed)
    assert sizes[0] == n * (n - 1) // 2 and sizes == sorted(sizes, reverse=True) and sizes[-1] > full.n_allowed
    assert pc_skeleton(CITest(ds.data, ds.arities), n, max_order=2, executor=LocalExecutor(1), n_groups=3,
                       deadline=PAST).n_allowed == n * (n - 1) // 2


@pytest.fixture(scope="module")
def asia_rows():
    return forward_sample(load_network("asia"), 800, seed=3)


def test_past_deadline_leaves_each_child_its_empty_set(asia_rows):
    ds = asia_rows
    full = build_score_table(ds.data, ds.arities, palim=2)
    cut = build_score_table(ds.data, ds.arities, palim=2, deadline=PAST)
    assert cut.families == [{(): fam[()]} for fam in full.families]
    assert cut.meta["unscored"] == list(range(ds.data.shape[1])) and full.meta["unscored"] == []
    required = np.zeros((8, 8), dtype=bool)
    required[0, 1] = True
    with_knowledge = build_score_table(ds.data, ds.arities, palim=2, required=required, deadline=PAST)
    assert list(with_knowledge.families[1]) == [(0,)]


def test_children_scored_before_the_deadline_keep_their_families(asia_rows):
    ds = asia_rows
    full = build_score_table(ds.data, ds.arities, palim=2)
    cut = build_score_table(ds.data, ds.arities, palim=2, deadline=after_checks(4))
    assert cut.families[:3] == full.families[:3] and cut.meta["unscored"] == list(range(3, 8))
    assert all(list(fam) == [()] for fam in cut.families[3:])


def test_split_scoring_checks_the_deadline_in_every_group(asia_rows):
    ds = asia_rows
    cut = split_score_table(LocalExecutor(1), ds.data, ds.arities, 3, palim=2, deadline=PAST)
    single = build_score_table(ds.data, ds.arities, palim=2, deadline=PAST)
    assert cut.families == single.families and cut.meta["unscored"] == single.meta["unscored"]
    assert cut.meta["counts"] == single.meta["counts"]
