"""Where the memory of one ILP solve goes (issue 23.3): python -m bench.ilp_memory TABLE.jkl.

Prints, after each step of ``solve_ilp`` on a ``.jkl`` table, the process's resident memory
(``VmRSS``), its peak so far (``VmHWM``), its CPU seconds and, once the SCIP model exists,
SCIP's own memory (``getMemUsed`` / ``getMemTotal``: its block and buffer memory, without the LP
solver's); then the solve's status, gap, nodes and cuts, and the rows in the final LP by kind
with their mean nonzeros. Figures in docs/benchmarks.md (Memory) and docs/journal/2026-11-exact.md.

    .venv/bin/python -m bench.ilp_memory TABLE.jkl [--time-limit 90] [--cpu-clock]
                                          [--scip-param NAME=VALUE ...]

``--cpu-clock`` makes the time limit SCIP CPU seconds (``timing/clocktype`` 1: the steadier
figure on a shared machine); ``--scip-param limits/nodes=1 --scip-param
separating/maxroundsroot=15`` ends the solve at a fixed point of the root instead of a time.
"""

from __future__ import annotations

import argparse
import ast
import collections
import re
import resource
from pathlib import Path

from ilp import solve_ilp
from ilp.options import ILPOptions
from ilp.problem import build_problem
from scores.jkl import read_jkl


def memory_line(step: str, model=None) -> str:
    """``step``: resident and peak MB, CPU seconds so far, and SCIP's memory if ``model``."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = (f"{step:24s} RSS {int(status['VmRSS'].split()[0]) / 1024:6.0f} MB"
            f"  peak {int(status['VmHWM'].split()[0]) / 1024:6.0f} MB"
            f"  CPU {usage.ru_utime + usage.ru_stime:6.1f} s")
    if model is not None:
        line += f"  SCIP used {model.getMemUsed() / 2**20:5.0f} MB, total {model.getMemTotal() / 2**20:5.0f} MB"
    return line


def lp_rows_by_kind(model) -> dict[str, tuple[int, float]]:
    """Rows of the final LP by the letters that begin their name (``convex``, ``greedy_cuts``, ...):
    count and mean nonzeros."""
    kinds: dict[str, list[int]] = collections.defaultdict(list)
    for row in model.getLPRowsData():
        kinds[re.match(r"[A-Za-z_]*[A-Za-z]", row.name).group()].append(row.getNLPNonz())
    return {kind: (len(sizes), sum(sizes) / len(sizes)) for kind, sizes in sorted(kinds.items())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", help="score table (.jkl)")
    parser.add_argument("--time-limit", type=float, default=90.0)
    parser.add_argument("--cpu-clock", action="store_true", help="the time limit in SCIP CPU seconds")
    parser.add_argument("--scip-param", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    params = {name: ast.literal_eval(value) for name, value in (p.split("=", 1) for p in args.scip_param)}
    if args.cpu_clock:
        params["timing/clocktype"] = 1

    print(memory_line("imports"))
    table = read_jkl(args.table)
    print(memory_line("table read"), f"({table.n_candidates} parent sets)")
    build_problem(table)  # what solve_ilp builds first, here to see its size on its own
    print(memory_line("family problem"))
    models = []

    def keep_model(fm):
        """``extend`` hook: called with the model built and the plugins in place."""
        print(memory_line("model and plugins", fm.model))
        models.append(fm.model)
        return []

    result = solve_ilp(table, ILPOptions(scip_params=params), extend=keep_model, time_limit=args.time_limit)
    model = models[0]
    print(memory_line("after the solve", model))
    stats = result.stats
    print(f"status {result.status}, objective {result.objective:.4f}, dual bound {result.dual_bound:.4f}, "
          f"gap {100 * result.gap:.3f} %, nodes {stats['nodes']}, cuts: in-out {stats['inout_cuts']}, "
          f"greedy {stats['greedy_cuts']}, sub-IP {stats['subip_cuts']}, convex4 {stats['convex4_cuts']}, "
          f"applied {stats['cuts_applied']}")
    if model.getStage() == 9:  # SOLVING: stopped at a limit with the last LP still in place
        print("final LP rows (count, mean nonzeros):",
              ", ".join(f"{kind} {n} x {nnz:.0f}" for kind, (n, nnz) in lp_rows_by_kind(model).items()))


if __name__ == "__main__":
    main()
