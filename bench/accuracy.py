"""Accuracy against peers: CPDAG SHD, skeleton F1 and seconds of our settings and of pgmpy,
causal-learn, pyAgrum (and R's bnlearn where installed) on the same forward samples; and the
score our settings reach, so that the exact optimum within a restriction (``default``: PC,
``method=mmpc``) stands beside hill climbing and tabu search within the same one (MMHC is
``method=mmpc,solver=hc``; ``method=pc,solver=hc`` is our H2PC): the thesis' claim that the exact
optimum beats the greedy search.

For every network x rows x sampling seed, one sample is drawn (``forward_sample``), its columns
put in a random order drawn from the seed (``--column-order network`` keeps the network's, which
hands order-sensitive greedy searches part of the answer: :func:`shuffled`), and given to every
learner: our pipeline through ``hybridbn.learn`` (one setting per ``--ours`` entry, stage
cache in ``<out>/cache``) and each peer of ``bench.peer_learners``. SHD is between the CPDAG of
the learned graph (a PDAG as returned by PC/GES-type peers) and the true CPDAG; F1 is of the
skeleton. Seconds are wall seconds of the learning call (ours: the stages as first computed, so a
cached rerun reports the original time). Every learner runs in a worker process killed after
``--limit`` seconds (ours: ``--ours-limit``); a learner that times out or fails on a network is
recorded as such and skipped for that network's later cases. ``score`` is the objective of our
setting's DAG (the BDeu score unless the setting changes the score or adds a prior; only settings
with the same score compare), empty for peers. Rows go to ``<out>/results.csv`` as
they come (a rerun skips the cases already there), and ``<out>/summary.md`` and
``<out>/accuracy.png`` are written at the end.

    .venv/bin/python -m bench.accuracy --networks asia alarm --rows 1000 --seeds 1 --limit 30
    .venv/bin/python -m bench.accuracy                       # 8 networks x 1000, 5000 rows x 5 seeds
    .venv/bin/python -m bench.accuracy --ours default palim=4 score=bic,palim=4 --peers "pyAgrum GHC"
    .venv/bin/python -m bench.accuracy --networks asia alarm insurance --rows 1000 --seeds 1 \\
        --ours default method=pc,solver=hc method=pc,solver=tabu method=mmpc method=mmpc,solver=hc --peers
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from bench.peer_learners import PEERS, Sample, preload, unavailable
from graphs.metrics import shd, skeleton_scores
from graphs.pdag import dag_to_cpdag
from pipeline.core.config import RunConfig
from pipeline.core.declarations import ConfigError
from pipeline.core.overrides import parse_overrides

NETWORKS = ["asia", "child", "insurance", "water", "alarm", "barley", "hailfinder", "hepar2"]
OURS = ["default", "structure_prior=1", "method=none,structure_prior=1", "score=qnml,structure_prior=1",
        "structure_prior=1,alpha=0.5,select=method=none;score=qnml", "palim=4",
        "score=bic", "method=pmms", "method=candidates", "add_candidates=2", "bootstrap=10",
        "method=pc,solver=hc", "method=pc,solver=tabu", "method=mmpc", "method=mmpc,solver=hc"]
FIELDS = ["network", "rows", "seed", "learner", "status", "shd", "f1", "precision", "recall", "seconds", "score"]
LEARN_STAGES = ("data", "restrict", "scores", "solve")
STARTUP_LIMIT = 300.0  # seconds a new worker may spend importing and warming up
COLUMN_ORDERS = ("random", "network")
"""How a sample's columns are ordered: at random per seed (the default), or as the network lists them."""
COLUMN_ORDER_STREAM = 1
"""Second entry of the column order's seed, so that it is drawn apart from the sample's rows."""


# ----------------------------------------------------------------------------- settings
def parse_setting(spec: str) -> dict[str, object]:
    """``default`` or ``key=value,key=value`` (RunConfig names, typed by their declarations) ->
    learn() options."""
    return {} if spec == "default" else parse_overrides(spec)


def ours_label(spec: str) -> str:
    return f"ours {spec}"


def check_settings(specs: list[str]) -> dict[str, dict[str, object]]:
    """Validate every ``--ours`` setting before any work (unknown options name themselves)."""
    settings = {}
    for spec in specs:
        try:
            options = parse_setting(spec)
        except ConfigError as exc:
            raise SystemExit(f"--ours {spec}: {exc}") from None
        RunConfig(network="asia", **options).validated()
        settings[ours_label(spec)] = options
    return settings


# ------------------------------------------------------------------------------ worker
def _serve(conn, ours: bool, log: str) -> None:
    """Worker loop: import (and for ours compile) outside the timed calls, send "ready", then
    receive (learner, options, sample, cache) and send (status, P, seconds, score: ours only). The
    learners' own output goes to ``log``. The worker leads a process group of its own, so that
    killing the group also ends the programs a learner started (bnlearn's Rscript)."""
    os.setpgid(0, 0)
    sink = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(sink, 1)
    os.dup2(sink, 2)
    import warnings

    warnings.filterwarnings("ignore")
    if ours:
        import hybridbn

        hybridbn.learn("asia", rows=200, use_cache=False)
    else:
        preload()
    conn.send("ready")
    while True:
        task = conn.recv()
        if task is None:
            return
        learner, options, sample, cache = task
        start = time.perf_counter()
        try:
            if options is None:
                P = PEERS[learner][1](sample)
                seconds, score = time.perf_counter() - start, None
            else:
                P, seconds, score = _learn_ours(sample, options, cache)
            conn.send(("ok", P, seconds, score))
        except Exception as exc:  # a failing learner is a result, not a crash
            conn.send((f"failed: {type(exc).__name__}: {str(exc)[:60]}", None, time.perf_counter() - start, None))


def _learn_ours(sample: Sample, options: dict, cache: str) -> tuple[np.ndarray, float, float]:
    """Our CPDAG, seconds and the learned DAG's score: the stages' seconds (as first computed), or
    with ``bootstrap=B`` the averaged network (a PDAG, compared as is) and the whole call's; with
    ``select`` the whole call's (the cross-validation included)."""
    import hybridbn

    start = time.perf_counter()
    result = hybridbn.learn(sample.frame, cache_dir=cache, stage="solve", **options)
    if result.bootstrap is not None:
        return np.asarray(result.bootstrap.averaged, dtype=bool), time.perf_counter() - start, result.objective
    if result.selection is not None:
        return dag_to_cpdag(result.adjacency), time.perf_counter() - start, result.objective
    return dag_to_cpdag(result.adjacency), sum(result.times.get(s, 0.0) for s in LEARN_STAGES), result.objective


class Watchdog:
    """A worker process that runs one learner call at a time and is killed, with every process it
    started, after ``limit`` s."""

    def __init__(self, limit: float, ours: bool, log: Path):
        self.limit, self.ours, self.log = limit, ours, str(log)
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, self.ours, self.log), daemon=True)
        self.proc.start()
        if not self.conn.poll(STARTUP_LIMIT) or self.conn.recv() != "ready":
            raise RuntimeError(f"a learner worker did not start in {STARTUP_LIMIT:g} s (see {self.log})")

    def _kill(self) -> None:
        """Kill the worker's process group: the worker and the learners' child processes."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # the group is gone already
            pass
        self.proc.join()

    def _restart(self) -> None:
        self._kill()
        self._start()

    def call(self, learner: str, options, sample: Sample,
             cache: str) -> tuple[str, np.ndarray | None, float, float | None]:
        self.conn.send((learner, options, sample, cache))
        if not self.conn.poll(self.limit):
            self._restart()
            return f"timeout > {self.limit:g} s", None, float("nan"), None
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self._restart()
            return "failed: worker died", None, float("nan"), None

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self._kill()


# ------------------------------------------------------------------------------ bench
def draw(network, rows: int, seed: int) -> Sample:
    data = forward_sample(network, rows, seed=seed)
    frame = pd.DataFrame({name: np.asarray(states, dtype=object)[data.data[:, v]]
                          for v, (name, states) in enumerate(zip(data.names, data.states))})
    return Sample(codes=np.asarray(data.data), frame=frame)


def shuffled(sample: Sample, seed: int) -> tuple[Sample, np.ndarray]:
    """The sample with its columns in a random order drawn from ``seed``, and that order (column
    ``k`` is the network's variable ``order[k]``). A greedy search breaks ties by column order, so
    the network's own order, a topological one for asia, water, barley, hailfinder and hepar2,
    would hand it part of the answer (Kitson & Constantinou 2024)."""
    order = np.random.default_rng([seed, COLUMN_ORDER_STREAM]).permutation(sample.codes.shape[1])
    return Sample(codes=sample.codes[:, order], frame=sample.frame.iloc[:, order]), order


def measure(P: np.ndarray, truth_cpdag: np.ndarray) -> dict[str, float]:
    s = skeleton_scores(P, truth_cpdag)
    return {"shd": shd(P, truth_cpdag), "f1": s["f1"], "precision": s["precision"], "recall": s["recall"]}


def run(args, settings: dict[str, dict], peers: list[str], out: Path) -> pd.DataFrame:
    path = out / "results.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=FIELDS)
    if list(done.columns) != FIELDS:  # results of an earlier version: its columns brought up to date
        done = done.reindex(columns=FIELDS)
        done.to_csv(path, index=False)
    seen = set(zip(done["network"], done["rows"], done["seed"], done["learner"]))
    given_up = {(r.learner, r.network) for r in done.itertuples()
                if r.status.startswith(("timeout", "failed", "skipped"))}
    missing = {p: unavailable(p) for p in peers}
    log = out / "workers.log"
    ours, theirs = Watchdog(args.ours_limit, True, log), Watchdog(args.limit, False, log)
    cache = str(out / "cache")
    try:
        for name in args.networks:
            net = load_network(name)
            truth = dag_to_cpdag(net.adjacency)
            for rows in args.rows:
                for seed in range(args.seeds):
                    sample = None
                    for learner in [*settings, *peers]:
                        if (name, rows, seed, learner) in seen:
                            continue
                        if sample is None:
                            sample, case_truth = draw(net, rows, seed), truth
                            if args.column_order == "random":
                                sample, order = shuffled(sample, seed)
                                case_truth = truth[np.ix_(order, order)]
                        row = {"network": name, "rows": rows, "seed": seed, "learner": learner}
                        if missing.get(learner):
                            row["status"] = missing[learner]
                        elif (learner, name) in given_up:
                            row["status"] = "skipped (timed out or failed on a smaller case)"
                        else:
                            worker, options = (ours, settings[learner]) if learner in settings else (theirs, None)
                            status, P, seconds, score = worker.call(learner, options, sample, cache)
                            row.update(status=status, seconds=seconds, score=score)
                            if P is not None:
                                row.update(measure(P, case_truth))
                            else:
                                given_up.add((learner, name))
                        print(_line(row), flush=True)
                        pd.DataFrame([row], columns=FIELDS).to_csv(path, mode="a", header=not path.exists(),
                                                                   index=False)
    finally:
        ours.close()
        theirs.close()
    return pd.read_csv(path)


def _line(row: dict) -> str:
    if row.get("shd") is None or row["status"] != "ok":
        return f"{row['network']:<11}{row['rows']:>6}{row['seed']:>3}  {row['learner']:<24}  {row['status']}"
    score = "" if row.get("score") is None else f"  score {row['score']:.6g}"
    return (f"{row['network']:<11}{row['rows']:>6}{row['seed']:>3}  {row['learner']:<24}  "
            f"SHD {row['shd']:>4}  F1 {row['f1']:.3f}  {row['seconds']:8.2f} s{score}")


# ---------------------------------------------------------------------------- summary
def summarise(results: pd.DataFrame, networks: list[str], learners: list[str]) -> pd.DataFrame:
    """Mean SHD / F1 / seconds per learner and case over the seeds that finished, with counts."""
    ok = results[results["status"] == "ok"]
    agg = ok.groupby(["network", "rows", "learner"]).agg(
        shd=("shd", "mean"), f1=("f1", "mean"), seconds=("seconds", "mean"), score=("score", "mean"),
        seeds=("seed", "nunique"))
    tried = results.groupby(["network", "rows", "learner"])["seed"].nunique().rename("tried")
    table = agg.join(tried, how="right").reset_index()
    order = {n: k for k, n in enumerate(networks)}
    rank = {n: k for k, n in enumerate(learners)}
    return table.sort_values(["network", "rows", "learner"],
                             key=lambda c: c.map(order) if c.name == "network" else
                             c.map(rank) if c.name == "learner" else c).reset_index(drop=True)


def headline(table: pd.DataFrame, settings: list[str], ok: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per case: mean SHD (F1) of our default, our best setting and the best peer by mean SHD,
    and the seeds each mean is over."""
    rows = []
    for (net, n), g in table.groupby(["network", "rows"], sort=False):
        g = g.dropna(subset=["shd"])
        mine, peers = g[g["learner"].isin(settings)], g[~g["learner"].isin(settings)]
        default = mine[mine["learner"] == settings[0]]
        picks = {settings[0]: default.iloc[0] if len(default) else None,
                 "best ours": mine.loc[mine["shd"].idxmin()] if len(mine) else None,
                 "best peer": peers.loc[peers["shd"].idxmin()] if len(peers) else None}
        row = {"case": f"{net} {n}"}
        for label, pick in picks.items():
            row[f"{label} SHD (F1)"] = "-" if pick is None else f"{pick['shd']:.1f} ({pick['f1']:.2f})"
            if label != settings[0]:
                row[label] = "" if pick is None else pick["learner"].removeprefix("ours ")
        row["seeds"] = "/".join("0" if p is None else str(int(p["seeds"])) for p in picks.values())
        if picks["best peer"] is not None and ok is not None:
            case = ok[(ok["network"] == net) & (ok["rows"] == n)]
            mine, theirs, k = paired_shd(case, settings[0], picks["best peer"]["learner"])
            row["default vs best peer, same seeds"] = f"{mine:.1f} vs {theirs:.1f} ({k})" if k else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def paired_shd(ok: pd.DataFrame, a: str, b: str) -> tuple[float, float, int]:
    """Mean SHD of learners ``a`` and ``b`` over the seeds both finished (in one case's rows)."""
    x = ok[ok["learner"] == a].set_index("seed")["shd"]
    y = ok[ok["learner"] == b].set_index("seed")["shd"]
    seeds = x.index.intersection(y.index)
    return x[seeds].mean(), y[seeds].mean(), len(seeds)


def scoreboard(results: pd.DataFrame, table: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """Per setting of ours: in how many cases it is at or below every peer that finished (mean SHD
    over the seeds both finished) and below / above our default (same seeds), and its mean SHD
    summed over the cases that every setting finished."""
    ok = results[results["status"] == "ok"]
    rows = []
    shd = table.pivot_table(index=["network", "rows"], columns="learner", values="shd")
    common = shd[[x for x in settings if x in shd.columns]].dropna()
    for x in settings:
        row = {"setting": x, "cases": 0, "<= every peer": 0, "< default": 0, "> default": 0}
        for _, case in ok.groupby(["network", "rows"]):
            if x not in set(case["learner"]):
                continue
            row["cases"] += 1
            peers = [p for p in dict.fromkeys(case["learner"]) if p not in settings]
            pairs = [paired_shd(case, x, p) for p in peers]
            pairs = [(m, q) for m, q, n in pairs if n]
            row["<= every peer"] += bool(pairs) and all(m <= q for m, q in pairs)
            mine, default, n = paired_shd(case, x, settings[0])
            row["< default"] += bool(n) and mine < default
            row["> default"] += bool(n) and mine > default
        row[f"sum of mean SHD ({len(common)} cases)"] = common[x].sum() if x in common else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame, digits: int = 1) -> str:
    cells = frame.map(lambda x: f"{x:.{digits}f}" if isinstance(x, float) and not np.isnan(x) else
                      "-" if isinstance(x, float) else str(x))
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(r) + " |" for r in cells.itertuples(index=False)]
    return "\n".join(lines)


def pivot(table: pd.DataFrame, value: str, learners: list[str]) -> pd.DataFrame:
    table = table.assign(case=table["network"] + " " + table["rows"].astype(str))
    wide = table.pivot(index="learner", columns="case", values=value)
    cases = list(dict.fromkeys(table["case"]))
    return wide.reindex(index=[x for x in learners if x in wide.index], columns=cases).reset_index()


def figure(table: pd.DataFrame, settings: list[str], path: Path) -> Path:
    """Mean SHD and seconds per case: our settings in colour, peers in grey shades."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(table["rows"].unique())
    fig, axes = plt.subplots(2, len(sizes), figsize=(7 * len(sizes), 8), squeeze=False)
    learners = list(dict.fromkeys(table["learner"]))
    peers = [x for x in learners if x not in settings]
    markers = "osD^vP*Xhp<>"
    for col, n in enumerate(sizes):
        sub = table[table["rows"] == n]
        nets = list(dict.fromkeys(sub["network"]))
        for k, learner in enumerate(learners):
            g = sub[sub["learner"] == learner].set_index("network").reindex(nets)
            x = np.arange(len(nets)) + (k - (len(learners) - 1) / 2) * 0.8 / len(learners)
            if learner in settings:
                style = {"color": f"C{settings.index(learner) % 10}", "marker": "o", "markersize": 7}
            else:
                shade = 0.15 + 0.6 * peers.index(learner) / max(len(peers), 1)
                style = {"color": str(shade), "marker": markers[peers.index(learner) % len(markers)],
                         "markersize": 5, "fillstyle": "none"}
            for row, value in ((0, "shd"), (1, "seconds")):
                axes[row, col].plot(x, g[value], linestyle="none", label=learner, **style)
        for row, title in ((0, "mean SHD (CPDAG)"), (1, "seconds per run (loaded machine)")):
            ax = axes[row, col]
            ax.set_xticks(range(len(nets)), nets, rotation=30)
            ax.set_title(f"{title}, N={n}")
            ax.grid(alpha=0.3)
        axes[0, col].set_yscale("symlog", linthresh=10)
        axes[1, col].set_yscale("log")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def report(results: pd.DataFrame, args, settings: list[str], peers: list[str], out: Path) -> str:
    ran = set(results.loc[results["status"] == "ok", "learner"])
    learners = [x for x in [*settings, *peers] if x in ran]
    table = summarise(results[results["learner"].isin(learners)], args.networks, learners)
    mine = [x for x in settings if x in learners]
    parts = [] if not mine else [
        "## Headline: mean CPDAG SHD (skeleton F1) per case; seeds: default / best ours / best peer",
        markdown(headline(table, mine, results[results["status"] == "ok"])),
        "## Our settings against the best peer and our default (mean SHD per case)",
        markdown(scoreboard(results[results["learner"].isin(learners)], table, mine)),
    ]
    parts += [
        "## Mean SHD (CPDAG) per learner and case",
        markdown(pivot(table, "shd", learners)),
        "## Mean skeleton F1",
        markdown(pivot(table, "f1", learners), digits=3),
        "## Mean score of our settings (higher is better; only settings of the same score compare)",
        markdown(pivot(table, "score", mine)) if mine else "no setting of ours finished",
        "## Mean seconds (wall, loaded machine)",
        markdown(pivot(table, "seconds", learners), digits=2),
        "## Seeds finished / tried",
        markdown(pivot(table.assign(done=table["seeds"].fillna(0).astype(int).astype(str) + "/"
                                    + table["tried"].astype(str)), "done", learners)),
        "## Not finished",
        _failures(results[results["learner"].isin([*settings, *peers])]),
    ]
    text = "\n\n".join(parts) + "\n"
    (out / "summary.md").write_text(text)
    figure(table, settings, out / "accuracy.png")
    return text


def _failures(results: pd.DataFrame) -> str:
    bad = results[results["status"] != "ok"]
    if bad.empty:
        return "every call finished"
    lines = bad.groupby(["learner", "status"])["network"].apply(
        lambda s: ", ".join(dict.fromkeys(s))).reset_index()
    return "\n".join(f"- {r.learner}: {r.status} ({r.network})" for r in lines.itertuples())


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)  # so that run()'s finally kills the workers' process groups


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=NETWORKS)
    ap.add_argument("--rows", nargs="+", type=int, default=[1000, 5000])
    ap.add_argument("--seeds", type=int, default=5, help="sampling seeds 0 .. SEEDS-1")
    ap.add_argument("--ours", nargs="*", default=OURS,
                    help="our settings: 'default' or key=value,... of run options (e.g. palim=4,score=bic)")
    ap.add_argument("--peers", nargs="*", default=list(PEERS), help=f"peer learners: {', '.join(PEERS)}")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per peer call")
    ap.add_argument("--ours-limit", type=float, default=300.0, help="seconds per call of our pipeline")
    ap.add_argument("--column-order", choices=COLUMN_ORDERS, default="random",
                    help="the samples' columns: in a random order drawn from the seed, or as the network "
                         "lists them (keep one order per --out folder)")
    ap.add_argument("--out", type=Path, default=Path("output/accuracy"))
    ap.add_argument("--report-only", action="store_true", help="summarise results.csv, learn nothing")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.peers) - set(PEERS))
    if unknown:
        ap.error(f"--peers: unknown learner {unknown[0]!r}; choose from {', '.join(PEERS)}")
    for name in args.networks:
        load_network(name)  # an unknown network fails here, before any work
    if min(args.limit, args.ours_limit) <= 0 or args.seeds < 1 or min(args.rows) < 1:
        ap.error("--limit, --ours-limit, --seeds and --rows must be positive")
    settings = check_settings(args.ours)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        results = pd.read_csv(args.out / "results.csv")
    else:
        signal.signal(signal.SIGTERM, _exit_on_signal)
        print(f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} limit={args.limit:g} s, "
              f"ours {args.ours_limit:g} s (wall seconds on a shared machine); columns in "
              f"{'a random order' if args.column_order == 'random' else 'the network order'}", flush=True)
        results = run(args, settings, args.peers, args.out)
    print(report(results, args, list(settings), args.peers, args.out))


if __name__ == "__main__":
    main()
