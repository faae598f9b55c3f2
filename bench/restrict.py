"""Restriction-stage benchmark: our PC-stable, PMMS and MMPC against pgmpy's and causal-learn's PC.

For each network and sample size (same data for everyone, in this process): wall time, number of
distinct CI tests, skeleton precision/recall/F1, skeleton SHD (= extra + missing edges) and, for
the full PC runs that return a CPDAG, the CPDAG SHD against the true CPDAG.  Wall and CPU times
are printed, with ratios to our PC-stable (on a shared machine CPU seconds are the steadier
figure).  Then skeletons are compared under the same test, alpha and maximum order (our test with
``min_rows_per_df=0`` since the peers have no minimum-sample rule; both use observed-margin
degrees of freedom per stratum) and the pairs on which they differ are listed:

* causal-learn's PC (``stable=True``) against our PC-stable;
* pgmpy's PC against our PC with ``stable=False``: pgmpy 1.x's ``variant="stable"`` removes an edge
  as soon as it is separated, like its ``"orig"`` (its stable branch has the same code), so the
  skeleton depends on the edge order; it also decides independence by ``p >= alpha``;
* pgmpy's PC driven by *our* test (``ci_test`` callable): isolates the algorithm from the test.
  pgmpy's own ``chi_square`` / ``g_sq`` applies Yates' continuity correction to every 2x2
  stratum (``scipy.stats.chi2_contingency``'s default), which ours does not, so with its own
  test it differs on pairs of binary variables near the threshold.

    .venv/bin/python -m bench.restrict                      # alarm, hailfinder, hepar2 at 1000, 5000
    .venv/bin/python -m bench.restrict --networks andes --sizes 5000 --no-peers --methods pc

Numba kernels are compiled (or loaded from cache) before timing.  Peer libraries are optional
(``pip install .[peers]``); a missing one is reported and skipped.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest
from constraints.pc import pc, pc_skeleton
from constraints.pmms import mmpc, pmms
from graphs.metrics import shd, skeleton_scores
from graphs.pdag import dag_to_cpdag

PEER_TEST = {"x2": ("chi_square", "chisq"), "g2": ("g_sq", "gsq")}


def run_ours(method, data, arities, args, min_rows_per_df):
    """Run one of our learners; returns (skeleton, cpdag or None, n_tests, seconds)."""
    test = CITest(data, arities, statistic=args.test, min_rows_per_df=min_rows_per_df)
    n = data.shape[1]
    t0, c0 = time.perf_counter(), time.process_time()
    if method in ("pc", "pc-unstable"):
        r = pc_skeleton(test, n, alpha=args.alpha, max_order=args.max_order, stable=method == "pc")
        cpdag = None
    elif method == "pc-full":
        cpdag, r = pc(test, n, alpha=args.alpha, max_order=args.max_order)
    else:
        f = pmms if method == "pmms" else mmpc
        r = f(test, n, alpha=args.alpha, max_order=args.mm_max_order)
        cpdag = None
    return r.allowed, cpdag, r.n_tests, time.perf_counter() - t0, time.process_time() - c0


def run_pgmpy(data, args, test=None):
    """pgmpy's PC skeleton with its own test, or with ``test`` (one of ours) as ``ci_test``."""
    import pandas as pd
    from pgmpy.estimators import PC

    df = pd.DataFrame(data.astype(np.int64), columns=[f"V{i}" for i in range(data.shape[1])])
    def ours(x, y, z, significance_level, **_):
        return test(int(x[1:]), int(y[1:]), [int(v[1:]) for v in z]).p_value >= significance_level

    ci_test = PEER_TEST[args.test][0] if test is None else ours

    t0, c0 = time.perf_counter(), time.process_time()
    graph, _ = PC(df).estimate(variant="stable", ci_test=ci_test, return_type="skeleton",
                               significance_level=args.alpha, max_cond_vars=args.max_order,
                               show_progress=False, n_jobs=args.jobs)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    S = np.zeros((data.shape[1],) * 2, dtype=bool)
    for a, b in graph.edges():
        i, j = int(a[1:]), int(b[1:])
        S[i, j] = S[j, i] = True
    return S, None, None, secs, cpu


def run_causallearn(data, args):
    from causallearn.search.ConstraintBased.PC import pc as cl_pc

    t0, c0 = time.perf_counter(), time.process_time()
    cg = cl_pc(data.astype(np.int64), args.alpha, PEER_TEST[args.test][1], stable=True,
               show_progress=False, max_k=args.max_order)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    G = cg.G.graph  # G[i, j] = -1 and G[j, i] = 1 encodes i -> j; -1/-1 undirected
    S = (G != 0) & (G.T != 0)
    cpdag = ((G == -1) & (G.T == 1)) | ((G == -1) & (G.T == -1))
    return S, cpdag, None, secs, cpu


def differing_pairs(S1, S2):
    u, v = np.nonzero(np.triu(S1 != S2, 1))
    return [(int(a), int(b), "ours" if S1[a, b] else "peer") for a, b in zip(u, v)]


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
    ap.add_argument("--pgmpy-max-vars", type=int, default=40,
                    help="skip pgmpy on larger networks (about 50 ms per test here)")
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
            pairs = []  # (label, our run, peer run) compared under the same conventions
            if not args.no_peers:
                stable = run_ours("pc", data, arities, args, 0)
                try:
                    runs["causallearn-pc"] = run_causallearn(data, args)
                    pairs.append(("causallearn-pc vs ours PC-stable", stable, runs["causallearn-pc"]))
                except ImportError as exc:
                    print(f"  causal-learn skipped: {exc}")
                if net.n_vars > args.pgmpy_max_vars:
                    print(f"  pgmpy skipped on {name}: {net.n_vars} variables > --pgmpy-max-vars "
                          f"{args.pgmpy_max_vars} (it needs minutes here)")
                else:
                    try:
                        runs["pgmpy-pc"] = run_pgmpy(data, args)
                    except ImportError as exc:
                        print(f"  pgmpy skipped: {exc}")
                    else:
                        unstable = run_ours("pc-unstable", data, arities, args, 0)
                        test = CITest(data, arities, statistic=args.test, min_rows_per_df=0)
                        runs["pgmpy-pc(our test)"] = run_pgmpy(data, args, test)
                        pairs += [("pgmpy-pc vs ours PC (stable=False)", unstable, runs["pgmpy-pc"]),
                                  ("pgmpy-pc(our test) vs ours PC (stable=False)", unstable,
                                   runs["pgmpy-pc(our test)"])]
            base_wall, base_cpu = runs.get("pc", next(iter(runs.values())))[3:5]
            print(f"\n## {name} (n_vars={net.n_vars}, edges={net.n_edges}) N={n_rows}")
            print(f"{'method':<20}{'wall s':>9}{'x ours':>8}{'cpu s':>9}{'x ours':>8}{'tests':>8}{'edges':>7}"
                  f"{'prec':>7}{'rec':>7}{'F1':>7}{'SHDsk':>7}{'SHDcp':>7}")
            for label, (S, cpdag, n_tests, secs, cpu) in runs.items():
                sc = skeleton_scores(S, truth)
                cp = "" if cpdag is None else str(shd(cpdag, true_cpdag))
                print(f"{label:<20}{secs:>9.3f}{secs / base_wall:>8.2f}{cpu:>9.3f}{cpu / base_cpu:>8.2f}"
                      f"{n_tests if n_tests is not None else '-':>8}"
                      f"{int(S.sum()) // 2:>7}{sc['precision']:>7.3f}{sc['recall']:>7.3f}{sc['f1']:>7.3f}"
                      f"{sc['fp'] + sc['fn']:>7}{cp:>7}")
            for label, ours, theirs in pairs:
                diff = differing_pairs(ours[0], theirs[0])
                print(f"  same test/alpha/order, {label}: {len(diff)} differing pairs "
                      f"(u, v, kept by ours|peer) {diff[:8]}")

if __name__ == "__main__":
    main()
