"""Primal side of the treewidth-bounded ILPs: sink finding repaired to treewidth ``<= k``.

:func:`bounded_dag` walks a topological order and gives each node its best family that keeps a
chordal supergraph of the moral graph within width ``k``; :class:`BoundedSinksHeur` runs it on the
order found by Cussens' sink finding (:mod:`ilp.heuristics`) from the LP solution. Shared by the
elimination-order (:mod:`ilp.treewidth.elimination`) and obstruction-cut (:mod:`ilp.treewidth.obstruction`) models,
which only differ in the values of their own auxiliary variables (``extra_values``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT

from graphs.dag import topological_order
from graphs.treedec import elimination_fill
from graphs.treewidth import greedy_elimination_order
from ilp.guard import guarded
from ilp.heuristics import SinksHeur, sinks_dag
from ilp.model import FamilyModel
from ilp.problem import FamilyProblem

logger = logging.getLogger(__name__)

ExtraValues = Callable[[list[int], np.ndarray], list[tuple[object, float]]]
"""``(chosen families, chordal supergraph H) -> [(original variable, value), ...]``."""


def _width_within(G: np.ndarray, k: int) -> np.ndarray | None:
    """Chordal supergraph of ``G`` of width ``<= k`` from a min-fill order, or ``None``."""
    order = greedy_elimination_order(G, "min_fill")
    later = elimination_fill(G, order)
    if max((len(h) for h in later), default=0) > k:
        return None
    H = np.zeros_like(G)
    for v, h in zip(order, later):
        H[v, list(h)] = H[list(h), v] = True
    return H


def bounded_dag(problem: FamilyProblem, order: list[int], k: int):
    """Along ``order``, give each node its best-scoring family whose parents come earlier and
    whose moral edges keep a chordal supergraph ``H`` of width ``<= k``.

    A family whose parents already form a clique of ``H`` joins as a simplicial vertex; otherwise
    ``H`` is recomputed by min-fill on the new moral graph. Returns ``(families by child, H)`` or
    ``None`` when some node has no such family (impossible if the empty set is a candidate).
    """
    n = problem.n
    moral = np.zeros((n, n), dtype=bool)
    H = moral.copy()
    placed = np.zeros(n, dtype=bool)
    chosen = [-1] * n
    for v in order:
        for f in problem.families_of(v).tolist():
            ps = list(problem.parents_of(f))
            if len(ps) > k or not placed[ps].all():
                continue
            trial = moral.copy()
            trial[v, ps] = trial[ps, v] = True
            trial[np.ix_(ps, ps)] = True
            np.fill_diagonal(trial, False)
            if H[np.ix_(ps, ps)].sum() == len(ps) * (len(ps) - 1):
                H[v, ps] = H[ps, v] = True
            else:
                new_H = _width_within(trial, k)
                if new_H is None:
                    continue
                H = new_H
            moral, chosen[v] = trial, f
            break
        if chosen[v] < 0:
            return None
        placed[v] = True
    return chosen, H


class BoundedSinksHeur(SinksHeur):
    """Sink finding on the LP solution, repaired to treewidth ``<= k`` by :func:`bounded_dag`;
    ``extra_values`` sets the model's treewidth variables for the DAG found."""

    def __init__(self, problem: FamilyProblem, x: list, arcs: dict, k: int, extra_values: ExtraValues):
        super().__init__(problem, x, arcs)
        self.k = k
        self.extra_values = extra_values
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
        chosen, H = found
        self.tried.add(tuple(chosen))
        sol = self.make_solution(chosen, heur)
        for var, val in self.extra_values(chosen, H):
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


def add_bounded_heuristic(fm: FamilyModel, k: int, extra_values: ExtraValues, freq: int,
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
