"""Behaviour capture (issue 52, point 4): what the usual configurations learn and the cache keys they use.

Runs a fixed list of small, seeded configurations (:func:`configurations`: 1000-row samples of
asia, sachs, child and insurance, and of alarm for the time limit) through the Python API
(:func:`hybridbn.learn`), each in its own stage-cache folder under ``--cache-dir``, and writes one
JSON file; about 40 s once the numba kernels are compiled. Per configuration it records:

* ``result``: the objective, the learned arcs (sorted ``[source, target]`` pairs), the solve
  status, the dual bound and gap (``None`` where the solver has none), the SHD to the true network;
  with ``--select`` / ``--score auto`` the selection's record (candidates, held-out log-likelihoods,
  choice), with ``--bootstrap`` the bootstrap's record and averaged arcs;
* ``artifacts``: the key of each stage artifact of the run (``LearnResult.artifacts``);
* ``cache``: every manifest in the configuration's cache folder, sorted by stage and key, as
  ``stage``, ``key``, ``version``, ``params``, ``inputs`` and ``completion``: the stages' keys and
  what they hash (:func:`pipeline.core.cache.stage_key`), including the bootstrap's resamples, the
  folds, the selection, incumbents and the exact-bound slot;

and once ``stage_versions`` (:data:`pipeline.core.stages.VERSIONS`).

Left out or rounded, because they differ from run to run or from tree to tree:

* wall times, manifests' creation time, host, pid, library versions, stage ``seconds`` and ``meta``;
* every float is rounded to 9 significant digits (a changed summation order moves the last bits);
* ``time-limit`` (the ILP on an unrestricted alarm table, solved in about 4 s, stopped by
  ``time_limit`` 0.2 s, then polished by tabu search): SCIP's incumbent at the limit, hence the
  polished DAG, its objective and the bound, depend on the clock (two cold runs gave start
  objectives -11064.40 and -11123.98), so only the status (``timelimit``), whether the polish ran
  and the cache entries are recorded (the solve key holds the limit, not the time), but not the
  exact-bound slot, which is written only when SCIP had a dual bound at the limit;
* ``budget`` (600 s, more than enough: no stage is cut): the solver's time limit is what is left of
  the budget after the stages' recorded times, and it is one of the solve key's parameters, so on a
  cold cache the solve key (and the evaluate key above it) differs from run to run; those keys
  and that ``time_limit`` are recorded as ``<clock>``, the other stages' keys in full;
* ``modules`` (where ``pipeline`` etc. were imported from) is shown but not compared.

The knowledge CSV files and the ``.jkl`` file are written to ``--inputs-dir`` (default
``<tempdir>/hybridbn-capture-inputs``): the ``--scores`` key holds the file's absolute path, so
captures to compare must use the same folder.

Usage, with ``REPO`` this checkout and ``BASE`` a worktree of the commit to compare against
(``git worktree add $BASE <commit>``); ``-P`` keeps ``bench/`` off ``sys.path``, so ``PYTHONPATH``
decides which tree is imported (the script prints it, and refuses to run when the project's
packages come from two trees)::

    # the baseline: BASE's code run by this script
    cd $BASE && PYTHONPATH=$BASE nice -n 10 prlimit --as=8000000000 \\
        $REPO/.venv/bin/python -P $REPO/bench/capture.py \\
        --out /tmp/capture-base.json --cache-dir /tmp/capture-base-cache --fresh
    # this tree, then the comparison
    cd $REPO && nice -n 10 prlimit --as=8000000000 .venv/bin/python -m bench.capture \\
        --out /tmp/capture-new.json --cache-dir /tmp/capture-new-cache --fresh
    .venv/bin/python -m bench.capture --compare /tmp/capture-base.json /tmp/capture-new.json
    .venv/bin/python -m bench.capture --only asia-hc --out /tmp/one.json --cache-dir /tmp/one-cache

A folder given to ``--cache-dir`` is reused (a warm cache gives the same capture); ``--fresh``
removes it first, for a cold run. ``--compare A B`` prints ``same`` or the differing fields per
configuration and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

if sys.path and Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.exit("bench/capture.py: run it as python -P bench/capture.py or python -m bench.capture "
             "(bench/ on sys.path shadows the project's packages)")

import hybridbn  # noqa: E402  (the project's modules after the sys.path guard above)
from pipeline.core.stages import VERSIONS  # noqa: E402

PROJECT_PACKAGES = ("hybridbn", "pipeline", "scores", "ilp", "search", "constraints", "bayesnet", "graphs")
SIGNIFICANT = 9
"""Significant digits every float is rounded to."""
NETWORK_ROWS = {"asia": 1000, "sachs": 1000, "child": 1000, "insurance": 1000, "alarm": 1000}
REQUIRED_CSV = "source,target\nsmoke,bronc\n"
FORBIDDEN_CSV = "source,target,directed\ntub,either,true\nxray,dysp,false\n"
CLOCKED = {"time-limit": ("exact_bound",)}
"""Configurations stopped by the clock: only their status is recorded, and not the cache entries of
these stages (see the module docstring)."""
BUDGETED = {"budget": ("solve", "evaluate")}
"""Configurations whose stages' keys hold the rest of the budget, a wall time: those keys are masked."""
CLOCK = "<clock>"


def configurations(inputs: Path) -> dict[str, Callable[[Path], Any]]:
    """The captured configurations by name: each learns with a cache folder and returns its result
    (and, for the score file, writes its ``.jkl`` under ``inputs`` first)."""
    def learn(source: str, **options) -> Callable[[Path], Any]:
        rows = {} if source.endswith(".jkl") else {"rows": NETWORK_ROWS[source], "seed": 1}
        return lambda cache: hybridbn.learn(source, cache_dir=cache, **{**rows, **options})

    def from_score_file(cache: Path):
        table = hybridbn.learn("sachs", cache_dir=cache, rows=1000, seed=1, score="bdeu", stage="scores")
        path = table.write_scores(inputs / "sachs-bdeu.jkl")
        return hybridbn.learn(str(path), cache_dir=cache, solver="ilp")

    return {
        "default": learn("asia"),
        "bdeu-ilp": learn("sachs", score="bdeu", solver="ilp"),
        "method-none": learn("asia", score="bdeu", method="none"),
        "method-pc": learn("child", score="bdeu", method="pc"),
        "method-pmms": learn("insurance", score="bdeu", method="pmms"),
        "method-mmpc": learn("sachs", score="bdeu", method="mmpc"),
        "asia-hc": learn("asia", score="bdeu", method="none", solver="hc"),  # the test's: few kernels
        "solver-hc": learn("child", score="bdeu", solver="hc"),
        "solver-tabu": learn("insurance", score="bdeu", solver="tabu"),
        "solver-kg": learn("asia", score="bdeu", solver="kg", treewidth=2),
        "solver-kastar": learn("asia", score="bdeu", solver="kastar", treewidth=2),
        "solver-ges": learn("child", score="bdeu", solver="ges"),
        "solver-sges": learn("sachs", score="bdeu", solver="sges"),
        "treewidth-ilp": learn("sachs", score="bdeu", solver="ilp", treewidth=2),
        "time-limit": learn("alarm", score="bdeu", method="none", time_limit=0.2),
        "budget": learn("child", score="bdeu", budget=600),
        "structure-prior": learn("sachs", score="bdeu", structure_prior=1),
        "knowledge": learn("asia", score="bdeu", required=str(inputs / "required.csv"),
                           forbidden=str(inputs / "forbidden.csv")),
        "score-file": from_score_file,
        "select": learn("asia", score="bdeu", select="method=none; method=pc", folds=2),
        "bootstrap": learn("sachs", score="bdeu", bootstrap=2),
    }


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to :data:`SIGNIFICANT` digits, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return rounded(value.tolist())
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{SIGNIFICANT}g}")
    return value


def result_record(name: str, result) -> dict[str, Any]:
    """What a configuration learned (see the module docstring for what is left out)."""
    solver = result.solver_result
    if name in CLOCKED:
        return {"status": result.status, "polished": "local_search" in solver}
    record = {"objective": result.objective, "arcs": sorted(map(list, result.arcs)), "status": result.status,
              "bound": result.bound, "gap": result.gap,
              "shd": None if result.evaluation is None else result.evaluation.get("shd")}
    if result.selection is not None:
        record["selection"] = result.selection.record()
    if result.bootstrap is not None:
        boot = result.bootstrap
        record["bootstrap"] = {**boot.record(), "averaged": boot.averaged_edges().to_dict(orient="records")}
    return rounded(record)


def cache_entries(root: Path, clocked: tuple[str, ...] = (), left_out: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Every artifact manifest under ``root`` but those of the ``left_out`` stages: stage, key,
    version, params, inputs, completion; the keys of the ``clocked`` stages, the inputs naming them
    and their ``time_limit`` as :data:`CLOCK`."""
    entries = [json.loads(path.read_text()) for path in root.glob("*/*/manifest.json")]
    entries = [e for e in entries if e["stage"] not in left_out]
    masked = {e["key"] for e in entries if e["stage"] in clocked}
    out = []
    for e in entries:
        params = dict(e.get("params") or {})
        if e["stage"] in clocked and "time_limit" in params:
            params["time_limit"] = CLOCK
        out.append({"stage": e["stage"], "key": CLOCK if e["key"] in masked else e["key"],
                    "version": e.get("version"), "params": params, "completion": e.get("completion"),
                    "inputs": {k: CLOCK if v in masked else v for k, v in (e.get("inputs") or {}).items()}})
    return rounded(sorted(out, key=lambda e: (e["stage"], e["key"])))


def module_origins() -> dict[str, str]:
    """The folder each project package was imported from; exits if they are not one tree."""
    origins = {name: str(Path(importlib.import_module(name).__file__).resolve().parent.parent)
               for name in PROJECT_PACKAGES}
    if len(set(origins.values())) != 1:
        sys.exit(f"project packages come from different trees: {origins}")
    return origins


def write_inputs(inputs: Path) -> None:
    """The knowledge CSV files the ``knowledge`` configuration reads."""
    inputs.mkdir(parents=True, exist_ok=True)
    for file, text in (("required.csv", REQUIRED_CSV), ("forbidden.csv", FORBIDDEN_CSV)):
        if not (inputs / file).is_file() or (inputs / file).read_text() != text:
            (inputs / file).write_text(text)


def capture(cache_dir: Path, inputs: Path, only: list[str] | None = None) -> dict[str, Any]:
    """Run the configurations (``only`` those named) and return the capture."""
    write_inputs(inputs)
    runs = configurations(inputs)
    unknown = sorted(set(only or ()) - set(runs))
    if unknown:
        sys.exit(f"unknown configuration(s) {unknown}; known: {', '.join(runs)}")
    out: dict[str, Any] = {"modules": module_origins(), "stage_versions": dict(VERSIONS), "configurations": {}}
    for name, run in runs.items():
        if only and name not in only:
            continue
        cache = cache_dir / name
        result = run(cache)
        clocked = BUDGETED.get(name, ())
        out["configurations"][name] = {"result": result_record(name, result),
                                       "artifacts": {stage: CLOCK if stage in clocked else art.key
                                                     for stage, art in result.artifacts.items()},
                                       "cache": cache_entries(cache, clocked, CLOCKED.get(name, ()))}
        print(f"{name}: {result.status}, {len(result.arcs)} arcs", flush=True)
    return out


def flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """``value`` as ``{dotted.path: leaf}`` (list items by position, cache entries by stage/key)."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list) and value and all(isinstance(v, dict) and "key" in v and "stage" in v
                                                    for v in value):
        items = ((f"{v['stage']}/{v['key']}", v) for v in value)
    elif isinstance(value, list) and value:
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        return {prefix: value}
    out: dict[str, Any] = {}
    for key, item in items:
        out.update(flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The fields where two records differ, as ``path: A-value != B-value`` (``<absent>`` if missing)."""
    fa, fb = flat(a), flat(b)
    lines = []
    for path in sorted(set(fa) | set(fb)):
        va, vb = fa.get(path, "<absent>"), fb.get(path, "<absent>")
        if va != vb:
            lines.append(f"{path}: {json.dumps(va)[:200]} != {json.dumps(vb)[:200]}")
    return lines


def compare(a: dict[str, Any], b: dict[str, Any]) -> tuple[list[str], bool]:
    """Report lines for two captures (``modules`` not compared) and whether they are equal."""
    lines, same = [], True
    versions = differences(a.get("stage_versions", {}), b.get("stage_versions", {}))
    if versions:
        same = False
        lines += ["stage_versions: differ"] + [f"  {line}" for line in versions]
    ca, cb = a.get("configurations", {}), b.get("configurations", {})
    for name in list(ca) + [n for n in cb if n not in ca]:
        if name not in ca or name not in cb:
            same = False
            lines.append(f"{name}: only in {'A' if name in ca else 'B'}")
            continue
        diff = differences(ca[name], cb[name])
        same = same and not diff
        lines += [f"{name}: same"] if not diff else [f"{name}: differs"] + [f"  {line}" for line in diff]
    return lines, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the capture to this JSON file")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "hybridbn-capture-cache",
                        help="stage-cache root (one folder per configuration); reused if it exists")
    parser.add_argument("--inputs-dir", type=Path, default=Path(tempfile.gettempdir()) / "hybridbn-capture-inputs",
                        help="where the knowledge CSVs and the .jkl file are written (same for captures compared)")
    parser.add_argument("--fresh", action="store_true", help="remove --cache-dir first (a cold run)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="capture only these configurations")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"),
                        help="compare two captures: 'same' or the differing fields per configuration")
    args = parser.parse_args(argv)
    if args.compare:
        lines, same = compare(*(json.loads(p.read_text()) for p in args.compare))
        print("\n".join(lines))
        print("captures are equal" if same else "captures differ")
        return 0 if same else 1
    if args.out is None:
        parser.error("give --out FILE.json or --compare A.json B.json")
    if args.fresh and args.cache_dir.exists():
        shutil.rmtree(args.cache_dir)
    out = capture(args.cache_dir.resolve(), args.inputs_dir.resolve(), args.only)
    print(f"modules from {next(iter(out['modules'].values()))}")
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out} ({len(out['configurations'])} configurations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
