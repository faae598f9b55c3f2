"""PC-stable on large networks: compiled batched levels against the targets of issue 18, and
the PC of pgmpy, causal-learn and pyAgrum on the same data where installed.

Per network (own forward samples, seed 0): distinct tests, CPU and wall seconds of our batched
PC-stable (x2, alpha 0.05, order <= 1 by default) on ``--jobs`` threads, microseconds per test,
the target CPU seconds, and the per-test path's microseconds per test on the first
``--sample-pairs`` pairs at order 0 with the ratio to ours (a same-run figure; the per-test
PC's own loop adds more).  Each peer runs in a subprocess killed after
``--peer-limit`` seconds (reported as "> limit").

    .venv/bin/python -m bench.pc_scale                                 # andes, link, munin2, munin
    .venv/bin/python -m bench.pc_scale --networks andes link --jobs 2 --peer-limit 120

``--methods pmms mmpc cops`` runs PMMS and MMPC (compiled per target) and cops-and-robbers
(compiled batches, no order limit) on the same data; with ``--per-test`` their per-test path
(``batched=False``) runs too: its CPU seconds and their ratio to ours go in the per-test and
ratio columns, and the two results are checked identical (skeleton, records, counts).

    .venv/bin/python -m bench.pc_scale --networks andes link --methods pmms mmpc --per-test --no-peers
    .venv/bin/python -m bench.pc_scale --networks alarm --methods cops --test g2 --per-test --no-peers
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citest_batch import compute_threads
from constraints.citests import CITest
from constraints.cops import cops_restriction
from constraints.pc import pc_skeleton
from constraints.pmms import mmpc, pmms


def cops(test, n_vars, *, alpha=0.05, max_order=None, n_jobs=1, batched=True):
    """The cops-and-robbers restriction on ``n_jobs`` threads (``max_order`` ignored: the cops
    find their own)."""
    with compute_threads(n_jobs):
        return cops_restriction(test, n_vars, alpha=alpha, batched=batched)[0]


TARGET_CPU = {"andes": 1.5, "link": 20.0, "munin2": 60.0, "munin": 60.0}
LEARNERS = {"pc": pc_skeleton, "pmms": pmms, "mmpc": mmpc, "cops": cops}

PEER_CODE = {
    "causal-learn": """
from causallearn.search.ConstraintBased.PC import pc
pc(data, {alpha}, "chisq", stable=True, show_progress=False, max_k={order})""",
    "pgmpy": """
import pandas as pd
from pgmpy.estimators import PC
df = pd.DataFrame(data, columns=[f"V{{i}}" for i in range(data.shape[1])])
PC(df).estimate(variant="stable", ci_test="chi_square", return_type="skeleton",
                significance_level={alpha}, max_cond_vars={order}, show_progress=False)""",
}


def peer_seconds(name: str, data_file: str, alpha: float, order: int, limit: float) -> str:
    """CPU seconds of one peer's PC in a subprocess, or '> limit' / 'not installed'."""
    module = {"causal-learn": "causallearn", "pgmpy": "pgmpy", "pyAgrum": "pyagrum"}[name]
    if name == "pyAgrum":
        return "no PC"  # pyAgrum's constraint-based learners are MIIC and 3off2
    code = (f"import importlib.util, sys\n"
            f"if importlib.util.find_spec({module!r}) is None: print('missing'); sys.exit()\n"
            f"import numpy as np, resource, warnings; warnings.filterwarnings('ignore')\n"
            f"data = np.load({data_file!r})\n"
            + PEER_CODE[name].format(alpha=alpha, order=order)
            + "\nu = resource.getrusage(resource.RUSAGE_SELF); print(u.ru_utime + u.ru_stime)\n")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"> {limit:.0f}"
    last = out.stdout.strip().splitlines()[-1:] or [out.stderr.strip().splitlines()[-1:]]
    return "not installed" if last == ["missing"] else f"{float(last[0]):.1f}" if out.returncode == 0 \
        else f"failed: {out.stderr.strip().splitlines()[-1][:60]}"


def timed(method, data, arities, args, **kwargs):
    """(restriction, CPU s, wall s) of one learner on a fresh test."""
    test = CITest(data, arities, statistic=args.test)
    c0, w0 = time.process_time(), time.perf_counter()
    r = LEARNERS[method](test, data.shape[1], alpha=args.alpha, max_order=args.max_order, **kwargs)
    return r, time.process_time() - c0, time.perf_counter() - w0


def per_test_order0(data, arities, n_pairs, statistic):
    """Microseconds per test of the per-test path on the first ``n_pairs`` order-0 pairs."""
    test = CITest(data, arities, statistic=statistic)
    u, v = np.triu_indices(data.shape[1], 1)
    c0 = time.process_time()
    for a, b in zip(u[:n_pairs].tolist(), v[:n_pairs].tolist()):
        test(a, b)
    return (time.process_time() - c0) / min(n_pairs, len(u)) * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=["andes", "link", "munin2", "munin"])
    ap.add_argument("--methods", nargs="+", choices=sorted(LEARNERS), default=["pc"])
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--test", choices=["x2", "g2"], default="x2")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--max-order", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sample-pairs", type=int, default=5000,
                    help="order-0 pairs timed on the per-test path for PC's same-run ratio")
    ap.add_argument("--per-test", action="store_true",
                    help="also run PMMS, MMPC and cops one test call at a time (same-run CPU and ratio)")
    ap.add_argument("--peer-limit", type=float, default=60.0)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    print(f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} rows={args.rows} {args.test} alpha={args.alpha} "
          f"max_order={args.max_order} jobs={args.jobs} (CPU s on a shared machine)")
    warm = np.random.default_rng(0).integers(0, 2, (50, 4))
    for method in args.methods:  # compile/load kernels
        LEARNERS[method](CITest(warm, [2] * 4, statistic="x2"), 4, max_order=1)
    peers = [] if args.no_peers else ["causal-learn", "pgmpy", "pyAgrum"]
    print(f"{'network':<10}{'method':>7}{'vars':>6}{'tests':>11}{'cpu s':>9}{'wall s':>9}{'us/test':>9}"
          f"{'target':>8}{'per-test':>11}{'ratio':>7}" + "".join(f"{p:>16}" for p in peers))
    for name in args.networks:
        net = load_network(name)
        data = forward_sample(net, args.rows, seed=0).data
        arities = np.asarray(net.arities)
        for method in args.methods:
            r, cpu, wall = timed(method, data, arities, args, n_jobs=args.jobs)
            ours = cpu / r.n_tests * 1e6
            if method == "pc":  # the per-test path's us per test on a sample of order-0 pairs
                target = TARGET_CPU.get(name, float("nan"))
                other = per_test_order0(data, arities, args.sample_pairs, args.test)
                ratio, per_test = other / ours, f"{other:.1f} us"
            elif args.per_test:  # the whole per-test run's CPU seconds
                target = float("nan")
                slow, other, _ = timed(method, data, arities, args, batched=False)
                assert r.same_result(slow), f"{method} on {name}: the two paths differ"
                ratio, per_test = other / cpu, f"{other:.2f} s"
            else:
                target, ratio, per_test = float("nan"), float("nan"), ""
            row = (f"{name:<10}{method:>7}{net.n_vars:>6}{r.n_tests:>11}{cpu:>9.2f}{wall:>9.2f}{ours:>9.2f}"
                   f"{target:>8.1f}{per_test:>11}{ratio:>7.1f}")
            if peers and method == "pc":
                with tempfile.TemporaryDirectory() as tmp:
                    data_file = os.path.join(tmp, "data.npy")
                    np.save(data_file, data.astype(np.int64))
                    row += "".join(f"{peer_seconds(p, data_file, args.alpha, args.max_order, args.peer_limit):>16}"
                                   for p in peers)
            print(row, flush=True)


if __name__ == "__main__":
    main()
