"""Restriction-stage benchmark: our PC-stable, PMMS and MMPC against pgmpy's and causal-learn's PC.

For each network and sample size (same data for everyone, in this process): wall time, number of
distinct CI tests, skeleton precision/recall/F1, skeleton SHD (= extra + missing edges) and, for
the full PC runs that return a CPDAG, the CPDAG SHD against the true CPDAG.  Times are printed
as ratios to our PC-stable.  A second table compares skeletons with each peer under the same
test, alpha and maximum order (our test with ``min_rows_per_df=0`` since the peers have no
minimum-sample rule) and lists the pairs on which they differ.

    .venv/bin/python bench/restrict.py                      # alarm, hailfinder, hepar2 at 1000, 5000
    .venv/bin/python bench/restrict.py --networks andes --sizes 5000 --no-peers --methods pc

Numba kernels are compiled (or loaded from cache) before timing.  Peer libraries are optional
(``pip install .[peers]``); a missing one is reported and skipped.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from constraints.citests import CITest  # noqa: E402
from constraints.pc import pc, pc_skeleton  # noqa: E402
from constraints.pmms import mmpc, pmms  # noqa: E402
from graphs.metrics import shd, skeleton_scores  # noqa: E402
from graphs.pdag import dag_to_cpdag  # noqa: E402
from pipeline.benchmarks import load_network  # noqa: E402
from pipeline.sampling import forward_sample  # noqa: E402

PEER_TEST = {"x2": ("chi_square", "chisq"), "g2": ("g_sq", "gsq")}


def run_ours(method, data, arities, args, min_rows_per_df):
    """Run one of our learners; returns (skeleton, cpdag or None, n_tests, seconds)."""
    test = CITest(data, arities, statistic=args.test, min_rows_per_df=min_rows_per_df)
    n = data.shape[1]
    t0 = time.perf_counter()
    if method == "pc":
        r = pc_skeleton(test, n, alpha=args.alpha, max_order=args.max_order)
        cpdag = None
    elif method == "pc-full":
        cpdag, r = pc(test, n, alpha=args.alpha, max_order=args.max_order)
    else:
        f = pmms if method == "pmms" else mmpc
        r = f(test, n, alpha=args.alpha, max_order=args.mm_max_order)
        cpdag = None
    return r.allowed, cpdag, r.n_tests, time.perf_counter() - t0


def run_pgmpy(data, args):
    import pandas as pd
    from pgmpy.estimators import PC

    df = pd.DataFrame(data.astype(np.int64), columns=[f"V{i}" for i in range(data.shape[1])])
    t0 = time.perf_counter()
    graph, _ = PC(df).estimate(variant="stable", ci_test=PEER_TEST[args.test][0], return_type="skeleton",
                               significance_level=args.alpha, max_cond_vars=args.max_order,
                               show_progress=False, n_jobs=args.jobs)
    secs = time.perf_counter() - t0
    S = np.zeros((data.shape[1],) * 2, dtype=bool)
    for a, b in graph.edges():
        i, j = int(a[1:]), int(b[1:])
        S[i, j] = S[j, i] = True
    return S, None, None, secs


def run_causallearn(data, args):
    from causallearn.search.ConstraintBased.PC import pc as cl_pc

    t0 = time.perf_counter()
    cg = cl_pc(data.astype(np.int64), args.alpha, PEER_TEST[args.test][1], stable=True,
               show_progress=False, max_k=args.max_order)
    secs = time.perf_counter() - t0
    G = cg.G.graph  # G[i, j] = -1 and G[j, i] = 1 encodes i -> j; -1/-1 undirected
    S = (G != 0) & (G.T != 0)
    cpdag = ((G == -1) & (G.T == 1)) | ((G == -1) & (G.T == -1))
    return S, cpdag, None, secs


def differing_pairs(S1, S2):
    u, v = np.nonzero(np.triu(S1 != S2, 1))
    return [(int(a), int(b), "first" if S1[a, b] else "second") for a, b in zip(u, v)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=["alarm", "hailfinder", "hepar2"])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 5000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--max-order", type=int, default=1)
    ap.add_argument("--mm-max-order", type=int, default=None,
                    help="conditioning-size cap for PMMS/MMPC (default unbounded)")
    ap.add_argument("--test", choices=["x2", "g2"], default="x2")
    ap.add_argument("--methods", nargs="+", default=["pc", "pc-full", "pmms", "mmpc"])
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--jobs", type=int, default=1, help="pgmpy n_jobs")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} test={args.test} alpha={args.alpha} "
          f"max_order={args.max_order} mm_max_order={args.mm_max_order}")
    warm = np.zeros((10, 3), dtype=np.uint8)
    CITest(warm, [2, 2, 2])(0, 1, [2])  # compile / load the numba kernels outside the timings

    for name in args.networks:
        net = load_network(name)
        truth = net.adjacency | net.adjacency.T
        true_cpdag = dag_to_cpdag(net.adjacency)
        for n_rows in args.sizes:
            ds = forward_sample(net, n_rows, seed=args.seed)
            data, arities = ds.data, np.asarray(ds.arities)
            runs = {m: run_ours(m, data, arities, args, 5) for m in args.methods}
            same = {}
            if not args.no_peers:
                same["ours(no min-rows rule)"] = run_ours("pc", data, arities, args, 0)
                for label, fn in (("pgmpy-pc", run_pgmpy), ("causallearn-pc", run_causallearn)):
                    try:
                        same[label] = runs[label] = fn(data, args)
                    except Exception as exc:  # optional peers: report and go on
                        print(f"  {label} failed: {type(exc).__name__}: {exc}")
            base = runs.get("pc", next(iter(runs.values())))[3]
            print(f"\n## {name} (n_vars={net.n_vars}, edges={net.n_edges}) N={n_rows}")
            print(f"{'method':<16}{'time s':>9}{'x ours':>8}{'tests':>8}{'edges':>7}{'prec':>7}{'rec':>7}"
                  f"{'F1':>7}{'SHDsk':>7}{'SHDcp':>7}")
            for label, (S, cpdag, n_tests, secs) in runs.items():
                sc = skeleton_scores(S, truth)
                cp = "" if cpdag is None else str(shd(cpdag, true_cpdag))
                print(f"{label:<16}{secs:>9.3f}{secs / base:>8.2f}{n_tests if n_tests is not None else '-':>8}"
                      f"{int(S.sum()) // 2:>7}{sc['precision']:>7.3f}{sc['recall']:>7.3f}{sc['f1']:>7.3f}"
                      f"{sc['fp'] + sc['fn']:>7}{cp:>7}")
            if same:
                ref = same.pop("ours(no min-rows rule)")[0]
                for label, (S, *_rest) in same.items():
                    diff = differing_pairs(ref, S)
                    print(f"  same-convention skeleton vs {label}: {len(diff)} differing pairs "
                          f"(pair, kept by) {diff[:8]}")


if __name__ == "__main__":
    main()
