"""Cluster-cut separation (greedy and exact) and the sink-finding heuristic on small instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import random_table

from graphs.dag import is_acyclic
from ilp.clusters import cluster_excess, cut_row, member_families
from ilp.greedy_cuts import greedy_clusters
from ilp.sinks import sinks_dag
from ilp.problem import build_problem
from ilp.subip import subip_clusters


def _fractional_point(problem, rng, support: int = 3) -> np.ndarray:
    """Convex combination of a few families per child (satisfies convexity)."""
    x = np.zeros(problem.n_candidates)
    for fams in map(problem.families_of, range(problem.n_vars)):
        pick = rng.choice(fams, size=min(support, fams.size), replace=False)
        x[pick] = rng.dirichlet(np.ones(pick.size))
    return x


def _random_point(n: int, seed: int):
    """A random table of ``n`` nodes (palim 2), a fractional point on it and the generator."""
    rng = np.random.default_rng(seed)
    problem = build_problem(random_table(n, seed, palim=2))
    return problem, _fractional_point(problem, rng), rng


def _all_excesses(problem, x) -> dict:
    n = problem.n_vars
    return {c: cluster_excess(problem, x, c)
            for k in range(2, n + 1) for c in itertools.combinations(range(n), k)}


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("enumerate_max", [0, 14])
def test_exact_separation_finds_a_violated_cluster_iff_one_exists(seed, enumerate_max):
    problem, x, _ = _random_point(6, seed)
    best = max(_all_excesses(problem, x).values())
    clusters, complete = subip_clusters(problem, x, enumerate_max=enumerate_max, min_excess=1e-6)
    assert complete
    assert bool(clusters) == (best > 1e-6)
    for c in clusters:
        assert cluster_excess(problem, x, c) > 1e-6
    if enumerate_max and clusters:  # enumeration returns the most violated cluster first
        assert cluster_excess(problem, x, clusters[0]) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(10))
def test_greedy_clusters_are_violated(seed):
    problem, x, _ = _random_point(7, seed)
    for c in greedy_clusters(problem, x, min_excess=1e-6):
        assert len(c) >= 2 and cluster_excess(problem, x, c) > 1e-6


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("weight", [0.5, 0.8])
def test_clusters_violated_between_the_lp_point_and_a_dag_are_violated_at_the_lp_point(seed, weight):
    # in-out separation (ilp.conshdlr_cluster): a DAG has excess <= 0 for every cluster, so a
    # cluster violated at w * x + (1 - w) * dag is violated by more than min_excess / w at x
    problem, x, rng = _random_point(7, seed)
    dag = np.zeros(problem.n_candidates)
    dag[sinks_dag(problem, rng.random(problem.n_candidates))] = 1.0
    assert max(_all_excesses(problem, dag).values()) <= 0
    point = weight * x + (1 - weight) * dag
    clusters = greedy_clusters(problem, point, min_excess=1e-6)
    for c in clusters:
        assert cluster_excess(problem, x, c) > 1e-6 / weight
        assert cluster_excess(problem, x, c) >= cluster_excess(problem, point, c) / weight - 1e-9


def test_integral_cycle_is_a_violated_cluster():
    problem = build_problem(random_table(5, 1, palim=2))
    # Families 0 <- 1, 1 <- 2, 2 <- 0 form a 3-cycle; others take the empty set.
    x = np.zeros(problem.n_candidates)
    want = {0: (1,), 1: (2,), 2: (0,), 3: (), 4: ()}
    for f, (v, ps) in enumerate(zip(problem.child.tolist(), map(problem.parents_of, range(problem.n_candidates)))):
        if want[v] == ps:
            x[f] = 1.0
    assert cluster_excess(problem, x, (0, 1, 2)) == pytest.approx(1.0)
    found = greedy_clusters(problem, x)
    assert (0, 1, 2) in found


def _row_slack(row, x, arcs) -> float:
    """``lhs - rhs`` of a cut row at family values ``x``, with the arc values they imply
    (``arcs``: the families holding each arc)."""
    lhs = row.family_coefs @ x[row.families] + sum(x[arcs[a]].sum() for a in row.arcs)
    return float(lhs - row.rhs if row.rhs is not None else row.lhs - lhs)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("arc_min_saving", [None, 0, 2])
def test_cut_row_equals_the_cluster_excess_at_any_point(seed, arc_min_saving):
    """Every form of the row is the cluster constraint given convexity and the arc rows: its slack
    at a fractional point is the cluster's excess, for every cluster of a small table."""
    rng = np.random.default_rng(seed)
    problem = build_problem(random_table(6, seed, palim=3))
    x = _fractional_point(problem, rng, support=4)
    arcs = problem.arc_families()
    forms = set()
    for k in range(2, problem.n_vars + 1):
        for cluster in itertools.combinations(range(problem.n_vars), k):
            row = cut_row(problem, cluster, arc_min_saving=arc_min_saving)
            assert _row_slack(row, x, arcs) == pytest.approx(cluster_excess(problem, x, cluster))
            fams, inside = member_families(problem, cluster)
            assert np.all(np.isin(row.families, fams)) and row.family_coefs.all()
            forms.add((bool(row.arcs), row.lhs is not None))
            if not row.arcs:  # GOBNILP's two forms
                assert (row.family_coefs == 1).all()
                assert (row.lhs, row.rhs) in ((None, len(cluster) - 1), (1.0, None))
    if arc_min_saving is None:
        assert forms == {(False, False), (False, True)}
    elif arc_min_saving == 0:
        assert (True, False) in forms


@pytest.mark.parametrize("seed", range(6))
def test_sinks_heuristic_builds_a_dag(seed):
    rng = np.random.default_rng(seed)
    problem = build_problem(random_table(9, seed, palim=3))
    for weights in (None, _fractional_point(problem, rng)):
        chosen = sinks_dag(problem, weights)
        assert [problem.child[f] for f in chosen] == list(range(problem.n_vars))
        assert is_acyclic(problem.dag_of(chosen))


def test_ctrl_c_during_a_sub_ip_interrupts_the_outer_solve(monkeypatch):
    """A SIGINT that arrives while a cluster sub-IP runs belongs to the outer solve: the sub-SCIP
    must not catch it (it would reset SCIP's interrupt flag and the outer solve would run on)."""
    import os
    import signal

    import ilp.conshdlr_cluster
    from ilp.options import ILPOptions
    from ilp.solve import solve_ilp
    from ilp.subip import _subip

    rng = np.random.default_rng(0)
    k = 80  # a sub-IP of about a second
    child = np.repeat(np.arange(k), 40)
    parents = [rng.choice(np.delete(np.arange(k), c), size=3, replace=False).tolist() for c in child]
    weights = rng.uniform(0.02, 0.06, size=child.size)

    def interrupted_subip(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the sub-IP below runs
        _subip(k, child, parents, weights, 1e-4, 10.0, 0)
        return subip_clusters(*args, **kwargs)

    monkeypatch.setattr(ilp.conshdlr_cluster, "greedy_clusters", lambda *a, **kw: [])  # always the sub-IP
    monkeypatch.setattr(ilp.conshdlr_cluster, "subip_clusters", interrupted_subip)
    try:
        result = solve_ilp(random_table(12, seed=1), ILPOptions(dp_max_vars=0))
    except KeyboardInterrupt:  # interrupted before SCIP had a DAG: also the outer solve stopping
        return
    assert result.status == "userinterrupt"
