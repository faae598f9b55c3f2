"""Exact separation of cluster cuts (Cussens 2011; Bartlett & Cussens 2017).

A most violated cluster lies inside one strongly connected component of the LP support digraph
(:meth:`ilp.clusters.LPSupport.components`), so each component is searched separately: small ones
by enumerating all their subsets, larger ones by GOBNILP's sub-IP. Sub-IP: a binary ``y_v`` per
node (in the cluster or not, objective ``-1``) and a continuous ``J(W -> v) ∈ [0, 1]`` only for
families with ``x* > 0`` and a parent in the component (objective ``x*(W -> v)``), with
``J(W -> v) <= y_v``, ``J(W -> v) <= sum_{u in W} y_u`` and ``sum_v y_v >= 2``. At an optimum
``J = 1`` exactly for the families of members with a parent in the cluster, so the objective is
``excess(C) - 1`` and a solution of value ``> -1`` is a violated cluster cut; SCIP runs with that
objective limit and a time limit, and every improving solution it finds gives a cut.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from pyscipopt import SCIP_PARAMSETTING, Model, quicksum

from ilp.clusters import LPSupport
from ilp.problem import FamilyProblem

logger = logging.getLogger(__name__)


def _component_families(sup: LPSupport, comp: np.ndarray):
    """Local child index, local parent lists and weights of the support families inside ``comp``."""
    local = np.full(sup.n_vars, -1)
    local[comp] = np.arange(comp.size)
    inside = (local[sup.child] >= 0) & (sup.P[:, comp].sum(axis=1) > 0)
    rows = np.flatnonzero(inside)
    parents = [np.flatnonzero(sup.P[r, comp]).tolist() for r in rows]
    return local[sup.child[rows]], parents, sup.w[rows]


def _enumerate(k: int, child, parents, w, min_excess: float, max_cuts: int) -> list[list[int]]:
    """Most violated subsets of a ``k``-node component, by exhaustive enumeration."""
    masks = np.arange(1 << k, dtype=np.int64)
    mass = np.zeros(1 << k)
    for c, ps, wf in zip(child.tolist(), parents, w.tolist()):
        pmask = sum(1 << p for p in ps)
        mass += wf * (((masks >> c) & 1).astype(bool) & ((masks & pmask) != 0))
    size = np.bitwise_count(masks)
    excess = np.where(size >= 2, mass - (size - 1), -np.inf)
    top = np.argsort(-excess, kind="stable")[:max_cuts]
    top = top[excess[top] > min_excess]
    return [np.flatnonzero((int(m) >> np.arange(k)) & 1).tolist() for m in top]


def _subip(k: int, child, parents, w, min_excess: float, time_limit: float, seed: int):
    """Violated subsets of a component found by the sub-IP, and whether SCIP finished."""
    sub = Model("cluster-subip")
    sub.hideOutput()
    # Ctrl-C belongs to the outer solve: a sub-SCIP catching it would reset SCIP's global
    # interrupt flag, stop only itself and let the outer solve run on as if nothing happened.
    sub.setParam("misc/catchctrlc", False)
    sub.setParam("limits/time", max(time_limit, 0.01))
    sub.setParam("randomization/randomseedshift", seed)
    # SCIP's cutting planes made the sub-IP ~20x slower on alarm (N=1000) root separation.
    sub.setSeparating(SCIP_PARAMSETTING.OFF)
    y = [sub.addVar(name=f"y{v}", vtype="B", obj=-1.0) for v in range(k)]
    for f, (c, ps, wf) in enumerate(zip(child.tolist(), parents, w.tolist())):
        j = sub.addVar(name=f"J{f}", vtype="C", lb=0.0, ub=1.0, obj=wf)
        sub.addCons(j <= y[c])
        sub.addCons(j <= quicksum(y[p] for p in ps))
    sub.addCons(quicksum(y) >= 2)
    sub.setMaximize()
    sub.setObjlimit(-1.0 + min_excess)
    sub.optimize()
    clusters = []
    for sol in sub.getSols():
        if sub.getSolObjVal(sol) > -1.0 + min_excess:
            clusters.append([v for v in range(k) if sub.getSolVal(sol, y[v]) > 0.5])
    return clusters, sub.getStatus() in ("optimal", "infeasible")


def subip_clusters(
    problem: FamilyProblem,
    xval: np.ndarray,
    *,
    time_limit: float = 5.0,
    min_excess: float = 1e-4,
    seed: int = 0,
    enumerate_max: int = 14,
    max_cuts: int = 20,
) -> tuple[list[tuple[int, ...]], bool]:
    """Violated clusters at ``xval`` and whether the search was exhaustive.

    Components of at most ``enumerate_max`` nodes are enumerated; larger ones go to the sub-IP
    within the remaining share of ``time_limit``. ``complete`` is False if some sub-IP stopped on
    its time limit (then a violated cluster may have been missed).
    """
    deadline = time.perf_counter() + time_limit
    sup = LPSupport(problem, xval)
    found: dict[tuple[int, ...], None] = {}
    complete = True
    for comp in sorted(sup.components(), key=len):
        child, parents, w = _component_families(sup, comp)
        if comp.size <= enumerate_max:
            local = _enumerate(comp.size, child, parents, w, min_excess, max_cuts)
        else:
            left = deadline - time.perf_counter()
            if left <= 0:
                complete = False
                break
            local, done = _subip(comp.size, child, parents, w, min_excess, left, seed)
            complete &= done
        for cl in local:
            found[tuple(sorted(comp[cl].tolist()))] = None
    logger.debug("exact separation: %d clusters (complete=%s)", len(found), complete)
    return list(found), complete
