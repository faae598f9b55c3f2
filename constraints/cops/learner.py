"""Cops-and-robbers constraint-based structure learner (Talvitie & Parviainen).

Public entry points:

* :func:`cops_and_robbers` - learn a tree decomposition of the moral graph (section 3.1,
  Algorithm 1) and then the CPDAG (section 3.2) from an independence oracle
  ``indep(x, y, S) -> bool`` (True = independent, ``S`` a sorted tuple) or a bit-set oracle
  (``graphs.dsep.DSeparation(dag)`` for the exact one).
* :func:`independence_oracle` - such an oracle from a ``constraints.citests`` test and alpha.
* :func:`learn_cops` - the learner on data with a statistical test (section 4.2).

Test counts follow the reference conventions (``docs/references.md``, cops-and-robbers test
counting): one memoised oracle for the whole run, distinct queries counted per conditioning-set
size.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from graphs.bitsets import bits, to_mask, to_tuple
from constraints.citests import CITest
from constraints.cops.data_oracle import DataIndependence
from constraints.cops.engine import EngineSolver
from constraints.cops.exact_oracle import MAX_PASSES, ExactCountingOracle
from constraints.cops.node_words import MAX_ENGINE_VARS
from constraints.cops.oracle import BitsetIndependence, CountingOracle, IndepFn, OracleTimeout
from constraints.cops.postprocess import (
    adjacency_matrix,
    bag_supergraph,
    maximal_bags,
    orient_v_structures_dropping_conflicts,
    prune_skeleton,
)
from constraints.cops.solver import ComponentSearch, CopsSolver, WidthLimitExceeded, learn_decomposition
from constraints.restriction import PairLog, Restriction
from graphs.dsep import DSeparation
from graphs.pdag import meek_closure
from graphs.treedec import TreeDecomposition
from hybridbn.checks import check_significance
from hybridbn.deadline import Deadline
from hybridbn.errors import HybridBNError
from hybridbn.solving import check_time_limit

logger = logging.getLogger(__name__)

#: Largest number of variables accepted.  Python ints hold any node set, but memo keys and set
#: operations grow with n and the O(n^(k+4)) search is hopeless long before this.
MAX_VARS = 1024


class CopsInputError(HybridBNError, ValueError):
    """Bad arguments to the cops-and-robbers learner."""


@dataclass
class CopsResult:
    """Outcome of one run.

    ``status`` is ``"ok"``, ``"timeout"`` (the time limit passed in ``phase``; the fields hold what
    had been found: counts, components, the widths of solved components, ``k_lower_bound``, and
    ``k`` and the decompositions if phase 1 had finished) or ``"width_limit"`` (a component needs
    more than ``max_k + 1`` cops).  ``k`` is the treewidth found (largest component width);
    ``tests_by_order[s]`` counts distinct tests with ``|S| = s``.
    ``separating_sets`` maps each deleted pair ``(a, b)``, ``a < b``, to its separator.
    ``raw_decomposition`` is the winning recursion tree (one bag per PRESOLVE node, pre-order);
    ``tree_decomposition`` is the same tree with nested neighbouring bags merged.
    ``counting_passes`` is the number of times the compiled engine ran the search to count
    within its memory budget (1 otherwise).
    """

    status: str
    n_vars: int
    k: int | None
    k_lower_bound: int
    component_widths: list[int]
    components: list[tuple[int, ...]]
    tests_by_order: list[int]
    n_distinct_tests: int
    elapsed: float
    phase: str
    cpdag: np.ndarray | None = None
    skeleton: np.ndarray | None = None
    tree_decomposition: TreeDecomposition | None = None
    raw_decomposition: TreeDecomposition | None = None
    separating_sets: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)
    counting_passes: int = 1


def independence_oracle(test: Callable, alpha: float = 0.05) -> IndepFn:
    """``indep(x, y, S)``: True iff ``test(x, y, S).p_value > alpha``.

    ``test`` follows the ``constraints.citests`` interface (``CITest`` or ``DSeparationOracle``).
    """
    check_significance(alpha, CopsInputError)

    def indep(x: int, y: int, cond: tuple[int, ...]) -> bool:
        return test(x, y, cond).p_value > alpha

    return indep


def cops_and_robbers(
    indep: IndepFn | BitsetIndependence,
    n_vars: int,
    *,
    max_k: int | None = None,
    time_limit: float | None = None,
    check_every: int = 1000,
    memory_budget: int | None = None,
    passes: int = 1,
    deadline: Deadline | None = None,
) -> CopsResult:
    """Learn a CPDAG with the cops-and-robbers algorithm (Talvitie & Parviainen, Alg. 1, s. 3.2).

    Phase 1 finds, per connected component, the least k (1, 2, ...) for which k + 1 cops win
    and keeps the tree decomposition of the winning recursion; phase 2 prunes the edges of the
    bag supergraph with tests on bag subsets, orients v-structures from the separators and
    applies the Meek rules (``graphs.pdag.meek_closure``).  ``time_limit`` (seconds) is checked
    every ``check_every`` oracle calls; a run past it returns ``status="timeout"``.  So is
    ``deadline`` (a :class:`hybridbn.deadline.Deadline`), at the same checks: a caller's deadline
    that marks its safe points (:mod:`pipeline.core.stopping`) ends the run there with its own
    exception.

    ``indep`` is ``indep(x, y, S) -> bool`` (True = independent, ``S`` a sorted tuple) or a
    :class:`constraints.cops.oracle.BitsetIndependence` such as ``graphs.dsep.DSeparation(dag)``
    (the exact oracle; much faster, as whole EXTRACTCOMPONENT scans are answered at once).  Both
    give the same queries, counts and results.  A ``DSeparation`` over at most
    ``constraints.cops.node_words.MAX_ENGINE_VARS`` nodes runs on the compiled engine (same queries, counts and
    results again; the clock is checked between batches of steps instead of every
    ``check_every`` calls), whose tables take about ``memory_budget`` bytes (default: 60 % of the
    memory available); a run that needs more counts in several passes (``counting_passes``),
    starting from ``passes`` (a power of two); a pass that fills the budget hands half of its
    conditioning sets on to a later pass.
    """
    if isinstance(n_vars, bool) or not isinstance(n_vars, (int, np.integer)) or n_vars < 1:
        raise CopsInputError(f"n_vars must be a positive int, got {n_vars!r}")
    if n_vars > MAX_VARS:
        raise CopsInputError(
            f"{n_vars} variables exceed the bit-set limit MAX_VARS={MAX_VARS} of the cops learner")
    if max_k is not None and max_k < 1:
        raise CopsInputError(f"max_k must be >= 1 (the search starts at k = 1), got {max_k}")
    time_limit = check_time_limit(time_limit, CopsInputError)
    if memory_budget is not None and (isinstance(memory_budget, bool) or not isinstance(
            memory_budget, (int, float, np.integer, np.floating)) or not 0 < memory_budget < np.inf):
        raise CopsInputError(f"memory_budget must be a positive number of bytes, got {memory_budget!r}")
    if not (isinstance(passes, int) and 1 <= passes <= MAX_PASSES and passes & (passes - 1) == 0):
        raise CopsInputError(f"passes must be a power of two from 1 to {MAX_PASSES}, got {passes!r}")
    n_vars = int(n_vars)
    if isinstance(indep, BitsetIndependence) and getattr(indep, "n", n_vars) != n_vars:
        raise CopsInputError(f"the oracle is over {indep.n} nodes, not n_vars={n_vars}")
    start = time.monotonic()
    limit_at = None if time_limit is None else start + time_limit
    if isinstance(indep, DSeparation) and n_vars <= MAX_ENGINE_VARS:
        return _exact_run(indep, max_k, limit_at, deadline, memory_budget, passes, start)
    oracle = CountingOracle(indep, time_limit=time_limit, check_every=check_every, n_vars=n_vars, deadline=deadline)
    return _run(oracle, CopsSolver, n_vars, max_k, start)


def _run(oracle, solver_factory, n_vars: int, max_k: int | None, start: float) -> CopsResult:
    """Phase 1 (decomposition) and phase 2 (skeleton, CPDAG) on one counting oracle."""
    progress = ComponentSearch()
    phase = "decomposition"
    found: dict = {}
    try:
        bags, edges = learn_decomposition(oracle, n_vars, max_k, progress, solver_factory)
        raw = TreeDecomposition(tuple(frozenset(bits(b)) for b in bags), tuple(edges))
        found.update(tree_decomposition=contract_decomposition(raw), raw_decomposition=raw)
        phase = "skeleton"
        adj, seps = prune_skeleton(oracle, maximal_bags(bags), n_vars)
    except (OracleTimeout, WidthLimitExceeded) as stop:
        status = "timeout" if isinstance(stop, OracleTimeout) else "width_limit"
        logger.info("cops-and-robbers stopped in phase %s: %s", phase, stop)
        return _result(status, n_vars, oracle, progress, start, phase, **found)
    return _result(
        "ok", n_vars, oracle, progress, start, "done",
        cpdag=meek_closure(orient_v_structures_dropping_conflicts(adj, seps)),
        skeleton=adjacency_matrix(adj),
        separating_sets={(a, b): to_tuple(cond) for a, b, cond in seps},
        **found,
    )


def _exact_run(ds: DSeparation, max_k: int | None, limit_at: float | None, deadline: Deadline | None,
               memory_budget: int | None, passes: int, start: float) -> CopsResult:
    """The run on the compiled engine (``constraints.cops.engine``), counting in passes if needed.

    The search does not depend on the counts.  Pass ``p`` of ``passes`` counts the conditioning
    sets whose hash is ``p`` mod ``passes``; a pass whose bitmaps outgrow ``memory_budget`` keeps
    half of its share and queues the other half for a later pass, which repeats the search.
    The result is that of the first pass with the counts of all of them.  A pass stopped by the
    time limit leaves lower bounds and ``status="timeout"``.
    """
    shares = [(part, passes) for part in range(passes)]
    result, counts, done = None, None, 0
    while shares:
        part, n_parts = shares.pop(0)
        if done:
            logger.info("counting pass %d of %d (sets %d mod %d)", done + 1, done + 1 + len(shares),
                        part, n_parts)
        oracle = ExactCountingOracle(ds, part=part, n_parts=n_parts, memory_budget=memory_budget,
                                     limit_at=limit_at, deadline=deadline)
        run = _run(oracle, EngineSolver, ds.n, max_k, start)
        done += 1
        shares += oracle.later_passes
        if result is None:
            result, counts = run, oracle.counts.copy()
        else:
            counts += oracle.counts
        del oracle  # its bitmaps go before the next pass allocates its own
        if run.status == "timeout":
            if run is not result:
                result.status, result.phase = run.status, f"counting pass {done} of {done + len(shares)}"
            break
    result.counting_passes = done
    result.tests_by_order = np.trim_zeros(counts, "b").tolist()
    result.n_distinct_tests = int(counts.sum())
    result.elapsed = time.monotonic() - start
    return result


def _result(status, n_vars, oracle, progress, start, phase, **found) -> CopsResult:
    widths = list(progress.widths)
    bounds = widths + ([progress.current_k] if progress.current_k is not None else [])
    return CopsResult(
        status=status,
        n_vars=n_vars,
        k=max(widths) if widths and len(widths) == len(progress.components) else None,
        k_lower_bound=max(bounds, default=0),
        component_widths=widths,
        components=[to_tuple(c) for c in progress.components],
        tests_by_order=oracle.tests_by_order,
        n_distinct_tests=oracle.n_distinct,
        elapsed=time.monotonic() - start,
        phase=phase,
        **found,
    )


def contract_decomposition(td: TreeDecomposition) -> TreeDecomposition:
    """Merge tree nodes into a neighbour whose bag contains theirs (keeps a valid decomposition).

    Expects ``graphs.treedec.TreeDecomposition`` edges ``(parent, child)`` with ``parent < child``
    (pre-order), as :func:`cops_and_robbers` produces; nodes are visited bottom-up.
    """
    m = len(td.bags)
    bags = [frozenset(b) for b in td.bags]
    parent = [-1] * m
    for p, c in td.edges:
        if not p < c:
            raise CopsInputError(f"tree edge {(p, c)} is not (parent, child) in pre-order")
        parent[c] = p
    rep = list(range(m))
    for c in range(m - 1, 0, -1):
        p = parent[c]
        if p < 0:
            continue
        if bags[c] <= bags[p] or bags[p] <= bags[c]:
            bags[p] |= bags[c]
            rep[c] = p

    def find(v: int) -> int:
        while rep[v] != v:
            rep[v] = rep[rep[v]]
            v = rep[v]
        return v

    kept = [v for v in range(m) if rep[v] == v]
    index = {v: i for i, v in enumerate(kept)}
    out_edges = [(index[find(parent[v])], index[v]) for v in kept if parent[v] >= 0]
    return TreeDecomposition(tuple(bags[v] for v in kept), tuple(out_edges))


def learn_cops(
    data: np.ndarray,
    arities: np.ndarray,
    *,
    alpha: float = 0.05,
    statistic: str = "x2",
    df_adjust: str = "none",
    min_rows_per_df: float = 0,
    max_k: int | None = None,
    time_limit: float | None = None,
    batched: bool = True,
) -> CopsResult:
    """Cops-and-robbers on data with a statistical CI test (section 4.2).

    The defaults are the reference implementation's test: Pearson X2 with the nominal degrees
    of freedom ``(r_a - 1)(r_b - 1) prod r_x`` and no minimum-sample rule, independent iff
    p > ``alpha`` (``constraints.citests.CITest``).  The time limit is checked every 10 oracle
    calls, as in the reference implementation with data (a batch counts as a whole).  The run's
    ``CountingOracle`` asks each distinct test once; ``batched`` asks each of its batches in one
    compiled call (:class:`~constraints.cops.data_oracle.DataIndependence`, on
    ``constraints.citest_batch.compute_threads`` threads), else one ``CITest.unmemoised`` call
    per test (same tests, counts and result).
    """
    check_significance(alpha, CopsInputError)
    test = CITest(data, arities, statistic=statistic, df_adjust=df_adjust,
                  min_rows_per_df=min_rows_per_df, alpha=alpha)
    indep = DataIndependence(test, alpha) if batched else independence_oracle(test.unmemoised, alpha)
    return cops_and_robbers(indep, test.n_vars, max_k=max_k, time_limit=time_limit, check_every=10)


def cops_restriction(test: Callable, n_vars: int, *, alpha: float = 0.05,
                     time_limit: float | None = None, keep: np.ndarray | None = None,
                     batched: bool = True, deadline: Deadline | None = None) -> tuple[Restriction, CopsResult]:
    """Cops-and-robbers as the restriction stage: forbidden = not adjacent in the learned skeleton.

    ``test`` is a ``constraints.citests`` test (``CITest``, ``DSeparationOracle``), asked through
    its ``unmemoised`` method: the run's ``CountingOracle`` asks each distinct test once, so
    neither the test nor the :class:`~constraints.restriction.PairLog` keeps a second memo (each
    took more memory than the oracle's own).  A pair's record is its largest p-value and that
    test's conditioning set, as for PC.  A run
    stopped by ``time_limit`` after phase 1 restricts to the bag supergraph (a supergraph of the
    moral graph, so no true edge is forbidden); stopped earlier, it forbids nothing; ``deadline``
    is checked with the time limit (:func:`cops_and_robbers`).  The pairs
    of ``keep`` are answered "dependent" without a test (:class:`~constraints.restriction.PairLog`).
    With ``batched`` a ``CITest`` is asked one compiled call per batch of the oracle
    (:class:`~constraints.cops.data_oracle.DataIndependence`, on
    ``constraints.citest_batch.compute_threads`` threads; same tests, records and result).
    """
    log = PairLog(test.unmemoised, n_vars, keep, distinct=True)
    start = time.monotonic()

    def indep_per_test(x: int, y: int, S: tuple[int, ...]) -> bool:
        return log(x, y, S) > alpha

    batched = batched and isinstance(test, CITest)
    indep = DataIndependence(test, alpha, log) if batched else indep_per_test
    result = cops_and_robbers(indep, n_vars, time_limit=time_limit, deadline=deadline)
    if result.skeleton is not None:
        allowed = result.skeleton
    elif result.tree_decomposition is not None:
        masks = [to_mask(bag) for bag in result.tree_decomposition.bags]
        allowed = adjacency_matrix(bag_supergraph(masks, n_vars))
        logger.warning("cops-and-robbers stopped after its decomposition: restricting to the bag supergraph")
    else:
        allowed = ~np.eye(n_vars, dtype=bool)
        logger.warning("cops-and-robbers stopped (%s) before a decomposition: nothing is forbidden",
                       result.status)
    restriction = log.build(allowed, time.monotonic() - start, "cops",
                            {"alpha": alpha, "time_limit": time_limit})
    return restriction, result
