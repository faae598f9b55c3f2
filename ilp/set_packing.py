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
    all have a family holding the rest of ``C``, in increasing order of ``C``; ``families`` lists
    those families, sorted.

    Each family ``W -> v`` gives the clusters ``R ∪ {v}`` for the subsets ``R`` of ``W`` of at
    least ``min_size - 1`` nodes: one row of a node matrix (members ascending, padded with -1)
    per (family, cluster) pair, built with numpy for all families of one size at once and
    grouped by a lexicographic sort, without a Python object per pair (docs/benchmarks.md,
    issue 23.3).
    """
    sizes = np.diff(problem.parent_ptr)
    width = int(sizes.max(initial=0)) + 1
    smallest_rest = max(min_size - 1, 0)
    blocks, block_fams = [], []
    for k in range(smallest_rest, width):
        fams = np.flatnonzero(sizes == k)
        parents = problem.parents[problem.parent_ptr[fams, None] + np.arange(k)]
        for rest in (r for s in range(smallest_rest, k + 1) for r in itertools.combinations(range(k), s)):
            nodes = np.full((fams.size, width), -1, dtype=np.int32)
            nodes[:, :len(rest)] = parents[:, rest]
            nodes[:, len(rest)] = problem.child[fams]
            nodes[:, :len(rest) + 1].sort(axis=1)
            blocks.append(nodes)
            block_fams.append(fams)
    if not blocks:
        return []
    nodes, fams = np.concatenate(blocks), np.concatenate(block_fams)
    order = np.lexsort((fams, *nodes.T[::-1]))  # by cluster as tuples sort (the -1 pad first), then family
    nodes, fams = nodes[order], fams[order]
    new_cluster = np.r_[True, (nodes[1:] != nodes[:-1]).any(axis=1)]
    starts = np.flatnonzero(new_cluster)
    # within a cluster the families ascend, so their children do too (families are grouped by child)
    child = problem.child[fams]
    new_member = new_cluster | np.r_[True, child[1:] != child[:-1]]
    covered = np.add.reduceat(new_member, starts) == (nodes[starts] >= 0).sum(axis=1)
    ends = np.r_[starts[1:], fams.size]
    return [(tuple(nodes[i][nodes[i] >= 0].tolist()), fams[i:j])
            for i, j in zip(starts[covered].tolist(), ends[covered].tolist())]
