"""Tree decomposition of the moral graph by the cops-and-robbers game (Algorithm 1).

Talvitie & Parviainen, "Learning Bayesian Networks with Cops and Robbers", section 3.1,
Algorithm 1 (PRESOLVE, SOLVE, EXTRACTCOMPONENT), with the iteration orders of the authors'
implementation (``docs/references.md``, "Components first" and "Algorithm 1"): components
from marginal tests, then for each component a fresh solver per width bound k = 1, 2, ... until
k + 1 cops win, and the tree decomposition replayed from the memo tables of the winning solver.

Node sets are bit sets (``graphs.bitsets``).  The independence oracle is a
:class:`constraints.cops.oracle.CountingOracle` shared by the whole run.  The semi-invariant
R' <- R' & R of section 4.2 is always applied; with an exact oracle it never changes R'.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

from graphs.bitsets import bits, lowest
from constraints.cops.oracle import CountingOracle
from hybridbn.errors import HybridBNError

logger = logging.getLogger(__name__)


class WidthLimitExceeded(HybridBNError):
    """Raised when a component needs more than ``max_k + 1`` cops."""

    def __init__(self, max_k: int, component: int) -> None:
        super().__init__(f"treewidth of a component exceeds max_k={max_k}")
        self.max_k = max_k
        self.component = component


@dataclass
class ComponentSearch:
    """Progress of the width search: the components found and the width of each solved one."""

    components: list[int] = field(default_factory=list)
    widths: list[int] = field(default_factory=list)
    current_k: int | None = None


def find_components(oracle: CountingOracle, n_vars: int) -> list[int]:
    """Connected components of the moral graph from marginal tests (conventions, step 0).

    Components are merged as soon as a dependence to one of their members is found; the list
    order (with swap-with-last merging) follows the reference implementation.
    """
    comps: list[int] = []
    for v in range(n_vars):
        found = None
        i = 0
        while i < len(comps):
            if not oracle.all_independent(v, comps[i], 0):
                if found is None:
                    comps[i] |= 1 << v
                    found = i
                    i += 1
                else:
                    comps[i], comps[-1] = comps[-1], comps[i]
                    comps[found] |= comps.pop()
            else:
                i += 1
        if found is None:
            comps.append(1 << v)
    return comps


class DecompositionReplay:
    """The tree decomposition of a won search, replayed through the solver's memo tables.

    Needs ``verts`` (the component), ``_split(C, R)`` (R' and the pruned cops C') and
    ``presolve(C, R)`` (memoised values after a successful ``run()``).
    """

    def _start(self) -> tuple[int, int]:
        """Initial position: one cop on min(verts), the robber anywhere else."""
        v0 = 1 << lowest(self.verts)
        return v0, self.verts & ~v0

    def decomposition(self, bags: list[int], edges: list[tuple[int, int]], parent: int | None) -> None:
        """Append the tree of the winning recursion of :meth:`run` (after it returned True).

        Replays the memo tables (every query is a cache hit): each PRESOLVE(C, R) node gets bag C;
        child 1 is the first winning advancement, child 2 the node for (C, R \\ R').  Nodes are
        appended in pre-order; the root is linked to ``parent`` if given.
        """
        self._append(*self._start(), bags, edges, parent)

    def _append(self, cops: int, robbers: int, bags: list[int], edges: list[tuple[int, int]],
                parent: int | None) -> None:
        while True:
            node = len(bags)
            bags.append(cops)
            if parent is not None:
                edges.append((parent, node))
            if not robbers:
                return
            comp, new_cops = self._split(cops, robbers)
            for a in bits(comp):
                bit = 1 << a
                if self.presolve(new_cops | bit, comp & ~bit):
                    self._append(new_cops | bit, comp & ~bit, bags, edges, node)
                    break
            else:  # pragma: no cover - only reachable if called on a losing position
                raise RuntimeError("decomposition() replayed a losing position")
            robbers &= ~comp
            if not robbers:
                return
            parent = node


class CopsSolver(DecompositionReplay):
    """Algorithm 1 for one component ``verts`` and width bound ``k`` (k + 1 cops).

    ``presolve``/``extract_component`` are memoised per solver (so per k); the oracle's cache is
    shared across solvers.
    """

    def __init__(self, oracle: CountingOracle, verts: int, k: int) -> None:
        if k < 1:
            raise ValueError(f"the width bound k must be >= 1, got {k}")
        self.oracle = oracle
        self.verts = verts
        self.k = k
        self._presolve_memo: dict[tuple[int, int], bool] = {}
        self._extract_memo: dict[tuple[int, int], int] = {}

    def run(self) -> bool:
        """True iff k + 1 cops win from the initial position (PRESOLVE({v0}, verts \\ {v0}))."""
        return self.presolve(*self._start())

    def extract_component(self, cops: int, r0: int) -> int:
        """EXTRACTCOMPONENT(C, r0): the robber component containing ``r0`` (Lemma 3).

        The queue is a set that pops its minimum; each scan tests the non-cop, not-yet-robber
        vertices of the component (taken once, before the scan), conditioning on the full cop
        set: one :meth:`CountingOracle.dependents` batch per popped robber.
        """
        key = (cops, r0)
        hit = self._extract_memo.get(key)
        if hit is not None:
            return hit
        dependents = self.oracle.dependents
        free = self.verts & ~cops
        robbers = queue = 1 << r0
        while queue:
            low = queue & -queue
            queue ^= low
            found = dependents(low.bit_length() - 1, free & ~robbers, cops)
            robbers |= found
            queue |= found
        self._extract_memo[key] = robbers
        return robbers

    def prune_cops(self, cops: int, robbers: int) -> int:
        """Drop the cops not adjacent to ``robbers`` (Lemma 2), sequentially in index order."""
        all_independent = self.oracle.all_independent
        new = cops
        for c in bits(cops):
            rest = new & ~(1 << c)
            if all_independent(c, robbers, rest):  # stops at the first robber adjacent to c
                new = rest
        return new

    def _split(self, cops: int, robbers: int) -> tuple[int, int]:
        """First robber component R' (intersected with R) and the pruned cop set C'."""
        comp = self.extract_component(cops, lowest(robbers)) & robbers
        return comp, self.prune_cops(cops, comp)

    def presolve(self, cops: int, robbers: int) -> bool:
        """PRESOLVE(C, R): do the cops C win against a robber anywhere in R?

        The final recursive call PRESOLVE(C, R \\ R') is run as a loop; every (C, R) of the
        chain is memoised with the value the recursion would give it.
        """
        memo = self._presolve_memo
        pending = []
        result = True
        while robbers:
            key = (cops, robbers)
            hit = memo.get(key)
            if hit is not None:
                result = hit
                break
            pending.append(key)
            comp, new_cops = self._split(cops, robbers)
            if new_cops.bit_count() == self.k + 1 or not self.solve(new_cops, comp):
                result = False
                break
            robbers &= ~comp
        for key in pending:
            memo[key] = result
        return result

    def solve(self, cops: int, robbers: int) -> bool:
        """SOLVE(C, R): is there a winning advancement of one cop into R?"""
        for a in bits(robbers):
            bit = 1 << a
            if self.presolve(cops | bit, robbers & ~bit):
                return True
        return False


@contextmanager
def _recursion_room(n_vars: int):
    """Temporarily raise the recursion limit: PRESOLVE/SOLVE nest up to ~2n frames deep."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * n_vars + 1000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def learn_decomposition(
    oracle: CountingOracle,
    n_vars: int,
    max_k: int | None,
    progress: ComponentSearch,
    solver_factory=CopsSolver,
) -> tuple[list[int], list[tuple[int, int]]]:
    """Tree decomposition (bags as bit sets, tree edges) of the moral graph, in pre-order.

    Fills ``progress`` as it goes so that a caller catching a timeout can report what was found.
    Components are solved for k = 1, 2, ... (a fresh solver each time); a single-vertex
    component is one bag of width 0.  The per-component trees are joined into one tree by
    linking each component's root to the first root.  ``solver_factory(oracle, verts, k)`` makes
    the solvers (``constraints.cops.engine.EngineSolver`` for the compiled exact oracle).
    """
    bags: list[int] = []
    edges: list[tuple[int, int]] = []
    progress.components = find_components(oracle, n_vars)
    logger.debug("%d components", len(progress.components))
    with _recursion_room(n_vars):
        for comp in progress.components:
            root = len(bags)
            link = 0 if root else None
            if comp.bit_count() == 1:
                bags.append(comp)
                if link is not None:
                    edges.append((link, root))
                progress.widths.append(0)
                continue
            k = 1
            while True:
                if max_k is not None and k > max_k:
                    raise WidthLimitExceeded(max_k, comp)
                progress.current_k = k
                solver = solver_factory(oracle, comp, k)
                if solver.run():
                    break
                logger.info("component of %d nodes: %d cops lose", comp.bit_count(), k + 1)
                k += 1
            progress.widths.append(k)
            solver.decomposition(bags, edges, link)
    progress.current_k = None
    return bags, edges
