"""Compare our GES / SGES with pgmpy's and causal-learn's GES on the same sampled data.

For each network: forward-sample N rows (bayesnet.sampling), run

* ours: ``search.ges.ges`` and ``search.sges.sges`` (bound parents:3) with ``scores.local``
  (BDeu ESS 1 and BIC),
* pgmpy 1.x ``pgmpy.estimators.GES(df).estimate(scoring_method=...)`` (BDeu ESS 1, BIC),
* causal-learn ``causallearn.search.ScoreBased.GES.ges(X, "local_score_BDeu")`` (it has no
  discrete BIC; its BDeu adds a structure prior),

and print wall time, distinct local-score evaluations (ours: cache size; pgmpy: distinct
families passed to its base scorer; causal-learn: its score cache size), SHD of the CPDAG vs the
true CPDAG (graphs.metrics.shd), the score of the result under *our* score (a consistent
extension), and ratios peer / ours.

    .venv/bin/python -m bench.ges --networks asia sachs child --rows 5000
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
import pandas as pd

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from graphs.metrics import shd
from graphs.pdag import dag_to_cpdag, pdag_to_dag
from scores.local import local_score
from search.ges import ges
from search.score_cache import LocalScoreCache
from search.sges import sges


def our_score(data, arities, score):
    def f(child, parents):
        return local_score(data, arities, child, parents, score=score, ess=1.0)

    return f


def run_ours(data, arities, score, solver):
    cache = LocalScoreCache(our_score(data, arities, score), data.shape[1])
    t0 = time.perf_counter()
    r = ges(cache, data.shape[1]) if solver == "ges" else sges(cache, data.shape[1], ("parents", 3))
    return r.cpdag, time.perf_counter() - t0, r.n_score_evaluations


def run_pgmpy(df, score):
    from pgmpy.estimators import BIC, GES, BDeu

    base = BDeu(df, equivalent_sample_size=1.0) if score == "bdeu" else BIC(df)
    seen = set()
    original = base.local_score

    def counted(variable, parents):
        seen.add((variable, tuple(sorted(parents))))
        return original(variable, parents)

    base.local_score = counted
    t0 = time.perf_counter()
    pdag = GES(df).estimate(scoring_method=base)
    elapsed = time.perf_counter() - t0
    idx = {c: i for i, c in enumerate(df.columns)}
    n = len(idx)
    P = np.zeros((n, n), dtype=bool)
    for u, v in pdag.directed_edges:
        P[idx[u], idx[v]] = True
    for u, v in pdag.undirected_edges:
        P[idx[u], idx[v]] = P[idx[v], idx[u]] = True
    return P, elapsed, len(seen)


def run_causallearn(data):
    import causallearn.search.ScoreBased.GES as G

    instances = []
    original = G.LocalScoreClass

    class Recording(original):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            instances.append(self)

    G.LocalScoreClass = Recording
    try:
        t0 = time.perf_counter()
        rec = G.ges(data.astype(np.int64), score_func="local_score_BDeu")
        elapsed = time.perf_counter() - t0
    finally:
        G.LocalScoreClass = original
    g = rec["G"].graph
    # causal-learn: g[j, i] = 1, g[i, j] = -1 means i -> j; both -1 means i - j
    P = ((g.T == 1) & (g == -1)) | ((g == -1) & (g.T == -1))
    evals = sum(len(t) for inst in instances for t in inst.score_cache.values())
    return P, elapsed, evals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", nargs="+", default=["asia", "sachs", "child"])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scores", nargs="+", default=["bdeu", "bic"])
    ap.add_argument("--peers", nargs="*", default=["pgmpy", "causallearn"])
    ap.add_argument("--peer-max-vars", type=int, default=30,
                    help="skip the peers on larger networks (they need many minutes here)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)

    print(f"load average at start {os.getloadavg()[0]:.1f} (2-core machine shared with other jobs)")
    print("| network | score | solver | time s | distinct scores | SHD | our score of result | time ratio | evals ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.networks:
        net = load_network(name)
        ds = forward_sample(net, args.rows, args.seed)
        data, arities = ds.data, ds.arities
        truth = dag_to_cpdag(net.adjacency)
        df = pd.DataFrame(data.astype(np.int64), columns=net.variables)
        for score in args.scores:
            judge = LocalScoreCache(our_score(data, arities, score), data.shape[1])
            judge(0, (1, 2))  # compile the numba kernels before timing
            runs = [("ours-ges", lambda: run_ours(data, arities, score, "ges")),
                    ("ours-sges(parents:3)", lambda: run_ours(data, arities, score, "sges"))]
            if args.peers and net.n_vars > args.peer_max_vars:
                print(f"| {name} | {score} | peers skipped: {net.n_vars} variables > --peer-max-vars "
                      f"{args.peer_max_vars} | | | | | | |")
            else:
                if "pgmpy" in args.peers:
                    runs.append(("pgmpy", lambda: run_pgmpy(df, score)))
                if "causallearn" in args.peers and score == "bdeu":
                    runs.append(("causal-learn", lambda: run_causallearn(data)))
            ref = None
            for solver, fn in runs:
                P, elapsed, evals = fn()
                try:
                    value = f"{judge.dag_score(pdag_to_dag(P)):.1f}"
                except ValueError:
                    value = "(no consistent extension)"
                if ref is None:
                    ref = (elapsed, evals)
                print(f"| {name} | {score} | {solver} | {elapsed:.2f} | {evals} | {shd(P, truth)} | {value} "
                      f"| {elapsed / ref[0]:.2f} | {evals / ref[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
