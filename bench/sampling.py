"""Forward-sampling throughput (rows/s) on benchmark networks: python -m bench.sampling [ROWS]."""

import sys
import time

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample

NETWORKS = ["alarm", "hailfinder", "pathfinder", "link", "diabetes", "munin"]


def main(n_rows: int = 100_000, repeats: int = 3) -> None:
    print(f"{'network':<12}{'vars':>6}{'rows':>9}{'best s':>9}{'rows/s':>12}")
    for name in NETWORKS:
        net = load_network(name)
        forward_sample(net, 1000, seed=0)  # warm-up
        best = float("inf")
        for seed in range(repeats):
            start = time.perf_counter()
            forward_sample(net, n_rows, seed=seed)
            best = min(best, time.perf_counter() - start)
        print(f"{name:<12}{net.n_vars:>6}{n_rows:>9}{best:>9.3f}{n_rows / best:>12,.0f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
