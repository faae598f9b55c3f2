"""The declared options of a run: the sources and run-wide options, declared here, and every
choice and method parameter, declared next to its implementation (:mod:`constraints.methods`
for ``--method`` and ``--test``, :mod:`scores.methods` for ``--score`` and ``--palim``,
:mod:`ilp.methods` and :mod:`search.methods` for ``--solver``), gathered in :data:`GROUPS`.

The :class:`~pipeline.core.config.RunConfig` fields, the command line, the grid keys, the cache
keys and the report columns are derived from these declarations (:mod:`hybridbn.options`).
"""

from __future__ import annotations

from constraints.methods import RESTRICTION, TEST
from hybridbn.options import FILE, FLOAT, INT, NAMES, SECONDS, TEXT, Choice, OptionError, Param
from scores.methods import PALIM, SCORE
from search.methods import SOLVER

STAGES = ("data", "restrict", "scores", "solve", "evaluate")
CHOICES: dict[str, Choice] = {c.name: c for c in (RESTRICTION, TEST, SCORE, SOLVER)}
"""The options that select a method, by name: ``method``, ``test``, ``score``, ``solver``."""
TABLE_SOLVERS = tuple(m.name for m in SOLVER.methods if SCORE not in m.uses)
"""Solvers that optimise over the score table; the others score the data on demand."""
MISSING = ("reject", "drop")
"""What to do with rows that have a missing cell: refuse the data, or drop those rows."""
SCORE_FILE_SUFFIXES = (".jkl", ".jkl.gz")

SOURCE_OPTIONS = (
    Param("network", TEXT, None, "network to sample from: a benchmark name (see --list-networks) or a BIF file "
          "(.bif or .bif.gz)", metavar="NAME|FILE", grid="networks"),
    Param("data", TEXT, None, "your data: CSV, parquet or feather, one column per variable", metavar="FILE"),
    Param("scores", TEXT, None, "solve a local-score table in GOBNILP / BLIP .jkl format (or .jkl.gz) directly: "
          "no data, restriction or scoring; solvers ilp, kg, kastar, hc, tabu", metavar="FILE.jkl"),
)
"""The options that name a run's source, exactly one of which is given."""
SOURCES = (
    *SOURCE_OPTIONS,
    Param("missing", TEXT, "reject", "rows of --data with a missing cell: reject the data, or drop those rows "
          "and report how many", choices=MISSING, column=False),
    Param("drop", NAMES, None, "columns of --data that are no variables (an index, an identifier): left out "
          "before anything is learned", metavar="COLUMN", column=False),
    Param("keep", NAMES, None, "columns of --data to learn from although every value is distinct or they have "
          "more states than half the rows (refused otherwise)", metavar="COLUMN", column=False),
    Param("name", TEXT, None, "name of the learned network: in its BIF file, pictures, summary and output folder "
          "(default: the network's name or the data file's stem; 'data' for a DataFrame in Python)",
          metavar="NAME", column=False),
    Param("rows", INT, 5000, "rows to sample", low=1, grid="rows"),
    Param("seed", INT, 0, "sampling seed", grid="seeds"),
)
KNOWLEDGE = (
    Param("required", FILE, None, "arcs that must be in the network: header source,target (optional column "
          "directed; directed=false or both directions: adjacent either way)", metavar="FILE", grid="required",
          axis=False, column=False, tabular=True),
    Param("forbidden", FILE, None, "arcs that must not be: header source,target (optional column directed; false "
          "forbids both)", metavar="FILE", grid="forbidden", axis=False, column=False, tabular=True),
    Param("tiers", FILE, None, "header variable,tier (integers): no arc from a later tier to an earlier one",
          metavar="FILE", grid="tiers", axis=False, column=False, tabular=True),
)
"""Expert-knowledge files (:mod:`pipeline.core.knowledge`), honoured by every stage; in Python also
the rows of knowledge given as objects (:func:`pipeline.core.knowledge.knowledge_rows`)."""
BUDGET = Param("budget", SECONDS, None,
               "one wall-clock budget for restriction, scoring and solving together: the restriction may use "
               "half, the scoring half of the rest, each stopping with what it has; the solver gets what is "
               "left and returns its best DAG with bound and gap; ilp, kg, kastar, hc, tabu (default: none)", metavar="SECONDS", grid="budget", axis=False)
PRESETS = {"mmhc": {"method": "mmpc", "solver": "hc"}, "h2pc": {"method": "pc", "solver": "hc"}}
"""bnlearn's hybrid learners as named pipelines: the restriction and the search each stands for.
MMHC is MMPC then hill climbing (Tsamardinos et al. 2006); bnlearn's H2PC restricts with HPC
(Gasse et al. 2014), which this package does not have, so PC-stable stands in."""
PRESET = Param("preset", TEXT, None, "a named pipeline, as bnlearn's hybrids: mmhc (--method mmpc --solver hc) or "
               "h2pc (--method pc --solver hc; bnlearn's restricts with HPC); the other options apply as given",
               choices=tuple(PRESETS), metavar="NAME", column=False)
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
    Param("folds", INT, 5, "with --select or --score auto: number of folds", low=2, metavar="K", grid="folds",
          axis=False, column=False),
)


GROUPS: dict[str, tuple[Param | Choice, ...]] = {
    "data": SOURCES,
    "restriction (CI tests)": (RESTRICTION, TEST, *RESTRICTION.method_params),
    "scores": (SCORE, *SCORE.params, *SCORE.method_params, PALIM),
    "expert knowledge (CSV files, see docs/user-guide.md)": KNOWLEDGE,
    "solver": (SOLVER, *SOLVER.params, *SOLVER.method_params, BUDGET, PRESET),
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
