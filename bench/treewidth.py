"""Benchmark of the treewidth-bounded learners k-G and k-A* (issue 7; Scanagatta et al. NIPS 2016).

For each network: sample ``--rows`` rows (seed 0); for each ``k``: BIC scores with palim ``k``; the
unbounded reference ``G`` (the ILP optimum, or its best DAG within ``--ref-time`` seconds, or, above
``--ref-max-vars`` variables, the acyclicity-free bound ``sum_v max_W s(v, W)``, which makes the W-score
an over-estimate); the exact treewidth-bounded ILP optimum (``ilp.solve_bounded_treewidth``, the
obstruction model) where it is proved within ``--exact-time``; then k-G and k-A* for ``--seconds``
each. Prints the W-score ``(G - T) / |G|`` of section 4, the explored order classes, and the gap
to the bounded optimum.

Exhaustive palim-k scoring is out of reach above a few hundred variables (munin: over half a
billion candidate families at palim 2) and for ``k >= 4`` even on mid-size networks (BIC, 5000 rows,
2 threads: palim 4 took 15 CPU s on alarm, 197 on hepar2 and did not finish in 10 minutes on andes;
palim 6 did not finish in 10 minutes on alarm or hepar2). So when ``n > --restrict-above`` or
``k > --candidates-k-above``, each child is first restricted to its ``--candidates`` parents of
largest single-parent BIC gain plus ``--conditional`` parents of largest gain given its best
candidate (sparse candidates, ``scores.identification``). ``ident_s`` is that time (once per
network, charged to every row that uses it; ``-`` when not applied), scoring runs in ``--jobs``
threads, and ``total_s`` = identification + scoring + k-G/k-A*. The reference and the bounded
optimum are computed on the same (restricted) table as the bounded learners; above
``--ref-max-vars`` the reference is the acyclicity-free bound. Times are wall seconds, with process
CPU seconds (``time.process_time``, all threads) beside them.

    .venv/bin/python -m bench.treewidth [--networks alarm hepar2] [--ks 2 4 6] [--seconds 15]
                                        [--rows 5000] [--solvers kg kastar] [--ref-time 120]
    .venv/bin/python -m bench.treewidth --networks andes link munin --ks 2 4 6 --seconds 60
"""

from __future__ import annotations

import argparse
import time

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from ilp import solve_ilp
from ilp.treewidth.solve import solve_bounded_treewidth
from scores.candidates import build_score_table
from scores.identification import identify_candidates
from search.kastar import k_astar
from search.kgreedy import k_greedy
from search.ktree_search import w_score

SOLVERS = {"kg": k_greedy, "kastar": k_astar}
DEFAULT_M = 16


def reference(table, ref_time: float, ref_max_vars: int) -> tuple[float, str]:
    """Unbounded reference score and its kind: ``opt`` (proved), ``ilp`` (best found), ``bound``."""
    if table.n_vars > ref_max_vars:
        return sum(table.score[table.child_ptr[:-1]].tolist()), "bound"  # each child's first row is its best
    res = solve_ilp(table, time_limit=ref_time)
    return res.objective, "opt" if res.optimal else "ilp"


def bounded_optimum(table, k: int, exact_time: float, exact_max_vars: int) -> tuple[float | None, str]:
    """Exact treewidth-bounded optimum (obstruction model) when proved, else ``None`` and why."""
    if table.n_vars > exact_max_vars:
        return None, "skipped (n)"
    res = solve_bounded_treewidth(table, k, time_limit=exact_time)
    if res.status != "optimal":
        return None, f"not proved ({res.status})"
    return res.objective, "opt"


class Clock:
    """Wall and process-CPU seconds since construction."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


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
                    help="identify sparse candidate parents for networks with more variables than this")
    ap.add_argument("--candidates-k-above", type=int, default=3,
                    help="... and for every network when k exceeds this")
    ap.add_argument("--candidates", type=int, default=DEFAULT_M, metavar="M", help="candidate parents per child")
    ap.add_argument("--conditional", type=int, default=4, metavar="C",
                    help="further candidates per child given its best candidate (second round)")
    ap.add_argument("--jobs", type=int, default=2, help="threads of the identification and scoring")
    args = ap.parse_args(argv)

    header = (f"{'network':8} {'n':>5} {'k':>2} {'ident_s':>7} {'sets':>7} {'score_s':>7} {'score_cpu':>9} "
              f"{'ref':>12} {'kind':5} {'bounded_opt':>12} {'solver':6} {'score':>12} {'W':>8} {'gap_b':>8} "
              f"{'orders':>7} {'proved':>6} {'status':10} {'time_s':>6} {'cpu_s':>6} {'total_s':>7} {'total_cpu':>9}")
    print(header, flush=True)
    for name in args.networks:
        data = forward_sample(load_network(name), args.rows, seed=0)
        n = data.data.shape[1]
        ident = None  # (allowed, wall, cpu), computed once per network when first needed
        for k in args.ks:
            allowed, ident_s, ident_cpu = None, 0.0, 0.0
            if n > args.restrict_above or k > args.candidates_k_above:
                if ident is None:
                    clock = Clock()
                    found = identify_candidates(data.data, data.arities, m=args.candidates, score="bic",
                                                conditional=args.conditional, n_jobs=args.jobs)
                    ident = (found, *clock.read())
                allowed, ident_s, ident_cpu = ident
            clock = Clock()
            table = build_score_table(data.data, data.arities, score="bic", palim=k, names=data.names,
                                      allowed=allowed, n_jobs=args.jobs)
            score_s, score_cpu = clock.read()
            ref, kind = reference(table, args.ref_time, args.ref_max_vars)
            bopt, bkind = bounded_optimum(table, k, args.exact_time, args.exact_max_vars)
            for solver in args.solvers:
                clock = Clock()
                res = SOLVERS[solver](table, k, time_limit=args.seconds, seed=args.seed)
                _, solve_cpu = clock.read()
                gap = "" if bopt is None else f"{w_score(res.score, bopt):8.5f}"
                total = ident_s + score_s + res.time_s
                total_cpu = ident_cpu + score_cpu + solve_cpu
                ident_txt = f"{ident_s:7.1f}" if allowed is not None else f"{'-':>7}"
                print(f"{name:8} {n:5d} {k:2d} {ident_txt} {table.n_candidates:7d} {score_s:7.1f} {score_cpu:9.1f} "
                      f"{ref:12.1f} {kind:5} {(bkind if bopt is None else f'{bopt:.1f}'):>12} {solver:6} "
                      f"{res.score:12.1f} {w_score(res.score, ref):8.5f} {gap:>8} {res.n_orders:7d} "
                      f"{res.stats.get('orders_proved', ''):>6} {res.status:10} {res.time_s:6.1f} {solve_cpu:6.1f} "
                      f"{total:7.1f} {total_cpu:9.1f}", flush=True)


if __name__ == "__main__":
    main()
