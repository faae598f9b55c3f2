"""SCIP constraint handler for acyclicity by cluster constraints (GOBNILP's ``dagcluster``).

Checks and enforces acyclicity on integral solutions (a directed cycle ``C`` of the chosen
families violates the cluster constraint of ``C`` by 1, which is added as a cut) and separates
cluster cuts from fractional LP solutions: the greedy finder (:mod:`ilp.greedy_cuts`) first, the
exact sub-IP (:mod:`ilp.subip`) when the greedy finder fails and, at the root, every few rounds
(Cussens 2011; Bartlett & Cussens 2017). Optionally (``inout_weight``) the greedy finder first
searches a point between the LP solution and the incumbent DAG (in-out separation, Ben-Ameur &
Neto 2007), the LP solution itself when it finds nothing there: the incumbent meets every
cluster constraint, so a cluster violated there is violated at the LP solution too. When no
cluster cut is violated, 4-node convex-hull cuts (:mod:`ilp.convex4`) are separated instead, as
GOBNILP does. Cuts are globally valid rows, also stored in SCIP's global cut pool. Domain
propagation (:mod:`ilp.propagation`) fixes to 0 the families that would close a cycle with
implied arcs.
Separation and propagation are callbacks of this handler, as in GOBNILP's ``cons_dagcluster.c``,
not separate separator or propagator plugins.
"""

from __future__ import annotations

import time

import numpy as np
from pyscipopt import SCIP_RESULT, Conshdlr

from graphs.dag import find_cycle
from ilp.clusters import CutRow, cut_row
from ilp.convex4 import convex4_row, violated_convex4
from ilp.greedy_cuts import greedy_clusters
from ilp.model import FamilyModel
from ilp.options import ILPOptions
from ilp.plugin import Plugin, TransformedVars, guarded
from ilp.problem import FamilyProblem
from ilp.propagation import cycle_closing_families
from ilp.subip import subip_clusters


class ClusterConshdlr(Plugin, Conshdlr):
    """Cluster-constraint handler over the family variables ``x`` of ``problem``, separating as
    ``options`` say (``inout_weight``, ``subip``, ``subip_maxdepth``, ``subip_time_limit``,
    ``subip_root_every``, ``convex4``, ``arc_form_min_saving``, ``seed``); ``arcs`` are the
    model's arc variables by ``(u, v)``, which the rows may use (:func:`ilp.clusters.cut_row`);
    a cut counts as violated above ``min_excess``."""

    def __init__(self, problem: FamilyProblem, x: list, options: ILPOptions, arcs: dict | None = None,
                 min_excess: float = 1e-4):
        super().__init__(integral_cuts=0, inout_cuts=0, greedy_cuts=0, subip_cuts=0, convex4_cuts=0,
                         greedy_calls=0, subip_calls=0, separation_time=0.0, prop_fixings=0, prop_cutoffs=0,
                         root_rounds=0, arc_form_cuts=0)
        self.problem = problem
        self.x = x
        self.tx = TransformedVars(x)
        self.arc_index = {arc: i for i, arc in enumerate(arcs or {})}
        self.tarcs = TransformedVars(list((arcs or {}).values()))
        self.options = options
        self.min_excess = min_excess
        self._incumbent: tuple[int, np.ndarray | None] = (0, None)  # (solutions found, family values)

    # -- helpers -----------------------------------------------------------------------------
    def _values(self, sol) -> np.ndarray:
        """Family values in ``sol`` (``None``: the current LP or pseudo solution)."""
        return np.fromiter((self.model.getSolVal(sol, v) for v in self.x), float, len(self.x))

    def _cycle(self, xval: np.ndarray) -> list[int] | None:
        return find_cycle(self.problem.dag_of(np.flatnonzero(xval > 0.5)))

    def _family_vars(self, fams: np.ndarray) -> list:
        """The transformed family variables ``x[fams]``."""
        tx = self.tx.vars(self.model)
        return [tx[f] for f in fams.tolist()]

    def _cut_row(self, cluster) -> CutRow:
        """The cut of ``cluster``, with arc-form members where the model has arc variables."""
        return cut_row(self.problem, cluster,
                       arc_min_saving=self.options.arc_form_min_saving if self.arc_index else None)

    def _row_terms(self, row: CutRow) -> tuple[list, list[float]]:
        """The transformed variables of ``row`` and their coefficients."""
        arcs = self.tarcs.vars(self.model)
        return (self._family_vars(row.families) + [arcs[self.arc_index[a]] for a in row.arcs],
                row.family_coefs.tolist() + [1.0] * len(row.arcs))

    def _add_row(self, row: CutRow, kind: str, force: bool = False) -> bool:
        """Add the cluster cut ``row`` as a global cut; True if it proves infeasibility."""
        variables, coefs = self._row_terms(row)
        self.stats["arc_form_cuts"] += bool(row.arcs)
        return self.add_cut(variables, row.lhs, row.rhs, kind, coefs=coefs, force=force)

    def _incumbent_values(self) -> np.ndarray | None:
        """Family values of SCIP's best solution (``None`` before the first), read again only
        after SCIP has found a new solution."""
        found = self.model.getNSolsFound()
        if found and self._incumbent[0] != found:
            self._incumbent = (found, self._values(self.model.getBestSol()))
        return self._incumbent[1]

    def _inout_clusters(self, xval: np.ndarray) -> list[tuple[int, ...]]:
        """Greedy clusters at ``w * xval + (1 - w) * incumbent`` (``w``: ``options.inout_weight``;
        none when it is 1). The incumbent's excess is at most 0, so an excess above ``min_excess``
        there is above ``min_excess / w`` at ``xval``: every cluster found is violated at the LP
        solution."""
        weight = self.options.inout_weight
        incumbent = None if weight == 1 else self._incumbent_values()
        if incumbent is None:
            return []
        return greedy_clusters(self.problem, weight * xval + (1 - weight) * incumbent, min_excess=self.min_excess)

    def _exact_round(self, greedy_found: bool) -> bool:
        """Whether this separation round also runs the exact search: when the greedy finder
        failed, and at the root every ``subip_root_every`` rounds even when it succeeded (the
        greedy cuts then tail off while a far more violated cluster is left)."""
        options, depth = self.options, self.model.getDepth()
        if not options.subip or depth > options.subip_maxdepth:
            return False
        every = options.subip_root_every
        return not greedy_found or (depth == 0 and every > 0 and self.stats["root_rounds"] % every == 0)

    # -- callbacks ---------------------------------------------------------------------------
    @guarded
    def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
        cycle = self._cycle(self._values(solution))
        return {"result": SCIP_RESULT.FEASIBLE if cycle is None else SCIP_RESULT.INFEASIBLE}

    @guarded
    def consenfolp(self, constraints, nusefulconss, solinfeasible):
        cycle = self._cycle(self.tx.lp_values(self.model))
        if cycle is None:
            return {"result": SCIP_RESULT.FEASIBLE}
        if self._add_row(self._cut_row(cycle), "integral_cuts", force=True):
            return {"result": SCIP_RESULT.CUTOFF}
        return {"result": SCIP_RESULT.SEPARATED}

    @guarded
    def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
        cycle = self._cycle(self._values(None))
        if cycle is None:
            return {"result": SCIP_RESULT.FEASIBLE}
        row = self._cut_row(cycle)
        variables, coefs = self._row_terms(row)
        self.add_constraint(variables, row.lhs, row.rhs, "integral_cuts", "clusterp", coefs=coefs)
        return {"result": SCIP_RESULT.CONSADDED}

    @guarded
    def consinitsol(self, constraints):
        self.tx.reset()  # transformed variables change after each (re)presolve
        self.tarcs.reset()

    @guarded
    def consprop(self, constraints, nusefulconss, nmarkedconss, proptiming):
        allowed = self.tx.upper_bounds(self.model) > 0.5
        closing, cyclic = cycle_closing_families(self.problem, allowed)
        if cyclic:
            self.stats["prop_cutoffs"] += 1
            return {"result": SCIP_RESULT.CUTOFF}
        result = SCIP_RESULT.DIDNOTFIND
        tx = self.tx.vars(self.model)
        for f in np.flatnonzero(closing & self.tx.active(self.model)).tolist():
            infeasible, tightened = self.model.tightenVarUb(tx[f], 0.0)
            if infeasible:
                self.stats["prop_cutoffs"] += 1
                return {"result": SCIP_RESULT.CUTOFF}
            if tightened:
                self.stats["prop_fixings"] += 1
                result = SCIP_RESULT.REDUCEDDOM
        return {"result": result}

    @guarded
    def conssepalp(self, constraints, nusefulconss):
        start = time.perf_counter()
        if self.model.getDepth() == 0:
            self.stats["root_rounds"] += 1
        xval = self.tx.lp_values(self.model)
        self.stats["greedy_calls"] += 1
        greedy, kind = self._inout_clusters(xval), "inout_cuts"
        if not greedy:
            greedy, kind = greedy_clusters(self.problem, xval, min_excess=self.min_excess), "greedy_cuts"
        rows = [(self._cut_row(cluster), kind) for cluster in greedy]
        if self._exact_round(bool(greedy)):
            self.stats["subip_calls"] += 1
            exact, _ = subip_clusters(
                self.problem, xval, time_limit=self.options.subip_time_limit,
                min_excess=self.min_excess, seed=self.options.seed,
            )
            rows += [(self._cut_row(cluster), "subip_cuts") for cluster in exact if cluster not in greedy]
        if not rows and self.options.convex4:
            quads = violated_convex4(self.problem, xval, min_excess=self.min_excess)
            rows = [(CutRow(fams, np.ones(fams.size), [], None, 2.0), "convex4_cuts")
                    for fams in (convex4_row(self.problem, quad) for quad in quads)]
        result = SCIP_RESULT.DIDNOTFIND
        for row, kind in rows:
            if self._add_row(row, kind):
                result = SCIP_RESULT.CUTOFF
                break
            result = SCIP_RESULT.SEPARATED
        self.stats["separation_time"] += time.perf_counter() - start
        return {"result": result}

    @guarded
    def conslock(self, constraint, locktype, nlockspos, nlocksneg):
        # A family variable can appear with either sign in some cluster row: lock both ways.
        vars_ = self.x if constraint.isOriginal() else [self.model.getTransformedVar(v) for v in self.x]
        for v in vars_:
            self.model.addVarLocksType(v, locktype, nlockspos + nlocksneg, nlockspos + nlocksneg)


def include_cluster_conshdlr(fm: FamilyModel, options: ILPOptions) -> ClusterConshdlr:
    """Include the handler (``dagcluster``) and its one constraint in ``fm``'s model: separation
    before every other separator, enforcement and checking after the integrality handler."""
    conshdlr = ClusterConshdlr(fm.problem, fm.x, options, fm.arcs)
    model = fm.model
    model.includeConshdlr(
        conshdlr, "dagcluster", "acyclicity by cluster constraints",
        sepapriority=100000, enfopriority=-100, chckpriority=-100,
        sepafreq=options.sepa_freq, propfreq=options.prop_freq, eagerfreq=-1, needscons=True,
    )
    model.addPyCons(model.createCons(conshdlr, "acyclic", initial=False, separate=True,
                                     enforce=True, check=True, propagate=True, removable=False))
    return conshdlr
