"""A sparsity prior on the arcs, added to the local scores of a table.

Each of the ``n - 1`` possible parents of a child is present independently with probability
``beta = E / (n - 1)``, ``E`` the expected number of parents per node: the family ``W -> X``
gains ``log P(W) = |W| log beta + (n - 1 - |W|) log(1 - beta)``, and the network score becomes
the log posterior up to a constant. This is the arc prior of Heckerman, Geiger & Chickering
(1995) with an empty prior network, the "variable selection prior" of bnlearn's Bayesian
Dirichlet scores (``prior = "vsp"``) and the structure prior of causal-learn's BDeu, whose
default ``E = 1`` is also the value recommended in ``docs/accuracy.md``.

With ``beta <= 1/2`` each added parent costs ``kappa = log((1 - beta) / beta) >= 0``, so a set
dominated by a subset without the prior stays dominated with it: the prior is applied to the
pruned table, which keeps every set that may be optimal, and the sets it newly dominates are
dropped, leaving exactly the dominance table of the prior-adjusted scores.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from hybridbn.errors import HybridBNError
from scores.table import ScoreTable


class StructurePriorError(HybridBNError, ValueError):
    """A structure prior that the exact pruning cannot honour."""


def arc_probability(n_vars: int, expected: float) -> float:
    """``beta = E / (n - 1)``, checked to lie in ``(0, 1/2]``."""
    if n_vars < 2:
        raise StructurePriorError("a structure prior needs at least two variables")
    if not expected > 0:
        raise StructurePriorError(f"--structure-prior must be positive, got {expected!r}")
    if expected > (n_vars - 1) / 2:
        raise StructurePriorError(
            f"--structure-prior {expected:g} expects more than half of the {n_vars - 1} possible parents "
            f"of each node; at most {(n_vars - 1) / 2:g} is allowed, since a larger arc probability would "
            "reward every added parent and void the exact pruning")
    return expected / (n_vars - 1)


def family_log_prior(n_parents, n_vars: int, expected: float):
    """``log P(W)`` of families with ``n_parents`` parents (a number or an array)."""
    beta = arc_probability(n_vars, expected)
    return n_parents * math.log(beta) + (n_vars - 1 - np.asarray(n_parents)) * math.log1p(-beta)


def with_structure_prior(table: ScoreTable, expected: float) -> ScoreTable:
    """``table`` with the prior added to every score and the newly dominated sets dropped."""
    score = table.score + family_log_prior(table.sizes, table.n_vars, expected)
    adjusted = ScoreTable.from_columns(table.n_vars, table.child, table.parent_ptr, table.parents, score,
                                       table.names, table.meta)
    keep = _beats_its_subsets(adjusted)
    meta = {**table.meta, "structure_prior": float(expected), "dominated_with_prior": int((~keep).sum())}
    return adjusted.select(keep, meta)


def _beats_its_subsets(table: ScoreTable) -> np.ndarray:
    """Mask of the rows whose score is strictly above that of every proper subset in the table
    (ties go to the subset, as in :mod:`scores.candidates`); ``families`` lists the rows in order."""
    return np.array([all(family.get(sub, -np.inf) < s for k in range(len(ps)) for sub in itertools.combinations(ps, k))
                     for family in table.families for ps, s in family.items()], dtype=bool)
