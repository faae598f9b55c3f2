"""The constraint handler of the obstruction model (:mod:`ilp.treewidth.obstruction`): the moral
graph of a solution has treewidth ``<= k``.

Integral solutions are checked and, when their moral graph has treewidth ``> k``, cut off by the
obstruction cut ``sum_{e in F} m[e] <= |F| - 1`` of an edge-minimal obstruction ``F`` inside it
(:func:`graphs.treewidth.minimal_obstruction`). On fractional LP solutions the handler separates
the density inequalities of :mod:`ilp.treewidth.density` on the edge values ``m*`` and the
obstruction cut of the edges with ``m* > 1/2`` when it is violated.
"""

from __future__ import annotations

import itertools

import numpy as np
from pyscipopt import SCIP_RESULT, Conshdlr

from graphs.moral import moral_graph
from graphs.treewidth import minimal_obstruction, width_at_most
from ilp.model import FamilyModel
from ilp.plugin import Plugin, guarded
from ilp.problem import FamilyProblem
from ilp.treewidth.density import dense_sets, density_rhs


class ObstructionConshdlr(Plugin, Conshdlr):
    """Treewidth ``<= k`` of the moral graph, enforced by obstruction cuts on ``m``."""

    def __init__(self, problem: FamilyProblem, x: list, m: dict, k: int, max_density_cuts: int = 20):
        super().__init__(obstruction_cuts=0, lp_obstruction_cuts=0, density_cuts=0)
        self.problem = problem
        self.x = x
        self.m = m
        self.k = k
        self.max_density_cuts = max_density_cuts

    def _moral(self, sol) -> np.ndarray:
        chosen = [f for f, v in enumerate(self.x) if self.model.getSolVal(sol, v) > 0.5]
        return moral_graph(self.problem.dag_of(chosen))

    def _edge_values(self) -> np.ndarray:
        w = np.zeros((self.problem.n_vars, self.problem.n_vars))
        for (a, b), var in self.m.items():
            w[a, b] = w[b, a] = self.model.getSolVal(None, var)
        return w

    def _edge_vars(self, pairs) -> list:
        """The transformed edge variables ``m[e]``, ``e`` in ``pairs``."""
        return [self.model.getTransformedVar(self.m[e]) for e in pairs]

    def _add_cut(self, pairs, rhs: float, kind: str, force: bool = False) -> bool:
        """Add ``0 <= sum_{e in pairs} m[e] <= rhs`` as a global cut; True if it proves infeasibility."""
        return self.add_cut(self._edge_vars(pairs), 0.0, rhs, kind, force=force)

    def _violated_obstruction(self):
        """Edges of an obstruction in the current (integral) solution, or ``None`` if feasible."""
        G = self._moral(None)
        return None if width_at_most(G, self.k) else minimal_obstruction(G, self.k)

    @guarded
    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        ok = width_at_most(self._moral(solution), self.k)
        return {"result": SCIP_RESULT.FEASIBLE if ok else SCIP_RESULT.INFEASIBLE}

    @guarded
    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        F = self._violated_obstruction()
        if F is None:
            return {"result": SCIP_RESULT.FEASIBLE}
        if self._add_cut(F, len(F) - 1, "obstruction_cuts", force=True):
            return {"result": SCIP_RESULT.CUTOFF}
        return {"result": SCIP_RESULT.SEPARATED}

    @guarded
    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        F = self._violated_obstruction()
        if F is None:
            return {"result": SCIP_RESULT.FEASIBLE}
        self.add_constraint(self._edge_vars(F), None, len(F) - 1, "obstruction_cuts", "obstructionp")
        return {"result": SCIP_RESULT.CONSADDED}

    @guarded
    def conssepalp(self, constraints, nusefulconss):
        w = self._edge_values()
        result = SCIP_RESULT.DIDNOTFIND
        for S in dense_sets(w, self.k)[: self.max_density_cuts]:
            pairs = [e for e in itertools.combinations(sorted(S), 2) if e in self.m]
            if self._add_cut(pairs, density_rhs(self.k, len(S)), "density_cuts"):
                return {"result": SCIP_RESULT.CUTOFF}
            result = SCIP_RESULT.SEPARATED
        support = w > 0.5
        if not width_at_most(support, self.k):
            F = minimal_obstruction(support, self.k, priority=w)
            if sum(w[e] for e in F) > len(F) - 1 + 1e-6:
                if self._add_cut(F, len(F) - 1, "lp_obstruction_cuts"):
                    return {"result": SCIP_RESULT.CUTOFF}
                result = SCIP_RESULT.SEPARATED
        return {"result": result}

    @guarded
    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        transformed = not constraint.isOriginal()
        get = self.model.getTransformedVar
        for v in self.x:  # feasibility depends on the families either way
            self.model.addVarLocksType(get(v) if transformed else v, locktype,
                                       nlockspos + nlocksneg, nlockspos + nlocksneg)
        for v in self.m.values():  # cuts bound m from above: only rounding up can violate them
            self.model.addVarLocksType(get(v) if transformed else v, locktype, nlocksneg, nlockspos)


def include_obstruction_conshdlr(fm: FamilyModel, m: dict, k: int) -> ObstructionConshdlr:
    """Include the handler (``twobstruction``) over the moral-edge variables ``m`` and its one
    constraint in ``fm``'s model: separation after the cluster cuts, enforcement and checking
    after acyclicity."""
    hdlr = ObstructionConshdlr(fm.problem, fm.x, m, k)
    fm.model.includeConshdlr(hdlr, "twobstruction", "treewidth <= k by obstruction cuts",
                             sepapriority=50000, enfopriority=-200, chckpriority=-200,
                             sepafreq=1, propfreq=-1, eagerfreq=-1, needscons=True)
    fm.model.addPyCons(fm.model.createCons(hdlr, "treewidth", initial=False, separate=True,
                                           enforce=True, check=True, propagate=False,
                                           removable=False))
    return hdlr
