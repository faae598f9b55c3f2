"""Benchmark of the treewidth-bounded learners k-G and k-A* (issue 7; Scanagatta et al. NIPS 2016).

For each network: sample ``--rows`` rows (seed 0); for each ``k``: BIC scores with palim ``k``; the
unbounded reference ``G`` (the ILP optimum, or its best DAG within ``--ref-time`` seconds, or, above
``--ref-max-vars`` variables, the acyclicity-free bound ``sum_v max_W s(v, W)``, which makes the W-score
an over-estimate); the exact treewidth-bounded ILP optimum (``ilp.elimination``) where it is proved
within ``--exact-time``; then k-G and k-A* for ``--seconds`` each. Prints the W-score
``(G - T) / |G|`` of section 4, the explored order classes, and the gap to the bounded optimum.

Exhaustive palim-k scoring is out of reach above a few hundred variables (munin: over half a
billion candidate families at palim 2), so networks with more than ``--restrict-above`` variables
are first restricted by the PC skeleton (G2, alpha 0.05, order 1), the hybrid of this project;
``restrict_s`` is that time and ``total_s`` = restriction + scoring + k-G/k-A*.

    .venv/bin/python bench/treewidth.py [--networks alarm hepar2] [--ks 2 4 6] [--seconds 15]
                                        [--rows 5000] [--solvers kg kastar] [--ref-time 120]
    .venv/bin/python bench/treewidth.py --networks munin --ks 2 --solvers kg --seconds 60
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from constraints.citests import CITest  # noqa: E402
from constraints.pc import pc_skeleton  # noqa: E402
from ilp import solve_ilp  # noqa: E402
from ilp.elimination import solve_bounded_treewidth  # noqa: E402
from pipeline.benchmarks import load_network  # noqa: E402
from pipeline.sampling import forward_sample  # noqa: E402
from scores.candidates import build_score_table  # noqa: E402
from search.kastar import k_astar  # noqa: E402
from search.kgreedy import k_greedy  # noqa: E402
from search.ktree_search import w_score  # noqa: E402

SOLVERS = {"kg": k_greedy, "kastar": k_astar}


def reference(table, ref_time: float, ref_max_vars: int) -> tuple[float, str]:
    """Unbounded reference score and its kind: ``opt`` (proved), ``ilp`` (best found), ``bound``."""
    if table.n_vars > ref_max_vars:
        return sum(max(f.values()) for f in table.families), "bound"
    res = solve_ilp(table, time_limit=ref_time)
    return res.objective, "opt" if res.optimal else "ilp"


def bounded_optimum(table, k: int, exact_time: float, exact_max_vars: int) -> tuple[float | None, str]:
    """Exact treewidth-bounded optimum (``ilp.elimination``) when proved, else ``None`` and why."""
    if table.n_vars > exact_max_vars:
        return None, "skipped (n)"
    res = solve_bounded_treewidth(table, k, time_limit=exact_time)
    if res.status != "optimal":
        return None, f"not proved ({res.status})"
    return res.objective, "opt"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=["alarm", "hepar2"])
    ap.add_argument("--ks", nargs="+", type=int, default=[2, 4, 6])
    ap.add_argument("--seconds", type=float, default=15.0, help="time limit of each k-G / k-A* run")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--solvers", nargs="+", choices=sorted(SOLVERS), default=["kg", "kastar"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ref-time", type=float, default=120.0, help="ILP time limit for the unbounded reference")
    ap.add_argument("--ref-max-vars", type=int, default=250)
    ap.add_argument("--exact-time", type=float, default=120.0, help="time limit of the bounded exact ILP")
    ap.add_argument("--exact-max-vars", type=int, default=80)
    ap.add_argument("--restrict-above", type=int, default=250,
                    help="PC-restrict (G2, alpha 0.05, order 1) networks with more variables than this")
    args = ap.parse_args(argv)

    header = (f"{'network':8} {'n':>5} {'k':>2} {'restrict_s':>10} {'sets':>7} {'score_s':>7} {'ref':>12} "
              f"{'kind':5} {'bounded_opt':>12} {'solver':6} {'score':>12} {'W':>8} {'gap_b':>8} {'orders':>7} "
              f"{'proved':>6} {'status':10} {'time_s':>6} {'total_s':>7}")
    print(header, flush=True)
    for name in args.networks:
        data = forward_sample(load_network(name), args.rows, seed=0)
        n = data.data.shape[1]
        t0 = time.perf_counter()
        allowed = None
        if n > args.restrict_above:
            test = CITest(data.data, data.arities, statistic="g2")
            allowed = pc_skeleton(test, n, alpha=0.05, max_order=1).allowed_parents()
        restrict_s = time.perf_counter() - t0
        for k in args.ks:
            t0 = time.perf_counter()
            table = build_score_table(data.data, data.arities, score="bic", palim=k, names=data.names,
                                      allowed=allowed)
            score_s = time.perf_counter() - t0
            ref, kind = reference(table, args.ref_time, args.ref_max_vars)
            bopt, bkind = bounded_optimum(table, k, args.exact_time, args.exact_max_vars)
            for solver in args.solvers:
                res = SOLVERS[solver](table, k, time_limit=args.seconds, seed=args.seed)
                gap = "" if bopt is None else f"{w_score(res.score, bopt):8.5f}"
                total = restrict_s + score_s + res.time_s
                print(f"{name:8} {n:5d} {k:2d} {restrict_s:10.1f} {table.n_candidates:7d} {score_s:7.1f} "
                      f"{ref:12.1f} {kind:5} {(bkind if bopt is None else f'{bopt:.1f}'):>12} {solver:6} "
                      f"{res.score:12.1f} {w_score(res.score, ref):8.5f} {gap:>8} {res.n_orders:7d} "
                      f"{res.stats.get('orders_proved', ''):>6} {res.status:10} {res.time_s:6.1f} {total:7.1f}",
                      flush=True)


if __name__ == "__main__":
    main()
