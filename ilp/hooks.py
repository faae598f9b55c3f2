"""``extend`` hooks of :func:`ilp.solve_ilp` for what a caller hands the solver as plain data: a
DAG to start from, and pairs of variables that must be adjacent (in either direction)."""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np
from pyscipopt import quicksum

logger = logging.getLogger(__name__)


def start_solution(parent_sets: Sequence[Sequence[int]]):
    """A hook adding the DAG of ``parent_sets`` as a start solution (e.g. the incumbent of an
    earlier, unfinished solve).

    Nothing is added when a family is not among the model's candidates (SCIP also drops a start
    solution that violates a constraint).
    """

    def extend(fm) -> list:
        problem = fm.problem
        family = {(c, problem.parents_of(f)): f for f, c in enumerate(problem.child.tolist())}
        chosen = [family.get((v, tuple(int(p) for p in ps))) for v, ps in enumerate(parent_sets)]
        if len(parent_sets) != problem.n_vars or None in chosen:
            logger.warning("the stored incumbent does not fit this problem; solving without it")
            return []
        sol = fm.model.createSol()
        for f in chosen:
            fm.model.setSolVal(sol, fm.x[f], 1.0)
        for (u, v), arc in fm.arcs.items():
            if u in parent_sets[v]:
                fm.model.setSolVal(sol, arc, 1.0)
        if not fm.model.addSol(sol):
            logger.warning("SCIP rejected the stored incumbent as a start solution")
        return []

    return extend


def adjacency_rows(pairs: Sequence[tuple[int, int]]):
    """A hook adding, for each pair ``(u, v)``, the row ``sum of the families making u and v
    adjacent >= 1`` (a family of ``v`` holding ``u`` or one of ``u`` holding ``v``)."""

    def extend(fm) -> list:
        problem = fm.problem
        for u, v in pairs:
            families = np.flatnonzero(((problem.child == v) & problem.has_parent_in([u]))
                                      | ((problem.child == u) & problem.has_parent_in([v])))
            fm.model.addCons(quicksum(fm.x[f] for f in families.tolist()) >= 1, name=f"adjacent({u},{v})")
        return []

    return extend
