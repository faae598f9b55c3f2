"""Set-packing rows on small clusters (GOBNILP's "spc" constraints; Bartlett & Cussens 2017).

In a DAG, at most one member of a cluster ``C`` can have all the other members as parents (two
such members would be each other's parents). So

    sum_{v in C} sum_{W ⊇ C \\ {v}} I(W -> v) <= 1

is valid for every ``C``; for ``|C| = 2`` it is the 2-cluster row. It only has content when every
member has a candidate parent set holding the rest of ``C``, so the clusters come from the
candidate families themselves (``|C| <= palim + 1``). Added up front, these rows tighten the LP
and feed SCIP's clique table.
"""

from __future__ import annotations

import itertools

import numpy as np

from ilp.problem import FamilyProblem


def set_packing_rows(problem: FamilyProblem, min_size: int = 3) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """``(C, families)`` for every cluster ``C`` of at least ``min_size`` nodes whose members
    all have a family holding the rest of ``C``; ``families`` lists those families, sorted."""
    by_cluster: dict[tuple[int, ...], dict[int, list[int]]] = {}
    for f, v in enumerate(problem.child.tolist()):
        ps = problem.parents_of(f)
        for size in range(min_size - 1, len(ps) + 1):
            for rest in itertools.combinations(ps, size):
                cluster = tuple(sorted((*rest, v)))
                by_cluster.setdefault(cluster, {}).setdefault(v, []).append(f)
    return [
        (cluster, np.sort(np.concatenate([np.asarray(fams) for fams in members.values()])))
        for cluster, members in sorted(by_cluster.items())
        if len(members) == len(cluster)
    ]
