"""Command line of the hybrid learner (``python run.py ...``).

Three commands share this module:

* ``run.py [options]``: one hybrid run (data -> restrict -> scores -> solve -> evaluate) with a
  short report and the learned network written to an output folder;
* ``run.py grid FILE [options]``: an experiment grid (see :mod:`pipeline.apps.grid`);
* ``run.py report RESULTS``: Markdown tables and PNG figures from a grid's results table.

Bad input ends with a one-line ``error: ...`` on stderr and a non-zero exit status (2 for bad
options or data, 1 for other failures, 130 for Ctrl-C); ``--debug`` shows the traceback.
Ctrl-C during the solve prints what the solver had (best DAG, bound, gap) marked interrupted;
nothing interrupted is cached as final (:mod:`pipeline.core.cache`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Callable, Sequence

from bayesnet.catalog import network_summary
from hybridbn.options import FILE, FLAG, INT, TEXT, Choice, Param
from pipeline.apps.grid import add_grid_options, command_grid
from pipeline.apps.learn import check_source, check_whole_network_stage, run_config
from pipeline.apps.report import format_network_list, format_run_summary, write_report
from pipeline.core.cache import FINAL, CacheError, StageCache, StageInterrupted
from pipeline.core.config import RunConfig
from pipeline.core.declarations import GROUPS, SCORE_FILE_SUFFIXES, STAGES, TABLE_SOLVERS, ConfigError
from pipeline.core.executors import connect_scheduler
from pipeline.core.preflight import check_sizes, check_writable_folder
from pipeline.core.stages import dag_of, variable_names

logger = logging.getLogger(__name__)

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130

RUN_EXAMPLES = """\
examples:
  python run.py --network alarm                 # the whole hybrid with the defaults below
  python run.py --network asia --rows 1000 --seed 3 --method none
  python run.py --data mydata.csv --palim 2     # your own data (no true network: no SHD)
  python run.py --network mynet.bif --rows 2000 # sample from your own network (SHD against it)
  python run.py --network alarm --stage restrict --method pc --alpha 0.05 --max-order 1
  python run.py --network alarm --stage scores --score bdeu --palim 3
  python run.py --network alarm --solver sges --sges-bound parents:3
  python run.py --network andes --solver kg --treewidth 4 --time-limit 60
  python run.py --network munin --method candidates --score bic --palim 2 --solver kg --treewidth 2
  python run.py --network alarm --method cops --within-bags   # ILP inside the cops decomposition
  python run.py --network asia --required req.csv --forbidden no.csv --tiers tiers.csv
  python run.py --data survey.csv --missing drop       # drop the rows with a missing cell
  python run.py --network alarm --write-scores alarm.jkl && python run.py --scores alarm.jkl
  python run.py --network alarm --palim 4 --budget 60  # restriction + scoring + solving in 60 s
  python run.py --network asia --rows 1000 --bootstrap 50 -j 2  # arc strengths, averaged network
  python run.py --network alarm --structure-prior 1 --select "method=none; score=qnml"  # by 5-fold CV
  python run.py --list-networks
  python run.py grid grids/thesis-alpha.toml --jobs 2      # experiment grid (see docs/hpc.md)
  python run.py report output/grid-thesis-alpha/results.parquet

defaults: 5000 rows sampled with seed 0; PC skeleton restriction with the G2 test, alpha 0.05,
maximum conditioning order 1; BDeu score with ESS 1 and at most 3 parents; exact ILP (SCIP).
Stage results are cached under --cache-dir (else $HYBRIDBN_CACHE_DIR, else ./.hybridbn-cache),
so re-running the same command is instant.
"""


def _or_none(convert, what: str):
    """An argparse type: ``convert(text)``, or None for 'none' (no bound)."""
    def parse(text: str):
        if text.lower() in ("none", "inf", "unbounded"):
            return None
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} or 'none', got {text!r}") from None

    return parse


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        self.exit(EXIT_BAD_INPUT, f"error: {message} (see {self.prog} --help)\n")


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by every command: cache, output, verbosity, parallelism."""
    group = parser.add_argument_group("cache, output and verbosity")
    group.add_argument(
        "--cache-dir", help="stage cache root (default $HYBRIDBN_CACHE_DIR or ./.hybridbn-cache)"
    )
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the stage cache")
    group.add_argument(
        "--output-dir", default="output", help="where result folders are written (default ./output)"
    )
    group.add_argument(
        "-j", "--jobs", type=_positive_int, default=1,
        help="parallel workers: scoring and CI test threads (PC levels, PMMS/MMPC targets) of one run, job processes "
             "of a grid (default 1)",
    )
    group.add_argument(
        "--quiet", action="store_true", help="no progress bars (also hidden when stderr is not a terminal)"
    )
    group.add_argument("--debug", action="store_true", help="debug logging and full tracebacks on errors")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Options of one hybrid run: one per declaration of :data:`pipeline.core.declarations.GROUPS`, plus the
    score export and the CPT estimator of the output."""
    groups = {title: parser.add_argument_group(title) for title in GROUPS}
    for title, options in GROUPS.items():
        for option in options:
            groups[title].add_argument(option.flag, **_argument(option))
    groups["scores"].add_argument("--write-scores", metavar="FILE.jkl",
                                  help="also export the scores stage's table as a .jkl file (GOBNILP / BLIP format; "
                                       ".jkl.gz compressed)")
    groups["solver"].add_argument(
        "--cpt", choices=("bayes", "mle"), default="bayes",
        help="CPT estimator for the output BIF: Bayesian with a BDeu prior of size --ess, or maximum likelihood",
    )


def _argument(option: Param | Choice) -> dict:
    """The ``add_argument`` keywords of a declared option: type, choices, default, help."""
    default = option.default
    shown = f"{default:g}" if isinstance(default, float) else default
    help_text = option.help + ("" if default is None or default is False else f" (default {shown})")
    if isinstance(option, Choice):
        return {"default": default, "choices": option.names, "help": help_text}
    if option.kind == FLAG:
        return {"action": "store_true", "help": help_text}
    kind = {INT: int, TEXT: str}.get(option.kind, float)
    if option.none:
        kind = _or_none(kind, "an integer" if kind is int else "a number")
    keywords = {"default": default, "metavar": option.metavar, "help": help_text, "type": kind}
    if option.kind == FILE:
        keywords["type"] = str
    if option.choices:
        keywords["choices"] = option.choices
    return keywords


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="run.py",
        description="Hybrid Bayesian-network structure learning: CI-test restriction, "
        "local scores with exact pruning, and an exact ILP on SCIP. "
        "Subcommands: 'grid FILE' (experiment grids) and 'report RESULTS' (tables, figures); "
        "see 'run.py grid --help'.",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_options(parser)
    parser.add_argument(
        "--stage", choices=STAGES, default="evaluate",
        help="run up to this stage and print its counts and time (default: all stages)",
    )
    parser.add_argument("--list-networks", action="store_true", help="list the benchmark networks and exit")
    dist = parser.add_argument_group("distributed scoring (large networks)")
    dist.add_argument("--scheduler", metavar="ADDRESS",
                      help="run the CI tests (PC, PMMS, MMPC) and score the children on this Dask scheduler")
    dist.add_argument(
        "--score-groups", type=_positive_int,
        help="with --scheduler: number of scoring tasks, of tasks per PC level and of PMMS/MMPC target "
             "ranges (default 4 per Dask worker thread)",
    )
    add_common_options(parser)
    return parser


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run's :class:`RunConfig`: every field from the option of the same name, validated."""
    cfg = RunConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(RunConfig)}).validated()
    check_source(cfg)
    check_whole_network_stage(cfg, args.stage)
    check_score_export(args.write_scores, cfg, args.stage)
    return cfg


def check_score_export(path: str | None, cfg: RunConfig, stage: str) -> None:
    """``--write-scores FILE.jkl`` needs a scores stage and a writable .jkl path."""
    if path is None:
        return
    if not path.lower().endswith(SCORE_FILE_SUFFIXES):
        raise ConfigError(f"--write-scores must name a .jkl or .jkl.gz file, got {path!r}")
    if cfg.solver not in TABLE_SOLVERS or STAGES.index(stage) < STAGES.index("scores"):
        raise ConfigError(f"--write-scores needs the scores stage: a solver among {', '.join(TABLE_SOLVERS)} "
                          f"and --stage scores or later (got --solver {cfg.solver}, --stage {stage})")
    if not Path(path).resolve().parent.is_dir():
        raise ConfigError(f"--write-scores: folder not found for {path!r}")


def setup_logging(debug: bool) -> None:
    """Warnings and errors on stderr; everything with --debug (--quiet only hides progress bars)."""
    level = logging.DEBUG if debug else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", stream=sys.stderr, force=True)
    if not debug:  # warnings as one line each, without the library's source line
        warnings.formatwarning = lambda message, category, *_args, **_kw: f"WARNING: {message}\n"


def show_progress(quiet: bool) -> bool:
    """Progress bars only on an interactive terminal and without --quiet."""
    return not quiet and sys.stderr.isatty()


def make_cache(args: argparse.Namespace) -> StageCache:
    cache = StageCache(args.cache_dir, enabled=not args.no_cache)
    cache.check_writable()
    return cache


def cmd_run(args: argparse.Namespace) -> int:
    if args.list_networks:
        print(format_network_list(network_summary()))
        return 0
    cfg = config_from_args(args)
    check_sizes(cfg)
    if STAGES.index(args.stage) >= STAGES.index("solve"):
        check_writable_folder("--output-dir", Path(args.output_dir))
    cache = make_cache(args)
    try:
        result = _run(args, cache, cfg)
    except StageInterrupted as exc:  # Ctrl-C in a stage that still had a result: report it, cache nothing
        print(format_run_summary(cfg, exc.artifacts))
        print(_interruption_report(exc))
        print("interrupted: this result is not cached as final; re-run the same command to resume "
              "(the exact ILP warm-starts from this DAG)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.write_scores:
        result.write_scores(args.write_scores)
    written = result.write(args.output_dir, cpt=args.cpt) if "solve" in result.artifacts else None
    print(result.summary(output=written))
    for note in _completion_notes(result.artifacts):
        print(note)
    return 0


def _run(args: argparse.Namespace, cache: StageCache, cfg: RunConfig):
    """The stages of one run, scored on the Dask scheduler given by ``--scheduler`` if any."""
    with contextlib.ExitStack() as stack:
        split = {}
        if args.scheduler:
            executor = connect_scheduler(args.scheduler)
            stack.callback(executor.close)
            threads = sum(executor.client.nthreads().values())
            split = {"score_executor": executor, "score_groups": args.score_groups or 4 * max(1, threads)}
        return run_config(cfg, cache, stage=args.stage, progress=show_progress(args.quiet), n_jobs=args.jobs,
                          **split)


def _completion_notes(artifacts) -> list[str]:
    """One line per stage stopped by a limit: whether it was computed now or reused from the cache."""
    notes = []
    for stage, art in artifacts.items():
        if art.completion == FINAL:
            continue
        result = art.meta.get("result", {})
        status = result.get("status") if stage == "solve" else art.meta.get("status")
        origin = "reused from the cache" if art.cached else "cached with this status"
        larger = "continues from it" if stage == "solve" else "recomputes it"
        reason = f" ({result['reason']})" if "reason" in result else ""
        notes.append(f"note: the {stage} stage stopped at a limit (status {status}{reason}), not a final result; "
                     f"{origin}: a rerun with the same options reuses it, a larger limit {larger}")
    return notes


def _interruption_report(exc: StageInterrupted) -> str:
    """The interrupted stage's result: for a solve the best DAG found, its objective, bound and gap."""
    art = exc.artifact
    if art.stage != "solve":
        return f"INTERRUPTED during the {art.stage} stage"
    result = art.meta["result"]
    names = variable_names(exc.artifacts)
    arcs = [f"{names[p]} -> {names[c]}" for p, c in zip(*dag_of(art).nonzero())]
    gap = result.get("gap")
    return (f"INTERRUPTED solve: best DAG found so far (objective {result.get('objective')}, dual bound "
            f"{result.get('dual_bound')}, gap {'-' if gap is None else f'{100 * gap:.4g}%'}), "
            f"{len(arcs)} arcs: " + ", ".join(arcs))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``run.py``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    commands: dict[str, tuple[Callable[[], argparse.ArgumentParser], Callable[[argparse.Namespace], int]]] = {
        "grid": (_grid_parser, _cmd_grid),
        "report": (_report_parser, _cmd_report),
    }
    if argv and argv[0] in commands:
        make_parser, command = commands[argv[0]]
        args = make_parser().parse_args(argv[1:])
    else:
        args = build_parser().parse_args(argv)
        command = cmd_run
    setup_logging(args.debug)
    try:
        return command(args)
    except BrokenPipeError:  # e.g. `run.py --list-networks | head`
        sys.stdout = open(os.devnull, "w")
        return 0
    except StageInterrupted as exc:  # e.g. in a grid job (a single run reports it in cmd_run)
        print(f"interrupted in the {exc.artifact.stage} stage: its result is not cached; re-run the same "
              "command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted: finished stages are cached; re-run the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # one line unless --debug
        if args.debug:
            raise
        status = EXIT_BAD_INPUT if isinstance(exc, (ValueError, FileNotFoundError)) else EXIT_FAILURE
        if isinstance(exc, CacheError):
            status = EXIT_FAILURE
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return status


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    return first if isinstance(exc, (ValueError, OSError)) else f"{type(exc).__name__}: {first}"


def _grid_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="run.py grid",
        description="Run an experiment grid: every combination of the parameters in a TOML file.",
        epilog=(
            "examples:\n"
            "  python run.py grid grids/example.toml --jobs 2\n"
            "  python run.py grid grids/example.toml --list-tasks\n"
            "  python run.py grid grids/example.toml --task 3        # one job (Slurm array)\n"
            "  python run.py grid grids/example.toml --scheduler tcp://host:8786\n"
            "  python run.py grid grids/example.toml --cluster slurm --workers 8\n"
            "See docs/hpc.md for the grid file format and HPC recipes."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_grid_options(parser)
    add_common_options(parser)
    return parser


def _cmd_grid(args: argparse.Namespace) -> int:
    return command_grid(args, make_cache(args), show_progress(args.quiet))


def _report_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="run.py report",
        description="Markdown tables and PNG figures from a grid's results table (parquet or CSV).",
    )
    parser.add_argument("results", help="results.parquet or results.csv written by 'run.py grid'")
    parser.add_argument("--out", help="folder for report.md and figures (default: next to RESULTS)")
    parser.add_argument("--quiet", action="store_true", help="accepted for symmetry; the report prints one line")
    parser.add_argument("--debug", action="store_true", help="full tracebacks on errors")
    return parser


def _cmd_report(args: argparse.Namespace) -> int:
    path = write_report(Path(args.results), Path(args.out) if args.out else None)
    print(f"report written to {path}")
    return 0
