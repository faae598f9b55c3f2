"""Timings of the graphs/ package on benchmark networks (prints a table; no assertions).

Usage: python -m bench.graphs_bench [network ...]   (default: alarm andes munin)
"""

import sys
import time

import numpy as np

from bayesnet.catalog import load_network
from graphs.dsep import DSeparation
from graphs.moral import moral_graph
from graphs.pdag import dag_to_cpdag, meek_closure, pdag_to_dag, v_structures
from graphs.treewidth import treewidth_exact, treewidth_lower_bound, treewidth_upper_bound


def timed(fn, *args, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t)
    return out, best


def main(names):
    print(f"{'network':<10} {'n':>5} {'arcs':>5} {'cpdag s':>8} {'meek s':>8} {'extend s':>8} "
          f"{'moral s':>8} {'dsep us':>8} {'tw lb':>5} {'minfill':>7} {'mf s':>6} {'exact':>5} {'exact s':>7}")
    for name in names:
        A = load_network(name).adjacency
        n = A.shape[0]
        C, t_cpdag = timed(dag_to_cpdag, A)
        pattern = A | A.T  # skeleton with the v-structures oriented: Meek's closure does the rest
        for a, c, b in v_structures(A):
            pattern[c, a] = pattern[c, b] = False
        _, t_meek = timed(meek_closure, pattern)
        _, t_ext = timed(pdag_to_dag, C)
        G, t_moral = timed(moral_graph, A)
        ds = DSeparation(A)
        rng = np.random.default_rng(0)
        queries = []
        for _ in range(20000):
            x, y, *S = rng.choice(n, 5, replace=False).tolist()
            queries.append((x, y, S))
        t = time.perf_counter()
        for x, y, S in queries:
            ds.separated(x, y, S)
        t_dsep = (time.perf_counter() - t) / len(queries) * 1e6
        ub, t_mf = timed(treewidth_upper_bound, G, repeat=1)
        lb = treewidth_lower_bound(G)
        if n <= 120:
            ex, t_ex = timed(treewidth_exact, G, repeat=1)
            exact = str(ex.width)
        else:
            exact, t_ex = "-", float("nan")
        print(f"{name:<10} {n:>5} {int(A.sum()):>5} {t_cpdag:>8.4f} {t_meek:>8.4f} {t_ext:>8.4f} "
              f"{t_moral:>8.4f} {t_dsep:>8.1f} {lb:>5} {ub.width:>7} {t_mf:>6.2f} {exact:>5} {t_ex:>7.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["alarm", "andes", "munin"])
