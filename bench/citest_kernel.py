"""Micro-benchmark of the CI-test hot path: cost per test of ``constraints.citests.CITest``
(numba counting kernel + memo + bookkeeping) against a plain-numpy G2 of the same quantity
(mixed-radix codes + ``np.bincount`` + array ops over all strata), the alternative the numba
kernel was chosen over.  Prints microseconds per distinct test by conditioning-set size.

    .venv/bin/python -m bench.citest_kernel --network alarm --rows 5000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import chdtrc

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest


def numpy_g2(data, arities, x, y, S):
    """G2 with adjusted dof using only numpy array operations (reference for timing)."""
    rx, ry = int(arities[x]), int(arities[y])
    key, q = np.zeros(data.shape[0], dtype=np.int64), 1
    for s in S:
        key, q = key * int(arities[s]) + data[:, s], q * int(arities[s])
    if q * rx * ry > 4 * data.shape[0]:  # dense table only while small, as CITest does
        _, key = np.unique(key, return_inverse=True)
        q = int(key.max()) + 1
    keep = np.bincount(key, minlength=q) > 0  # drop empty strata
    counts = np.bincount((key * rx + data[:, x]) * ry + data[:, y], minlength=q * rx * ry)
    counts = counts.reshape(q, rx, ry)[keep].astype(float)
    nx, ny = counts.sum(2), counts.sum(1)
    nz = nx.sum(1)
    expected = nx[:, :, None] * ny[:, None, :] / nz[:, None, None]
    pos = counts > 0
    stat = 2.0 * np.sum(counts[pos] * np.log(counts[pos] / expected[pos]))
    dof = int(np.sum(((nx > 0).sum(1) - 1) * ((ny > 0).sum(1) - 1)))
    return float(chdtrc(dof, stat)) if dof else 1.0, stat, dof


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="alarm")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--tests", type=int, default=2000)
    args = ap.parse_args(argv)
    net = load_network(args.network)
    ds = forward_sample(net, args.rows, seed=0)
    data, arities = ds.data, np.asarray(ds.arities)
    rng = np.random.default_rng(0)
    CITest(data[:50], arities)(0, 1, [2])  # numba compile / cache load, untimed
    print(f"# {args.network} N={args.rows}: microseconds per distinct test")
    print(f"{'order':>5}{'CITest':>10}{'numpy':>10}{'ratio':>8}")
    for order in range(4):
        triples = []
        for _ in range(args.tests):
            v = rng.choice(net.n_vars, size=order + 2, replace=False)
            triples.append((int(v[0]), int(v[1]), [int(s) for s in v[2:]]))
        test = CITest(data, arities, min_rows_per_df=0)
        t0 = time.perf_counter()
        ours = [test(x, y, S) for x, y, S in triples]
        t_ours = (time.perf_counter() - t0) / test.n_tests * 1e6
        t0 = time.perf_counter()
        ref = [numpy_g2(data, arities, x, y, S) for x, y, S in triples]
        t_np = (time.perf_counter() - t0) / len(triples) * 1e6
        assert all(abs(a.statistic - b[1]) <= 1e-7 * max(1.0, b[1]) and a.dof == b[2] for a, b in zip(ours, ref))
        print(f"{order:>5}{t_ours:>10.1f}{t_np:>10.1f}{t_np / t_ours:>8.1f}")


if __name__ == "__main__":
    main()
