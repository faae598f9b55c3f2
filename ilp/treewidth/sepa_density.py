"""The separator of the elimination-order model (:mod:`ilp.treewidth.elimination`): density
inequalities of treewidth ``<= k`` (:mod:`ilp.treewidth.density`) on the edges
``y[a, b] + y[b, a]`` of the chordal supergraph, valid as it has treewidth ``<= k``."""

from __future__ import annotations

import itertools

import numpy as np
from pyscipopt import SCIP_RESULT, Sepa

from ilp.model import FamilyModel
from ilp.plugin import Plugin, guarded
from ilp.treewidth.density import dense_sets, density_rhs


class DensitySepa(Plugin, Sepa):
    """Up to ``max_cuts`` violated density inequalities per LP solution over the order variables
    ``y[(i, j)]`` of ``n`` nodes."""

    def __init__(self, y: dict, n: int, k: int, max_cuts: int = 20):
        super().__init__(density_cuts=0)
        self.y = y
        self.n = n
        self.k = k
        self.max_cuts = max_cuts

    def empty_row(self, name: str, lhs: float | None, rhs: float | None):
        return self.model.createEmptyRowSepa(self, name=name, lhs=lhs, rhs=rhs, local=False,
                                             modifiable=False, removable=True)

    @guarded
    def sepaexeclp(self):
        w = np.zeros((self.n, self.n))
        for (i, j), var in self.y.items():
            w[i, j] += self.model.getSolVal(None, var)
        w = w + w.T
        result = SCIP_RESULT.DIDNOTFIND
        for S in dense_sets(w, self.k)[: self.max_cuts]:
            edges = [self.model.getTransformedVar(self.y[a, b]) for a, b in itertools.permutations(S, 2)]
            if self.add_cut(edges, 0.0, density_rhs(self.k, len(S)), "density_cuts", pool=False):
                return {"result": SCIP_RESULT.CUTOFF}
            result = SCIP_RESULT.SEPARATED
        return {"result": result}


def include_density_sepa(fm: FamilyModel, y: dict, k: int) -> DensitySepa:
    """Include the separator (``twdensity``) over ``y`` in ``fm``'s model, run at every node."""
    sepa = DensitySepa(y, fm.problem.n_vars, k)
    fm.model.includeSepa(sepa, "twdensity", "density inequalities of bounded treewidth",
                         priority=1000, freq=1)
    return sepa
