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
from scores.table import ScoreTable, family_ids


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
    (ties go to the subset, as in :mod:`scores.candidates`): for each size ``j``, the subsets of
    ``j`` parents of every larger row are looked up among the rows of ``j`` parents at once."""
    sizes = table.sizes
    largest = int(sizes.max(initial=0))
    best_subset = np.full(table.n_candidates, -np.inf)
    for j in range(largest):
        stored = np.flatnonzero(sizes == j)
        rows, subsets = [], []
        for k in range(j + 1, largest + 1):
            larger = np.flatnonzero(sizes == k)
            members = _members(table, larger, k)
            for pick in itertools.combinations(range(k), j):
                rows.append(larger)
                subsets.append(np.column_stack([table.child[larger], members[:, list(pick)]]))
        ids = family_ids(np.concatenate([np.column_stack([table.child[stored], _members(table, stored, j)]), *subsets]))
        score_of = np.full(ids.max(initial=-1) + 1, -np.inf)
        score_of[ids[:stored.size]] = table.score[stored]
        np.maximum.at(best_subset, np.concatenate(rows), score_of[ids[stored.size:]])
    return table.score > best_subset


def _members(table: ScoreTable, rows: np.ndarray, k: int) -> np.ndarray:
    """The parents of ``rows``, which all have ``k`` of them, as a ``(len(rows), k)`` matrix."""
    return table.parents[table.parent_ptr[rows, None] + np.arange(k)]
