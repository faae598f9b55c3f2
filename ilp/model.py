"""The family-variable integer program on SCIP (Cussens 2011; Bartlett & Cussens 2017).

Variables: one binary ``I(W -> v)`` per family (objective: its local score, maximised) and
binary arc variables ``I(u -> v) = sum_{W ∋ u} I(W -> v)`` for the arcs into chosen children.
Constraints added up front: convexity (exactly one parent set per child, a set partitioning
row), the 2-node cluster constraints ``I(u -> v) + I(v -> u) <= 1``, the set-packing rows of
larger clusters (:mod:`ilp.set_packing`) and, optionally, all 3-node cluster constraints. The
remaining (exponentially many) cluster constraints are separated by
:mod:`ilp.conshdlr_cluster`.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
from pyscipopt import Model, quicksum

from ilp.clusters import intersecting_families
from ilp.problem import FamilyProblem
from ilp.set_packing import set_packing_rows

logger = logging.getLogger(__name__)


@dataclass
class FamilyModel:
    """A SCIP model with handles to its family variables ``x[f]`` and arc variables ``arcs[(u, v)]``."""

    model: Model
    problem: FamilyProblem
    x: list
    arcs: dict


def build_model(problem: FamilyProblem, *, arc_children: np.ndarray, set_packing: bool = True,
                cluster_3: bool = False) -> FamilyModel:
    """Build the SCIP model (maximisation) for ``problem``; see the module docstring.

    ``arc_children`` (a boolean mask over the nodes) says whose incoming arcs get arc variables;
    a 2-node cluster row uses them where both of its arcs have one."""
    model = Model("bnsl")
    x = [
        model.addVar(name=f"I({','.join(problem.names[p] for p in ps)}->{problem.names[v]})",
                     vtype="B", obj=float(s))
        for ps, v, s in zip(map(problem.parents_of, range(problem.n_candidates)), problem.child.tolist(),
                            problem.score.tolist())
    ]
    model.setMaximize()
    for v in range(problem.n_vars):
        model.addCons(quicksum(x[f] for f in problem.families_of(v).tolist()) == 1, name=f"convex({v})")

    arcs = {}
    arc_families = problem.arc_families()
    for (u, v), fams in arc_families.items():
        if arc_children[v]:
            a = model.addVar(name=f"A({problem.names[u]}->{problem.names[v]})", vtype="B")
            model.addCons(a == quicksum(x[f] for f in fams.tolist()), name=f"arc({u},{v})")
            arcs[(u, v)] = a

    arc_set = set(arc_families)
    n_two = 0
    for u, v in sorted(arc_set):
        if u < v and (v, u) in arc_set:
            if (u, v) in arcs and (v, u) in arcs:
                lhs = arcs[(u, v)] + arcs[(v, u)]
            else:
                lhs = quicksum(x[f] for f in intersecting_families(problem, (u, v)).tolist())
            model.addCons(lhs <= 1, name=f"cluster({u},{v})")
            n_two += 1

    n_packing = 0
    if set_packing:
        for cluster, fams in set_packing_rows(problem):
            model.addCons(quicksum(x[f] for f in fams.tolist()) <= 1, name=f"packing{cluster}")
            n_packing += 1

    n_three = 0
    if cluster_3:
        linked = lambda a, b: (a, b) in arc_set or (b, a) in arc_set  # noqa: E731
        for trio in itertools.combinations(range(problem.n_vars), 3):
            a, b, c = trio
            if linked(a, b) and linked(b, c) and linked(a, c):
                fams = intersecting_families(problem, trio)
                model.addCons(quicksum(x[f] for f in fams.tolist()) <= 2, name=f"cluster{trio}")
                n_three += 1
    logger.debug(
        "model: %d family vars, %d arc vars, %d 2-cluster, %d set-packing and %d 3-cluster rows",
        len(x), len(arcs), n_two, n_packing, n_three,
    )
    return FamilyModel(model=model, problem=problem, x=x, arcs=arcs)
