"""Order-0 screening against PC's per-pair level-0 kernel: time and peak memory of the marginal
test of every pair (:mod:`constraints.screening`) on a random network's sample, and the rate of
the per-pair path (:func:`constraints.citest_batch.pc_level` on the complete graph: ``per-pair``
its CPU time a pair; ``+lists`` with the adjacency lists of the complete graph built for the batch
of 20,000 pairs, as PC's level 0 did for each batch before the screen).

    .venv/bin/python -m bench.screening --vars 1000 2000 10000 --rows 5000 -j 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bayesnet.random_network import random_network
from bayesnet.sampling import forward_sample
from constraints.citest_batch import TestSettings, adjacency_lists, compute_threads, pc_level
from constraints.citests import CITest
from constraints.screening import MarginalScreen, row_blocks

_PER_PAIR_SAMPLE = 20000  # pairs of the per-pair kernel timed (PC's batch of pairs)


def _peak_rss_mb() -> float:
    """The process's peak resident memory (VmHWM) in MB."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024


def _reset_peak_rss() -> None:
    """Restart VmHWM from the current resident memory (Linux ``clear_refs`` 5)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def measure(n_vars: int, rows: int, seed: int, n_jobs: int) -> dict:
    ds = forward_sample(random_network(n_vars, seed), rows, seed=seed)
    test = CITest(ds.data, ds.arities)
    settings = TestSettings(test)
    screen = MarginalScreen(settings)
    with compute_threads(n_jobs):
        screen.rows(0, 1)  # compile / load the kernels outside the timing
        pc_level(settings, adjacency_lists(np.ones((3, 3), bool) & ~np.eye(3, dtype=bool)),
                 (np.array([0]), np.array([1])), 0, 0.05)
        _reset_peak_rss()
        before = _peak_rss_mb()
        start, cpu = time.perf_counter(), time.process_time()
        removed = 0
        for lo, hi in row_blocks(n_vars):
            removed += int((screen.rows(lo, hi)[0] > 0.05).sum())
        screen_s, screen_cpu = time.perf_counter() - start, time.process_time() - cpu
        peak = _peak_rss_mb() - before
        complete = ~np.eye(n_vars, dtype=bool)
        us, vs = np.nonzero(np.triu(complete, 1))
        us, vs = us[:_PER_PAIR_SAMPLE], vs[:_PER_PAIR_SAMPLE]
        cpu = time.process_time()
        lists = adjacency_lists(complete)
        lists_cpu = time.process_time() - cpu
        cpu = time.process_time()
        pc_level(settings, lists, (us, vs), 0, 0.05)
        kernel_cpu = time.process_time() - cpu
    pairs = n_vars * (n_vars - 1) // 2
    return {"vars": n_vars, "pairs": pairs, "screen_s": screen_s, "screen_cpu_s": screen_cpu,
            "screen_us": 1e6 * screen_cpu / pairs, "peak_mb": peak, "removed": removed,
            "kernel_us": 1e6 * kernel_cpu / len(us), "batch_us": 1e6 * (kernel_cpu + lists_cpu) / len(us)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vars", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-j", "--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    print("wall s: the screen's wall time; cpu: CPU seconds of all threads; us: CPU microseconds a pair")
    print(f"{'vars':>6} {'pairs':>11} {'wall s':>8} {'cpu s':>8} {'us/pair':>8} {'peak MB':>8} {'removed':>11} "
          f"{'per-pair us':>11} {'+lists us':>10}")
    for n_vars in args.vars:
        r = measure(n_vars, args.rows, args.seed, args.jobs)
        print(f"{r['vars']:>6} {r['pairs']:>11} {r['screen_s']:>8.2f} {r['screen_cpu_s']:>8.2f} {r['screen_us']:>8.3f} "
              f"{r['peak_mb']:>8.1f} "
              f"{r['removed']:>11} {r['kernel_us']:>11.2f} {r['batch_us']:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
