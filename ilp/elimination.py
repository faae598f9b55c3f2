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
same count on every vertex subset (:func:`dense_sets`). The ``O(n^3)`` rows (3b) and (3c) start
outside the LP and enter it only when violated (SCIP's lazy ``initial=False`` constraints);
this made the root LP about 10x faster on alarm. Acyclicity stays with the cluster-cut handler
of :func:`ilp.solve_ilp` (the paper's big-M order ``z`` is not used), and families with more
than ``k`` parents are dropped up front. The primal side is a sink-finding heuristic whose DAG
is rebuilt along its topological order keeping the moral graph within treewidth ``k``
(:func:`bounded_dag`), which also gives the warm start.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
from pyscipopt import SCIP_HEURTIMING, SCIP_LPSOLSTAT, SCIP_RESULT, Sepa, quicksum

from graphs.dag import topological_order
from graphs.treedec import elimination_fill
from graphs.treewidth import dag_treewidth, greedy_elimination_order
from ilp.guard import guarded
from ilp.heuristics import SinksHeur, sinks_dag
from ilp.ktree_filter import TreewidthInputError, check_width
from ilp.model import FamilyModel
from ilp.problem import FamilyProblem
from ilp.result import ILPResult
from ilp.solve import ILPSolveError, solve_ilp
from scores.table import ScoreTable

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
    n, x = problem.n, fm.x
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
    model.addCons(quicksum(y.values()) <= n * k - k * (k + 1) // 2, name="edges")

    arc_fams: dict[tuple[int, int], list[int]] = {}
    spouse_fams: dict[tuple[int, int, int], list[int]] = {}
    for f, (c, ps) in enumerate(zip(problem.child.tolist(), problem.parents)):
        for p in ps:
            arc_fams.setdefault((min(p, c), max(p, c)), []).append(f)
        for a, b in itertools.combinations(ps, 2):
            spouse_fams.setdefault((c, a, b), []).append(f)
    for (a, b), fams in arc_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= y[a, b] + y[b, a], name=f"moral({a},{b})")
    for (c, a, b), fams in spouse_fams.items():
        model.addCons(quicksum(x[f] for f in fams) <= y[a, b] + y[b, a], name=f"spouse({c},{a},{b})")
    logger.debug("treewidth rows: %d y vars, %d arc and %d spouse links", len(y), len(arc_fams), len(spouse_fams))
    return EliminationVars(y=y, pos=pos)


def dense_sets(w: np.ndarray, k: int, min_excess: float = 1e-4) -> list[list[int]]:
    """Vertex sets ``S`` (``|S| > k``) violating the density inequality of treewidth ``<= k``,
    ``sum_{a<b in S} w[a, b] <= k |S| - k (k + 1) / 2`` (a graph of treewidth ``<= k`` has at most
    as many edges as a k-tree; every subgraph too), found by greedy peeling (Charikar 2000):
    from the whole graph and from each vertex's closed neighbourhood in the support of the
    symmetric weights ``w``, drop the vertex of least weighted degree, keeping the most violated
    set seen. Returns the distinct violated sets, most violated first."""
    n = w.shape[0]
    starts = [np.ones(n, dtype=bool)] + [(w[v] > 0) | (np.arange(n) == v) for v in range(n)]
    found: dict[tuple[int, ...], float] = {}
    for alive in starts:
        alive = alive.copy()
        size = int(alive.sum())
        deg = w[:, alive].sum(axis=1)
        total = deg[alive].sum() / 2
        best, best_set = min_excess, None
        while size > k:
            excess = total - (k * size - k * (k + 1) / 2)
            if excess > best:
                best, best_set = excess, tuple(np.flatnonzero(alive).tolist())
            v = int(np.flatnonzero(alive)[np.argmin(deg[alive])])
            alive[v] = False
            size -= 1
            total -= deg[v]
            deg -= w[:, v]
        if best_set is not None:
            found[best_set] = best
    return [list(S) for S in sorted(found, key=lambda S: -found[S])]


class DensitySepa(Sepa):
    """Separates the density inequalities of :func:`dense_sets` on the edges ``y[a, b] + y[b, a]``
    of the chordal supergraph (valid as it has treewidth ``<= k``)."""

    def __init__(self, tw: EliminationVars, n: int, k: int, max_cuts: int = 20):
        self.tw = tw
        self.n = n
        self.k = k
        self.max_cuts = max_cuts
        self.error: Exception | None = None
        self.stats = {"density_cuts": 0}

    @guarded
    def sepaexeclp(self):
        w = np.zeros((self.n, self.n))
        for (i, j), var in self.tw.y.items():
            w[i, j] += self.model.getSolVal(None, var)
        w = w + w.T
        result = SCIP_RESULT.DIDNOTFIND
        for S in dense_sets(w, self.k)[: self.max_cuts]:
            rhs = self.k * len(S) - self.k * (self.k + 1) // 2
            row = self.model.createEmptyRowSepa(self, name=f"density{self.stats['density_cuts']}",
                                                rhs=rhs, local=False, removable=True)
            self.model.cacheRowExtensions(row)
            for a, b in itertools.permutations(S, 2):
                self.model.addVarToRow(row, self.model.getTransformedVar(self.tw.y[a, b]), 1.0)
            self.model.flushRowExtensions(row)
            infeasible = self.model.addCut(row)
            self.model.releaseRow(row)
            self.stats["density_cuts"] += 1
            if infeasible:
                return {"result": SCIP_RESULT.CUTOFF}
            result = SCIP_RESULT.SEPARATED
        return {"result": result}


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
        for f in problem.by_child[v].tolist():
            ps = list(problem.parents[f])
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


def elimination_values(H: np.ndarray) -> tuple[list[tuple[int, int]], list[int]]:
    """Pairs ``(i, j)`` with ``y[i, j] = 1`` and the positions of a perfect elimination order of
    the chordal graph ``H`` (min-fill finds one)."""
    order = greedy_elimination_order(H, "min_fill")
    position = [0] * len(order)
    for t, v in enumerate(order):
        position[v] = t
    pairs = [(int(i), int(j)) for i, j in zip(*np.nonzero(H)) if position[i] < position[j]]
    return pairs, position


class BoundedSinksHeur(SinksHeur):
    """Sink finding on the LP solution, repaired to treewidth ``<= k`` by :func:`bounded_dag`."""

    def __init__(self, problem: FamilyProblem, x: list, arcs: dict, tw: EliminationVars, k: int):
        super().__init__(problem, x, arcs)
        self.tw = tw
        self.k = k
        self.stats = {"tw_heur_calls": 0, "tw_heur_found": 0, "tw_warm_start_objective": None}

    def bounded_solution(self, weights: np.ndarray | None = None, heur=None):
        """A SCIP solution (families, arcs, ``y``, positions) from sink finding with ``weights``
        (LP values; ``None``: scores only) repaired to treewidth ``<= k``; ``None`` if it fails or
        was tried before."""
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
        pairs, position = elimination_values(H)
        values = [(self.tw.y[p], 1.0) for p in pairs] + list(zip(self.tw.pos, map(float, position)))
        for var, val in values:
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
        xval = np.fromiter((self.model.getSolVal(None, v) for v in self.x), float, len(self.x))
        made = self.bounded_solution(xval, self)
        if made is not None and self.model.trySol(made[0], printreason=False):
            self.stats["tw_heur_found"] += 1
            logger.debug("bounded sinks heuristic: DAG of score %.6f", made[1])
            return {"result": SCIP_RESULT.FOUNDSOL}
        return {"result": SCIP_RESULT.DIDNOTFIND}


def _extension(k: int, warm_start: bool, heur_freq: int):
    """The ``extend`` hook of :func:`ilp.solve_ilp` adding the rows, heuristic and warm start."""

    def extend(fm: FamilyModel):
        tw = add_elimination_rows(fm, k)
        heur = BoundedSinksHeur(fm.problem, fm.x, fm.arcs, tw, k)
        sepa = DensitySepa(tw, fm.problem.n, k)
        fm.model.includeSepa(sepa, "twdensity", "density inequalities of bounded treewidth",
                             priority=1000, freq=1)
        fm.model.includeHeur(heur, "twsinks", "sink finding repaired to bounded treewidth", "k",
                             priority=1000, freq=heur_freq, timingmask=SCIP_HEURTIMING.AFTERLPNODE)
        if warm_start:
            made = heur.bounded_solution()
            if made is not None:
                fm.model.addSol(made[0])
                heur.stats["tw_warm_start_objective"] = made[1]
        return [heur, sepa]

    return extend


def _width_at_most(dag: np.ndarray, k: int) -> bool:
    """Whether the moral graph of ``dag`` has treewidth ``<= k`` (min-fill first, exact if needed)."""
    if dag_treewidth(dag, exact=False).width <= k:
        return True
    try:
        return dag_treewidth(dag).width <= k
    except ValueError:  # too large for the exact programme: undecided, so not certified
        return False


def solve_bounded_treewidth(
    table: ScoreTable,
    k: int,
    *,
    palim: int | None = None,
    warm_start: bool = True,
    sinks_freq: int = 1,
    relaxation_first: bool = True,
    **ilp_options,
) -> ILPResult:
    """Best DAG over the families of ``table`` whose moral graph has treewidth at most ``k``.

    Exact (Nie et al. 2014, program (3), on :func:`ilp.solve_ilp`; see the module docstring);
    ``palim`` is capped at ``k``; ``warm_start`` and ``sinks_freq`` drive the treewidth-aware
    heuristic; other ``ilp_options`` (``time_limit``, ``seed``, ``verbose``, ...) go to
    :func:`ilp.solve_ilp`. With ``relaxation_first`` the unbounded problem (parent limit ``k``, a
    relaxation) is solved first, with half of any time limit: an optimum whose moral graph
    already has treewidth ``<= k`` is optimal for the bounded problem too, and is returned with
    ``stats["relaxation_optimal"] = True``. ``stats["treewidth"]`` is the exact treewidth of the
    result's moral graph. Raises :class:`TreewidthInputError` unless ``1 <= k <= n - 1``.
    """
    if not isinstance(table, ScoreTable):
        raise TreewidthInputError(f"expected a ScoreTable, got {type(table).__name__}")
    k = check_width(k, table.n_vars)
    if palim is None or (isinstance(palim, (int, np.integer)) and palim > k):
        palim = k
    time_limit = ilp_options.pop("time_limit", None)
    res, via_relaxation = None, False
    if relaxation_first:
        first = solve_ilp(table, palim=palim, time_limit=None if time_limit is None else time_limit / 2,
                          **ilp_options)
        if first.status == "optimal" and _width_at_most(first.dag, k):
            res, via_relaxation = first, True
            logger.info("the unbounded optimum has treewidth <= %d: it is the bounded optimum", k)
        elif time_limit is not None:
            time_limit = max(time_limit - sum(first.times.values()), time_limit / 4)
    if res is None:
        res = solve_ilp(table, palim=palim, sinks_freq=-1, warm_start=False, time_limit=time_limit,
                        extend=_extension(k, warm_start, sinks_freq), **ilp_options)
    width = dag_treewidth(res.dag).width
    if width > k:  # pragma: no cover - guarded by the treewidth rows
        raise ILPSolveError(f"the learned DAG has treewidth {width} > k={k}")
    res.stats["treewidth"] = width
    res.stats["relaxation_optimal"] = via_relaxation
    return res
