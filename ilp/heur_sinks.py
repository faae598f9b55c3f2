"""The sink-finding primal heuristic (GOBNILP's ``heur_sinks.c``) and the warm start.

:class:`SinksHeur` runs the sink finding of :mod:`ilp.sinks` on the LP solution at every node
(and between the root's cut rounds) and, optionally, improves each new DAG by the order-based
local search of :mod:`ilp.order_search` before offering it to SCIP; before the solve, the same
search on the scores alone gives the warm start.
"""

from __future__ import annotations

from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT, Heur

from ilp.model import FamilyModel
from ilp.options import ILPOptions
from ilp.order_search import improve_by_order
from ilp.plugin import Plugin, TransformedVars, guarded
from ilp.problem import FamilyProblem
from ilp.sinks import sinks_dag


class SinksHeur(Plugin, Heur):
    """Sink-finding heuristic on the current LP solution (a PySCIPOpt primal heuristic plugin)."""

    def __init__(self, problem: FamilyProblem, x: list, arcs: dict, *, order_search: bool = True):
        super().__init__(sinks_calls=0, sinks_found=0)
        self.problem = problem
        self.order_search = order_search
        self.x = x
        self.arc_pos = {arc: i for i, arc in enumerate(arcs)}
        self.tx = TransformedVars(x)
        self.tarcs = TransformedVars(list(arcs.values()))
        self.tried: set[tuple[int, ...]] = set()

    def make_solution(self, chosen: list[int], heur=None):
        """A SCIP solution (family and arc variables) for a choice of families.

        Only the chosen families and their arcs are set to 1. Before solving, values are set on
        the original variables; during solving, on the active transformed variables only
        (presolving may have fixed or aggregated the others, whose values then follow).
        """
        sol = self.model.createSol(heur)
        child, parents_of = self.problem.child, self.problem.parents_of
        arcs = [(p, int(child[f])) for f in chosen for p in parents_of(f)]
        arcs = [self.arc_pos[a] for a in arcs if a in self.arc_pos]  # none without arc_vars
        for cache, ones in ((self.tx, chosen), (self.tarcs, arcs)):
            if heur is None:
                targets = [cache.original[i] for i in ones]
            else:
                tvars, active = cache.vars(self.model), cache.active(self.model)
                targets = [tvars[i] for i in ones if active[i]]
            for var in targets:
                self.model.setSolVal(sol, var, 1.0)
        return sol

    def polish(self, chosen: list[int]) -> list[int]:
        """``chosen`` improved by the order-based local search, if it is switched on."""
        return improve_by_order(self.problem, chosen) if self.order_search else chosen

    def add_warm_start(self) -> list[int] | None:
        """Add the score-only sinks DAG, polished, as a start solution; its families (``None``:
        sink finding found no DAG)."""
        chosen = sinks_dag(self.problem)
        if chosen is None:
            return None
        chosen = self.polish(chosen)
        self.model.addSol(self.make_solution(chosen))
        return chosen

    @guarded
    def heurinitsol(self):
        self.tx.reset()  # transformed variables change after each (re)presolve
        self.tarcs.reset()

    @guarded
    def heurexec(self, heurtiming, nodeinfeasible):
        if self.model.getLPSolstat() != SCIP_LPSOLSTAT.OPTIMAL:
            return {"result": SCIP_RESULT.DIDNOTRUN}
        self.stats["sinks_calls"] += 1
        chosen = sinks_dag(self.problem, self.tx.lp_values(self.model))
        if chosen is None or tuple(chosen) in self.tried:
            return {"result": SCIP_RESULT.DIDNOTFIND}
        self.tried.add(tuple(chosen))
        sol = self.make_solution(self.polish(chosen), self)
        if self.model.trySol(sol, printreason=False):
            self.stats["sinks_found"] += 1
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}


def include_sinks_heur(fm: FamilyModel, options: ILPOptions) -> SinksHeur:
    """Include the heuristic (``sinks``) in ``fm``'s model, run every ``options.sinks_freq`` nodes
    after the node's LP and between the cut rounds: on large tables the root's rounds take
    minutes and the incumbent would otherwise stay the warm start until the root is done."""
    heur = SinksHeur(fm.problem, fm.x, fm.arcs, order_search=options.order_search)
    fm.model.includeHeur(heur, "sinks", "sink-finding heuristic on the LP solution", "k",
                         priority=1000, freq=options.sinks_freq,
                         timingmask=SCIP_HEURTIMING.AFTERLPNODE | SCIP_HEURTIMING.DURINGLPLOOP)
    return heur
