"""Cops-and-robbers experiments of Talvitie & Parviainen (Figure 1 and Figure 2 / section 4.2).

    python -m bench.cops counts [--networks asia child ...] [--time-limit 240] [--label B]
        distinct independence tests by conditioning-set size, cops vs non-stable PC, exact
        d-separation oracle (graphs.dsep.DSeparation, bit-set interface), variables in BIF
        order; checks CPDAG and treewidth.  Each finished network's row replaces the row of the
        same network in --results (docs/results/cops-counts.json); the table and figure are
        drawn from all the rows there, so a rerun of some networks keeps the others.
    python -m bench.cops shd [--networks ...] [--sizes 500 2000 10000] [--reps 2] [--time-limit 60]
        SHD of the learned CPDAG on sampled data (Pearson X2, alpha 0.05), cops vs PC.

Prints markdown tables, writes a PNG to docs/figures/ and the raw rows to --json.
Every run has a wall-clock limit; runs past it are reported as TIMEOUT, never dropped.
Rows record wall and CPU seconds (time.process_time) and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import time
from pathlib import Path

import numpy as np

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from bench.cops_pc_baseline import run_pc
from constraints.citests import CITest
from constraints.cops import cops_and_robbers, independence_oracle, learn_cops
from graphs.dsep import DSeparation
from graphs.metrics import shd
from graphs.moral import moral_graph
from graphs.pdag import dag_to_cpdag
from graphs.treewidth import treewidth_exact, treewidth_upper_bound

FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
COUNT_RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results" / "cops-counts.json"
COUNT_NETWORKS = ["cancer", "earthquake", "survey", "asia", "sachs", "child", "insurance", "water",
                  "mildew", "alarm", "barley", "hailfinder", "hepar2", "win95pts", "pathfinder"]
SHD_NETWORKS = ["asia", "sachs", "child", "insurance", "water", "mildew", "alarm", "barley"]


def exact_treewidth(A: np.ndarray) -> str:
    """Exact treewidth of the moral graph, or '<=upper bound' (min-fill) when the exact search gives up."""
    M = moral_graph(A)
    try:
        return str(treewidth_exact(M, max_states=200_000).width)
    except ValueError:
        return f"<={treewidth_upper_bound(M).width}"


def _load() -> float:
    return round(os.getloadavg()[0], 1)


def _timed(fn, *args, **kwargs):
    """(result, wall seconds, CPU seconds of this process)."""
    wall, cpu = time.monotonic(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.monotonic() - wall, time.process_time() - cpu


def run_counts(names: list[str], time_limit: float, *, pc_time_limit: float | None = None,
               skip_pc: bool = False, skip_cops: bool = False, label: str = "",
               results: Path | None = None, memory_budget: int | None = None,
               passes: int = 1) -> list[dict]:
    """One row per network; with ``results``, each row is merged into that file as soon as it is done.

    ``skip_pc`` / ``skip_cops`` keep the PC / cops fields of the network's previous row in
    ``results`` (if any) instead of running that learner.
    """
    rows = []
    for name in names:
        net = load_network(name)
        A = net.adjacency
        truth = dag_to_cpdag(A)
        ds = DSeparation(A)  # bit-set interface: CountingOracle batches its queries
        previous = _read_rows(results).get(name) if results else None
        row = dict(network=name, n=net.n_vars, max_degree=int((A | A.T).sum(axis=1).max()),
                   treewidth=exact_treewidth(A), run=label)
        load_before = _load()
        if skip_cops:
            row.update(_previous_fields(previous, "cops_", "run"))
        else:
            cops, _, cops_cpu = _timed(cops_and_robbers, ds, net.n_vars, time_limit=time_limit,
                                       memory_budget=memory_budget, passes=passes)
            row.update(
                cops_status=cops.status, cops_k=cops.k, cops_k_lower=cops.k_lower_bound,
                cops_tests=cops.tests_by_order, cops_total=cops.n_distinct_tests,
                cops_time=round(cops.elapsed, 1), cops_cpu=round(cops_cpu, 1),
                cops_limit=time_limit, cops_passes=cops.counting_passes,
                peak_rss_gb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 1),
                cops_correct=None if cops.cpdag is None else bool(np.array_equal(cops.cpdag, truth)),
                cops_tw_ok=None if cops.k is None else str(cops.k) == row["treewidth"],
            )
        if skip_pc:
            row.update(_previous_fields(previous, "pc_", "pc_run"))
        else:
            pc, _, pc_cpu = _timed(run_pc, ds, net.n_vars, time_limit=pc_time_limit or time_limit)
            row.update(
                pc_status=pc.status, pc_tests=pc.tests_by_order, pc_total=pc.n_distinct_tests,
                pc_time=round(pc.elapsed, 1), pc_cpu=round(pc_cpu, 1), pc_run=label,
                pc_correct=None if pc.cpdag is None else bool(np.array_equal(pc.cpdag, truth)),
            )
        row["load"] = [load_before, _load()]
        rows.append(row)
        print(json.dumps(row), flush=True)
        if results:
            merged = _read_rows(results)
            merged[name] = row
            _write_rows(results, merged)
    return rows


def _previous_fields(previous: dict | None, prefix: str, run_key: str) -> dict:
    """The ``prefix`` fields of a network's previous row and the label of the run that made them
    (as ``run_key``), or a "skipped" placeholder when there is no previous row."""
    if previous is None:
        return {f"{prefix}status": "skipped", f"{prefix}tests": [], f"{prefix}total": None,
                f"{prefix}time": None, f"{prefix}correct": None, f"{prefix}k": None,
                f"{prefix}k_lower": None, run_key: "-"}
    fields = {k: v for k, v in previous.items() if k.startswith(prefix)}
    fields[run_key] = previous.get(run_key, previous.get("run", ""))
    return fields


def _read_rows(path: Path) -> dict[str, dict]:
    return {r["network"]: r for r in json.loads(path.read_text())} if path.exists() else {}


def _write_rows(path: Path, rows: dict[str, dict]) -> None:
    order = {name: i for i, name in enumerate(COUNT_NETWORKS)}
    ordered = sorted(rows.values(), key=lambda r: (order.get(r["network"], len(order)), r["network"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ordered, indent=1))
    tmp.replace(path)


def _status(status: str, value) -> str:
    return str(value) if status == "ok" else status.upper()


def _seconds(row: dict, key: str) -> str:
    """Wall seconds, with CPU seconds in brackets where the row has them."""
    wall, cpu = row.get(f"{key}_time"), row.get(f"{key}_cpu")
    if wall is None:
        return "-"
    return f"{wall} ({cpu})" if cpu is not None else str(wall)


def counts_table(rows: list[dict]) -> str:
    lines = ["| network | n | max deg | tw (exact) | cops k | cops tests by |S| = 0, 1, ... | cops total "
             "| cops s wall (CPU) | PC tests by |S| | PC total | PC s wall (CPU) | CPDAG ok (cops/PC) "
             "| run (cops/PC) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        k = {"ok": r["cops_k"], "timeout": f"TIMEOUT (>= {r['cops_k_lower']})"}.get(
            r["cops_status"], r["cops_status"].upper())
        runs = r.get("run", "")
        if r.get("pc_run", runs) != runs:
            runs = f"{runs}/{r['pc_run']}"
        lines.append(
            f"| {r['network']} | {r['n']} | {r['max_degree']} | {r['treewidth']} | {k} "
            f"| {' '.join(map(str, r['cops_tests']))} | {r['cops_total']} | {_seconds(r, 'cops')} "
            f"| {' '.join(map(str, r['pc_tests']))} | {_status(r['pc_status'], r['pc_total'])} "
            f"| {_seconds(r, 'pc')} | {r['cops_correct']}/{r['pc_correct']} | {runs} |")
    return "\n".join(lines)


def counts_figure(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 4
    nrows = -(-len(rows) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 2.8 * nrows), squeeze=False)
    for ax, r in zip(axes.flat, rows):
        size = max(len(r["cops_tests"]), len(r["pc_tests"]))
        x = np.arange(size)
        for off, key, label, colour in ((-0.2, "cops", "cops", "tab:blue"), (0.2, "pc", "PC", "tab:orange")):
            counts = r[f"{key}_tests"] + [0] * (size - len(r[f"{key}_tests"]))
            status = r[f"{key}_status"]
            ax.bar(x + off, counts, 0.4, color=colour, alpha=1.0 if status == "ok" else 0.45,
                   label=label + ("" if status == "ok" else f" ({status.upper()}, partial)"))
        ax.set_yscale("log")
        ax.set_title(f"{r['network']} (n={r['n']}, tw={r['treewidth']}, deg={r['max_degree']})", fontsize=9)
        ax.set_xticks(x)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(rows):]:
        ax.axis("off")
    fig.supxlabel("conditioning-set size |S|")
    fig.supylabel("distinct independence tests")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def run_shd(names: list[str], sizes: list[int], reps: int, time_limit: float) -> list[dict]:
    rows = []
    for name in names:
        net = load_network(name)
        truth = dag_to_cpdag(net.adjacency)
        for n_rows in sizes:
            for rep in range(reps):
                data = forward_sample(net, n_rows, seed=1000 * rep + n_rows).data
                cops = learn_cops(data, net.arities, alpha=0.05, time_limit=time_limit)
                test = CITest(data, net.arities, statistic="x2", df_adjust="none", min_rows_per_df=0)
                t0 = time.monotonic()
                pc = run_pc(independence_oracle(test, 0.05), net.n_vars, time_limit=time_limit,
                            check_every=10)
                row = dict(
                    network=name, n=net.n_vars, rows=n_rows, rep=rep,
                    cops_status=cops.status, cops_k=cops.k, cops_k_lower=cops.k_lower_bound,
                    cops_shd=None if cops.cpdag is None else shd(cops.cpdag, truth),
                    cops_tests=cops.n_distinct_tests, cops_time=round(cops.elapsed, 1),
                    pc_status=pc.status, pc_shd=None if pc.cpdag is None else shd(pc.cpdag, truth),
                    pc_tests=pc.n_distinct_tests, pc_time=round(time.monotonic() - t0, 1),
                    true_edges=int(net.adjacency.sum()),
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def _agg(values: list) -> str:
    done = [v for v in values if v is not None]
    text = "/".join(str(v) for v in done) if done else "-"
    missing = len(values) - len(done)
    return text + (f" ({missing} TIMEOUT)" if missing else "")


def shd_table(rows: list[dict]) -> str:
    lines = ["| network | edges | N | cops SHD (per rep) | cops k | cops s | PC SHD (per rep) | PC s |",
             "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["network"], r["rows"]) for r in rows}, key=lambda t: (SHD_NETWORKS.index(t[0])
                                                                           if t[0] in SHD_NETWORKS else 99, t[1]))
    for name, n_rows in keys:
        group = [r for r in rows if r["network"] == name and r["rows"] == n_rows]
        ks = "/".join(str(r["cops_k"]) if r["cops_status"] == "ok" else f">={r['cops_k_lower']}"
                      for r in group)
        lines.append(
            f"| {name} | {group[0]['true_edges']} | {n_rows} | {_agg([r['cops_shd'] for r in group])} | {ks} "
            f"| {'/'.join(str(r['cops_time']) for r in group)} | {_agg([r['pc_shd'] for r in group])} "
            f"| {'/'.join(str(r['pc_time']) for r in group)} |")
    return "\n".join(lines)


def shd_figure(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in SHD_NETWORKS if any(r["network"] == n for r in rows)]
    names += sorted({r["network"] for r in rows} - set(names))
    cols = 4
    nrows = -(-len(names) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3 * nrows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        group = [r for r in rows if r["network"] == name]
        sizes = sorted({r["rows"] for r in group})
        top = ax.get_xaxis_transform()  # x in data units, y as a fraction of the axes
        for key, colour, shift in (("cops", "tab:blue", 0.97), ("pc", "tab:orange", 1.03)):
            for s in sizes:
                vals = [r[f"{key}_shd"] for r in group if r["rows"] == s]
                done = [v for v in vals if v is not None]
                if done:
                    mean = float(np.mean(done))
                    ax.errorbar([s * shift], [mean], yerr=[[mean - min(done)], [max(done) - mean]],
                                fmt="o", color=colour, capsize=3)
                if len(done) < len(vals):
                    ax.plot([s * shift], [0.93], marker="x", color=colour, markersize=9, transform=top)
                    ax.text(s * shift, 0.82, f"{len(vals) - len(done)}/{len(vals)}", color=colour,
                            transform=top, ha="center", fontsize=7)
            ax.plot([], [], "o", color=colour, label=key if key == "cops" else "PC")
        ax.axhline(group[0]["true_edges"], color="grey", lw=0.8, ls="--", label="SHD of the empty graph")
        ax.plot([], [], "x", color="grey", label="TIMEOUT (runs/reps)")
        ax.set_xscale("log")
        ax.set_ylim(0, group[0]["true_edges"] * 1.25)
        ax.set_title(f"{name} ({group[0]['true_edges']} arcs)", fontsize=9)
        ax.legend(fontsize=6, loc="lower left")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.supxlabel("number of data points")
    fig.supylabel("SHD to the true CPDAG (mean, min-max)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("experiment", choices=["counts", "shd"])
    parser.add_argument("--networks", nargs="+")
    parser.add_argument("--sizes", nargs="+", type=int, default=[500, 2000, 10000])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--json", type=Path, help="write the raw rows here")
    parser.add_argument("--from-json", type=Path, help="only redraw the table and figure from saved rows")
    parser.add_argument("--results", type=Path, default=COUNT_RESULTS,
                        help="counts: merge each finished network's row into this file (default %(default)s)")
    parser.add_argument("--label", default="", help="counts: run label stored in the rows")
    parser.add_argument("--memory-budget", type=float,
                        help="counts: GB for the compiled engine's tables (default 60%% of available memory)")
    parser.add_argument("--passes", type=int, default=1,
                        help="counts: counting passes to start with (a power of two; a pass that fills the memory budget hands half of its conditioning sets to a later pass)")
    parser.add_argument("--pc-time-limit", type=float, help="counts: PC's limit (default --time-limit)")
    parser.add_argument("--skip-pc", action="store_true",
                        help="counts: do not run PC; keep the PC fields of the previous row in --results")
    parser.add_argument("--skip-cops", action="store_true",
                        help="counts: do not run cops; keep the cops fields of the previous row in --results")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.experiment == "counts":
        if args.from_json:
            rows = json.loads(args.from_json.read_text())
        else:
            rows = run_counts(args.networks or COUNT_NETWORKS, args.time_limit or 240.0,
                              pc_time_limit=args.pc_time_limit, skip_pc=args.skip_pc, skip_cops=args.skip_cops,
                              label=args.label, results=args.results,
                              memory_budget=None if args.memory_budget is None else int(args.memory_budget * 2**30),
                              passes=args.passes)
            if args.results:  # table and figure over every network in the results file
                rows = list(_read_rows(args.results).values())
                order = {name: i for i, name in enumerate(COUNT_NETWORKS)}
                rows.sort(key=lambda r: order.get(r["network"], len(order)))
        print(counts_table(rows))
        counts_figure(rows, FIGURES / "cops_tests.png")
    else:
        rows = (json.loads(args.from_json.read_text()) if args.from_json else
                run_shd(args.networks or SHD_NETWORKS, args.sizes, args.reps, args.time_limit or 60.0))
        print(shd_table(rows))
        shd_figure(rows, FIGURES / "cops_shd.png")
    if args.json and not args.from_json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
