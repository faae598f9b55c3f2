"""Benchmark of the GOBNILP-style ILP (issue 5): time to proven optimality, nodes, cuts, table size.

For each network and sample size: sample (seed 0), score (BDeu ESS 1, palim 3), optionally
restrict with the PC skeleton (G2, alpha 0.05, max order 1), then solve. Prints wall and CPU
seconds per stage (the machine may be shared: CPU seconds are the steadier figure).

Reference (GOBNILP C on SCIP 6, scoring + solving, 2 cores): alarm N=1000 ~5 s, insurance
N=5000 ~5 s, alarm N=5000 ~27 s, hepar2 N=5000 ~8 s, hailfinder N=5000 ~33 s.

    .venv/bin/python -m bench.ilp [--networks alarm hailfinder hepar2] [--rows 1000 5000]
                                  [--extra insurance:5000] [--no-pc | --only-pc] [--time-limit 600]

``--extra NET:N ...`` adds single cases after the networks x rows grid (default: insurance N=5000,
one of the reference figures).
"""

from __future__ import annotations

import argparse
import time

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest
from constraints.pc import pc_skeleton
from ilp import solve_ilp
from scores.candidates import build_score_table


class Clock:
    """Wall and CPU seconds of a block."""

    def __enter__(self):
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def run(network: str, n_rows: int, use_pc: bool, time_limit: float) -> dict:
    data = forward_sample(load_network(network), n_rows, seed=0)
    allowed = None
    with Clock() as restrict:
        if use_pc:
            test = CITest(data.data, data.arities)
            allowed = pc_skeleton(test, data.data.shape[1], alpha=0.05, max_order=1).allowed_parents()
    with Clock() as score:
        table = build_score_table(data.data, data.arities, score="bdeu", ess=1.0, palim=3,
                                  allowed=allowed)
    with Clock() as solve:
        res = solve_ilp(table, time_limit=time_limit)
    s = res.stats
    return {
        "network": network, "N": n_rows, "pc": "yes" if use_pc else "no",
        "sets": table.n_candidates, "status": res.status, "gap%": 100 * res.gap,
        "restrict_cpu": restrict.cpu, "score_cpu": score.cpu,
        "solve_wall": solve.wall, "solve_cpu": solve.cpu,
        "total_cpu": restrict.cpu + score.cpu + solve.cpu,
        "nodes": s["nodes"], "lp_iter": s["lp_iterations"],
        "cuts": f"{s['inout_cuts']}/{s['greedy_cuts']}/{s['subip_cuts']}/{s['convex4_cuts']}/{s['integral_cuts']}",
        "objective": res.objective,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["alarm", "hailfinder", "hepar2"])
    parser.add_argument("--rows", nargs="+", type=int, default=[1000, 5000])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--no-pc", action="store_true", help="only without PC restriction")
    group.add_argument("--only-pc", action="store_true", help="only with PC restriction")
    parser.add_argument("--extra", nargs="*", default=["insurance:5000"], metavar="NET:N")
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args()
    modes = [False] if args.no_pc else [True] if args.only_pc else [False, True]

    cols = ["network", "N", "pc", "sets", "status", "gap%", "restrict_cpu", "score_cpu",
            "solve_wall", "solve_cpu", "total_cpu", "nodes", "lp_iter", "cuts"]
    print(" ".join(f"{c:>12}" for c in cols), flush=True)
    print(f"{'':>12} (cuts = in-out/greedy/sub-IP/convex4/integral; times in seconds)", flush=True)
    cases = [(network, n_rows) for network in args.networks for n_rows in args.rows]
    cases += [(case.split(":")[0], int(case.split(":")[1])) for case in args.extra]
    for network, n_rows in cases:
        for use_pc in modes:
            row = run(network, n_rows, use_pc, args.time_limit)
            print(" ".join(f"{row[c]:>12.2f}" if isinstance(row[c], float) else f"{row[c]!s:>12}"
                           for c in cols), flush=True)


if __name__ == "__main__":
    main()
