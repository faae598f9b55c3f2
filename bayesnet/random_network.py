"""Random discrete Bayesian networks with the properties of the bounded-treewidth paper's synthetic
data (Scanagatta, Corani, de Campos & Zaffalon, NIPS 2016, section 4.4: BNGenerator networks of
2,000-10,000 variables, each variable with 2-4 states and 0-6 parents).

Not BNGenerator (Ide & Cozman's MCMC over bounded-degree DAGs) but a direct construction with the
same per-variable ranges: a random topological order; each variable draws its state count uniformly
from ``states`` and its parent count uniformly from ``parents`` (capped by the number of variables
before it), and takes that many distinct parents uniformly among its predecessors; every CPT row is
an independent symmetric Dirichlet(``concentration``) draw. Variable indices are a random
permutation of the order, so index order is not a topological order.
"""

from __future__ import annotations

import numpy as np

from bayesnet.network import Network
from hybridbn.errors import HybridBNError


class RandomNetworkError(HybridBNError, ValueError):
    """Bad arguments to :func:`random_network`."""


def _check_range(name: str, bounds: tuple[int, int], low: int) -> tuple[int, int]:
    lo, hi = (int(b) for b in bounds)
    if lo < low or hi < lo:
        raise RandomNetworkError(f"{name} must be a range (lo, hi) with {low} <= lo <= hi, got {bounds!r}")
    return lo, hi


def random_network(n_vars: int, seed: int, states: tuple[int, int] = (2, 4), parents: tuple[int, int] = (0, 6),
                   concentration: float = 1.0, name: str | None = None) -> Network:
    """A random network of ``n_vars`` variables, the same for the same arguments (module docstring).

    ``states`` and ``parents`` are inclusive ranges; ``concentration`` is the Dirichlet parameter of
    every state of every CPT row (1: rows uniform on the simplex). The name defaults to
    ``random:{n_vars}:{seed}``, the spelling of :func:`bayesnet.catalog.load_network`.
    """
    if isinstance(n_vars, bool) or not isinstance(n_vars, (int, np.integer)) or n_vars < 1:
        raise RandomNetworkError(f"n_vars must be a positive integer, got {n_vars!r}")
    r_lo, r_hi = _check_range("states", states, 1)
    p_lo, p_hi = _check_range("parents", parents, 0)
    if not (np.isfinite(concentration) and concentration > 0):
        raise RandomNetworkError(f"concentration must be a positive number, got {concentration!r}")
    n = int(n_vars)
    rng = np.random.default_rng(seed)
    index_of = rng.permutation(n)  # index_of[t]: the variable at position t of the topological order
    arities = rng.integers(r_lo, r_hi + 1, size=n)
    counts = np.minimum(rng.integers(p_lo, p_hi + 1, size=n), np.arange(n))  # position t has t predecessors
    parent_lists: list[list[int]] = [[] for _ in range(n)]
    for t in np.flatnonzero(counts).tolist():
        chosen = rng.choice(t, size=int(counts[t]), replace=False)
        parent_lists[int(index_of[t])] = sorted(index_of[chosen].tolist())
    row_counts = [int(np.prod(arities[ps], dtype=np.int64)) for ps in parent_lists]
    draws = rng.standard_gamma(concentration, size=int(np.dot(row_counts, arities)))
    cpts, start = [], 0
    for v, ps in enumerate(parent_lists):
        rows = draws[start: start + row_counts[v] * int(arities[v])].reshape(row_counts[v], int(arities[v]))
        start += rows.size
        total = rows.sum(axis=1, keepdims=True)
        rows = np.where(total > 0, rows / np.where(total > 0, total, 1.0), 1.0 / rows.shape[1])  # underflow
        cpts.append(rows.reshape(*arities[ps].tolist(), int(arities[v])))
    width = len(str(n - 1))
    return Network(
        name=f"random:{n}:{seed}" if name is None else name,
        variables=[f"V{v:0{width}d}" for v in range(n)],
        states=[[f"s{s}" for s in range(int(r))] for r in arities],
        parents=parent_lists,
        cpts=cpts,
    )
