"""Random generative models of the SGES experiment (Chickering & Meek 2015, section 5).

Structure: randomly permute the nodes; visit every node pair (each node in turn with each of
its predecessors in the permutation); with probability one half attempt an edge, added only if
it creates no cycle and gives no node more than ``palim`` parents; if both directions are
possible one is chosen at random. Parameters: every CPT row is drawn from a uniform Dirichlet
with equivalent sample size ``ess`` (concentration ``ess / r`` per state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphs.dag import is_acyclic


@dataclass(frozen=True)
class GenerativeModel:
    """A random discrete Bayesian network: DAG adjacency, parent lists and CPTs (Network layout)."""

    dag: np.ndarray
    parents: list[list[int]]
    cpts: list[np.ndarray]


def random_bounded_dag(n_vars: int, rng: np.random.Generator, palim: int = 2, p_edge: float = 0.5) -> np.ndarray:
    """Random DAG with in-degree <= ``palim`` built by the paper's pairwise procedure."""
    perm = rng.permutation(n_vars)
    A = np.zeros((n_vars, n_vars), dtype=bool)
    for i in range(n_vars):
        for j in range(i):
            if rng.random() >= p_edge:
                continue
            a, b = int(perm[i]), int(perm[j])
            options = []
            for u, v in ((a, b), (b, a)):
                if A[:, v].sum() >= palim:
                    continue
                A[u, v] = True
                if is_acyclic(A):
                    options.append((u, v))
                A[u, v] = False
            if options:
                u, v = options[int(rng.integers(len(options)))] if len(options) > 1 else options[0]
                A[u, v] = True
    return A


def random_cpts(parents: list[list[int]], arities: np.ndarray, rng: np.random.Generator, ess: float = 1.0) -> list[np.ndarray]:
    """CPTs with rows from a symmetric Dirichlet of total concentration ``ess``."""
    cpts = []
    for v, pa in enumerate(parents):
        r = int(arities[v])
        shape = tuple(int(arities[p]) for p in pa)
        rows = rng.dirichlet(np.full(r, ess / r), size=int(np.prod(shape, dtype=np.int64)))
        cpts.append(rows.reshape(*shape, r))
    return cpts


def chickering_meek_model(
    n_vars: int, seed: int, *, palim: int = 2, arity: int = 2, ess: float = 1.0
) -> GenerativeModel:
    """One random generative model of section 5 (binary variables, at most two parents by default)."""
    rng = np.random.default_rng(seed)
    A = random_bounded_dag(n_vars, rng, palim)
    parents = [np.flatnonzero(A[:, v]).tolist() for v in range(n_vars)]
    cpts = random_cpts(parents, np.full(n_vars, arity), rng, ess)
    return GenerativeModel(dag=A, parents=parents, cpts=cpts)
