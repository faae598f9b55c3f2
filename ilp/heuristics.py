"""Primal side: Cussens' sink-finding heuristic and a greedy warm start.

Sink finding (Bartlett & Cussens, AIJ 2017, section 7; GOBNILP's ``heur_sinks.c``): build a DAG
from the last node of a topological order backwards. While nodes remain, every remaining node's
*preferred* family is its first family (by decreasing LP value ``x*``, ties by decreasing local
score) whose parents are all still remaining; the next sink is the node whose preferred family has
the largest ``x*``, ties broken by the least score lost by the other remaining nodes, which may no
longer use the sink as a parent. Finally every node takes its best-scoring family consistent with
the order found. With no LP values (all weights 0) the same procedure is a greedy, score-only
warm start. :class:`SinksHeur` runs it on LP solutions inside SCIP.
"""

from __future__ import annotations

import numpy as np
from pyscipopt import SCIP_LPSOLSTAT, SCIP_RESULT, Heur

from ilp.guard import guarded
from ilp.problem import FamilyProblem


def sinks_dag(problem: FamilyProblem, weights: np.ndarray | None = None) -> list[int] | None:
    """Families (one per child, indexed by child) of a DAG built by sink finding, or ``None``.

    ``None`` is returned only when the greedy choice leaves some node with no candidate parent
    set (possible for restricted candidate lists).
    """
    n, bits, score = problem.n, problem.bits, problem.score
    w = np.zeros(problem.n_families) if weights is None else np.asarray(weights, dtype=float)
    w_round = np.round(w, 9)
    ranked = []
    for v in range(n):
        fams = problem.by_child[v]  # already sorted by decreasing score
        ranked.append(fams[np.argsort(-w_round[fams], kind="stable")].tolist())
    w_round = w_round.tolist()  # Python floats: rounding numpy scalars in the loop below is slow
    ptr = [0] * n
    remaining = (1 << n) - 1
    allowed = [0] * n

    def first_fit(v: int, start: int, banned: int) -> int:
        lst = ranked[v]
        end = len(lst)
        i = start
        while i < end and bits[lst[i]] & banned:
            i += 1
        return i

    alive = set(range(n))
    while alive:
        outside = ~remaining
        pref = {}
        for v in alive:
            ptr[v] = first_fit(v, ptr[v], outside)
            if ptr[v] == len(ranked[v]):
                return None
            pref[v] = ranked[v][ptr[v]]
        damage = dict.fromkeys(alive, 0.0)
        for u in alive:
            f = pref[u]
            for p in problem.parents[f]:
                j = first_fit(u, ptr[u] + 1, outside | (1 << p))
                damage[p] += (score[f] - score[ranked[u][j]]) if j < len(ranked[u]) else np.inf
        sink = max(alive, key=lambda v: (w_round[pref[v]], -damage[v], -v))
        remaining &= ~(1 << sink)
        allowed[sink] = remaining
        alive.remove(sink)

    chosen = []
    for v in range(n):
        fams = problem.by_child[v].tolist()
        chosen.append(next(f for f in fams if not bits[f] & ~allowed[v]))
    return chosen


def solution_values(problem: FamilyProblem, chosen: list[int]) -> tuple[np.ndarray, set[tuple[int, int]]]:
    """0/1 family values and the arc set of a choice of families."""
    xval = np.zeros(problem.n_families)
    xval[chosen] = 1.0
    arcs = {(p, int(problem.child[f])) for f in chosen for p in problem.parents[f]}
    return xval, arcs


class SinksHeur(Heur):
    """Sink-finding heuristic on the current LP solution (a PySCIPOpt primal heuristic plugin)."""

    def __init__(self, problem: FamilyProblem, x: list, arcs: dict):
        self.problem = problem
        self.x = x
        self.arcs = arcs
        self.tried: set[tuple[int, ...]] = set()
        self.error: Exception | None = None
        self.stats = {"sinks_calls": 0, "sinks_found": 0}

    def make_solution(self, chosen: list[int], heur=None):
        """A SCIP solution (family and arc variables) for a choice of families.

        Before solving, values are set on the original variables; during solving, on the active
        transformed variables only (presolving may have fixed or aggregated the others, whose
        values then follow).
        """
        sol = self.model.createSol(heur)
        xval, arcs = solution_values(self.problem, chosen)
        values = [(var, xval[f]) for f, var in enumerate(self.x)]
        values += [(var, 1.0 if arc in arcs else 0.0) for arc, var in self.arcs.items()]
        solving = heur is not None
        for var, val in values:
            if solving:
                var = self.model.getTransformedVar(var)
                if not var.isActive():
                    continue
            if val:
                self.model.setSolVal(sol, var, val)
        return sol

    @guarded
    def heurexec(self, heurtiming, nodeinfeasible):
        if self.model.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.stats["sinks_calls"] += 1
        xval = np.fromiter((self.model.getSolVal(None, v) for v in self.x), float, len(self.x))
        chosen = sinks_dag(self.problem, xval)
        if chosen is None or tuple(chosen) in self.tried:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        self.tried.add(tuple(chosen))
        sol = self.make_solution(chosen, self)
        if self.model.trySol(sol, printreason=False):
            self.stats["sinks_found"] += 1
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}
