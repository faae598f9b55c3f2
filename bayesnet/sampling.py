"""Forward (ancestral) sampling of a discrete Bayesian network (Henrion 1988, logic sampling).

Variables are drawn in topological order. For each variable, every row's parent configuration
index is computed in mixed radix (last parent fastest, matching the CPT layout of
:class:`bayesnet.network.Network`), and the state is drawn by inverse CDF: with ``c`` the
cumulative row of that configuration and ``u ~ U[0, 1)``, the state is ``#{k < r-1 : c_k <= u}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from bayesnet.dataset import Dataset, code_dtype, transpose_codes
from bayesnet.network import Network, parent_config_index

logger = logging.getLogger(__name__)


def forward_sample(network: Network, n_rows: int, seed: int,
                   checkpoint: Callable[[], None] | None = None) -> Dataset:
    """``n_rows`` i.i.d. samples of ``network``, deterministic for a given ``seed``.

    One ``numpy.random.default_rng(seed)`` stream supplies one uniform per row per variable,
    consumed in topological order (ties by index). ``checkpoint`` is called before each
    variable: a safe point where the caller may abandon the sampling by raising (a stop request).
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise ValueError(f"n_rows must be a positive integer, got {n_rows!r}")
    network.validate()
    rng = np.random.default_rng(seed)
    n_rows = int(n_rows)
    arities = network.arities
    # one contiguous row per variable while sampling; transposed to (n_rows, n_vars) at the end
    columns = np.empty((network.n_vars, n_rows), dtype=code_dtype(int(arities.max())))
    for v in network.topological_order():
        if checkpoint is not None:
            checkpoint()
        r = int(arities[v])
        cum = np.cumsum(np.asarray(network.cpts[v], dtype=np.float64).reshape(-1, r), axis=1)
        cum /= cum[:, -1:]  # exactly 1.0 from the last positive state on, so zero-probability
        # states are never drawn (u < 1)
        ps = network.parents[v]
        config = parent_config_index([columns[p] for p in ps], [arities[p] for p in ps]) if ps else None
        u = rng.random(n_rows)
        state = np.zeros(n_rows, dtype=columns.dtype)
        for k in range(r - 1):
            threshold = cum[:, k]
            state += u >= (threshold[config] if config is not None else threshold[0])
        columns[v] = state
    logger.debug("sampled %d rows of %s", n_rows, network.name)
    states = [list(s) for s in network.states]
    return Dataset(data=transpose_codes(columns), names=list(network.variables), states=states)
