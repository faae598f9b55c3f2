"""Large networks end to end (issue 18.5): the hybrid under one ``--budget``, its PC against the
peers' PC, and the exact ILP alone on score tables written beforehand.

Per network (own forward samples, seed 0, ``--rows`` rows):

* **hybrid**, one case per ``--palim``: PC-stable (x2, alpha 0.05, order <= 1) -> BDeu (ESS 1)
  -> ILP under ``--budget`` seconds (the restriction may use half, the scoring half of the rest,
  the solver what is left; a stage the budget cut says so in its status). Per stage the wall
  seconds (as first computed, also when a later case reads it from ``--out``'s stage cache) and
  status, CI tests, parent sets generated / kept, ILP status / objective / bound / gap, SHD
  (CPDAGs) and skeleton F1 against the true network, and their sum (restriction + scoring +
  solve, the hybrid's time); per case the process' wall and CPU seconds (user + system, all
  threads) and peak RSS;
* **peers**: the PC of causal-learn, pgmpy and pyAgrum on the same data (``pc_scale.peer_seconds``:
  CPU seconds, "> limit" after ``--peer-limit``, or "not installed");
* **exact ILP alone** with ``--jkl``: BIC tables at each ``--palim``, restricted (the same PC)
  and unrestricted (``method none``), written by our scorer to ``<out>/jkl/`` in a process
  killed after ``--score-limit`` seconds, then each table that was written solved alone
  (``scores=FILE.jkl``) under ``--budget``, so the solver's time is measured apart from scoring.

Every case runs ``hybridbn.learn`` in its own process (``--case``, internal) killed after
``--budget + --grace`` seconds. Rows go to ``<out>/results.jsonl`` as they come (a rerun skips
the cases already there) and every row of the file is printed as markdown tables at the end.

    .venv/bin/python -m bench.scale --networks pathfinder andes --palim 2 --budget 180
    .venv/bin/python -m bench.scale --networks link --palim 2 3 --budget 180 --jkl --score-limit 120
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.exact import ROOT, measured
from bench.pc_scale import TARGET_CPU as TARGET_PC_SECONDS, peer_seconds

NETWORKS = ["pathfinder", "andes", "diabetes", "pigs", "link", "munin1", "munin2", "munin"]
PEERS = ["causal-learn", "pgmpy", "pyAgrum"]
TARGET_HYBRID_SECONDS = {"pathfinder": 120, "link": 120, "diabetes": 600, "pigs": 600, "munin1": 600,
                         "munin2": 600, "munin": 600}
PC = {"method": "pc", "test": "x2", "alpha": 0.05, "max_order": 1}


# ------------------------------------------------------------------------- one case (child)
def run_case(case: dict) -> dict:
    """``hybridbn.learn`` with the case's options (and the .jkl export): per stage its seconds,
    whether it came from the cache, and its meta."""
    import hybridbn

    result = hybridbn.learn(case["source"], cache_dir=case["cache"], stage=case["stage"], **case["options"])
    if case.get("write_scores"):
        result.write_scores(case["write_scores"])
    return {name: {"seconds": art.seconds, "cached": art.cached, "meta": art.meta}
            for name, art in result.artifacts.items()}


def in_child(case: dict, timeout: float) -> dict:
    """:func:`run_case` in a fresh interpreter killed after ``timeout`` wall seconds: its stages
    (empty when it failed) and the process' exit status, wall and CPU seconds and peak RSS (MB)."""
    start = time.perf_counter()
    rc, out, err, cpu, rss = measured([sys.executable, "-m", "bench.scale", "--case", json.dumps(case)],
                                      ROOT, timeout)
    process = {"rc": rc, "wall": time.perf_counter() - start, "cpu": cpu, "rss_MB": rss}
    if rc != 0:
        reason = f"killed after {timeout:.0f} s" if rc == -9 else (err.strip().splitlines() or ["?"])[-1][:80]
        return {"stages": {}, "process": process, "error": reason}
    return {"stages": json.loads(out.strip().splitlines()[-1]), "process": process}


# --------------------------------------------------------------------------- row extraction
def case_row(stages: dict) -> dict:
    """The figures of one case from its stages (any prefix of data, restrict, scores, solve,
    evaluate)."""
    row: dict = {}
    if "restrict" in stages:
        m = stages["restrict"]["meta"]
        row.update(pc_s=stages["restrict"]["seconds"], pc_status=m.get("status"), tests=m.get("n_tests"),
                   allowed=m.get("n_allowed"))
    if "scores" in stages:
        m = stages["scores"]["meta"]
        counts = m.get("table_meta", {}).get("counts", {})
        row.update(scores_s=stages["scores"]["seconds"], scores_status=m.get("status"),
                   generated=counts.get("generated"), kept=m.get("n_candidates"),
                   unscored=len(m.get("table_meta", {}).get("unscored", [])))
    if "solve" in stages:
        r = stages["solve"]["meta"]["result"]
        row.update(solve_s=stages["solve"]["seconds"], status=r["status"], objective=r["objective"],
                   bound=r.get("dual_bound"), gap=r.get("gap"), families=r.get("stats", {}).get("n_families"))
    if "evaluate" in stages and "shd" in stages["evaluate"]["meta"]:
        m = stages["evaluate"]["meta"]
        row.update(shd=m["shd"], f1=m["f1"])
    row["cached"] = [name for name, s in stages.items() if s["cached"]]
    return row


# ----------------------------------------------------------------------------------- cases
def hybrid_case(args, network: str, palim: int) -> dict:
    case = {"source": network, "stage": "evaluate", "cache": args.cache,
            "options": {**PC, "rows": args.rows, "seed": 0, "score": "bdeu", "ess": 1.0, "palim": palim,
                        "budget": args.budget, "memory_limit": args.memory_limit}}
    return measure_case(case, args.budget + args.grace)


def jkl_cases(args, network: str, palim: int, restricted: bool) -> list[dict]:
    """Write the BIC table (killed after ``--score-limit``), then solve it alone under the budget."""
    path = Path(args.out, "jkl", f"{network}-{args.rows}-bic-p{palim}-{'pc' if restricted else 'none'}.jkl")
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {**(PC if restricted else {"method": "none"}), "rows": args.rows, "seed": 0, "score": "bic",
               "palim": palim}
    write = measure_case({"source": network, "stage": "scores", "cache": args.cache, "options": options,
                          "write_scores": str(path)}, args.score_limit)
    if "error" in write:
        return [write]
    solve = measure_case({"source": str(path), "stage": "solve", "cache": args.cache,
                          "options": {"palim": palim, "budget": args.budget}},
                         args.budget + args.grace)
    return [write, solve]


def measure_case(case: dict, timeout: float) -> dict:
    load = os.getloadavg()[0]
    done = in_child(case, timeout)
    return {**case_row(done["stages"]), **done["process"], "load": round(load, 1),
            **({"error": done["error"]} if "error" in done else {})}


def peer_row(args, network: str) -> dict:
    """The peers' PC (x2, alpha 0.05, order <= 1) on the sample the hybrid learns from."""
    from bayesnet.catalog import load_network
    from bayesnet.sampling import forward_sample

    with tempfile.TemporaryDirectory() as tmp:
        data_file = os.path.join(tmp, "data.npy")
        np.save(data_file, forward_sample(load_network(network), args.rows, seed=0).data.astype(np.int64))
        return {peer: peer_seconds(peer, data_file, PC["alpha"], PC["max_order"], args.peer_limit)
                for peer in PEERS}


# ---------------------------------------------------------------------------------- tables
def _n(value, digits: int = 1) -> str:
    """A table cell: floats to ``digits`` places, ints with thousands separators, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _status(row: dict, key: str) -> str:
    return row.get("error") or row.get(key) or "-"


def _cached(row: dict, stage: str) -> str:
    return "*" if stage in row.get("cached", []) else ""


CACHED_NOTE = "(* read from the stage cache: seconds as first computed, not in this process' CPU s)"


def hybrid_table(rows: list[dict]) -> str:
    lines = ["| network | palim | budget s | PC s (target), status | tests | pairs kept | scoring s, status | "
             "sets generated / kept | ILP s | ILP status | objective | bound | gap % | SHD | F1 | "
             "hybrid s (target) | process wall s | CPU s | peak MB | load |", "|" + "---|" * 20]
    for r in rows:
        gap = None if r.get("gap") is None else 100 * r["gap"]
        hybrid = sum(r.get(s, 0.0) for s in ("pc_s", "scores_s", "solve_s")) if "solve_s" in r else None
        lines.append(
            f"| {r['network']} | {r['palim']} | {r['budget']:g} | "
            f"{_n(r.get('pc_s'), 2)}{_cached(r, 'restrict')} ({_n(TARGET_PC_SECONDS.get(r['network']))}), "
            f"{r.get('pc_status', '-')} | {_n(r.get('tests'))} | "
            f"{_n(r.get('allowed'))} | {_n(r.get('scores_s'), 2)}, {r.get('scores_status', '-')} | "
            f"{_n(r.get('generated'))} / {_n(r.get('kept'))} | {_n(r.get('solve_s'))} | {_status(r, 'status')} | "
            f"{_n(r.get('objective'))} | {_n(r.get('bound'))} | {_n(gap, 2)} | {_n(r.get('shd'))} | "
            f"{_n(r.get('f1'), 3)} | {_n(hybrid)} ({_n(TARGET_HYBRID_SECONDS.get(r['network']))}) | "
            f"{_n(r['wall'])} | {_n(r['cpu'])} | {_n(r['rss_MB'], 0)} | {r['load']} |")
    return "\n".join(lines + ["", CACHED_NOTE])


def jkl_table(rows: list[dict]) -> str:
    lines = ["| network | table | palim | write: wall s, CPU s, peak MB | families | solve alone: status | "
             "objective | bound | gap % | ILP s | wall s | CPU s | peak MB | load |", "|" + "---|" * 14]
    for r in rows:
        w, s = r["write"], r.get("solve", {})
        gap = None if s.get("gap") is None else 100 * s["gap"]
        written = w.get("error") or f"{_n(w['wall'])}, {_n(w['cpu'])}, {_n(w['rss_MB'], 0)}"
        solved = (f"{_n(s.get('families'))} | {_status(s, 'status')} | {_n(s.get('objective'))} | "
                  f"{_n(s.get('bound'))} | {_n(gap, 2)} | {_n(s.get('solve_s'))} | {_n(s.get('wall'))} | "
                  f"{_n(s.get('cpu'))} | {_n(s.get('rss_MB'), 0)}" if s else "- | not written" + " | -" * 7)
        lines.append(f"| {r['network']} | {r['table']} | {r['palim']} | {written} | {solved} | {w['load']} |")
    return "\n".join(lines)


def peers_table(rows: list[dict]) -> str:
    lines = ["| network | " + " | ".join(f"{p} PC CPU s" for p in PEERS) + " |", "|" + "---|" * (1 + len(PEERS))]
    lines += [f"| {r['network']} | " + " | ".join(r[p] for p in PEERS) + " |" for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ main
def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=NETWORKS)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--palim", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--budget", type=float, default=600.0, help="--budget of each case (wall seconds)")
    ap.add_argument("--grace", type=float, default=120.0, help="a case is killed after --budget + this")
    ap.add_argument("--jkl", action="store_true", help="also write the BIC tables and solve them alone")
    ap.add_argument("--score-limit", type=float, default=300.0, help="wall seconds to write one .jkl table")
    ap.add_argument("--peer-limit", type=float, default=120.0)
    ap.add_argument("--memory-limit", type=float, help="the hybrid's --memory-limit (MB of SCIP's own account)")
    ap.add_argument("--out", default="output/scale", help="results.jsonl, the stage cache and the .jkl tables")
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(json.loads(args.case)), default=str))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    args.cache = str(out / "cache")
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    done = {tuple(r["case"]) for r in rows}

    def record(case: tuple, row: dict) -> None:
        row = {"case": list(case), **row}
        with path.open("a") as f:
            f.write(json.dumps(row, default=str) + "\n")
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)

    print(f"# cpus={os.cpu_count()} load={' '.join(f'{x:.1f}' for x in os.getloadavg())} rows={args.rows} "
          f"budget={args.budget:g} s", flush=True)
    for network in args.networks:
        if ("peers", network, args.rows) not in done:
            record(("peers", network, args.rows), {"network": network, **peer_row(args, network)})
    for palim in args.palim:  # every network at the first parent limit before the next one
        for network in args.networks:
            capped = {} if args.memory_limit is None else {"memory_limit": args.memory_limit}
            case = ("hybrid", network, args.rows, palim, args.budget, *capped.values())
            if case not in done:
                record(case, {"network": network, "palim": palim, "budget": args.budget, **capped,
                              **hybrid_case(args, network, palim)})
    for palim in args.palim if args.jkl else []:
        for network in args.networks:
            for restricted in (True, False):
                case = ("jkl", network, args.rows, palim, restricted, args.budget)
                if case not in done:
                    write, *solve = jkl_cases(args, network, palim, restricted)
                    record(case, {"network": network, "palim": palim, "table": "PC" if restricted else "none",
                                  "write": write, **({"solve": solve[0]} if solve else {})})
    kinds = {kind: [r for r in rows if r["case"][0] == kind] for kind in ("peers", "hybrid", "jkl")}
    print("\n" + peers_table(kinds["peers"]) + "\n\n" + hybrid_table(kinds["hybrid"]) + "\n\n"
          + jkl_table(kinds["jkl"]))


if __name__ == "__main__":
    main()
