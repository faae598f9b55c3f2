"""Declarations of the CI tests and the restriction methods (see :mod:`hybridbn.options`).

A CI-test restriction's ``run(test, n, settings, *, keep, progress, n_jobs, executor,
n_groups, deadline)`` takes the run's CI test (:class:`constraints.citests.CITest`), the number
of variables and the run's settings (anything with the declared parameters as attributes, e.g.
a :class:`pipeline.core.config.RunConfig`), never tests the pairs of ``keep``, stops at a passed
``deadline`` (:class:`hybridbn.deadline.Deadline`, ``--budget``) with a superset of its skeleton
and status ``timeout``, and returns the :class:`constraints.restriction.Restriction` with a dict
of extra metadata.  The sparse
candidate restriction (no CI test) is declared in :mod:`scores.methods`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from hybridbn.checks import ALPHA  # declared with its one check: several packages take it
from hybridbn.options import INT, SECONDS, Choice, Method, Param
from scores.methods import CANDIDATES, CANDIDATE_SCORE_USE

TEST = Choice(
    name="test", default="g2", grid="tests", help="CI test statistic",
    methods=(Method("g2", "G2 likelihood-ratio test"), Method("x2", "Pearson's chi-squared test")),
)

MAX_ORDER = Param("max_order", INT, 1, "largest conditioning set, or 'none'", none=True, key="max_order",
                  grid="max_orders")
COPS_TIME_LIMIT = Param(
    "cops_time_limit", SECONDS, None,
    "with --method cops: stop the cops after this many seconds and restrict to what they found (the "
    "bag supergraph once the decomposition is done, else nothing) (default: none)",
    metavar="SECONDS", key="time_limit", keyed_when_set=True, strict=True, grid="cops_time_limit", axis=False)
ADD_CANDIDATES = Param(
    "add_candidates", INT, 0,
    "also allow each child's K best single parents by score gain beyond the CI skeleton, so the exact "
    "search can keep an edge the tests dropped",
    metavar="K", key="add_candidates", keyed_when_set=True, strict=True, uses=CANDIDATE_SCORE_USE)


def ci_test(data, arities, settings):
    """The run's memoised CI test over ``data`` (``settings.test``: ``g2`` or ``x2``; a test with
    no degrees of freedom is decided at the run's ``settings.alpha``)."""
    from constraints.citests import CITest  # deferred: numba kernels, not needed to declare

    return CITest(data, arities, statistic=settings.test, alpha=settings.alpha)


def run_pc(test, n: int, settings, *, keep=None, progress=False, n_jobs=1, executor=None, n_groups=1,
           deadline=None):
    """PC-stable skeleton (Spirtes et al. 2000; Colombo & Maathuis 2014), batched."""
    from constraints.pc import pc_skeleton  # deferred: numba kernels, not needed to declare

    return pc_skeleton(test, n, alpha=settings.alpha, max_order=settings.max_order, progress=progress,
                       n_jobs=n_jobs, executor=executor, n_groups=n_groups, keep=keep, deadline=deadline), {}


def run_pmms(test, n: int, settings, *, keep=None, progress=False, n_jobs=1, executor=None, n_groups=1,
             deadline=None):
    """Polynomial Max-Min Skeleton, compiled per target: the targets in ranges on ``n_jobs``
    threads, or as ``n_groups`` tasks on ``executor``."""
    from constraints.pmms import pmms  # deferred: numba kernels, not needed to declare

    return pmms(test, n, alpha=settings.alpha, max_order=settings.max_order, progress=progress, keep=keep,
                deadline=deadline, n_jobs=n_jobs, executor=executor, n_groups=n_groups), {}


def run_mmpc(test, n: int, settings, *, keep=None, progress=False, n_jobs=1, executor=None, n_groups=1,
             deadline=None):
    """Max-Min Parents and Children (Tsamardinos et al. 2006), as :func:`run_pmms`."""
    from constraints.pmms import mmpc  # deferred: numba kernels, not needed to declare

    return mmpc(test, n, alpha=settings.alpha, max_order=settings.max_order, progress=progress, keep=keep,
                deadline=deadline, n_jobs=n_jobs, executor=executor, n_groups=n_groups), {}


def run_cops(test, n: int, settings, *, keep=None, n_jobs=1, deadline=None, **_parallel: Any):
    """Cops-and-robbers (Talvitie & Parviainen), each batch of tests compiled on ``n_jobs``
    threads; the tree decomposition it found goes into the metadata (``bags``, ``tree_edges``,
    ``treewidth``) for ``--within-bags``.  The cops take a time limit: ``--cops-time-limit`` or
    what is left before ``deadline``, whichever is shorter; they check ``deadline`` itself with
    it (its safe points: :func:`constraints.cops.cops_and_robbers`)."""
    # deferred: numba kernels, not needed to declare
    from constraints.citest_batch import compute_threads
    from constraints.cops import cops_restriction

    time_limit = settings.cops_time_limit
    if deadline is not None and deadline.remaining() < math.inf:  # (an infinite one only marks safe points)
        left = max(deadline.remaining(), 1e-6)  # a positive limit: a passed deadline stops them at their first check
        time_limit = left if time_limit is None else min(time_limit, left)
    with compute_threads(n_jobs):
        restriction, found = cops_restriction(test, n, alpha=settings.alpha, time_limit=time_limit, keep=keep,
                                              deadline=deadline)
    if found.status == "timeout":
        restriction = replace(restriction, status="timeout")
    td = found.tree_decomposition
    meta: dict[str, Any] = {"cops_status": found.status, "treewidth": found.k}
    if td is not None:
        meta["bags"] = [sorted(int(v) for v in bag) for bag in td.bags]
        meta["tree_edges"] = [[int(a), int(b)] for a, b in td.edges]
    return restriction, meta


CI = dict(uses=(TEST,), knowledge="adjacency")
RESTRICTION = Choice(
    name="method", default="pc", grid="methods", stage="restrict",
    help="restriction method; cops = cops-and-robbers, which ignores --max-order; candidates = sparse "
         "candidate parents by single-parent score gain, no CI tests, for very large networks",
    methods=(
        Method("none", "no restriction: every edge allowed", knowledge=None),
        Method("pc", "PC-stable skeleton", run_pc, (ALPHA, MAX_ORDER, ADD_CANDIDATES), **CI),
        Method("pmms", "Polynomial Max-Min Skeleton", run_pmms, (ALPHA, MAX_ORDER, ADD_CANDIDATES), **CI),
        Method("mmpc", "Max-Min Parents and Children", run_mmpc, (ALPHA, MAX_ORDER, ADD_CANDIDATES), **CI),
        Method("cops", "cops-and-robbers (no order limit: the cops find theirs)", run_cops,
               (ALPHA, COPS_TIME_LIMIT, ADD_CANDIDATES), **CI),
        CANDIDATES,
    ),
)
"""``--method``: which edges the score stage may use."""
