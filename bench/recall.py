"""Restriction recall: how many true edges the CI restriction keeps, per network and sample size.

For each network and size (own forward samples, seed 0): the number of allowed pairs, the
recall of the true skeleton (true edges allowed / true edges) and the CPU seconds of each
restriction (G2, alpha 0.05, the pipeline's defaults; PC order <= 1 unless ``--max-order``).
With ``--hybrid K ...`` the whole default pipeline (PC, BDeu, palim 3, ILP) also runs with
``--add-candidates K`` (each child's K best single parents by BDeu gain allowed beyond the PC
skeleton; 0 = the PC skeleton alone): allowed pairs, recall, CPDAG SHD and CPU seconds.

    .venv/bin/python -m bench.recall
    .venv/bin/python -m bench.recall --networks hailfinder --sizes 1000 --methods pc pmms
    .venv/bin/python -m bench.recall --hybrid 0 2 4 --methods
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest
from constraints.pc import pc_skeleton
from constraints.pmms import pmms
from constraints.restriction import Restriction
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.stages import run_stages

NETWORKS = ["asia", "child", "insurance", "water", "alarm", "barley", "hailfinder", "hepar2"]


def restriction(method, data, arities, args):
    """The allowed (symmetric) matrix of one restriction and its CPU seconds."""
    test = CITest(data, arities, statistic=args.test, alpha=args.alpha)
    n = data.shape[1]
    c0 = time.process_time()
    if method == "pc":
        allowed = pc_skeleton(test, n, alpha=args.alpha, max_order=args.max_order).allowed
    else:
        allowed = pmms(test, n, alpha=args.alpha, max_order=args.max_order).allowed
    return allowed, time.process_time() - c0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=NETWORKS)
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 5000])
    ap.add_argument("--methods", nargs="*", choices=["pc", "pmms"], default=["pc"])
    ap.add_argument("--hybrid", nargs="*", type=int, default=[], metavar="K",
                    help="also run the default pipeline with --add-candidates K for each K")
    ap.add_argument("--test", choices=["g2", "x2"], default="g2")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--max-order", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"# load={os.getloadavg()[0]:.1f} test={args.test} alpha={args.alpha} max_order={args.max_order}")
    print(f"{'network':<12}{'N':>6}{'method':>8}{'true':>6}{'allowed':>9}{'kept':>6}{'recall':>8}{'cpu s':>8}")
    for name in args.networks:
        net = load_network(name)
        truth = np.triu(net.adjacency | net.adjacency.T, 1)
        for n_rows in args.sizes:
            ds = forward_sample(net, n_rows, seed=0)
            for method in args.methods:
                allowed, cpu = restriction(method, ds.data, np.asarray(ds.arities), args)
                kept = int((np.triu(allowed, 1) & truth).sum())
                print(f"{name:<12}{n_rows:>6}{method:>8}{int(truth.sum()):>6}{int(np.triu(allowed, 1).sum()):>9}"
                      f"{kept:>6}{kept / truth.sum():>8.3f}{cpu:>8.2f}", flush=True)
            for k in args.hybrid:
                print(hybrid_row(name, n_rows, k, truth), flush=True)


def hybrid_row(name: str, n_rows: int, k: int, truth: np.ndarray) -> str:
    """One default pipeline run with ``--add-candidates k`` in a throw-away cache."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunConfig(network=name, rows=n_rows, add_candidates=k).validated()
        c0 = time.process_time()
        out = run_stages(StageCache(tmp), cfg)
        cpu = time.process_time() - c0
    allowed = Restriction.from_frame(out["restrict"].frames["restriction"], meta=out["restrict"].meta).allowed
    kept = int((np.triu(allowed, 1) & truth).sum())
    return (f"{name:<12}{n_rows:>6}{'pc+' + str(k):>8}{int(truth.sum()):>6}{int(np.triu(allowed, 1).sum()):>9}"
            f"{kept:>6}{kept / truth.sum():>8.3f}{cpu:>8.2f}  SHD {out['evaluate'].meta['shd']}"
            f"  {out['solve'].meta['result'].get('status')}")


if __name__ == "__main__":
    main()
