"""S2 and S2+: treewidth-bounded learning by sampling k-trees, the baselines of Scanagatta, Corani,
de Campos & Zaffalon (NIPS 2016, section 3.4) after Nie, de Campos & Ji (ECSQARU 2015: S2; AAAI 2016:
S2+).

Both repeat two phases under a time limit and keep the best DAG: propose a k-tree, then learn a DAG
whose moral graph lies in it, i.e. whose every family (child and parents) is a clique of the k-tree
(a set of at most ``k + 1`` vertices is a clique of a k-tree iff it is pairwise adjacent there).

- **S2** proposes uniformly random labelled k-trees (:mod:`graphs.ktree_sampling`, a Prüfer-type
  code of the characteristic tree where Nie et al. use the Dandelion code of Caminiti et al.; both
  are bijections, so the distribution is the same) and accepts one with probability
  ``min(1, IS(T) / IS(T*))``, ``T*`` the proposal of largest informative score so far (section 3.4).
- **S2+** builds k-trees guided by the informative score: the first from the ``k + 1`` variables of
  largest pairwise information (the densest clique grown greedily from the best pair), the others
  from a random ``(k + 1)``-subset; from the initial clique each step joins the outside variable and
  k-clique of largest summed pairwise information (Prim-like; exact over all k-cliques created so
  far). Nie et al. (2016) find the k-tree of largest I-score from the clique by A*; this greedy
  growth maximises the I-score's numerator only and is not optimal for the I-score.

Informative score (section 3.4): ``IS(T) = S_mi(T) / |S_l(T)|`` with ``S_mi(T)`` the pairwise
information on the edges of ``T`` and ``S_l(T)`` the sum over children of their best family inside
``T`` (acyclicity dropped). Departure: the learners see only the score table, not the data, so the
mutual information ``I_ij`` is replaced by the table's single-parent gain
``max(s(j | {i}) - s(j | {}), s(i | {j}) - s(i | {}), 0)`` (for BIC, ``N I_ij`` less the pair's
penalty; missing families count 0).

DAG phase: the paper's implementation solves it exactly (GOBNILP); here ``inner="dp"`` solves it
exactly by the dynamic programme of :mod:`ilp.exact_dp` on the families inside the k-tree
(small tables only), and ``inner="orders"`` (the default above :data:`EXACT_INNER_LIMIT` variables)
takes the proposal's construction order and gives each variable its best family inside the k-tree
with parents before it (hence within its attachment k-clique), in the spirit of the order sampling
of Nie, Mauá, de Campos & Ji (2014, Algorithm 2). Candidate parent sets are those of at most ``k``
parents, as for k-G.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from graphs.ktree_sampling import sample_k_tree_construction
from hybridbn.interrupt import stop_requested
from hybridbn.progress import REPORT_INTERVAL, Callback, Throttle, check_callback, progress_record
from ilp.exact_dp import ExactDPError, exact_optimum
from scores.table import ScoreTable
from search.ktree_search import (BoundedResult, BoundedSearchError, CandidateLists, OrderSolution, check_k,
                                 check_limits, finish)

EXACT_INNER_LIMIT = 12
"""``inner="auto"`` learns the DAG of each k-tree exactly (``"dp"``) up to this many variables."""
INNER = ("auto", "dp", "orders")

Construction = tuple[list[int], list[tuple[int, ...]]]
"""A k-tree as built: the order (its first ``k + 1`` a clique) and the k-clique each later vertex joins."""


# ------------------------------------------------------------------------------ candidates and weights
@dataclass(frozen=True)
class FlatCandidates:
    """All children's candidate parent sets (at most ``k`` parents) in one array: row ``r`` is child
    ``child[r]`` with ``parents[r]`` (padded with ``n``) and ``score[r]``; a child's rows are
    ``start[v] .. start[v + 1] - 1``, by decreasing score (:class:`search.ktree_search.CandidateLists`)."""

    n: int
    child: np.ndarray
    parents: np.ndarray
    score: np.ndarray
    start: np.ndarray
    lists: CandidateLists

    @classmethod
    def from_table(cls, table: ScoreTable, k: int) -> "FlatCandidates":
        lists = CandidateLists.from_table(table, k)
        lengths = np.array([len(s) for s in lists.scores], dtype=np.int64)
        start = np.concatenate(([0], np.cumsum(lengths)))
        return cls(table.n_vars, np.repeat(np.arange(table.n_vars), lengths), np.concatenate(lists.parents),
                   np.concatenate(lists.scores), start, lists)

    def best_rows(self, mask: np.ndarray) -> np.ndarray | None:
        """Per child the first (best) row where ``mask`` holds, or ``None`` if some child has none."""
        hits = np.flatnonzero(mask)
        first = np.searchsorted(hits, self.start[:-1])
        if (first >= hits.size).any():
            return None
        rows = hits[first]
        return rows if (rows < self.start[1:]).all() else None

    def parent_set(self, row: int) -> tuple[int, ...]:
        v = int(self.child[row])
        return self.lists.sets[v][row - int(self.start[v])]


def pair_weights(table: ScoreTable) -> dict[int, dict[int, float]]:
    """The informative score's pairwise information (module docstring): ``w[i][j] = w[j][i] > 0``,
    the larger single-parent gain of the pair; pairs without a positive gain are absent."""
    n = table.n_vars
    sizes = table.sizes
    empty = np.full(n, np.nan)
    rows0 = np.flatnonzero(sizes == 0)
    empty[table.child[rows0]] = table.score[rows0]
    rows1 = np.flatnonzero(sizes == 1)
    child, parent = table.child[rows1].astype(np.int64), table.parents[table.parent_ptr[rows1]].astype(np.int64)
    gain = table.score[rows1] - empty[child]
    keep = gain > 0  # NaN (no empty set) compares False
    w: dict[int, dict[int, float]] = {v: {} for v in range(n)}
    for c, p, g in zip(child[keep].tolist(), parent[keep].tolist(), gain[keep].tolist()):
        if g > w[c].get(p, 0.0):
            w[c][p] = w[p][c] = g
    return w


# ------------------------------------------------------------------------------ the k-tree as a mask
class KTreeMask:
    """The adjacency of one proposed k-tree in a reused ``(n+1, n+1)`` boolean buffer: ``True`` on the
    diagonal and on the sentinel row and column ``n`` (the padding of the candidate arrays)."""

    def __init__(self, n: int):
        self.adj = np.zeros((n + 1, n + 1), dtype=bool)
        self.adj[n, :] = self.adj[:, n] = True
        np.fill_diagonal(self.adj, True)
        self.edges = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))

    def load(self, k: int, construction: Construction) -> None:
        """Replace the current k-tree by that of ``construction``."""
        self.adj[self.edges] = self.adj[self.edges[::-1]] = False
        order, attachments = construction
        root = order[: k + 1]
        a = [root[i] for i in range(k + 1) for _ in range(i + 1, k + 1)]
        b = [root[j] for i in range(k + 1) for j in range(i + 1, k + 1)]
        a += [v for v in order[k + 1:] for _ in range(k)]
        b += [u for clique in attachments for u in clique]
        self.edges = (np.array(a, dtype=np.int64), np.array(b, dtype=np.int64))
        self.adj[self.edges] = self.adj[self.edges[::-1]] = True

    def fitting(self, cand: FlatCandidates) -> np.ndarray:
        """Mask over the candidates: the family (child and parents) is a clique of the k-tree."""
        P = cand.parents
        ok = np.ones(P.shape[0], dtype=bool)
        for i in range(P.shape[1]):
            ok &= self.adj[cand.child, P[:, i]]
            for j in range(i + 1, P.shape[1]):
                ok &= self.adj[P[:, i], P[:, j]]
        return ok

    def information(self, w: dict[int, dict[int, float]]) -> float:
        """``S_mi``: the pairwise information summed over the k-tree's edges."""
        return float(sum(w[a].get(b, 0.0) for a, b in zip(*(e.tolist() for e in self.edges))))


# ------------------------------------------------------------------------------ k-tree proposals
def densest_clique(n: int, k: int, w: dict[int, dict[int, float]]) -> list[int]:
    """``k + 1`` variables of large pairwise information: the best pair, then greedily the variable of
    largest summed information to those chosen (ties and the empty case by smallest index)."""
    best = max(((g, -a, -b) for a in range(n) for b, g in w[a].items() if a < b), default=None)
    chosen = [0, 1] if best is None else [-best[1], -best[2]]
    gain = np.zeros(n)
    for u in chosen:
        for x, g in w[u].items():
            gain[x] += g
    while len(chosen) < k + 1:
        gain[chosen] = -np.inf
        x = int(gain.argmax())
        chosen.append(x)
        for y, g in w[x].items():
            gain[y] += g
    return chosen


def guided_k_tree(n: int, k: int, w: dict[int, dict[int, float]], first: list[int],
                  rng: np.random.Generator) -> Construction:
    """S2+'s k-tree from the ``(k + 1)``-clique ``first``: repeatedly join the outside variable and
    k-clique of largest summed information (``w``); variables with none left join a random k-clique.

    A clique created when ``v`` is joined differs from its parent clique by ``v`` in place of some
    ``u``, so only variables with information to ``v`` can gain from it: re-scoring those keeps each
    variable's best over every k-clique so far exact."""
    inside = np.zeros(n, dtype=bool)
    inside[first] = True
    k_cliques = [tuple(sorted(x for x in first if x != u)) for u in first]
    best = np.zeros(n)
    best_clique: list[tuple[int, ...] | None] = [None] * n
    heap: list[tuple[float, int]] = []

    def offer(cliques, near) -> None:
        for x in near:
            if inside[x]:
                continue
            wx = w[x]
            for c in cliques:
                g = sum(wx.get(y, 0.0) for y in c)
                if g > best[x]:
                    best[x], best_clique[x] = g, c
                    heapq.heappush(heap, (-g, x))

    offer(k_cliques, {x for u in first for x in w[u]})
    order, attachments = list(first), []
    outside = [int(x) for x in rng.permutation(n) if not inside[x]]
    while len(order) < n:
        v = None
        while heap:
            g, x = heapq.heappop(heap)
            if not inside[x] and -g == best[x]:
                v, clique = x, best_clique[x]
                break
        if v is None:
            while inside[outside[-1]]:
                outside.pop()
            v, clique = outside.pop(), k_cliques[int(rng.integers(len(k_cliques)))]
        inside[v] = True
        order.append(v)
        attachments.append(clique)
        new = [tuple(sorted((v, *(x for x in clique if x != u)))) for u in clique]
        k_cliques.extend(new)
        offer(new, w[v])
    return order, attachments


# ------------------------------------------------------------------------------ the anytime loop
@dataclass
class Proposal:
    """One accepted k-tree's DAG: its score, parent sets and the k-tree's construction."""

    score: float
    parent_sets: list[tuple[int, ...]]
    construction: Construction


def learn_within(cand: FlatCandidates, fits: np.ndarray, construction: Construction, exact: bool
                 ) -> tuple[float, Callable[[], list[tuple[int, ...]]]] | None:
    """The DAG phase (module docstring), exactly (``exact``) or along the construction order: its
    score and a function giving its parent sets (built only for an improvement), or ``None``."""
    if exact:
        sizes = (cand.parents[fits] < cand.n).sum(axis=1)
        members = cand.parents[fits]
        sub = ScoreTable.from_columns(cand.n, cand.child[fits], np.concatenate(([0], np.cumsum(sizes))),
                                      members[members < cand.n], cand.score[fits])
        try:
            score, sets = exact_optimum(sub)
        except ExactDPError:
            return None
        return float(score), lambda: [tuple(int(p) for p in ps) for ps in sets]
    pos = np.full(cand.n + 1, -1, dtype=np.int64)
    pos[construction[0]] = np.arange(cand.n)
    rows = cand.best_rows(fits & (pos[cand.parents] < pos[cand.child][:, None]).all(axis=1))
    if rows is None:
        return None
    return float(cand.score[rows].sum()), lambda: [cand.parent_set(r) for r in rows.tolist()]


def sampling_search(table: ScoreTable, k: int, propose: Callable[[int, np.random.Generator], Construction],
                    *, informed_acceptance: bool, time_limit: float | None, max_samples: int | None, seed: int,
                    inner: str, progress: Callback | None, name: str) -> BoundedResult:
    """Propose k-trees (``propose(sample_index, rng)``) until the time limit, ``max_samples`` or a
    stop request (one is always tried), learn a DAG inside each accepted one and keep the best.
    ``informed_acceptance``: S2's acceptance by the informative score; otherwise every k-tree is kept."""
    check_k(table, k)
    check_limits(time_limit, None)
    if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(max_samples, (int, np.integer))
                                    or max_samples < 1):
        raise BoundedSearchError(f"max_samples must be a positive integer, got {max_samples!r}")
    if time_limit is None and max_samples is None:
        raise BoundedSearchError(f"{name} samples k-trees without end: give time_limit or max_samples")
    if inner not in INNER:
        raise BoundedSearchError(f"inner must be one of {INNER}, got {inner!r}")
    exact = inner == "dp" or (inner == "auto" and table.n_vars <= EXACT_INNER_LIMIT)
    progress = check_callback(progress)
    start = time.perf_counter()
    deadline = start + time_limit if time_limit is not None else math.inf
    rng = np.random.default_rng(seed)
    cand = FlatCandidates.from_table(table, k)
    w = pair_weights(table) if informed_acceptance else None
    mask = KTreeMask(table.n_vars)
    best: Proposal | None = None
    best_is = 0.0
    counters = {"samples": 0, "accepted": 0, "infeasible": 0}
    history: list[tuple[float, int, float]] = []
    throttle = Throttle(REPORT_INTERVAL, time.perf_counter)

    def record(**extra):
        return progress_record("solve", name, time.perf_counter() - start, limit=time_limit,
                               primal=None if best is None else best.score, ktrees=counters["samples"],
                               accepted=counters["accepted"], **extra)

    while True:
        if max_samples is not None and counters["samples"] >= max_samples:
            status = "max_samples"
            break
        if counters["samples"] and not (time.perf_counter() < deadline and stop_requested() is None):
            status = "time_limit" if stop_requested() is None else "userinterrupt"
            break
        construction = propose(counters["samples"], rng)
        counters["samples"] += 1
        mask.load(k, construction)
        fits = mask.fitting(cand)
        rows = cand.best_rows(fits)  # each child's best family inside the k-tree, acyclicity dropped
        if rows is None:  # some child (e.g. with a required parent) has no family inside it
            counters["infeasible"] += 1
            continue
        if informed_acceptance:
            score_l = abs(float(cand.score[rows].sum()))
            i_score = mask.information(w) / score_l if score_l > 0 else math.inf
            ratio = 1.0 if best_is <= 0 or i_score >= best_is else i_score / best_is
            best_is = max(best_is, i_score)
            if rng.random() >= ratio:
                continue
        counters["accepted"] += 1
        learned = learn_within(cand, fits, construction, exact)
        if learned is None:
            counters["infeasible"] += 1
            continue
        if best is None or learned[0] > best.score + 1e-9 * abs(best.score):
            best = Proposal(learned[0], learned[1](), construction)
            history.append((time.perf_counter() - start, counters["samples"], learned[0]))
        if progress is not None and throttle.ready():
            progress(record())
    if progress is not None:
        progress(record(status=status))
    if best is None:
        raise BoundedSearchError(f"{name}: no DAG found in the {counters['samples']} k-trees sampled "
                                 "(some child lacks a parent set inside them)")
    order, attachments = best.construction
    stats = {"history": history, "inner": "dp" if exact else "orders", **counters}
    return finish(table, k, OrderSolution(best.score, best.parent_sets, attachments), tuple(order),
                  counters["samples"], time.perf_counter() - start, status, stats)


def s2(table: ScoreTable, k: int, *, time_limit: float | None = None, max_samples: int | None = None,
       seed: int = 0, inner: str = "auto", progress: Callback | None = None) -> BoundedResult:
    """S2 (Nie, de Campos & Ji 2015, as Scanagatta et al. 2016 section 3.4 run it; module docstring):
    uniform k-trees accepted by their informative score, the best DAG inside each accepted one.

    Returns a :class:`search.ktree_search.BoundedResult` whose ``n_orders`` counts the k-trees sampled
    and whose ``stats`` hold ``samples``, ``accepted``, ``infeasible`` and the ``history`` of
    improvements; ``status`` is ``"time_limit"``, ``"max_samples"`` or ``"userinterrupt"``. Raises
    :class:`search.ktree_search.BoundedSearchError` on bad input or when no DAG was found."""
    n = table.n_vars
    return sampling_search(table, k, lambda _, rng: sample_k_tree_construction(n, k, rng),
                           informed_acceptance=True, time_limit=time_limit, max_samples=max_samples, seed=seed,
                           inner=inner, progress=progress, name="S2")


def s2_plus(table: ScoreTable, k: int, *, time_limit: float | None = None, max_samples: int | None = None,
            seed: int = 0, inner: str = "auto", progress: Callback | None = None) -> BoundedResult:
    """S2+ (Nie, de Campos & Ji 2016, as Scanagatta et al. 2016 section 3.4 run it; module docstring):
    k-trees grown greedily by pairwise information, the first from the densest clique, the others from
    random cliques; the best DAG inside each. Results and errors as :func:`s2`."""
    check_k(table, k)
    n = table.n_vars
    w = pair_weights(table)

    def propose(index: int, rng: np.random.Generator) -> Construction:
        first = densest_clique(n, k, w) if index == 0 else rng.choice(n, size=k + 1, replace=False).tolist()
        return guided_k_tree(n, k, w, [int(v) for v in first], rng)

    return sampling_search(table, k, propose, informed_acceptance=False, time_limit=time_limit,
                           max_samples=max_samples, seed=seed, inner=inner, progress=progress, name="S2+")
