"""Treewidth ``<= k`` in the family-variable IP by lazy obstruction cuts on moral-edge variables.

An alternative to the elimination-order rows of :mod:`ilp.treewidth.elimination` (Nie et al. 2014), whose
LP bound is weak. Here the IP of :func:`ilp.solve_ilp` gains one binary ``m[a, b]`` per pair
that can be a moral edge, bounded below by everything that makes ``a - b`` an edge: the arcs
between ``a`` and ``b`` and, per child, its families holding both (:func:`add_moral_vars`).

Treewidth is minor-monotone, so if an edge set ``F`` spans a graph of treewidth ``> k``, no
feasible DAG has all of ``F`` in its moral graph: ``sum_{e in F} m[e] <= |F| - 1`` is valid
(an *obstruction cut*). A constraint handler checks integral solutions and cuts off one whose
moral graph has treewidth ``> k`` with the cut of an edge-minimal obstruction inside it
(:func:`obstruction`; for ``k = 2`` a subdivided ``K4``). On fractional LP solutions it separates
the same cuts on the edges with ``m* > 1/2`` and the density inequalities of :mod:`ilp.treewidth.density`.
Every row only removes graphs of treewidth ``> k``, so the optimum is exact.
"""

from __future__ import annotations

import itertools

import numpy as np
from pyscipopt import SCIP_RESULT, Conshdlr, quicksum

from graphs.moral import moral_graph
from graphs.treewidth import width_at_most
from ilp.treewidth.heuristic import add_bounded_heuristic
from ilp.treewidth.density import dense_sets, density_rhs
from ilp.guard import guarded
from ilp.model import FamilyModel


def obstruction(G: np.ndarray, k: int, priority: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Edges ``(a, b)``, ``a < b``, of an edge-minimal subgraph of ``G`` of treewidth ``> k``.

    ``G`` must have treewidth ``> k``. Vertices (fewest neighbours first), then edges (lowest
    ``priority[a, b]`` first; default: index order) are deleted while the width stays ``> k``.
    """
    H = np.array(G, dtype=bool)
    for v in np.argsort(H.sum(axis=1), kind="stable").tolist():
        if not H[v].any():  # isolated: deleting it changes nothing
            continue
        trial = H.copy()
        trial[v, :] = trial[:, v] = False
        if not width_at_most(trial, k):
            H = trial
    edges = list(zip(*(t.tolist() for t in np.nonzero(np.triu(H)))))
    if priority is not None:
        edges.sort(key=lambda e: priority[e])
    for a, b in edges:
        H[a, b] = H[b, a] = False
        if width_at_most(H, k):
            H[a, b] = H[b, a] = True
    return list(zip(*(t.tolist() for t in np.nonzero(np.triu(H)))))


def add_moral_vars(fm: FamilyModel) -> dict[tuple[int, int], object]:
    """Binary ``m[(a, b)]`` (``a < b``) per possible moral edge, with its lower-bound rows."""
    problem, model, x = fm.problem, fm.model, fm.x
    arc_fams, spouse_fams = problem.moral_links()
    pairs = sorted(set(arc_fams) | {(a, b) for _, a, b in spouse_fams})
    m = {(a, b): model.addVar(name=f"m({a},{b})", vtype="B") for a, b in pairs}
    for (a, b), fams in arc_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= m[a, b], name=f"moral({a},{b})")
    for (c, a, b), fams in spouse_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= m[a, b], name=f"spouse({c},{a},{b})")
    return m


class ObstructionConshdlr(Conshdlr):
    """Treewidth ``<= k`` of the moral graph, enforced by obstruction cuts on ``m`` (see module)."""

    def __init__(self, problem, x: list, m: dict, k: int, max_density_cuts: int = 20):
        self.problem = problem
        self.x = x
        self.m = m
        self.k = k
        self.max_density_cuts = max_density_cuts
        self.error: Exception | None = None
        self.stats = {"obstruction_cuts": 0, "lp_obstruction_cuts": 0, "density_cuts": 0}

    def _moral(self, sol) -> np.ndarray:
        chosen = [f for f, v in enumerate(self.x) if self.model.getSolVal(sol, v) > 0.5]
        return moral_graph(self.problem.dag_of(chosen))

    def _edge_values(self) -> np.ndarray:
        w = np.zeros((self.problem.n, self.problem.n))
        for (a, b), var in self.m.items():
            w[a, b] = w[b, a] = self.model.getSolVal(None, var)
        return w

    def _add_cut(self, pairs, rhs: float, kind: str, force: bool = False) -> bool:
        """Add ``sum_{e in pairs} m[e] <= rhs`` as a global row; True if it proves infeasibility."""
        row = self.model.createEmptyRowUnspec(name=f"{kind}{self.stats[kind]}", rhs=rhs,
                                              local=False, removable=True)
        self.model.cacheRowExtensions(row)
        for e in pairs:
            self.model.addVarToRow(row, self.model.getTransformedVar(self.m[e]), 1.0)
        self.model.flushRowExtensions(row)
        infeasible = self.model.addCut(row, forcecut=force)
        self.model.addPoolCut(row)
        self.model.releaseRow(row)
        self.stats[kind] += 1
        return infeasible

    def _violated_obstruction(self):
        """Edges of an obstruction in the current (integral) solution, or ``None`` if feasible."""
        G = self._moral(None)
        return None if width_at_most(G, self.k) else obstruction(G, self.k)

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
        expr = quicksum(self.model.getTransformedVar(self.m[e]) for e in F)
        self.model.addCons(expr <= len(F) - 1, name=f"obstructionp{self.stats['obstruction_cuts']}",
                           removable=True)
        self.stats["obstruction_cuts"] += 1
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
            F = obstruction(support, self.k, priority=w)
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


def obstruction_extension(k: int, warm_start: bool = True, heur_freq: int = 1):
    """The ``extend`` hook of :func:`ilp.solve_ilp` for treewidth ``<= k`` by obstruction cuts."""

    def extend(fm: FamilyModel):
        m = add_moral_vars(fm)
        hdlr = ObstructionConshdlr(fm.problem, fm.x, m, k)
        fm.model.includeConshdlr(hdlr, "twobstruction", "treewidth <= k by obstruction cuts",
                                 sepapriority=50000, enfopriority=-200, chckpriority=-200,
                                 sepafreq=1, propfreq=-1, eagerfreq=-1, needscons=True)
        fm.model.addPyCons(fm.model.createCons(hdlr, "treewidth", initial=False, separate=True,
                                               enforce=True, check=True, propagate=False,
                                               removable=False))

        def extra_values(chosen, H):
            G = moral_graph(fm.problem.dag_of(chosen))
            return [(var, 1.0) for (a, b), var in m.items() if G[a, b]]

        heur = add_bounded_heuristic(fm, k, extra_values, heur_freq, warm_start)
        return [hdlr, heur]

    return extend
