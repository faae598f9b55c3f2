"""The treewidth-bounded ILPs' primal heuristic: sink finding repaired to treewidth ``<= k``.

:class:`BoundedSinksHeur` runs Cussens' sink finding (:mod:`ilp.sinks`) on the LP solution and
rebuilds its DAG along the order found with :func:`ilp.treewidth.bounded_dag.bounded_dag`; before
the solve, the same on the scores alone gives the warm start. Shared by the elimination-order
(:mod:`ilp.treewidth.elimination`) and obstruction-cut (:mod:`ilp.treewidth.obstruction`) models,
which only differ in the values of their own auxiliary variables (``extra_values``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT

from graphs.dag import topological_order
from ilp.heur_sinks import SinksHeur
from ilp.model import FamilyModel
from ilp.plugin import guarded
from ilp.problem import FamilyProblem
from ilp.sinks import sinks_dag
from ilp.treewidth.bounded_dag import bounded_dag

logger = logging.getLogger(__name__)

ExtraValues = Callable[[list[int], np.ndarray, np.ndarray], list[tuple[object, float]]]
"""``(chosen families, chordal supergraph H, their moral graph) -> [(original variable, value), ...]``."""


class BoundedSinksHeur(SinksHeur):
    """Sink finding on the LP solution, repaired to treewidth ``<= k`` by :func:`bounded_dag`;
    ``extra_values`` sets the model's treewidth variables for the DAG found."""

    def __init__(self, problem: FamilyProblem, x: list, arcs: dict, k: int, extra_values: ExtraValues):
        super().__init__(problem, x, arcs)
        self.k = k
        self.extra_values = extra_values
        # its own counters, in place of the sinks heuristic's
        self.stats = {"tw_heur_calls": 0, "tw_heur_found": 0, "tw_warm_start_objective": None}

    def bounded_solution(self, weights: np.ndarray | None = None, heur=None):
        """``(SCIP solution, score)`` from sink finding with ``weights`` (LP values; ``None``:
        scores only) repaired to treewidth ``<= k``; ``None`` if it fails or was tried before."""
        problem = self.problem
        first = sinks_dag(problem, weights)
        if first is None:
            return None
        found = bounded_dag(problem, topological_order(problem.dag_of(first)), self.k)
        if found is None or tuple(found[0]) in self.tried:
            return None
        chosen, H, moral = found
        self.tried.add(tuple(chosen))
        sol = self.make_solution(chosen, heur)
        for var, val in self.extra_values(chosen, H, moral):
            if heur is not None:
                var = self.model.getTransformedVar(var)
                if not var.isActive():
                    continue
            self.model.setSolVal(sol, var, val)
        return sol, float(problem.score[chosen].sum())

    @guarded
    def heurexec(self, heurtiming, nodeinfeasible):
        if self.model.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.stats["tw_heur_calls"] += 1
        made = self.bounded_solution(self.tx.lp_values(self.model), self)
        if made is not None and self.model.trySol(made[0], printreason=False):
            self.stats["tw_heur_found"] += 1
            logger.debug("bounded sinks heuristic: DAG of score %.6f", made[1])
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}


def include_bounded_sinks_heur(fm: FamilyModel, k: int, extra_values: ExtraValues, freq: int,
                               warm_start: bool) -> BoundedSinksHeur:
    """Include a :class:`BoundedSinksHeur` in ``fm`` (every ``freq`` nodes) and, with
    ``warm_start``, add its score-only DAG as a start solution."""
    heur = BoundedSinksHeur(fm.problem, fm.x, fm.arcs, k, extra_values)
    fm.model.includeHeur(heur, "twsinks", "sink finding repaired to bounded treewidth", "k",
                         priority=1000, freq=freq, timingmask=SCIP_HEURTIMING.AFTERLPNODE)
    if warm_start:
        made = heur.bounded_solution()
        if made is not None:
            fm.model.addSol(made[0])
            heur.stats["tw_warm_start_objective"] = made[1]
    return heur
