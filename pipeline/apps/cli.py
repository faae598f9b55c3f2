"""Command line of the hybrid learner (``python run.py ...``).

Three commands share this module:

* ``run.py [options]``: one hybrid run (data -> restrict -> scores -> solve -> evaluate) with a
  short report and the learned network written to an output folder;
* ``run.py grid FILE [options]``: an experiment grid (see :mod:`pipeline.apps.grid`);
* ``run.py report RESULTS``: Markdown tables and PNG figures from a grid's results table.

A run prints on stderr, before any work, one line saying what it learns with which settings,
then the progress of its long stages: the stages' progress bars on a terminal, and for the solve
(and the bootstrap, the selection, the drawing of a large network) a status line refreshed about
every second on a terminal, or a plain line every 15 s when stderr is not a terminal (a batch
job's log), records or not: elapsed time and limit (``budget_left`` under ``--budget``),
incumbent objective, bound, gap, nodes (:mod:`hybridbn.progress`). ``--quiet`` prints none of it.

Bad input ends with a one-line ``error: ...`` on stderr and a non-zero exit status (2 for bad
options or data, 1 for other failures); ``--debug`` shows the traceback. Ctrl-C (SIGINT) and
SIGTERM (a batch system's time limit) end a run with exit status 130 and 143
(:func:`hybridbn.interrupt.exit_code`): during the solve the solver stops at its next safe point
and the run writes its output folder from the best DAG found, with status ``interrupted``, the
bound and the gap in ``result.json`` and ``convergence.png``, and prints its summary; during the
bootstrap, which comes after the run's network, it writes that network with the bootstrap
unfinished; before the solve (the kernels' first compilation and the selection included), the
run stops at once with one line, the finished stages cached and no file half written
(:mod:`pipeline.core.stopping`). With ``-j N`` no network starts after the signal and those
running in the workers stop at their safe points. A second signal quits at once. Nothing
interrupted is cached as final (:mod:`pipeline.core.cache`): the same command resumes, the exact
ILP from the interrupted DAG. A grid records an interrupted job as ``interrupted``
(:mod:`pipeline.apps.grid`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Callable, Sequence

from bayesnet.catalog import network_summary
from hybridbn.interrupt import catching_signals, exit_code
from hybridbn.options import FILE, FLAG, INT, NAMES, TEXT, Choice, Param
from hybridbn.progress import ProgressDisplay
from pipeline.apps.grid import add_grid_options, command_grid
from pipeline.apps.learn import STAGE, check_source, check_whole_network_stage, run_config
from pipeline.apps.report import describe_config, format_network_list, write_report
from pipeline.core.cache import LIMITED, CacheError, StageCache
from pipeline.core.config import RunConfig
from pipeline.core.declarations import GROUPS, SCORE_FILE_SUFFIXES, STAGES, TABLE_SOLVERS, ConfigError
from pipeline.core.executors import connect_scheduler
from pipeline.core.preflight import check_sizes, check_writable_folder
from pipeline.core.stopping import StageStopped

logger = logging.getLogger(__name__)

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1

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
  python run.py --network alarm --structure-prior 1 --alpha 0.5 --select "method=none; score=qnml"  # by 5-fold CV
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
        "--quiet", action="store_true",
        help="print no header and no progress on stderr (progress bars show on a terminal only; the solver's "
             "progress shows as a plain line every 15 s when stderr is not a terminal)")
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
    if option.kind in (FILE, NAMES):
        keywords["type"] = str
    if option.kind == NAMES:
        keywords["nargs"] = "+"
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
    parser.add_argument(STAGE.flag, **_argument(STAGE))
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
    """Warnings and errors on stderr; everything with --debug (--quiet only hides the header and
    the progress)."""
    level = logging.DEBUG if debug else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s", stream=sys.stderr, force=True)
    if not debug:  # warnings as one line each, without the library's source line
        warnings.formatwarning = lambda message, category, *_args, **_kw: f"WARNING: {message}\n"


def show_progress(quiet: bool) -> bool:
    """Progress bars only on an interactive terminal and without --quiet."""
    return not quiet and sys.stderr.isatty()


def run_header(cfg: RunConfig, stage: str) -> str:
    """The line a run prints on stderr before any work: its source and settings (as the summary's
    first line) and its limits."""
    extra = []
    if cfg.budget is not None:
        extra.append(f"budget {cfg.budget:g} s")
    elif cfg.time_limit is None and STAGES.index(stage) >= STAGES.index("solve"):
        extra.append("no time limit")
    if cfg.bootstrap is not None:
        extra.append(f"bootstrap {cfg.bootstrap}")
    if cfg.select is not None:
        extra.append(f"selecting among {cfg.select!r}")
    if stage != STAGES[-1]:
        extra.append(f"up to the {stage} stage")
    return "learning " + describe_config(cfg) + "".join(f"; {x}" for x in extra)


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
    display = None if args.quiet else ProgressDisplay()
    if display is not None:
        print(run_header(cfg, args.stage), file=sys.stderr, flush=True)
    with catching_signals() as stop, _logs_on_their_own_lines(display):
        try:
            result, written = _run_and_write(args, cache, cfg, display)
        except KeyboardInterrupt as exc:  # a stop before the solve, or a second signal: no result
            return _stopped(exc, stop.signum)
        print(result.summary(output=written))
        for note in _completion_notes(result.artifacts):
            print(note)
        if not result.interrupted:
            return 0
        signum = stop.signum or signal.SIGINT  # none recorded: SCIP caught the Ctrl-C itself
    print(f"interrupted by {signal.Signals(signum).name}: {_what_is_kept(result)}", file=sys.stderr)
    return exit_code(signum)


def _what_is_kept(result) -> str:
    """What an interrupted run reported and wrote, and how to resume it."""
    if result.stopped_in == "selection":
        return ("BDeu's network, learned before the cross-validation of --score auto, is reported and written; "
                "the networks of the folds learned are cached: rerun the same command to finish the choice")
    if result.stopped_in == "bootstrap":
        boot = result.bootstrap
        return (f"the network learned is reported and written, with {boot.done} of {boot.replicates} bootstrap "
                "resamples learned (cached); rerun the same command to finish the bootstrap")
    return ("the best DAG found so far is reported and written, not cached as final; rerun the same command to "
            "resume (the exact ILP warm-starts from this DAG)")


def _run_and_write(args: argparse.Namespace, cache: StageCache, cfg: RunConfig, display: ProgressDisplay | None):
    """The run's result and the output folder written (None before the solve stage); the
    display closed after."""
    try:
        result = _run(args, cache, cfg, display)
        if args.write_scores:
            result.write_scores(args.write_scores)
        written = result.write(args.output_dir, cpt=args.cpt, progress=display) if "solve" in result.artifacts else None
    finally:
        if display is not None:
            display.close()
    return result, written


@contextlib.contextmanager
def _logs_on_their_own_lines(display: ProgressDisplay | None):
    """Inside the block, a warning logged while the display's status line is open on a terminal
    (e.g. the stop request's) ends that line first, so the two do not run into each other."""
    if display is None or not display.interactive:
        yield
        return

    def end_status_line(record: logging.LogRecord) -> bool:
        display.close()
        return True

    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(end_status_line)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(end_status_line)


def _stopped(exc: KeyboardInterrupt, signum: int | None) -> int:
    """One line on stderr for a run stopped with no result to report (before the solve, in a
    grid, or by a second signal); its exit status (``signum``: the stop request's signal, if known)."""
    stage = f" during {exc.during}" if isinstance(exc, StageStopped) else ""
    print(f"interrupted{stage}: finished stages are cached; rerun the same command to resume", file=sys.stderr)
    return exit_code(getattr(exc, "signum", None) or signum or signal.SIGINT)


def _run(args: argparse.Namespace, cache: StageCache, cfg: RunConfig, display: ProgressDisplay | None):
    """The stages of one run, scored on the Dask scheduler given by ``--scheduler`` if any; the
    solver's progress (and the bootstrap's, the selection's) shown on ``display``."""
    with contextlib.ExitStack() as stack:
        split = {}
        if args.scheduler:
            executor = connect_scheduler(args.scheduler)
            stack.callback(executor.close)
            threads = sum(executor.client.nthreads().values())
            split = {"score_executor": executor, "score_groups": args.score_groups or 4 * max(1, threads)}
        return run_config(cfg, cache, stage=args.stage, progress=show_progress(args.quiet), n_jobs=args.jobs,
                          report=display, **split)


def _completion_notes(artifacts) -> list[str]:
    """One line per stage stopped by a limit: whether it was computed now or reused from the cache."""
    notes = []
    for stage, art in artifacts.items():
        if art.completion != LIMITED:
            continue
        result = art.meta.get("result", {})
        status = result.get("status") if stage == "solve" else art.meta.get("status")
        origin = "reused from the cache" if art.cached else "cached with this status"
        larger = "continues from it" if stage == "solve" else "recomputes it"
        reason = f" ({result['reason']})" if "reason" in result else ""
        notes.append(f"note: the {stage} stage stopped at a limit (status {status}{reason}), not a final result; "
                     f"{origin}: a rerun with the same options reuses it, a larger limit {larger}")
    return notes


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
    except KeyboardInterrupt as exc:  # e.g. Ctrl-C in a parallel grid (a single run reports it in cmd_run)
        return _stopped(exc, None)
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
    return command_grid(args, make_cache(args), not args.quiet)  # a status line, or plain lines in a batch log


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
