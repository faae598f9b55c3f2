"""Run configuration of the hybrid pipeline: the declared options, and their validation.

One :class:`RunConfig` describes a single hybrid run (data -> restrict -> scores -> solve ->
evaluate); the CLI builds one from its options and an experiment grid builds one per job.
Its fields are the declarations of :data:`GROUPS` (:mod:`hybridbn.options`): the sources and
run-wide options here, the choices and their methods' parameters next to their
implementations (:mod:`constraints.methods` for ``--method`` and ``--test``,
:mod:`scores.methods` for ``--score`` and ``--palim``, :mod:`pipeline.solvers` for
``--solver``).  The command line, the grid keys, the cache keys and the report columns are
derived from the same declarations.  The defaults are those of ``python run.py --network
alarm``: 5000 rows sampled with seed 0, PC restriction with the G2 test at alpha 0.05 and
maximum conditioning order 1, BDeu with equivalent sample size 1 and at most 3 parents, solved
exactly by the ILP.

Validation checks each option against its declaration, then the rules between options: what a
selected method needs (``kg`` needs ``treewidth``), strict options given to a method they do
not apply to (``cops_time_limit`` without ``cops``), options that require another choice
(``within_bags`` needs ``cops``), and the run-wide rules below (sources, score files, budget,
knowledge files, bootstrap, selection).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, make_dataclass, replace
from pathlib import Path
from typing import Any

from constraints.methods import RESTRICTION, TEST
from hybridbn.options import FILE, FLOAT, INT, SECONDS, TEXT, Choice, Method, OptionError, Param
from pipeline.solvers import SOLVER
from scores.methods import PALIM, SCORE

STAGES = ("data", "restrict", "scores", "solve", "evaluate")
CHOICES: dict[str, Choice] = {c.name: c for c in (RESTRICTION, TEST, SCORE, SOLVER)}
"""The options that select a method, by name: ``method``, ``test``, ``score``, ``solver``."""
METHODS, TESTS, SCORES, SOLVERS = RESTRICTION.names, TEST.names, SCORE.names, SOLVER.names
TABLE_SOLVERS = tuple(m.name for m in SOLVER.methods if "score" not in m.uses)
"""Solvers that optimise over the score table; the others score the data on demand."""
MISSING = ("reject", "drop")
"""What to do with rows that have a missing cell: refuse the data, or drop those rows."""
SCORE_FILE_SUFFIXES = (".jkl", ".jkl.gz")

SOURCE_OPTIONS = (
    Param("network", TEXT, None, "network to sample from: a benchmark name (see --list-networks) or a BIF file "
          "(.bif or .bif.gz)", metavar="NAME|FILE", grid="networks"),
    Param("data", TEXT, None, "your data: CSV, parquet or feather, one column per variable", metavar="FILE"),
    Param("scores", TEXT, None, "solve a local-score table in GOBNILP / BLIP .jkl format (or .jkl.gz) directly: "
          "no data, restriction or scoring; solvers ilp, kg, kastar", metavar="FILE.jkl"),
)
"""The options that name a run's source, exactly one of which is given."""
SOURCES = (
    *SOURCE_OPTIONS,
    Param("missing", TEXT, "reject", "rows of --data with a missing cell: reject the data, or drop those rows "
          "and report how many", choices=MISSING, column=False),
    Param("rows", INT, 5000, "rows to sample", low=1, grid="rows"),
    Param("seed", INT, 0, "sampling seed", grid="seeds"),
)
KNOWLEDGE = (
    Param("required", FILE, None, "arcs that must be in the network: header source,target (optional column "
          "directed; directed=false or both directions: adjacent either way)", metavar="FILE", grid="required",
          axis=False, column=False),
    Param("forbidden", FILE, None, "arcs that must not be: header source,target (optional column directed; false "
          "forbids both)", metavar="FILE", grid="forbidden", axis=False, column=False),
    Param("tiers", FILE, None, "header variable,tier (integers): no arc from a later tier to an earlier one",
          metavar="FILE", grid="tiers", axis=False, column=False),
)
"""Expert-knowledge files (:mod:`pipeline.knowledge`), honoured by every stage."""
BUDGET = Param("budget", SECONDS, None,
               "one wall-clock budget for restriction, scoring and solving together: the restriction may use "
               "half, the scoring half of the rest, each stopping with what it has; the solver gets what is "
               "left and returns its best DAG with bound and gap; ilp, kg, kastar (default: none)", metavar="SECONDS", grid="budget", axis=False)
BOOTSTRAP = (
    Param("bootstrap", INT, None, "also learn B networks from resamples of the rows (seeded by --seed; on -j "
          "processes or --scheduler) and write strengths.csv and the averaged network (averaged.csv, "
          "averaged.png)", low=1, metavar="B", grid="bootstrap", axis=False, column=False),
    Param("threshold", FLOAT, None, "with --bootstrap: keep the arcs of strength above T in [0, 1] (default: "
          "estimated as Scutari & Nagarajan 2013, as bnlearn)", low=0.0, high=1.0, metavar="T",
          grid="threshold", axis=False, column=False),
)
SELECTION = (
    Param("select", TEXT, None, "learn with the best of several settings by K-fold held-out log-likelihood: "
          "candidates of key=value overrides (run.py's option names) separated by ';', e.g. "
          "\"method=none; score=qnml\" (written to selection.csv)", metavar="\"A; B\"", grid="select",
          axis=False, column=False),
    Param("folds", INT, 5, "with --select: number of folds", low=2, metavar="K", grid="folds", axis=False,
          column=False),
)


GROUPS: dict[str, tuple[Param | Choice, ...]] = {
    "data": SOURCES,
    "restriction (CI tests)": (RESTRICTION, TEST, *RESTRICTION.method_params),
    "scores": (SCORE, *SCORE.params, *SCORE.method_params, PALIM),
    "expert knowledge (CSV files, see docs/user-guide.md)": KNOWLEDGE,
    "solver": (SOLVER, *SOLVER.params, *SOLVER.method_params, BUDGET),
    "arc confidence (bootstrap, as bnlearn's boot.strength / averaged.network)": BOOTSTRAP,
    "setting chosen by cross-validation (as bnlearn's bn.cv)": SELECTION,
}
"""Every option of a run, grouped as ``run.py --help`` shows them, in :class:`RunConfig` field
order: the declarations every RunConfig field, CLI option, grid key, cache key and report
column is derived from."""
OPTIONS: tuple[Param | Choice, ...] = tuple(o for group in GROUPS.values() for o in group)
PARAMS: dict[str, Param] = {p.name: p for p in OPTIONS if isinstance(p, Param)}
PARAM_COLUMNS = tuple(o.name for o in OPTIONS if o.grid is not None and (isinstance(o, Choice) or o.column))
"""The run parameters of a grid's results row (the options a grid sets), in declaration order."""


class ConfigError(OptionError):
    """An invalid option value; the message names the option."""


_Fields = make_dataclass("_Fields", [(o.name, Any, field(default=o.default)) for o in OPTIONS], frozen=True)


@dataclass(frozen=True)
class RunConfig(_Fields):
    """Parameters of one hybrid run: one field per declaration of :data:`OPTIONS` (see the module
    docstring for the defaults)."""

    def validated(self) -> "RunConfig":
        """Return a normalised copy (floats as float, lower-case names) or raise ConfigError."""
        if sum(getattr(self, p.name) is not None for p in SOURCE_OPTIONS) != 1:
            *others, last = (f"{p.flag} {p.metavar}" for p in SOURCE_OPTIONS)
            raise ConfigError(f"give exactly one of {', '.join(others)} or {last}")
        try:
            values = {c.name: _choice(c, getattr(self, c.name)) for c in CHOICES.values()}
            values.update({p.name: p.validated(getattr(self, p.name)) for p in PARAMS.values()})
        except OptionError as exc:
            raise ConfigError(str(exc)) from None
        cfg = replace(self, **values)
        cfg._check_applicable()
        cfg._check_run_options()
        cfg._check_knowledge()
        cfg._check_bootstrap()
        cfg._check_selection()
        return cfg

    def methods(self) -> dict[str, Method]:
        """The selected :class:`~hybridbn.options.Method` of each choice."""
        return {name: choice[getattr(self, name)] for name, choice in CHOICES.items()}

    def _check_applicable(self) -> None:
        """The method parameters against the selected methods: what a method needs, strict options
        given to a method they do not apply to, other choices an option requires, checks of text values."""
        for name, choice in CHOICES.items():
            method = choice[getattr(self, name)]
            for needed in method.needs:
                if getattr(self, needed) is None:
                    param = PARAMS[needed]
                    raise ConfigError(f"{choice.flag} {method.name} needs {param.noun}: add {param.flag} {param.metavar}")
            for param in choice.method_params:
                value = getattr(self, param.name)
                if value == param.default:
                    continue
                if param not in method.params:
                    if param.strict:
                        raise ConfigError(f"{param.flag} applies to {choice.flag} {', '.join(choice.users(param))} only")
                    continue
                if any(getattr(self, other) != want for other, want in param.requires.items()):
                    wanted = {**param.requires, name: method.name}
                    raise ConfigError(f"{param.flag} needs " + " and ".join(f"--{o} {v}" for o, v in wanted.items()))
                if param.check is not None:
                    try:
                        param.check(value)
                    except ValueError as exc:
                        raise ConfigError(f"{param.flag}: {exc}") from None
        if self.within_bags and self.treewidth is not None:
            raise ConfigError("give either --within-bags or --treewidth, not both")

    def _check_bootstrap(self) -> None:
        """``--bootstrap B`` needs data, ``--threshold`` needs ``--bootstrap``."""
        if self.bootstrap is not None and self.scores is not None:
            raise ConfigError("--bootstrap resamples the data, and --scores FILE.jkl has none: "
                              "give --network or --data")
        if self.threshold is not None and self.bootstrap is None:
            raise ConfigError("--threshold applies to the averaged network of --bootstrap B")

    def _check_selection(self) -> None:
        """``--select`` needs data and candidates that are valid runs; ``--folds`` needs ``--select``."""
        if self.select is None:
            if self.folds != PARAMS["folds"].default:
                raise ConfigError("--folds applies to the cross-validation of --select")
            return
        if self.scores is not None:
            raise ConfigError("--select cross-validates on the data, and --scores FILE.jkl has none: "
                              "give --network or --data")
        if self.network is not None and self.folds > self.rows:
            raise ConfigError(f"--folds {self.folds} exceeds --rows {self.rows}")
        from pipeline.selection import candidate_configs

        candidate_configs(self)

    def _check_run_options(self) -> None:
        """The options of issue 20: score files, the whole-run budget."""
        if self.scores is not None:
            if not str(self.scores).lower().endswith(SCORE_FILE_SUFFIXES):
                raise ConfigError(f"--scores must name a .jkl or .jkl.gz file, got {self.scores!r}")
            if self.solver not in TABLE_SOLVERS:
                raise ConfigError(f"--scores needs a solver that reads a score table "
                                  f"({', '.join(TABLE_SOLVERS)}), not --solver {self.solver}")
            if self.within_bags:
                raise ConfigError("--within-bags needs the cops restriction, which a score file does not have")
            if self.structure_prior is not None:
                raise ConfigError("--structure-prior applies to scores computed from data; the scores of a .jkl "
                                  "file are solved as they are")
        if self.budget is not None and self.solver not in TABLE_SOLVERS:
            raise ConfigError(f"--budget needs a solver with a time limit ({', '.join(TABLE_SOLVERS)}), "
                              f"not --solver {self.solver}")

    def _check_knowledge(self) -> None:
        """Read the knowledge files now: a malformed or contradictory one fails before any work."""
        if self.has_knowledge:
            from pipeline.knowledge import check_solver, knowledge_of

            check_solver(knowledge_of(self), self.solver, self.treewidth)

    @property
    def has_knowledge(self) -> bool:
        return any(getattr(self, p.name) is not None for p in KNOWLEDGE)

    def unrestricted(self) -> "RunConfig":
        """The same run without restriction (the score-only optimum G_score of the thesis)."""
        return replace(self, method="none", within_bags=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def source_name(self) -> str:
        """Short label of the data source (network name, or network or data file stem)."""
        source = next(x for x in (*(getattr(self, p.name) for p in SOURCE_OPTIONS), "data") if x is not None)
        name = Path(str(source)).name
        return name.lstrip(".").split(".")[0] or "data"


def _choice(choice: Choice, value: Any) -> str:
    if not isinstance(value, str) or value.lower() not in choice.names:
        raise ConfigError(f"{choice.flag} must be one of {', '.join(choice.names)}; got {value!r}")
    return value.lower()
