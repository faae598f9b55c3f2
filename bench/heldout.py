"""Held-out likelihood on the DEBD binary density-estimation suite (issue 53, point 4): for each
data set, every learner learns a DAG from the train + valid rows, the DAG's CPTs are fitted on
those rows by one Laplace estimator for every learner (so the figures compare structures), and
the mean natural log-likelihood per test row is reported with the learner's wall and CPU seconds
and peak resident memory.

Learners: our settings (``--ours``: ``default`` or ``key=value,...`` of run options, each given
``--budget`` seconds unless it sets its own), pyAgrum's greedy hill climbing and tabu search
(BIC and BDeu, library defaults otherwise: no in-degree limit), R's bnlearn ``hc`` / ``tabu``
(BIC and BDe with iss 1, no parent limit) where ``Rscript`` has bnlearn, a Chow-Liu tree (Chow &
Liu 1968: the maximum-weight spanning tree of pairwise mutual information, rooted at the first
variable) and the empty DAG. Every learner runs in a child process (``--worker``) of its own
process group, under an address-space cap (``--memory-cap``, RLIMIT_AS) and a wall-clock limit
(``--limit``, counted from the end of its warm-up: imports, our kernels' first compilation); a
learner that exceeds either is reported as such (``memory cap``, ``timeout``), never allowed to
take the machine down. Peak memory is the child's ``ru_maxrss`` (the worker and
the programs it waited for, R included; interpreter and imports included); seconds are those of
the learning call (CPU: the worker's and its children's), or the child's whole life when it did
not finish.

The data: the 20 sets of Lowd & Davis (2010), Van Haaren & Davis (2012), as the public repository
UCLA-StarAI/Density-Estimation-Datasets ships them: ``<DIR>/<name>/<name>.{train,valid,test}.data``
(comma-separated 0/1, no header). Fetch that repository and pass its ``datasets`` folder (or a
copy of the folders wanted) as ``--debd DIR``; the data is not part of this repository.

    .venv/bin/python -m bench.heldout --debd DIR --datasets nltcs plants --budget 120 --out output/heldout
    .venv/bin/python -m bench.heldout --debd DIR --ours default solver=tabu,palim=6 --peers "Chow-Liu"

Rows go to ``<out>/results.csv`` as they come (a rerun skips the pairs already there);
``<out>/summary.md`` holds the tables and, per data set, whether our first setting is at or above
every other learner of the same session (the issue's target: 18 of 20 at <= 4 GB peak memory
within the default budget).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayesnet.dataset import Dataset
from bayesnet.fitting import MAX_CPT_CELLS, log_likelihood
from bayesnet.network import Network, parent_config_index
from bench.accuracy import check_settings, markdown
from bench.peer_learners import Sample, agrum_dag, bnlearn_arcs, bnlearn_available, varying_columns

DATASETS = ["nltcs", "msnbc", "kdd", "plants", "baudio", "jester", "bnetflix", "accidents", "tretail",
            "pumsb_star", "dna", "kosarek", "msweb", "book", "tmovie", "cwebkb", "cr52", "c20ng", "bbc", "ad"]
"""The suite's 20 data sets, by their folder names in UCLA-StarAI/Density-Estimation-Datasets."""
SPLITS = ("train", "valid", "test")
REPOSITORY = "https://github.com/UCLA-StarAI/Density-Estimation-Datasets"
OURS = ["default", "solver=tabu", "solver=hc", "solver=tabu,palim=6", "solver=hc,palim=6"]
BNLEARN_DAGS = {
    "bnlearn hc BIC": "hc(d, score = 'bic')",
    "bnlearn tabu BIC": "tabu(d, score = 'bic')",
    "bnlearn hc BDe": "hc(d, score = 'bde', iss = 1)",
    "bnlearn tabu BDe": "tabu(d, score = 'bde', iss = 1)",
}
AGRUM_DAGS = {
    "pyAgrum GHC BIC": ("useGreedyHillClimbing", "useScoreBIC"),
    "pyAgrum GHC BDeu": ("useGreedyHillClimbing", "useScoreBDeu"),
    "pyAgrum Tabu BIC": ("useLocalSearchWithTabuList", "useScoreBIC"),
    "pyAgrum Tabu BDeu": ("useLocalSearchWithTabuList", "useScoreBDeu"),
}
PEERS = [*AGRUM_DAGS, *BNLEARN_DAGS, "Chow-Liu", "empty DAG"]
FIELDS = ["dataset", "vars", "learn_rows", "test_rows", "learner", "status", "test_ll", "arcs", "wall_s",
          "cpu_s", "peak_mb", "note"]
PSEUDO_COUNT = 1.0
"""Laplace's estimator: one pseudo-count per CPT cell."""
STARTUP_LIMIT = 900.0
"""Wall seconds a worker may spend importing and warming up (a first run compiles our kernels)
before its learner's own ``--limit`` starts."""
TARGET = {"datasets": 18, "peak_mb": 4096}
"""Issue 53's target: our default at or above every peer on 18 of the 20, at most 4 GB peak."""


# ------------------------------------------------------------------------- estimators
def laplace_network(dag: np.ndarray, dataset: Dataset, pseudo_count: float = PSEUDO_COUNT) -> Network:
    """The DAG's CPTs by Lidstone's estimator, ``theta_ijk = (n_ijk + a) / (n_ij + a r_i)``
    (``a = 1``: Laplace's rule of succession), for every learner alike."""
    arities = dataset.arities
    parents, cpts = [], []
    for v in range(dataset.n_vars):
        ps = [int(p) for p in np.flatnonzero(dag[:, v])]
        r, radix = int(arities[v]), [int(arities[p]) for p in ps]
        q = int(np.prod(radix, dtype=np.float64)) if ps else 1
        if q * r > MAX_CPT_CELLS:
            raise ValueError(f"CPT of {dataset.names[v]!r} would have {q * r} cells (limit {MAX_CPT_CELLS})")
        child = dataset.data[:, v].astype(np.intp)
        cells = child if not ps else parent_config_index([dataset.data[:, p] for p in ps], radix) * r + child
        counts = np.bincount(cells, minlength=q * r).reshape(q, r) + pseudo_count
        parents.append(ps)
        cpts.append((counts / counts.sum(axis=1, keepdims=True)).reshape(tuple(radix) + (r,)))
    return Network(name="laplace", variables=list(dataset.names), states=[list(s) for s in dataset.states],
                   parents=parents, cpts=cpts)


def mean_test_ll(dag: np.ndarray, learn: Dataset, test: Dataset) -> float:
    """Mean log-likelihood per test row of ``dag`` with its Laplace CPTs fitted on ``learn``."""
    return log_likelihood(laplace_network(dag, learn), test) / test.n_rows


def mutual_information(codes: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """Empirical mutual information (nats) of every pair of columns, from the one-hot Gram matrix
    (its blocks are the pairs' contingency tables); the diagonal is left 0."""
    offsets = np.concatenate([[0], np.cumsum(arities)[:-1]]).astype(np.intp)
    onehot = np.zeros((codes.shape[0], int(arities.sum())))
    onehot[np.arange(codes.shape[0])[:, None], offsets + codes.astype(np.intp)] = 1.0
    p = onehot.T @ onehot / codes.shape[0]
    marginal = np.diag(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / np.outer(marginal, marginal)), 0.0)
    mi = np.add.reduceat(np.add.reduceat(terms, offsets, axis=0), offsets, axis=1)
    np.fill_diagonal(mi, 0.0)
    return np.maximum(mi, 0.0)


def chow_liu_dag(codes: np.ndarray, arities: np.ndarray, root: int = 0) -> np.ndarray:
    """Chow & Liu (1968): the maximum spanning tree of the pairwise mutual information (Prim's
    algorithm from ``root``, ties to the lower index), its edges directed away from ``root``."""
    weight = mutual_information(codes, arities)
    n = len(arities)
    dag = np.zeros((n, n), dtype=bool)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[root] = True
    best, link = weight[root].copy(), np.full(n, root)
    for _ in range(n - 1):
        v = int(np.argmax(np.where(in_tree, -np.inf, best)))
        dag[link[v], v] = in_tree[v] = True
        closer = ~in_tree & (weight[v] > best)
        best[closer], link[closer] = weight[v][closer], v
    return dag


# --------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Split:
    """One data set: the rows learned from (train + valid) and the held-out test rows."""

    name: str
    learn: Dataset
    test: Dataset


def missing_data_message(root: Path, name: str) -> str:
    return (f"no DEBD data set {name!r} under {root} (expected {root}/{name}/{name}.train.data, "
            f".valid.data and .test.data). Get the suite from {REPOSITORY} (git clone; its "
            f"'datasets' folder holds one folder per data set) and pass that folder as --debd DIR.")


def read_split(root: Path, name: str, max_rows: int | None = None) -> Split:
    """``name``'s train + valid rows (the first ``max_rows`` of them if given) and its test rows,
    every variable binary with states ``0`` / ``1``."""
    paths = [root / name / f"{name}.{part}.data" for part in SPLITS]
    if not all(p.is_file() for p in paths):
        raise FileNotFoundError(missing_data_message(root, name))
    train, valid, test = (pd.read_csv(p, header=None, dtype=np.uint8).to_numpy() for p in paths)
    learn = np.vstack([train, valid])[:max_rows]
    if learn.max(initial=0) > 1 or test.max(initial=0) > 1 or learn.shape[1] != test.shape[1]:
        raise ValueError(f"{name}: the DEBD files must be 0/1 columns of the same width")
    names = [f"x{k}" for k in range(learn.shape[1])]
    states = [["0", "1"] for _ in names]
    return Split(name, Dataset(learn, names, states), Dataset(test, names, states))


def sample_of(dataset: Dataset) -> Sample:
    frame = pd.DataFrame({n: np.asarray(s, dtype=object)[dataset.data[:, v]]
                          for v, (n, s) in enumerate(zip(dataset.names, dataset.states))})
    return Sample(codes=dataset.data, frame=frame)


# ------------------------------------------------------------------------------ worker
def learn_dag(learner: str, options: dict | None, dataset: Dataset) -> tuple[np.ndarray, str]:
    """The DAG (adjacency in the dataset's columns) that ``learner`` learns, and a note."""
    if options is not None:
        import hybridbn  # deferred: the peers' workers need not load our pipeline

        result = hybridbn.learn(sample_of(dataset).frame, stage="solve", use_cache=False, progress=True, **options)
        index = {name: k for k, name in enumerate(dataset.names)}
        order = [index[name] for name in result.names]
        dag = np.zeros((dataset.n_vars,) * 2, dtype=bool)
        dag[np.ix_(order, order)] = result.adjacency
        stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in result.times.items())
        return dag, f"status {result.status}; {stages}"
    if learner == "Chow-Liu":
        return chow_liu_dag(dataset.data, dataset.arities), ""
    if learner == "empty DAG":
        return np.zeros((dataset.n_vars,) * 2, dtype=bool), ""
    # peers see only the varying columns (bnlearn refuses a constant one, which has no arc anyway)
    sample = sample_of(dataset)
    sample = Sample(codes=sample.codes, frame=varying_columns(sample.frame))
    if learner in AGRUM_DAGS:
        found = agrum_dag(sample, *AGRUM_DAGS[learner])
    else:
        found = bnlearn_arcs(sample, BNLEARN_DAGS[learner])
    index = [dataset.names.index(name) for name in sample.names]
    dag = np.zeros((dataset.n_vars,) * 2, dtype=bool)
    dag[np.ix_(index, index)] = found
    return dag, ""


def _children_cpu() -> float:
    self, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return self.ru_utime + self.ru_stime + children.ru_utime + children.ru_stime


def serve(task_path: Path) -> None:
    """Worker: warm up outside the timed call (our kernels' compilation, the peers' imports),
    learn once, write the DAG and the call's seconds next to the task."""
    task = json.loads(task_path.read_text())
    data = np.load(task["data"])
    dataset = Dataset(data, [f"x{k}" for k in range(data.shape[1])], [["0", "1"]] * data.shape[1])
    options = task["options"]
    if options is not None:
        import hybridbn  # deferred: as in learn_dag

        hybridbn.learn("asia", rows=200, use_cache=False)
    elif task["learner"] in AGRUM_DAGS:
        import pyagrum  # noqa: F401 (deferred: import time is not the learner's)
    task_path.with_suffix(".warm").touch()
    start, cpu = time.perf_counter(), _children_cpu()
    try:
        dag, note = learn_dag(task["learner"], options, dataset)
    except MemoryError:
        (task_path.with_suffix(".status")).write_text("memory cap (MemoryError)")
        raise
    except Exception as exc:  # a failing learner is a result: its reason goes to the bench
        task_path.with_suffix(".status").write_text(f"failed: {type(exc).__name__}: {str(exc)[:120]}")
        raise
    np.save(task_path.with_suffix(".npy"), dag)
    task_path.with_suffix(".json.out").write_text(json.dumps(
        {"wall_s": time.perf_counter() - start, "cpu_s": _children_cpu() - cpu, "note": note}))


@dataclass(frozen=True)
class Capped:
    """What a capped child process did: how it ended, its wall seconds and its resource usage."""

    status: str
    wall_s: float
    cpu_s: float
    peak_mb: float


def run_capped(argv: list[str], limit_s: float, memory_bytes: int, log: Path, warm: Path | None = None) -> Capped:
    """Run ``argv`` in a new process group under an address-space cap of ``memory_bytes`` and a
    wall-clock limit of ``limit_s`` (then the whole group is killed), output to ``log``; its peak
    resident memory is ``ru_maxrss`` from ``wait4`` (on Linux it includes the resident size of
    this process at the fork, which the bench keeps small: about 100 MB). With ``warm``, the limit counts from when
    that file appears (within :data:`STARTUP_LIMIT` s)."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    with log.open("ab") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, preexec_fn=cap,
                                start_new_session=True)
    start, timed_out = time.perf_counter(), False
    clock = start if warm is None else None
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if clock is None and (warm.exists() or now - start > STARTUP_LIMIT):
                clock = now
            if clock is not None and now - clock > limit_s:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.1)
    except BaseException:  # the bench stopped (Ctrl-C, SIGTERM): no learner outlives it
        os.killpg(proc.pid, signal.SIGKILL)
        os.wait4(proc.pid, 0)
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    wall = time.perf_counter() - start
    if timed_out:
        verdict = f"timeout > {limit_s:g} s"
    elif proc.returncode < 0:
        verdict = f"killed by signal {-proc.returncode} (a C/C++ allocation past the memory cap aborts)"
    else:
        verdict = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    try:  # a timed-out worker's own processes (Rscript) may linger in the group
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return Capped(verdict, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def run_learner(learner: str, options: dict | None, split: Split, data_path: Path, args, log: Path) -> dict:
    """One learner on one data set, in a capped worker: the result row."""
    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp) / "task.json"
        task.write_text(json.dumps({"learner": learner, "options": options, "data": str(data_path)}))
        capped = run_capped([sys.executable, "-m", "bench.heldout", "--worker", str(task)], args.limit,
                            int(args.memory_cap * 2**30), log, warm=task.with_suffix(".warm"))
        row = {"learner": learner, "wall_s": capped.wall_s, "cpu_s": capped.cpu_s, "peak_mb": capped.peak_mb}
        reason = task.with_suffix(".status")
        if task.with_suffix(".npy").exists():
            dag = np.load(task.with_suffix(".npy"))
            row.update(json.loads(task.with_suffix(".json.out").read_text()), status="ok", arcs=int(dag.sum()))
            try:
                row["test_ll"] = mean_test_ll(dag, split.learn, split.test)
            except ValueError as exc:  # a CPT too large to hold
                row["status"] = f"failed: {exc}"
        else:
            row["status"] = reason.read_text() if reason.exists() else capped.status
            row["note"] = last_line(log)
    return row


def last_line(log: Path) -> str:
    """The last non-empty line the learners printed (what a failed run said last)."""
    lines = [x.strip() for x in log.read_text(errors="replace").splitlines() if x.strip()]
    return lines[-1][:160] if lines else ""


# ------------------------------------------------------------------------------- bench
def learners(args) -> dict[str, dict | None]:
    """Label -> learn() options (ours, the budget added unless the setting has one) or None (peers)."""
    settings = check_settings(args.ours)
    if args.budget is not None:
        settings = {label: {"budget": args.budget, **options} for label, options in settings.items()}
    return {**settings, **{peer: None for peer in args.peers}}


def run(args) -> pd.DataFrame:
    path = args.out / "results.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=FIELDS)
    seen = set(zip(done["dataset"], done["learner"]))
    chosen = learners(args)
    r_ok = bnlearn_available()
    (args.out / "logs").mkdir(exist_ok=True)
    for name in args.datasets:
        todo = [x for x in chosen if (name, x) not in seen]
        if not todo:
            continue
        split = read_split(args.debd, name, args.max_rows)
        base = {"dataset": name, "vars": split.learn.n_vars, "learn_rows": split.learn.n_rows,
                "test_rows": split.test.n_rows}
        with tempfile.TemporaryDirectory() as tmp:
            data_path = Path(tmp) / "learn.npy"
            np.save(data_path, split.learn.data)
            for learner in todo:
                if learner in BNLEARN_DAGS and not r_ok:
                    row = {"learner": learner, "status": "not available (no Rscript with bnlearn)"}
                else:
                    log = args.out / "logs" / f"{name}.{learner.replace(' ', '_').replace('=', '-')}.log"
                    row = run_learner(learner, chosen[learner], split, data_path, args, log)
                row = {**base, **row}
                print(line(row), flush=True)
                pd.DataFrame([row], columns=FIELDS).to_csv(path, mode="a", header=not path.exists(), index=False)
    return pd.read_csv(path)


def line(row: dict) -> str:
    head = f"{row['dataset']:<11}{row['learner']:<28}"
    if row["status"] != "ok":
        return f"{head}{row['status']}  {row.get('note') or ''}".rstrip()
    return (f"{head}test LL {row['test_ll']:9.4f}  arcs {row['arcs']:>5}  wall {row['wall_s']:8.1f} s  "
            f"cpu {row['cpu_s']:8.1f} s  peak {row['peak_mb']:7.0f} MB  {row.get('note') or ''}").rstrip()


# ----------------------------------------------------------------------------- summary
def wide(results: pd.DataFrame, value: str, order: list[str]) -> pd.DataFrame:
    table = results.pivot_table(index="dataset", columns="learner", values=value, aggfunc="first")
    table = table.reindex(index=list(dict.fromkeys(results["dataset"])),
                          columns=[x for x in order if x in table.columns])
    return table.reset_index()


def scoreboard(results: pd.DataFrame, ours: str, budget: float | None) -> pd.DataFrame:
    """Per data set: our setting ``ours`` against the best other learner that finished in the same
    session, its peak memory, and whether it ended within its budget (5 % or 5 s over allowed)."""
    rows = []
    for name, group in results.groupby("dataset", sort=False):
        mine = group[group["learner"] == ours]
        others = group[(group["learner"] != ours) & (group["status"] == "ok")]
        if mine.empty:
            continue
        m = mine.iloc[0]
        best = others.loc[others["test_ll"].idxmax()] if len(others) else None
        finished = m["status"] == "ok"
        row = {"dataset": name, "ours": m["test_ll"] if finished else m["status"],
               "best other": "-" if best is None else f"{best['test_ll']:.4f} ({best['learner']})",
               ">= every other": finished and best is not None and m["test_ll"] >= best["test_ll"],
               "peak MB": round(m["peak_mb"]), f"<= {TARGET['peak_mb']} MB": m["peak_mb"] <= TARGET["peak_mb"],
               "wall s": f"{m['wall_s']:.1f}"}
        if budget is not None:
            row["within budget"] = finished and m["wall_s"] <= max(budget * 1.05, budget + 5)
        rows.append(row)
    return pd.DataFrame(rows)


def report(results: pd.DataFrame, args) -> str:
    order = list(learners(args))
    results = results[results["learner"].isin(order)]
    ok = results[results["status"] == "ok"]
    ours = order[0] if args.ours else None
    board = scoreboard(results, ours, args.budget) if ours else pd.DataFrame()
    parts = [f"Mean test log-likelihood per row (nats; Laplace CPTs fitted on train + valid); "
             f"learners capped at {args.limit:g} s wall and {args.memory_cap:g} GiB address space; "
             f"our settings' budget {args.budget if args.budget is not None else 'their default'} s."]
    if len(board):
        wins, small = int(board[">= every other"].sum()), int(board[f"<= {TARGET['peak_mb']} MB"].sum())
        parts += [f"## {ours} against every other learner of the session",
                  f"at or above every other learner on {wins} of {len(board)} data sets (target "
                  f"{TARGET['datasets']} of 20); peak <= {TARGET['peak_mb']} MB on {small} of {len(board)}",
                  markdown(board, digits=4)]
    parts += ["## Test log-likelihood per row", markdown(wide(ok, "test_ll", order), digits=3),
              "## Arcs", markdown(wide(ok, "arcs", order), digits=0),
              "## Wall seconds of the learning call (shared machine)", markdown(wide(ok, "wall_s", order), digits=1),
              "## CPU seconds of the learning call", markdown(wide(ok, "cpu_s", order), digits=1),
              "## Peak resident memory of the learner's process (MB)", markdown(wide(ok, "peak_mb", order), digits=0),
              "## Not finished", failures(results)]
    text = "\n\n".join(parts) + "\n"
    (args.out / "summary.md").write_text(text)
    return text


def failures(results: pd.DataFrame) -> str:
    bad = results[results["status"] != "ok"]
    if bad.empty:
        return "every learner finished"
    return "\n".join(f"- {r.dataset}, {r.learner}: {r.status}" + (f" (last line: {r.note})" if isinstance(
        r.note, str) and r.note else "") for r in bad.itertuples())


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)  # so that run_capped kills the learner's process group


def seconds_or_none(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        serve(Path(argv[1]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--debd", type=Path, required=True,
                    help=f"folder with one folder per DEBD data set (the 'datasets' folder of {REPOSITORY})")
    ap.add_argument("--datasets", nargs="+", default=DATASETS, help="data sets, by folder name")
    ap.add_argument("--ours", nargs="*", default=OURS,
                    help="our settings: 'default' or key=value,... of run options; the first is the one "
                         "the scoreboard compares")
    ap.add_argument("--peers", nargs="*", default=PEERS, help=f"other learners: {', '.join(PEERS)}")
    ap.add_argument("--budget", type=seconds_or_none, default=120.0,
                    help="--budget of our settings, seconds, or 'none' for the library's default (default 120)")
    ap.add_argument("--limit", type=float, default=600.0, help="wall seconds per learner before it is killed")
    ap.add_argument("--memory-cap", type=float, default=8.0, help="address-space cap per learner, GiB")
    ap.add_argument("--max-rows", type=int, default=None, help="learn from the first N train + valid rows only")
    ap.add_argument("--out", type=Path, default=Path("output/heldout"))
    ap.add_argument("--report-only", action="store_true", help="summarise results.csv, learn nothing")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.peers) - set(PEERS))
    if unknown:
        ap.error(f"--peers: unknown learner {unknown[0]!r}; choose from {', '.join(PEERS)}")
    if min(args.limit, args.memory_cap) <= 0 or (args.max_rows is not None and args.max_rows < 1):
        ap.error("--limit, --memory-cap and --max-rows must be positive")
    for name in args.datasets:
        if not all((args.debd / name / f"{name}.{part}.data").is_file() for part in SPLITS):
            raise SystemExit(missing_data_message(args.debd, name))
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        signal.signal(signal.SIGTERM, _exit_on_signal)
        print(f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}; limit {args.limit:g} s, cap "
              f"{args.memory_cap:g} GiB per learner; our budget {args.budget}", flush=True)
        run(args)
    print(report(pd.read_csv(args.out / "results.csv"), args))


if __name__ == "__main__":
    main()
