"""Structural EM for data with missing cells (Friedman 1997), as bnlearn's ``structural.em``.

Starting from the empty network fitted on each variable's observed values (its available cases),
each round

1. *expectation*, in its most probable form (bnlearn's ``impute``): every missing cell is completed
   from the current network's CPTs by iterated conditional modes over the row's missing cells, in
   topological order, ``ICM_PASSES`` passes: each is set to the state ``s`` maximising
   ``P(s | parents) * prod_children P(child | its parents)`` given the row's other values (its
   Markov blanket); ties go to the lowest state;
2. *maximisation*: hill climbing (:func:`search.hill_climbing.hill_climb_on_data`, bnlearn's
   ``maximize = "hc"``) on the completed rows, from the current DAG, then the CPTs refitted on
   them (the BDeu posterior mean, :func:`bayesnet.fitting.fit_cpts`).

It stops when the maximisation returns the DAG it started from, or after ``max_iter`` rounds
(bnlearn's default 5). :func:`complete_missing` applies it to a :class:`~bayesnet.dataset.Dataset`
whose missing cells are the state :data:`bayesnet.dataset.MISSING_STATE`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesnet.dataset import MISSING_STATE, DataError, Dataset, code_dtype
from bayesnet.fitting import fit_cpts
from bayesnet.network import Network, parent_config_index
from graphs.dag import parents_from_adjacency, topological_order
from search.hill_climbing import hill_climb_on_data

MAX_ITERATIONS = 5
"""Rounds of structural EM at most (bnlearn's ``max.iter``)."""
ICM_PASSES = 2
"""Passes of iterated conditional modes over a row's missing cells per completion."""


@dataclass
class EMResult:
    """The completed codes, the last DAG, the rounds run and whether the DAG repeated."""

    data: np.ndarray
    dag: np.ndarray
    iterations: int
    converged: bool


def _configs(codes: np.ndarray, parents: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """The CPT row of each row's parent configuration (0 for a root)."""
    if parents.size == 0:
        return np.zeros(codes.shape[0], dtype=np.intp)
    return parent_config_index([codes[:, p] for p in parents], [int(arities[p]) for p in parents])


def complete(data: np.ndarray, missing: np.ndarray, network: Network, passes: int = ICM_PASSES) -> np.ndarray:
    """``data`` (int codes; its missing cells hold the current guesses) with each missing cell set
    to its most probable state given its Markov blanket in ``network``, by iterated conditional
    modes (see the module docstring)."""
    x = data.astype(np.int64, copy=True)
    arities = network.arities
    dag = network.adjacency
    parents = [np.flatnonzero(dag[:, v]) for v in range(x.shape[1])]
    children = [np.flatnonzero(dag[v]) for v in range(x.shape[1])]
    logs = [np.log(cpt.reshape(-1, int(arities[v]))) for v, cpt in enumerate(network.cpts)]
    for _ in range(passes):
        for v in topological_order(dag):
            rows = np.flatnonzero(missing[:, v])
            if rows.size == 0:
                continue
            block = x[rows]
            scores = np.empty((rows.size, int(arities[v])))
            for state in range(int(arities[v])):
                block[:, v] = state
                total = logs[v][_configs(block, parents[v], arities), state]
                for c in children[v]:
                    total = total + logs[c][_configs(block, parents[c], arities), block[:, c]]
                scores[:, state] = total
            x[rows, v] = np.argmax(scores, axis=1)
    return x


def structural_em(data: np.ndarray, missing: np.ndarray, arities: np.ndarray, *, score: str = "bdeu",
                  ess: float = 1.0, palim: int | None = 3, max_iter: int = MAX_ITERATIONS) -> EMResult:
    """Structural EM (see the module docstring) on the codes ``data`` whose cells ``missing[i, v]``
    are unknown (their codes are ignored), under ``score`` / ``ess`` with at most ``palim``
    parents; every variable needs an observed value."""
    n_vars = data.shape[1]
    arities = np.asarray(arities, dtype=np.int64)
    x = data.astype(np.int64, copy=True)
    for v in range(n_vars):  # the empty network on the available cases: each cell its variable's mode
        observed = x[~missing[:, v], v]
        x[missing[:, v], v] = int(np.argmax(np.bincount(observed, minlength=int(arities[v]))))
    names, states = [f"v{v}" for v in range(n_vars)], [[str(s) for s in range(int(r))] for r in arities]
    dtype = code_dtype(int(arities.max()))

    def fitted(dag: np.ndarray) -> Network:
        return fit_cpts(dag, Dataset(x.astype(dtype), names, states), method="bayes", ess=ess)

    dag = np.zeros((n_vars, n_vars), dtype=bool)
    network = fitted(dag)
    for iteration in range(1, max_iter + 1):
        x = complete(x, missing, network)
        found = hill_climb_on_data(x, arities, score, ess, palim=palim, start=parents_from_adjacency(dag)).dag
        if np.array_equal(found, dag):
            return EMResult(x, dag, iteration, True)
        dag = found
        network = fitted(dag)
    return EMResult(complete(x, missing, network), dag, max_iter, False)


def complete_missing(dataset: Dataset, *, score: str = "bdeu", ess: float = 1.0, palim: int | None = 3,
                     max_iter: int = MAX_ITERATIONS) -> tuple[Dataset, dict]:
    """``dataset`` with its cells in the state ``MISSING_STATE`` (the last of a column) completed
    by :func:`structural_em`, that state removed, and a record: rounds, whether the DAG repeated,
    the cells completed and the arcs of the last DAG."""
    arities = dataset.arities
    with_missing = np.array([bool(s) and s[-1] == MISSING_STATE for s in dataset.states])
    missing = with_missing & (dataset.data == (arities - 1))
    arities = arities - with_missing
    empty = [dataset.names[v] for v in np.flatnonzero(arities == 0)]
    if empty:
        raise DataError(f"column {empty[0]!r} has no observed value: structural EM cannot complete it; drop it "
                        f"with --drop {empty[0]!r} (drop=[{empty[0]!r}] in Python)")
    result = structural_em(dataset.data, missing, arities, score=score, ess=ess, palim=palim, max_iter=max_iter)
    states = [s[:-1] if cut else s for s, cut in zip(dataset.states, with_missing)]
    completed = Dataset(result.data.astype(dataset.data.dtype), list(dataset.names), states)
    record = {"iterations": result.iterations, "converged": result.converged,
              "n_completed_cells": int(missing.sum()), "n_arcs": int(result.dag.sum())}
    return completed, record
