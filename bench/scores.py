"""Benchmark of the score-table stage (scores.candidates) against pgmpy's local scoring.

For each case it prints: wall and CPU time of ``build_score_table`` (palim 3, no restriction),
families scored per second, table size before pruning (all sets within palim) and after, and for
the alarm/hepar2 cases pgmpy's BDeu/BIC ``local_score`` on a random sample of the same families
(families per second and the speed ratio). Also checks that our scores equal pgmpy's on the sample.
The peak resident memory of the process so far is printed after each case (the andes cases come
last, so their line bounds the memory of the andes table).

    .venv/bin/python -m bench.scores                # everything (several minutes)
    .venv/bin/python -m bench.scores --quick        # alarm only, small pgmpy sample
    .venv/bin/python -m bench.scores --no-peers --totals andes:5000:bdeu
    .venv/bin/python -m bench.scores --no-peers --palim 4 --totals hepar2:1000:bic   # larger limits
    .venv/bin/python -m bench.scores --no-peers --n-jobs 1 --children 0,50,100,150,200 --totals andes:5000:bdeu
                                        # per-set cost: 5 children, every other variable a candidate

Each case also prints the enumeration counters: sets generated (every proper subset alive),
scored (counted), kept, never generated (a subset was cut by a bound), and what each bound cut.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings

import numpy as np
import pandas as pd

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from scores.candidates import build_score_table
from scores.local import local_score

PEER_CASES = [(net, n, s) for net in ("alarm", "hepar2") for n in (1000, 5000) for s in ("bdeu", "bic")]
TOTAL_CASES = ["hailfinder:5000:bdeu", "barley:5000:bdeu", "andes:1000:bdeu", "andes:5000:bdeu"]


def run_ours(data, arities, score, n_jobs, palim=3, children=None):
    allowed = None
    if children is not None:  # only these children get candidates (all other variables)
        allowed = np.zeros((data.shape[1], data.shape[1]), dtype=bool)
        allowed[:, children] = True
    cpu, wall = time.process_time(), time.perf_counter()
    table = build_score_table(data, arities, score, ess=1.0, palim=palim, allowed=allowed, n_jobs=n_jobs)
    return table, time.perf_counter() - wall, time.process_time() - cpu


def run_pgmpy(data, score, families):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.estimators import BIC, BDeu

        frame = pd.DataFrame(data.astype(np.int64), columns=[f"v{i}" for i in range(data.shape[1])])
        scorer = BDeu(frame, equivalent_sample_size=1.0) if score == "bdeu" else BIC(frame)
        start = time.perf_counter()
        values = [scorer.local_score(f"v{c}", [f"v{p}" for p in ps]) for c, ps in families]
    return values, time.perf_counter() - start


def sample_families(n_vars, rng, size):
    out = []
    for _ in range(size):
        child = int(rng.integers(n_vars))
        k = int(rng.choice([1, 2, 3], p=[0.05, 0.15, 0.8]))  # palim-3 tables are mostly size 3
        others = np.setdiff1d(np.arange(n_vars), [child])
        out.append((child, tuple(sorted(int(p) for p in rng.choice(others, k, replace=False)))))
    return out


def describe(table, wall, cpu):
    c = table.meta["counts"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return (f"wall {wall:7.2f} s  cpu {cpu:7.2f} s  scored {c['scored']:>11,d}  "
            f"{c['scored'] / wall:>12,.0f} fam/s  sets {c['total']:>11,d} -> kept {c['kept']:>7,d}  "
            f"peak RSS so far {peak:,.0f} MiB\n{'':>22}generated {c['generated']:,d}, never generated "
            f"{c['not_generated']:,d}, cut before counting: upper bound {c['pruned_upper_bound']:,d}, penalty "
            f"{c['pruned_penalty_bound']:,d}, theorem 1 {c['pruned_theorem1']:,d}, entropy {c['pruned_entropy']:,d}; "
            f"after counting: BDeu bound {c['pruned_bdeu_bound']:,d}, not expanded {c['not_expanded']:,d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="alarm only, 50 pgmpy families")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--pgmpy-sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--palim", type=lambda v: None if v == "none" else int(v), default=3,
                        help="parent limit of the --totals cases, or 'none' (default 3)")
    parser.add_argument("--children", type=lambda v: [int(c) for c in v.split(",")], default=None,
                        help="comma-separated children scored in the --totals cases (default: all)")
    parser.add_argument("--no-peers", action="store_true", help="skip the alarm/hepar2 cases against pgmpy")
    parser.add_argument("--totals", nargs="*", default=TOTAL_CASES, metavar="NET:N:SCORE",
                        help="cases timed without pgmpy (default: %(default)s)")
    args = parser.parse_args()
    peer_cases = [] if args.no_peers else [c for c in PEER_CASES if c[0] == "alarm"] if args.quick else PEER_CASES
    sample = 50 if args.quick else args.pgmpy_sample
    print(f"cores {os.cpu_count()}, n_jobs {args.n_jobs}, load average at start {os.getloadavg()}")
    rng = np.random.default_rng(args.seed)
    for name, n_rows, score in peer_cases:
        ds = forward_sample(load_network(name), n_rows, args.seed)
        table, wall, cpu = run_ours(ds.data, ds.arities, score, args.n_jobs)
        families = sample_families(ds.data.shape[1], rng, sample)
        theirs, t_pgmpy = run_pgmpy(ds.data, score, families)
        ours = [local_score(ds.data, ds.arities, c, ps, score) for c, ps in families]
        agree = np.allclose(ours, theirs, rtol=1e-9)
        ours_rate = table.meta["counts"]["scored"] / wall
        pgmpy_rate = len(families) / t_pgmpy
        print(f"{name:>10} N={n_rows:<5} {score:>4}  {describe(table, wall, cpu)}")
        print(f"{'':>10} pgmpy: {pgmpy_rate:>9,.0f} fam/s on {len(families)} sampled families "
              f"(scores agree: {agree});  ours/pgmpy = {ours_rate / pgmpy_rate:,.0f}x")
    if not args.quick:
        for case in args.totals:
            name, n_rows, score = case.split(":")
            n_rows = int(n_rows)
            ds = forward_sample(load_network(name), n_rows, args.seed)
            table, wall, cpu = run_ours(ds.data, ds.arities, score, args.n_jobs, args.palim, args.children)
            print(f"{name:>10} N={n_rows:<5} {score:>4}  {describe(table, wall, cpu)}")
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
