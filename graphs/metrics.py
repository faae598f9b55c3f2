"""Structural comparison of learned and true graphs: SHD, skeleton precision/recall/F1, arc differences."""

from __future__ import annotations

import numpy as np

from graphs._checks import GraphError, as_adjacency


def _pair_codes(P: np.ndarray) -> np.ndarray:
    """Edge mark per unordered pair i < j: 0 none, 1 ``i -> j``, 2 ``j -> i``, 3 undirected."""
    iu = np.triu_indices(P.shape[0], k=1)
    return P[iu].astype(np.int8) + 2 * P.T[iu].astype(np.int8)


def _same_shape(A: np.ndarray, B: np.ndarray) -> None:
    if A.shape != B.shape:
        raise GraphError(f"graphs have different sizes: {A.shape} vs {B.shape}")


def shd(P_est, P_true) -> int:
    """Structural Hamming distance between two PDAGs/CPDAGs (Tsamardinos et al. 2006, on CPDAGs).

    Each unordered pair counts 1 if it is adjacent in one graph only, or adjacent in both with a
    different mark (directed vs undirected, or reversed). Pass CPDAGs (``dag_to_cpdag``) to compare
    equivalence classes; symmetric, and 0 iff the graphs are equal.
    """
    A = as_adjacency(P_est, "P_est")
    B = as_adjacency(P_true, "P_true")
    _same_shape(A, B)
    return int(np.count_nonzero(_pair_codes(A) != _pair_codes(B)))


def skeleton_scores(A_est, A_true) -> dict:
    """Precision, recall and F1 of the estimated skeleton's adjacencies against the true ones.

    Returns ``dict(precision, recall, f1, tp, fp, fn)``. With no estimated adjacency precision is 1.0
    (no false positive); with no true adjacency recall is 1.0; F1 is 0.0 when precision + recall is 0.
    """
    A = as_adjacency(A_est, "A_est")
    B = as_adjacency(A_true, "A_true")
    _same_shape(A, B)
    iu = np.triu_indices(A.shape[0], k=1)
    est = (A | A.T)[iu]
    true = (B | B.T)[iu]
    tp = int(np.count_nonzero(est & true))
    fp = int(np.count_nonzero(est & ~true))
    fn = int(np.count_nonzero(~est & true))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def edge_differences(dag_est, dag_true) -> dict:
    """Arc differences between two DAGs: ``added`` (arcs of the estimate between non-adjacent pairs of
    the truth), ``missing`` (true arcs between pairs non-adjacent in the estimate), ``reversed`` (arcs
    present in both with opposite direction). ``added + missing + reversed`` is the DAG-level SHD."""
    A = as_adjacency(dag_est, "dag_est")
    B = as_adjacency(dag_true, "dag_true")
    _same_shape(A, B)
    for name, M in (("dag_est", A), ("dag_true", B)):
        if (M & M.T).any():
            raise GraphError(f"{name} has undirected edges; edge_differences compares DAGs")
    added = int(np.count_nonzero(A & ~(B | B.T)))
    missing = int(np.count_nonzero(B & ~(A | A.T)))
    reversed_ = int(np.count_nonzero(A & B.T))
    return {"added": added, "missing": missing, "reversed": reversed_}


#: classes of :func:`edge_classes`, in the order a legend lists them
EDGE_CLASSES = ("correct", "extra", "missing", "reversed", "misoriented")


def edge_classes(P_est, P_true) -> list[tuple[int, int, bool, str]]:
    """Every pair adjacent in either graph, classified as in bnlearn's ``graphviz.compare``.

    Returns ``(source, target, directed, kind)`` sorted by pair: ``correct`` (same mark in both),
    ``extra`` (adjacent in the estimate only), ``missing`` (in the truth only), ``reversed``
    (directed both ways round) or ``misoriented`` (directed in one graph, undirected in the
    other). The edge is given with the estimate's mark, except a missing one with the truth's;
    undirected edges have ``source < target``. On CPDAGs the non-correct pairs number exactly
    :func:`shd`.
    """
    A = as_adjacency(P_est, "P_est")
    B = as_adjacency(P_true, "P_true")
    _same_shape(A, B)
    est, true = _pair_codes(A), _pair_codes(B)
    rows = []
    for i, j, e, t in zip(*np.triu_indices(A.shape[0], k=1), est, true):
        if e == 0 and t == 0:
            continue
        if e == t:
            kind = "correct"
        elif t == 0:
            kind = "extra"
        elif e == 0:
            kind = "missing"
        elif e + t == 3:  # 1 and 2: i -> j against j -> i
            kind = "reversed"
        else:
            kind = "misoriented"
        mark = t if kind == "missing" else e
        source, target = (int(j), int(i)) if mark == 2 else (int(i), int(j))
        rows.append((source, target, bool(mark != 3), kind))
    return rows
