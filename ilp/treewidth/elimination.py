"""Exact learning of Bayesian networks of bounded treewidth: an elimination-order formulation.

Nie, Mauá, de Campos & Ji (NIPS 2014, "Advances in learning Bayesian networks of bounded
treewidth", section 3, program (3)) add to the family-variable IP a chordal supergraph ``H`` of
the moral graph, encoded by a perfect elimination order: ``y[i, j] = 1`` iff ``i - j`` is an edge
of ``H`` and ``i`` is eliminated before ``j``; ``v[i]`` is the position of ``i`` in the order.

- (3a) ``sum_j y[i, j] <= k``: at most ``k`` later neighbours, so ``H`` has treewidth ``<= k``;
- (3b) ``n y[i, j] <= n - 1 + v[j] - v[i]``: ``y`` follows the order (big-M);
- (3c) ``y[i, j] + y[i, l] - y[j, l] - y[l, j] <= 1``: the later neighbours of ``i`` form a
  clique, so the order is a perfect elimination order of ``H``;
- (3d) moral edges are edges of ``H``: for the pair ``a, b`` the chosen arc between them, and
  for every child the families holding both ``a`` and ``b`` as parents, sum to at most
  ``y[a, b] + y[b, a]`` (the paper writes one row per family and pair; summing over the families
  of one child, or over the two arc directions, is valid as at most one of them is chosen).

Added here, valid for every graph of treewidth ``<= k``: ``y[i, j] + y[j, i] <= 1``, the edge
count ``sum y <= n k - k (k + 1) / 2`` (the edge count of a k-tree) and, as cutting planes, the
same count on every vertex subset (:func:`ilp.treewidth.density.dense_sets`, separated by
:mod:`ilp.treewidth.sepa_density`). The ``O(n^3)`` rows (3b) and (3c) start
outside the LP and enter it only when violated (SCIP's lazy ``initial=False`` constraints);
this made the root LP about 10x faster on alarm. Acyclicity stays with the cluster-cut handler
of :func:`ilp.solve_ilp` (the paper's big-M order ``z`` is not used), and families with more
than ``k`` parents are dropped up front. The primal side is a sink-finding heuristic whose DAG
is rebuilt along its topological order keeping the moral graph within treewidth ``k``
(:mod:`ilp.treewidth.heur_bounded_sinks`), which also gives the warm start. The solver entry point is
:func:`ilp.treewidth.solve.solve_bounded_treewidth`.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
from pyscipopt import quicksum

from graphs.treewidth import greedy_elimination_order
from ilp.model import FamilyModel
from ilp.treewidth.density import density_rhs
from ilp.treewidth.heur_bounded_sinks import include_bounded_sinks_heur
from ilp.treewidth.sepa_density import include_density_sepa

logger = logging.getLogger(__name__)


@dataclass
class EliminationVars:
    """SCIP variables of the elimination order: ``y[(i, j)]`` (edge ``i - j`` of ``H``, ``i``
    eliminated first) and ``pos[i]`` (position of ``i``)."""

    y: dict
    pos: list


def add_elimination_rows(fm: FamilyModel, k: int) -> EliminationVars:
    """Add the treewidth-``k`` rows (see the module docstring) to the family model ``fm``."""
    problem, model = fm.problem, fm.model
    n, x = problem.n_vars, fm.x
    pairs = list(itertools.permutations(range(n), 2))
    y = {(i, j): model.addVar(name=f"y({i},{j})", vtype="B") for i, j in pairs}
    pos = [model.addVar(name=f"pos({i})", vtype="C", lb=0.0, ub=float(n - 1)) for i in range(n)]
    for i in range(n):
        model.addCons(quicksum(y[i, j] for j in range(n) if j != i) <= k, name=f"later({i})")
    lazy = {"initial": False, "removable": True}
    for i, j in pairs:
        model.addCons(n * y[i, j] + pos[i] - pos[j] <= n - 1, name=f"order({i},{j})", **lazy)
        if i < j:
            model.addCons(y[i, j] + y[j, i] <= 1, name=f"edge({i},{j})")
    for i in range(n):
        for j, l in itertools.combinations([u for u in range(n) if u != i], 2):
            model.addCons(y[i, j] + y[i, l] - y[j, l] - y[l, j] <= 1, name=f"peo({i},{j},{l})", **lazy)
    model.addCons(quicksum(y.values()) <= density_rhs(k, n), name="edges")

    arc_fams, spouse_fams = problem.moral_links()
    for (a, b), fams in arc_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= y[a, b] + y[b, a], name=f"moral({a},{b})")
    for (c, a, b), fams in spouse_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= y[a, b] + y[b, a], name=f"spouse({c},{a},{b})")
    logger.debug("treewidth rows: %d y vars, %d arc and %d spouse links", len(y), len(arc_fams), len(spouse_fams))
    return EliminationVars(y=y, pos=pos)


def elimination_values(H: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Pairs ``(i, j)`` with ``y[i, j] = 1`` and the positions of a perfect elimination order of
    the chordal graph ``H`` (min-fill finds one)."""
    order = greedy_elimination_order(H, "min_fill")
    position = [0] * len(order)
    for t, v in enumerate(order):
        position[v] = t
    pairs = [(int(i), int(j)) for i, j in zip(*np.nonzero(H)) if position[i] < position[j]]
    return pairs, position


def elimination_extension(k: int, warm_start: bool = True, heur_freq: int = 1):
    """The ``extend`` hook of :func:`ilp.solve_ilp` adding the rows, heuristic and warm start."""

    def extend(fm: FamilyModel):
        tw = add_elimination_rows(fm, k)

        def extra_values(chosen, H, moral):
            pairs, position = elimination_values(H)
            return [(tw.y[p], 1.0) for p in pairs] + list(zip(tw.pos, map(float, position)))

        sepa = include_density_sepa(fm, tw.y, k)
        heur = include_bounded_sinks_heur(fm, k, extra_values, heur_freq, warm_start)
        return [heur, sepa]

    return extend
