"""Same-run comparison of the treewidth-bounded learners k-G, S2 and S2+ on a large network (issue 55;
Scanagatta et al. NIPS 2016, section 4.4 and Figure 3).

For each network: ``--rows`` rows (seed 0); sparse candidate parents (``scores.identification``,
``--candidates`` plus 4 conditional, BIC); for each ``k``: the BIC table with palim ``k`` on those
candidates; then every solver for ``--seconds`` on the same table. ``W`` is the W-score against the
acyclicity-free bound ``sum_v max_W s(v, W)`` of that table (an over-estimate of the true W-score);
``samples`` counts orders (k-G) or k-trees (S2, S2+), ``accepted`` the k-trees S2 kept.

    .venv/bin/python -m bench.treewidth_large [--networks random:300] [--ks 2 5] [--seconds 30]
"""

from __future__ import annotations

import argparse
import resource
import time

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from scores.candidates import build_score_table
from scores.identification import identify_candidates
from search.kgreedy import k_greedy
from search.ktree_search import w_score
from search.s2 import s2, s2_plus

SOLVERS = {"kg": k_greedy, "s2": s2, "s2plus": s2_plus}


def acyclicity_free_bound(table) -> float:
    """``sum_v max_W s(v, W)``: each child's first row is its best."""
    return sum(table.score[table.child_ptr[:-1]].tolist())


def compare(network: str, ks, seconds: float, rows: int, candidates: int, jobs: int, solvers, seed: int):
    """Yield one result row (a dict) per ``k`` and solver."""
    data = forward_sample(load_network(network), rows, seed=0)
    start = time.perf_counter()
    allowed = identify_candidates(data.data, data.arities, m=candidates, score="bic", n_jobs=jobs)
    ident_s = time.perf_counter() - start
    for k in ks:
        start = time.perf_counter()
        table = build_score_table(data.data, data.arities, score="bic", palim=k, allowed=allowed, n_jobs=jobs)
        score_s = time.perf_counter() - start
        bound = acyclicity_free_bound(table)
        for solver in solvers:
            res = SOLVERS[solver](table, k, time_limit=seconds, seed=seed)
            yield {"network": network, "n": table.n_vars, "k": k, "ident_s": ident_s, "sets": table.n_candidates,
                   "score_s": score_s, "bound": bound, "solver": solver, "score": res.score,
                   "W": w_score(res.score, bound), "samples": res.n_orders, "accepted": res.stats.get("accepted", ""),
                   "time_s": res.time_s}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=["random:300"])
    ap.add_argument("--ks", nargs="+", type=int, default=[2, 5])
    ap.add_argument("--seconds", type=float, default=30.0, help="time limit of every solver run")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--candidates", type=int, default=16, metavar="M")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--solvers", nargs="+", choices=sorted(SOLVERS), default=["kg", "s2", "s2plus"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"{'network':14} {'n':>5} {'k':>2} {'ident_s':>7} {'sets':>7} {'score_s':>7} {'bound':>12} {'solver':6} "
          f"{'score':>12} {'W':>8} {'samples':>7} {'accepted':>8} {'time_s':>6}", flush=True)
    for network in args.networks:
        for r in compare(network, args.ks, args.seconds, args.rows, args.candidates, args.jobs, args.solvers,
                         args.seed):
            print(f"{r['network']:14} {r['n']:5d} {r['k']:2d} {r['ident_s']:7.1f} {r['sets']:7d} {r['score_s']:7.1f} "
                  f"{r['bound']:12.1f} {r['solver']:6} {r['score']:12.1f} {r['W']:8.5f} {r['samples']:7d} "
                  f"{r['accepted']!s:>8} {r['time_s']:6.1f}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory {peak:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
