"""Exact large-sample oracle score (Chickering & Meek 2015, section 5).

Instead of counting data, the family score is the minimum-description-length score of a
virtual data set of ``N`` records drawn from a known network, with the expected counts
``N p(x, w)`` computed by exact inference:

    s(X, W) = N * sum_{x, w} p(x, w) log p(x | w)  -  (log N / 2) (r_X - 1) q_W
            = -N * (H(X, W) - H(W))                 -  (log N / 2) (r_X - 1) q_W,

with ``H`` the Shannon entropy (nats) of a marginal of the true joint and ``q_W`` the number of
configurations of ``W``. The paper uses ``N = 5·10^9`` ("five billion records"), the default
here. The joint is enumerated explicitly, so this is for small networks (the product of the
arities is limited by ``max_joint_size``); marginal entropies are memoised per variable set.
The score is decomposable and score equivalent (it is BIC with expected sufficient statistics).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.special import entr

from graphs.bitsets import bits, to_mask
from hybridbn.errors import HybridBNError

DEFAULT_N = 5e9
"""Virtual sample size of the paper's experiment."""


class OracleScoreError(HybridBNError, ValueError):
    """A network the oracle score cannot use."""


def joint_distribution(parents: Sequence[Sequence[int]], cpts: Sequence[np.ndarray], max_size: int = 1 << 24) -> np.ndarray:
    """Full joint table ``p[x_0, ..., x_{n-1}]`` of a discrete Bayesian network.

    ``parents[v]`` lists the parents of ``v`` in the order of the CPT axes; ``cpts[v]`` has
    shape ``(*[r_p for p in parents[v]], r_v)`` (the project's Network convention) with rows
    summing to one.
    """
    n = len(parents)
    if len(cpts) != n:
        raise OracleScoreError(f"got {n} parent lists but {len(cpts)} CPTs")
    arities = [int(np.asarray(c).shape[-1]) for c in cpts]
    size = math.prod(arities)
    if size > max_size:
        raise OracleScoreError(
            f"joint table would have {size} entries (> max_size={max_size}); the oracle score "
            "enumerates the joint and is meant for small networks"
        )
    joint = np.ones(arities, dtype=np.float64)
    for v in range(n):
        cpt = np.asarray(cpts[v], dtype=np.float64)
        axes = [int(p) for p in parents[v]] + [v]
        if len(set(axes)) != len(axes) or any(not 0 <= a < n for a in axes):
            raise OracleScoreError(f"variable {v}: bad parent list {list(parents[v])}")
        expected = tuple(arities[a] for a in axes)
        if cpt.shape != expected:
            raise OracleScoreError(f"variable {v}: CPT shape {cpt.shape}, expected {expected}")
        if not np.allclose(cpt.sum(axis=-1), 1.0, atol=1e-6):
            raise OracleScoreError(f"variable {v}: CPT rows do not sum to one")
        order = np.argsort(axes)
        shape = [1] * n
        for a in axes:
            shape[a] = arities[a]
        joint *= cpt.transpose(order).reshape(shape)
    return joint


def all_marginal_entropies(joint: np.ndarray) -> np.ndarray:
    """Entropies (nats) of every marginal of ``joint``, indexed by the variable-set bitmask.

    Depth-first over subsets: each subset's marginal is its parent's with one more variable
    summed out (variables removed in decreasing index order, so every subset is visited once);
    total work ``O(3^n)`` for binary variables instead of ``O(2^n)`` per marginal.
    """
    n = joint.ndim
    out = np.empty(1 << n)
    stack = [(joint, (1 << n) - 1, n)]
    while stack:
        arr, mask, bound = stack.pop()
        out[mask] = float(entr(arr).sum())
        for axis, v in enumerate(bits(mask)):
            if v >= bound:
                break
            stack.append((arr.sum(axis=axis), mask & ~(1 << v), v))
    return out


class OracleScore:
    """Callable ``score(child, parents)`` giving the section-5 oracle MDL score of a known network.

    ``parents`` / ``cpts`` describe the generative network (see :func:`joint_distribution`);
    ``n_samples`` is the virtual data size ``N``. Joints with at most ``precompute_limit``
    entries get all marginal entropies computed up front (:func:`all_marginal_entropies`), which
    is much faster than one marginalisation per family when most families are needed (BES from
    the complete graph); larger ones are marginalised lazily per requested set.
    """

    def __init__(
        self,
        parents: Sequence[Sequence[int]],
        cpts: Sequence[np.ndarray],
        n_samples: float = DEFAULT_N,
        max_joint_size: int = 1 << 24,
        precompute_limit: int = 1 << 18,
    ):
        if not n_samples > 1:
            raise OracleScoreError(f"n_samples must be > 1, got {n_samples}")
        self.joint = joint_distribution(parents, cpts, max_joint_size)
        self.n_vars = self.joint.ndim
        self.arities = np.array(self.joint.shape, dtype=np.int64)
        self.n_samples = float(n_samples)
        self._half_log_n = 0.5 * math.log(self.n_samples)
        self._entropy: dict[int, float] = {0: 0.0}
        self._all = all_marginal_entropies(self.joint) if self.joint.size <= precompute_limit else None

    def entropy(self, nodes: int) -> float:
        """Entropy (nats) of the marginal over the variable set ``nodes`` (a bitmask)."""
        if self._all is not None:
            return float(self._all[nodes])
        h = self._entropy.get(nodes)
        if h is None:
            drop = tuple(v for v in range(self.n_vars) if not nodes >> v & 1)
            h = self._entropy[nodes] = float(entr(self.joint.sum(axis=drop)).sum())
        return h

    def __call__(self, child: int, parents: Sequence[int]) -> float:
        w = to_mask(parents)
        if w >> child & 1:
            raise OracleScoreError(f"variable {child} cannot be its own parent")
        ll = -self.n_samples * (self.entropy(w | (1 << child)) - self.entropy(w))
        q = math.prod(int(self.arities[v]) for v in bits(w))
        return ll - self._half_log_n * (int(self.arities[child]) - 1) * q
