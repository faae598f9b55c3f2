"""Side-by-side exact benchmark (issue 23): the project's ILP and, optionally, GOBNILP.

Instances are generated here: a bundled network is forward-sampled (seed 0) to N rows, every column
is recoded to the states it shows (so that both programs see the same arities), and the data are
scored with BDeu (any ESS) or BIC at a parent limit. Each solver runs in its own process, so its
figures include start-up, scoring and solving: CPU seconds (user + system) and peak resident memory
of the whole process. Both time limits are on SCIP's CPU clock. Per solve: kept parent sets, status,
objective, dual bound, gap, branch-and-bound nodes, root dual bound, seconds to the first incumbent.
GOBNILP (given by ``--gobnilp PATH``, built from source; optional) reads the same data as a ``.dat``
file and uses its own scorer and pruning; the parent-set counts of the two must agree (``same``
column) for the comparison to be of one table.

    .venv/bin/python -m bench.exact [--networks asia sachs child insurance alarm] [--rows 1000]
        [--scores bdeu1 bic] [--palim 3] [--time-limit 300] [--gobnilp PATH] [--only ours|gobnilp]

``--scores`` takes ``bdeuESS`` (e.g. ``bdeu0.1 bdeu1 bdeu10 bdeu100``) and ``bic``. Every
combination of networks x rows x scores x palim is run. ``--case JSON`` is internal (one run of
the project's solver in a child process).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def parse_score(spec: str) -> tuple[str, float]:
    """``"bdeu10"`` -> ``("bdeu", 10.0)``; ``"bic"`` -> ``("bic", 0.0)``."""
    if spec == "bic":
        return "bic", 0.0
    match = re.fullmatch(r"bdeu([0-9.]+)", spec)
    if not match:
        raise ValueError(f"--scores: {spec!r} is neither bic nor bdeuESS (e.g. bdeu10)")
    return "bdeu", float(match.group(1))


def instance_data(network: str, n_rows: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Sampled data (seed 0) with each column recoded to its observed states, sorted."""
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample

    net = load_network(network)
    data = np.asarray(forward_sample(net, n_rows, seed=0).data)
    codes = np.empty(data.shape, dtype=np.int64)
    arities = np.empty(data.shape[1], dtype=np.int64)
    for j in range(data.shape[1]):
        states, codes[:, j] = np.unique(data[:, j], return_inverse=True)
        arities[j] = states.size
    return codes, arities, list(net.variables)


CPU_CLOCK = {"timing/clocktype": 1}
"""Both solvers' time limits count CPU seconds (the machine may be shared)."""

WALL_GUARD = 10
"""A run is killed after this many times its (CPU) time limit in wall seconds, plus 10 minutes:
on a loaded machine the CPU limit is reached long after as many wall seconds."""


# -- the project's solver (run in a child process) -----------------------------------------------
def run_ours(case: dict) -> dict:
    """Score and solve one instance in this process; CPU figures from this process."""
    from ilp import ILPOptions, solve_ilp
    from scores.candidates import build_score_table

    data, arities, names = instance_data(case["network"], case["rows"])
    c0 = time.process_time()
    table = build_score_table(data, arities, score=case["score"], ess=case["ess"] or 1.0,
                              palim=case["palim"], names=names)
    c1 = time.process_time()
    options = ILPOptions(scip_params=CPU_CLOCK, **({"dp_max_vars": 0} if case.get("warmup") else {}))
    res = solve_ilp(table, options, time_limit=case["time_limit"])
    c2 = time.process_time()
    s = res.stats
    return {
        "sets": table.n_candidates, "status": res.status, "objective": res.objective,
        "bound": res.dual_bound, "gap%": 100 * res.gap, "nodes": s["nodes"],
        "root_bound": s["root_dual_bound"], "first_inc_s": s.get("first_incumbent_s"),
        "score_cpu": c1 - c0, "solve_cpu": c2 - c1,
        "parent_sets": {names[v]: [names[p] for p in ps] for v, ps in enumerate(res.parent_sets)},
    }


def measured(cmd: list[str], cwd: Path, timeout: float) -> tuple[int, str, str, float, float]:
    """Run ``cmd``: exit status, stdout, stderr, CPU seconds (user + system) and peak RSS in MB
    of that process alone (``os.wait4``); killed after ``timeout`` wall seconds (exit status
    ``-9``)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=cwd)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read(), err.read(), usage.ru_utime + usage.ru_stime,
                usage.ru_maxrss / 1024)


def child_process(case: dict) -> dict:
    """Run :func:`run_ours` in a fresh interpreter; add whole-process CPU and peak memory."""
    rc, out, err, cpu, rss = measured([sys.executable, "-m", "bench.exact", "--case", json.dumps(case)],
                                      ROOT, WALL_GUARD * case["time_limit"] + 600)
    if rc != 0:
        status = "killed" if rc == -9 else "error"
        return {"status": status, "error": err.strip().splitlines()[-1:], "total_cpu": cpu}
    row = json.loads(out.strip().splitlines()[-1])
    row.update(total_cpu=cpu, rss_MB=rss)
    return row


# -- GOBNILP ---------------------------------------------------------------------------------------
def write_dat(path: Path, data: np.ndarray, arities: np.ndarray, names: list[str]) -> None:
    """GOBNILP's data format: a names line, an arities line, one line of state codes per row."""
    with open(path, "w") as out:
        out.write(" ".join(names) + "\n" + " ".join(map(str, arities.tolist())) + "\n")
        np.savetxt(out, data, fmt="%d", delimiter=" ")


def _number(pattern: str, text: str) -> float | None:
    match = re.search(pattern, text, re.M)
    if not match:
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def parse_gobnilp(text: str) -> dict:
    """Figures from GOBNILP's log at verbosity 5 (its scorer line and SCIP's statistics)."""
    sets = re.search(r"(\d+) candidate parent sets created", text)
    status = re.search(r"^SCIP Status\s*:\s*(.*)$", text, re.M)
    status = status.group(1) if status else "error"
    first = re.search(r"^  First Solution\s*:.*?([0-9.]+) seconds", text, re.M)
    parents = {}  # its printed DAG: one "child<-parent,parent score" line per variable
    for child, pas in re.findall(r"^(\S+)<-(\S*) -?[0-9.]+(?:e[-+]?\d+)?$", text, re.M):
        parents[child] = [p for p in pas.split(",") if p]
    return {
        "sets": int(sets.group(1)) if sets else None,
        "status": "optimal" if "optimal" in status else "timelimit" if "time limit" in status
        else status,
        "objective": _number(r"^Primal Bound\s*:\s*([-+0-9.eE]+)", text),
        "bound": _number(r"^Dual Bound\s*:\s*([-+0-9.eE]+)", text),
        "gap%": _number(r"^Gap\s*:\s*([0-9.eE+-]+) %", text),
        "nodes": _number(r"^  nodes \(total\)\s*:\s*(\d+)", text),
        "root_bound": _number(r"^  Final Dual Bound\s*:\s*([-+0-9.eE]+)", text),
        "first_inc_s": float(first.group(1)) if first else None,  # on SCIP's clock
        "score_cpu": _number(r"candidate parent sets created in ([0-9.]+) seconds", text),
        "solve_cpu": _number(r"^Solving Time \(sec\)\s*:\s*([0-9.]+)", text),
        "parent_sets": parents,
    }


def run_gobnilp(binary: str, case: dict) -> dict:
    """Score and solve one instance with GOBNILP; whole-process CPU and peak memory."""
    data, arities, names = instance_data(case["network"], case["rows"])
    with tempfile.TemporaryDirectory(prefix="exact_bench_") as tmp:
        tmp = Path(tmp)
        write_dat(tmp / "data.dat", data, arities, names)
        settings = [f"gobnilp/scoring/palim = {case['palim']}", f"limits/time = {case['time_limit']:g}",
                    f"timing/clocktype = {CPU_CLOCK['timing/clocktype']}"]
        if case["score"] == "bdeu":
            settings += ['gobnilp/scoring/score_type = "BDeu"', f"gobnilp/scoring/alpha = {case['ess']:g}"]
        else:
            settings += ['gobnilp/scoring/score_type = "BIC"']
        (tmp / "run.set").write_text("\n".join(settings) + "\n")
        _, out, err, cpu, rss = measured(
            [binary, f"-g={tmp / 'run.set'}", "-v=5", str(tmp / "data.dat")], tmp,
            WALL_GUARD * case["time_limit"] + 600)
    row = parse_gobnilp(out + err)
    row.update(total_cpu=cpu, rss_MB=rss)
    return row


# -- driver ----------------------------------------------------------------------------------------
COLUMNS = ["network", "N", "score", "palim", "solver", "sets", "same", "status", "objective",
           "bound", "gap%", "nodes", "root_bound", "first_inc_s", "score_cpu", "solve_cpu",
           "total_cpu", "rss_MB", "cpu_ratio"]


def _agreement(ours: dict, gob: dict) -> str:
    """``sets/objective``: ``=`` where the two agree (objectives compared when both are proven
    optimal, to 1e-6 relative), ``!`` where they differ, ``?`` where there is nothing to compare."""
    sets = "=" if ours.get("sets") == gob.get("sets") else "!"
    if ours.get("status") == gob.get("status") == "optimal":
        a, b = ours["objective"], gob["objective"]
        return sets + ("=" if abs(a - b) <= 1e-6 * max(abs(a), 1.0) else "!")
    return sets + "?"


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 1e5 else f"{value:.1f}"
    return str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--networks", nargs="+", default=["asia", "sachs", "child", "insurance", "alarm"])
    parser.add_argument("--rows", nargs="+", type=int, default=[1000])
    parser.add_argument("--scores", nargs="+", default=["bdeu1", "bic"])
    parser.add_argument("--palim", nargs="+", type=int, default=[3])
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--gobnilp", metavar="PATH", help="GOBNILP binary (optional reference)")
    parser.add_argument("--only", choices=["ours", "gobnilp"])
    parser.add_argument("--json", metavar="FILE", help="write every row, parent sets included")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_ours(json.loads(args.case))))
        return
    scores = [parse_score(s) for s in args.scores]
    if args.gobnilp and not Path(args.gobnilp).is_file():
        raise SystemExit(f"--gobnilp: no such file {args.gobnilp!r}")
    solvers = [s for s in ("ours", "gobnilp") if args.only in (None, s)]
    if "gobnilp" in solvers and not args.gobnilp:
        solvers.remove("gobnilp")
    results = []

    if "ours" in solvers:  # compiles (or loads) the numba kernels of every plugin once
        child_process({"network": "insurance", "rows": 1000, "score": "bdeu", "ess": 10.0,
                       "palim": 3, "time_limit": 60, "warmup": True})
    print(" ".join(f"{c:>11}" for c in COLUMNS), flush=True)
    print("(total_cpu, rss_MB: the whole process; same: parent-set counts / optima agree; "
          "GOBNILP's score_cpu is its own report (wall clock), its solve_cpu SCIP's; "
          "cpu_ratio = ours / GOBNILP total_cpu)", flush=True)
    for network in args.networks:
        for n_rows in args.rows:
            for score, ess in scores:
                for palim in args.palim:
                    case = {"network": network, "rows": n_rows, "score": score, "ess": ess,
                            "palim": palim, "time_limit": args.time_limit}
                    rows = {}
                    if "ours" in solvers:
                        rows["ours"] = child_process(case)
                    if "gobnilp" in solvers:
                        rows["gobnilp"] = run_gobnilp(args.gobnilp, case)
                    same = None
                    if len(rows) == 2:
                        same = _agreement(rows["ours"], rows["gobnilp"])
                        if rows["gobnilp"]["total_cpu"] > 0:
                            rows["ours"]["cpu_ratio"] = rows["ours"]["total_cpu"] / rows["gobnilp"]["total_cpu"]
                    label = "bic" if score == "bic" else f"bdeu{ess:g}"
                    for solver, row in rows.items():
                        row.update(network=network, N=n_rows, score=label, palim=palim,
                                   solver=solver, same=same)
                        print(" ".join(f"{_cell(row.get(c)):>11}" for c in COLUMNS), flush=True)
                        results.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
