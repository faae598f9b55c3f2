"""Parameter learning: CPTs of a given DAG from a discrete dataset (issue 6, item 2), and the
log-likelihood of data under a network.

With ``n_ijk`` the number of rows where child ``i`` is in state ``k`` and its parents are in
configuration ``j`` (``q_i`` configurations, ``r_i`` states, ``n_ij = sum_k n_ijk``):

* ``mle``: ``theta_ijk = n_ijk / n_ij``; a configuration never observed (``n_ij = 0``) gets the
  uniform distribution ``1 / r_i``.
* ``bayes``: the posterior mean under the BDeu prior (Heckerman, Geiger & Chickering 1995),
  a Dirichlet with pseudo-count ``ess / (q_i r_i)`` per cell, i.e.
  ``theta_ijk = (n_ijk + ess/(q_i r_i)) / (n_ij + ess/q_i)`` — the same prior that the BDeu
  score of the structure stage integrates over.
* ``perks``: the posterior mean under Perks' (1947) prior, a Dirichlet with pseudo-count ``1 / r_i``
  per cell of every configuration, ``theta_ijk = (n_ijk + 1/r_i) / (n_ij + 1)``. Its smoothing
  does not shrink as ``q_i`` grows, so a configuration seen a few times never gets a
  near-deterministic row: the estimator behind held-out log-likelihoods (:mod:`pipeline.selection`).

Parents are listed in increasing index order; the states are the dataset's.
"""

from __future__ import annotations

import logging

import numpy as np

from bayesnet.dataset import Dataset
from bayesnet.network import Network, parent_config_index

logger = logging.getLogger(__name__)

METHODS = ("mle", "bayes", "perks")
#: Largest CPT (cells) that will be materialised.
MAX_CPT_CELLS = 50_000_000


def fit_cpts(dag_adjacency: np.ndarray, dataset: Dataset, method: str = "mle", ess: float = 1.0,
             name: str = "fitted") -> Network:
    """Network with the DAG's parents, the dataset's states and CPTs estimated by ``method``."""
    adj = np.asarray(dag_adjacency, dtype=bool)
    n = dataset.n_vars
    if adj.shape != (n, n):
        raise ValueError(f"adjacency has shape {adj.shape}, expected ({n}, {n}) for the dataset's variables")
    if method not in METHODS:
        raise ValueError(f"unknown parameter-learning method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "bayes" and not ess > 0:
        raise ValueError(f"ess must be positive for Bayesian estimation, got {ess!r}")
    if dataset.n_rows == 0:
        raise ValueError("cannot fit CPTs on a dataset with no rows")
    arities = dataset.arities
    parents, cpts = [], []
    for v in range(n):
        ps = [int(p) for p in np.flatnonzero(adj[:, v])]
        r = int(arities[v])
        radix = [int(arities[p]) for p in ps]
        q = int(np.prod(radix, dtype=np.float64)) if ps else 1
        if q * r > MAX_CPT_CELLS:
            raise ValueError(f"CPT of {dataset.names[v]!r} would have {q * r} cells (limit {MAX_CPT_CELLS})")
        child = dataset.data[:, v].astype(np.intp)
        cells = child if not ps else parent_config_index([dataset.data[:, p] for p in ps], radix) * r + child
        counts = np.bincount(cells, minlength=q * r).reshape(q, r).astype(np.float64)
        if method == "mle":
            totals = counts.sum(axis=1, keepdims=True)
            table = np.divide(counts, totals, out=np.full_like(counts, 1.0 / r), where=totals > 0)
        else:
            prior = counts + (ess / (q * r) if method == "bayes" else 1.0 / r)
            table = prior / prior.sum(axis=1, keepdims=True)
        parents.append(ps)
        cpts.append(table.reshape(tuple(radix) + (r,)))
    network = Network(name=name, variables=list(dataset.names), states=[list(s) for s in dataset.states],
                      parents=parents, cpts=cpts)
    network.validate()
    logger.debug("fitted %s CPTs for %d variables (%d arcs)", method, n, network.n_edges)
    return network


def log_likelihood(network: Network, dataset: Dataset) -> float:
    """Natural log of the probability of the rows of ``dataset`` under ``network``, whose
    variables and states must be the dataset's, in the same order: ``sum_rows sum_i log theta``."""
    if list(network.variables) != list(dataset.names) or [list(s) for s in network.states] != [
            list(s) for s in dataset.states]:
        raise ValueError("the network's variables and states differ from the dataset's")
    total = 0.0
    for v, (ps, cpt) in enumerate(zip(network.parents, network.cpts)):
        rows = cpt.reshape(-1, cpt.shape[-1])
        config = (parent_config_index([dataset.data[:, p] for p in ps], [int(a) for a in network.arities[ps]])
                  if ps else np.zeros(dataset.n_rows, dtype=np.intp))
        total += float(np.log(rows[config, dataset.data[:, v]]).sum())
    return total
