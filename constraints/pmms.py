"""PMMS (Polynomial Max-Min Skeleton) and MMPC skeletons (Brown, Tsamardinos & Aliferis 2005).

``pmms`` runs PMMPC (Algorithm 1 of the paper) for every target ``T``:

* forward phase: repeatedly add to CPC the candidate ``F`` maximising
  ``GREEDYMINASSOC(X; T; CPC)``, until that maximum is 0;
* backward phase: remove every ``X`` in CPC (visited in entry order, CPC shrinking as it goes)
  whose ``GREEDYMINASSOC(X; T; CPC minus X)`` is 0;
* GREEDYMINASSOC starts from ``minarg = {}`` and ``minval = Assoc(X; T | {})`` and keeps adding
  the member of ``Z minus minarg`` that lowers ``Assoc(X; T | minarg + {S})`` the most, while it
  strictly lowers the minimum (lines 14-20; the recursion's candidate set is read as
  ``Z minus minarg``, its evident intent).

``mmpc`` is the same with the exact ``MINASSOC`` = minimum over *all* subsets of the set (the
footnote's non-polynomial reference, MMHC's skeleton phase); it is computed incrementally
(only subsets containing a new CPC member are evaluated in the forward phase).

Association: the paper uses ``Assoc = -p`` and requires ``Assoc = 0`` on independence
(``p > alpha``).  We use ``-log p`` for ``p <= alpha`` and 0 otherwise: the same order as
``-p`` among dependent outcomes, 0 the strict minimum, and no ties when ``p`` underflows to 0
(``log p`` then comes from the tail expansion of the chi-square survival function).  A ``p = 0``
that is not an underflow (the minimum-sample rule's "dependent", or an oracle's dependence)
counts as infinite association, so an untrusted test never lowers a minimum.  Ties are broken
towards the smaller variable index.

Options: ``symmetric=True`` keeps an edge only if ``X in PC(T)`` and ``T in PC(X)`` (the paper's
footnote 2), otherwise either suffices; ``prune=True`` drops a candidate from the forward phase
of a target once its min-association reached 0.  For MMPC this never changes the result (the
minimum over a growing CPC can only decrease) and is the default; for PMMS the greedy minimum
is not monotone, so the default ``prune=False`` re-evaluates every candidate in every round
exactly as Algorithm 1 does (``prune=True`` is a cheaper heuristic).  ``max_order`` caps
conditioning-set sizes (None = unbounded).

Deadline: a passed ``deadline`` is noticed before the next candidate's min-association (on the
compiled path: before the order-0 batch and before the next target of each range of targets);
the targets not finished (the one under way and those after it; on the compiled path, in each
range that noticed it, the rest of that range) keep every variable in their CPC, so each edge is
decided by the finished targets alone, a superset of the full run's skeleton (status
``timeout``).

With a :class:`~constraints.citests.CITest` each target runs as one compiled call
(:mod:`constraints.pmms_compiled`): the same tests in the same order, hence the same skeleton,
records and counts as asking the test one call at a time (``batched=False``, and any other test,
e.g. an oracle).  The targets may run in contiguous ranges on threads or as the tasks of an
executor (:mod:`constraints.pmms_groups`), with the same result.
"""

from __future__ import annotations

import logging
import math
import time
from itertools import combinations

import numpy as np
from tqdm import tqdm

from constraints.citests import CITest
from constraints.pc import check_alpha_order
from constraints.pmms_compiled import association
from constraints.pmms_groups import run_groups, run_targets
from constraints.restriction import PairLog, Restriction
from hybridbn.deadline import Deadline, passed

logger = logging.getLogger(__name__)


class _Assoc:
    """Assoc(X; T | S) of the paper on top of a logged CI test (see module docstring)."""

    def __init__(self, log: PairLog, alpha: float):
        self.log = log
        self.alpha = alpha

    def __call__(self, x: int, t: int, S) -> float:
        p = self.log(x, t, S)
        if p > 0.0:
            return association(p, 0.0, 0.0, self.alpha)
        if self.log.keep[x, t]:  # a required adjacency: never tested
            return math.inf
        res = self.log.test(min(x, t), max(x, t), tuple(S))  # the statistic beyond underflow
        return association(p, float(res.statistic), float(res.dof), self.alpha)


def greedy_min_assoc(assoc: _Assoc, x: int, t: int, Z, max_order: int | None = None) -> float:
    """GREEDYMINASSOC(X; T; Z; Assoc(X; T | {}); {}) of Algorithm 1."""
    minval = assoc(x, t, ())
    minarg: list[int] = []
    rest = sorted(Z)
    while minval > 0.0 and rest and (max_order is None or len(minarg) < max_order):
        vals = [assoc(x, t, minarg + [s]) for s in rest]
        i = int(np.argmin(vals))
        if not vals[i] < minval:
            break
        minval = vals[i]
        minarg.append(rest.pop(i))
    return minval


class _ExactMinAssoc:
    """MINASSOC(X; T | Z) = min over all subsets of Z, reusing the subsets already covered."""

    def __init__(self, assoc: _Assoc, max_order: int | None):
        self.assoc = assoc
        self.max_order = max_order
        self._cache: dict[tuple[int, int], tuple[frozenset, float]] = {}

    def _subsets_min(self, x, t, old: list[int], new: list[int], best: float) -> float:
        """Minimum of ``best`` and Assoc over subsets containing at least one of ``new``."""
        cap = len(old) + len(new) if self.max_order is None else self.max_order
        for k in range(1, min(len(new), cap) + 1):
            for a in combinations(new, k):
                for j in range(0, min(len(old), cap - k) + 1):
                    for b in combinations(old, j):
                        if best == 0.0:
                            return best
                        best = min(best, self.assoc(x, t, sorted(a + b)))
        return best

    def __call__(self, x: int, t: int, Z) -> float:
        Z = frozenset(Z)
        covered, best = self._cache.get((x, t), (None, None))
        if covered is None or not covered <= Z:
            covered, best = frozenset(), self.assoc(x, t, ())
        best = self._subsets_min(x, t, sorted(covered), sorted(Z - covered), best)
        self._cache[(x, t)] = (Z, best)
        return best


def _parents_children(t: int, n_vars: int, min_assoc, prune: bool,
                      deadline: Deadline | None = None) -> list[int] | None:
    """PMMPC / MMPC(T): forward max-min phase then backward phase (Algorithm 1, lines 1-13);
    None when the deadline passed first."""
    cpc: list[int] = []
    candidates = [x for x in range(n_vars) if x != t]
    while True:
        best, best_x, keep = 0.0, None, []
        for x in candidates:
            if passed(deadline):
                return None
            val = min_assoc(x, t, cpc)
            if val > best:
                best, best_x = val, x
            if val > 0.0 or not prune:
                keep.append(x)
        candidates = keep
        if best_x is None:
            break
        cpc.append(best_x)
        candidates.remove(best_x)
    for x in list(cpc):
        if passed(deadline):
            return None
        if min_assoc(x, t, [z for z in cpc if z != x]) == 0.0:
            cpc.remove(x)
    return cpc


def _skeleton(method: str, test, n_vars: int, alpha: float, symmetric: bool, prune: bool,
              max_order: int | None, progress: bool, keep: np.ndarray | None, deadline: Deadline | None,
              batched: bool, n_jobs: int, executor, n_groups: int) -> Restriction:
    check_alpha_order(alpha, max_order)
    start = time.perf_counter()
    log = PairLog(test, n_vars, keep)
    with tqdm(total=n_vars, desc=method.upper(), disable=not progress, leave=False) as bar:
        if batched and isinstance(test, CITest):
            member, stopped = run_groups(test, log, alpha, method == "mmpc", prune, max_order, deadline,
                                         n_jobs, executor, n_groups, bar)
        else:
            assoc = _Assoc(log, alpha)
            if method == "pmms":
                def min_assoc(x, t, Z):
                    return greedy_min_assoc(assoc, x, t, Z, max_order)
            else:
                min_assoc = _ExactMinAssoc(assoc, max_order)
            member, stopped = run_targets(
                lambda t: _parents_children(t, n_vars, min_assoc, prune, deadline), 0, n_vars, n_vars, bar.update)
    if stopped:
        logger.debug("%s stopped by its deadline", method)
    allowed = member & member.T if symmetric else member | member.T
    logger.debug("%s: %d edges, %d asymmetric memberships", method, int(np.triu(allowed, 1).sum()),
                 int((member ^ member.T).sum()) // 2)
    return log.build(allowed, time.perf_counter() - start, method,
                     {"alpha": alpha, "symmetric": symmetric, "prune": prune, "max_order": max_order},
                     "timeout" if stopped else "ok")


def pmms(test, n_vars: int, alpha: float = 0.05, symmetric: bool = True, prune: bool = False,
         max_order: int | None = None, progress: bool = False, keep: np.ndarray | None = None,
         deadline: Deadline | None = None, batched: bool = True, n_jobs: int = 1, executor=None,
         n_groups: int = 1) -> Restriction:
    """Polynomial Max-Min Skeleton: PMMPC (greedy min-association) for every variable; the pairs
    of ``keep`` are never tested and stay adjacent (:class:`~constraints.restriction.PairLog`);
    a passed ``deadline`` stops it (see the module docstring).  With a
    :class:`~constraints.citests.CITest` each target runs compiled
    (:mod:`constraints.pmms_compiled`), the targets split into ``n_jobs`` ranges on threads or,
    with ``executor`` (``pipeline.executors``), into ``n_groups`` tasks
    (:mod:`constraints.pmms_groups`); otherwise or with ``batched=False`` one test call at a time.
    All give the same skeleton, records and counts."""
    return _skeleton("pmms", test, n_vars, alpha, symmetric, prune, max_order, progress, keep, deadline,
                     batched, n_jobs, executor, n_groups)


def mmpc(test, n_vars: int, alpha: float = 0.05, symmetric: bool = True, prune: bool = True,
         max_order: int | None = None, progress: bool = False, keep: np.ndarray | None = None,
         deadline: Deadline | None = None, batched: bool = True, n_jobs: int = 1, executor=None,
         n_groups: int = 1) -> Restriction:
    """Max-Min Parents and Children skeleton with exact MINASSOC (exponential reference); ``keep``,
    ``deadline``, ``batched``, ``n_jobs``, ``executor`` and ``n_groups`` as for :func:`pmms`."""
    return _skeleton("mmpc", test, n_vars, alpha, symmetric, prune, max_order, progress, keep, deadline,
                     batched, n_jobs, executor, n_groups)
