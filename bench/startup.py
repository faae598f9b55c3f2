"""Start-up cost of run.py: python -m bench.startup [--repeats R] [--cold] [--baseline DIR].

Prints, each as the minimum and the median of R processes (wall and CPU seconds):

* a fully cached ``run.py --network asia`` (every stage from the cache; target <= 0.7 s wall);
* a run whose kernels are compiled but whose stages are not cached (``--no-cache``);
* the import time of ``pipeline.apps.cli`` and of the heavy libraries (``python -X importtime``);
* which heavy libraries the cached run imports (it should need neither numba nor pyscipopt);

with ``--baseline DIR`` (another checkout, e.g. an older commit) the cached run of both checkouts,
interleaved so that both see the same machine load; and with ``--cold`` the first-ever
``run.py --network alarm`` (empty ``NUMBA_CACHE_DIR`` and stage cache: every kernel compiled, in
parallel groups) against the same run with the kernels cached (``--no-cache``); the difference is
the compile time. CPU seconds count the warm-up's worker processes too; on a loaded machine the
wall times stretch and the CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--network", "asia", "--quiet"]
RUN = [sys.executable, str(ROOT / "run.py"), *ARGS]
HEAVY = ("numba", "pyscipopt", "scipy", "pandas", "pyarrow", "matplotlib", "tqdm")


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system of the child) of one process, and its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stderr


def repeat(runs: dict[str, list[str]], repeats: int, env: dict[str, str] | None = None) -> None:
    """Time each labelled command ``repeats`` times, interleaved; print minimum and median."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
    for _ in range(repeats):
        for label, argv in runs.items():
            times[label].append(timed(argv, env)[:2])
    for label, pairs in times.items():
        walls, cpus = zip(*pairs)
        print(f"{label:<44} wall min {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s   "
              f"cpu min {min(cpus):6.2f} s  median {statistics.median(cpus):6.2f} s   ({repeats} runs)")


def import_ms(module: str) -> float:
    """Cumulative import time of ``module`` in a fresh interpreter (``-X importtime``), in ms."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    for line in reversed(done.stderr.splitlines()):
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1]) / 1000
    raise SystemExit(f"no import time found for {module}")


def imported_by_cached_run(dirs: list[str]) -> list[str]:
    """The heavy libraries a fully cached run has imported when it ends."""
    code = ("import sys; from pipeline.apps.cli import main; "
            f"main({[*RUN[2:], *dirs]!r}); "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.split("\n")[-2].split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cold", action="store_true", help="also time the first-ever alarm run (half a minute)")
    parser.add_argument("--baseline", type=Path, help="another checkout to time the cached run against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = ["--cache-dir", f"{tmp}/cache", "--output-dir", f"{tmp}/out"]
        cached = {"cached run.py --network asia": [*RUN, *dirs]}
        if args.baseline is not None:
            base_dirs = ["--cache-dir", f"{tmp}/base-cache", "--output-dir", f"{tmp}/base-out"]
            cached[f"  same, {args.baseline}"] = [sys.executable, str(args.baseline / "run.py"), *ARGS, *base_dirs]
        for argv in cached.values():
            timed(argv)  # fills the stage cache (and the kernel cache if needed)
        repeat(cached, args.repeats)
        repeat({"run.py --network asia --no-cache": [*RUN, "--no-cache", *dirs]}, args.repeats)
        print("heavy libraries imported by the cached run:", " ".join(imported_by_cached_run(dirs)) or "none")
        print("import times (ms, fresh interpreter, one run each):",
              ", ".join(f"{m} {import_ms(m):.0f}" for m in ("pipeline.apps.cli", *HEAVY)))
        if args.cold:
            env = {**os.environ, "NUMBA_CACHE_DIR": f"{tmp}/numba"}
            alarm = [sys.executable, str(ROOT / "run.py"), "--network", "alarm", "--quiet"]
            cold, cold_cpu, err = timed([*alarm, "--cache-dir", f"{tmp}/cold", "--output-dir", f"{tmp}/cold"], env)
            warm, warm_cpu, _ = timed([*alarm, "--no-cache", "--output-dir", f"{tmp}/warm"], env)
            label = f"first-ever run.py --network alarm, {os.cpu_count()} cores"
            print(f"{label:<44} wall {cold:6.2f} s  cpu {cold_cpu:6.2f} s")
            print(f"same run, kernels cached (--no-cache)        wall {warm:6.2f} s  cpu {warm_cpu:6.2f} s")
            print(f"compile time (difference)                    wall {cold - warm:6.2f} s  "
                  f"cpu {cold_cpu - warm_cpu:6.2f} s")
            print("what the first run said:", " | ".join(line.strip() for line in err.splitlines()))


if __name__ == "__main__":
    main()
