"""Treewidth ``<= k`` in the family-variable IP by lazy obstruction cuts on moral-edge variables.

An alternative to the elimination-order rows of :mod:`ilp.treewidth.elimination` (Nie et al. 2014), whose
LP bound is weak. Here the IP of :func:`ilp.solve_ilp` gains one binary ``m[a, b]`` per pair
that can be a moral edge, bounded below by everything that makes ``a - b`` an edge: the arcs
between ``a`` and ``b`` and, per child, its families holding both (:func:`add_moral_vars`).

Treewidth is minor-monotone, so if an edge set ``F`` spans a graph of treewidth ``> k``, no
feasible DAG has all of ``F`` in its moral graph: ``sum_{e in F} m[e] <= |F| - 1`` is valid
(an *obstruction cut*). A constraint handler (:mod:`ilp.treewidth.conshdlr_obstruction`) checks
integral solutions and cuts off one whose moral graph has treewidth ``> k`` with the cut of an
edge-minimal obstruction inside it (:func:`graphs.treewidth.minimal_obstruction`; for ``k = 2`` a
subdivided ``K4``). On fractional LP solutions it separates the same cuts on the edges with
``m* > 1/2`` and the density inequalities of :mod:`ilp.treewidth.density`. Every row only removes
graphs of treewidth ``> k``, so the optimum is exact.
"""

from __future__ import annotations

import numpy as np
from pyscipopt import quicksum

from ilp.model import FamilyModel
from ilp.treewidth.conshdlr_obstruction import include_obstruction_conshdlr
from ilp.treewidth.heur_bounded_sinks import include_bounded_sinks_heur


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


def obstruction_extension(k: int, warm_start: bool = True, heur_freq: int = 1):
    """The ``extend`` hook of :func:`ilp.solve_ilp` for treewidth ``<= k`` by obstruction cuts."""

    def extend(fm: FamilyModel):
        m = add_moral_vars(fm)
        hdlr = include_obstruction_conshdlr(fm, m, k)

        def extra_values(chosen, H, moral):
            rows, cols = np.nonzero(np.triu(moral))
            return [(m[e], 1.0) for e in zip(rows.tolist(), cols.tolist())]

        heur = include_bounded_sinks_heur(fm, k, extra_values, heur_freq, warm_start)
        return [hdlr, heur]

    return extend
