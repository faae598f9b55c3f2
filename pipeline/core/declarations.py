"""The declared options of a run: the sources and run-wide options, declared here, and every
choice and method parameter, declared next to its implementation (:mod:`constraints.methods`
for ``--method`` and ``--test``, :mod:`scores.methods` for ``--score`` and ``--palim``,
:mod:`ilp.methods` and :mod:`search.methods` for the solvers, which :data:`SOLVER` gathers into
``--solver`` here), gathered in :data:`GROUPS`.

The :class:`~pipeline.core.config.RunConfig` fields, the command line, the grid keys, the cache
keys and the report columns are derived from these declarations (:mod:`hybridbn.options`).
"""

from __future__ import annotations

from constraints.methods import RESTRICTION, TEST
from hybridbn.options import FILE, FLOAT, INT, NAMES, SECONDS, TEXT, Choice, OptionError, Param
from hybridbn.solving import ANYTIME, SOLVER_SEED, TIME_LIMIT
from ilp.methods import ILP
from scores.methods import PALIM, SCORE
from search.methods import SEARCHES

SOLVER = Choice(
    name="solver", default="ilp", grid="solvers", stage="solve",
    help="optimiser: ilp (exact), kg / kastar / s2 / s2plus (treewidth-bounded, need --treewidth), hc / tabu (hill "
         "climbing, tabu search over DAGs, as bnlearn's), ges / sges (equivalence-class search)",
    params=(TIME_LIMIT,), constants={"solver_seed": SOLVER_SEED}, methods=(ILP, *SEARCHES),
)
"""``--solver``: the exact ILP and the searches, ``run(settings, inputs: SolveInputs) -> Solution``
(:mod:`hybridbn.solving`); the run reads their capability tags (:data:`hybridbn.solving.TAGS`)."""
STAGES = ("data", "restrict", "scores", "solve", "evaluate")
CHOICES: dict[str, Choice] = {c.name: c for c in (RESTRICTION, TEST, SCORE, SOLVER)}
"""The options that select a method, by name: ``method``, ``test``, ``score``, ``solver``."""
TABLE_SOLVERS = tuple(m.name for m in SOLVER.methods if SCORE not in m.uses)
"""Solvers that optimise over the score table; the others score the data on demand."""
ANYTIME_SOLVERS = tuple(m.name for m in SOLVER.methods if ANYTIME in m.tags)
"""Solvers that return their best DAG at a time limit, so that ``--budget`` can end them."""
MISSING = ("reject", "drop", "state", "em")
"""What to do with rows that have a missing cell: refuse the data, drop those rows, keep them with
a state of their own (:data:`bayesnet.dataset.MISSING_STATE`), or complete them by structural EM
(:mod:`search.structural_em`)."""
SCORE_FILE_SUFFIXES = (".jkl", ".jkl.gz")

NETWORK = Param("network", TEXT, None, "network to sample from: a benchmark name (see --list-networks), a BIF "
                "file (.bif or .bif.gz) or random:N[:SEED] (generated: N variables, 2-4 states, 0-6 parents)",
                metavar="NAME|FILE", grid="networks")
DATA = Param("data", TEXT, None, "your data: CSV, parquet or feather, one column per variable", metavar="FILE")
SCORE_FILE = Param("scores", TEXT, None, "solve a local-score table in GOBNILP / BLIP .jkl format (or .jkl.gz) "
                   "directly: no data, restriction or scoring; solvers ilp, kg, kastar, s2, s2plus, hc, tabu",
                   metavar="FILE.jkl")
SOURCE_OPTIONS = (NETWORK, DATA, SCORE_FILE)
"""The options that name a run's source, exactly one of which is given."""
DISCRETIZE = Param("discretize", TEXT, None, "cut numeric columns of --data into intervals, as bnlearn's "
                   "discretize: quantile, interval or hartemink for every column with more than 20 numeric values, "
                   "or per column, e.g. 'x=interval:4,y=hartemink' (:N intervals; an entry without a column applies "
                   "to the others)", metavar="SPEC", key="discretize", keyed_when_set=True, column=False)
BREAKS = Param("breaks", INT, 3, "with --discretize: the intervals of each column whose entry gives no :N", low=2,
               metavar="N", key="breaks", keyed_when_set=True, column=False)
DISCRETIZATION = (DISCRETIZE, BREAKS)
"""The options of :mod:`bayesnet.discretize`, in the data stage's key only when set."""
SEED = Param("seed", INT, 0, "sampling seed", grid="seeds")
"""The seed of the sampled rows: the replicates of a grid's setting."""
SOURCES = (
    *SOURCE_OPTIONS,
    Param("missing", TEXT, "reject", "rows of --data with a missing cell: reject the data, drop those rows and "
          "report how many (a warning past a fifth of them), keep them with a state '<missing>' in each column, or "
          "complete the cells by structural EM (hill climbing under --score, at most 5 rounds, as bnlearn's "
          "structural.em)",
          choices=MISSING, column=False),
    Param("drop", NAMES, None, "columns of --data that are no variables (an index, an identifier): left out "
          "before anything is learned", metavar="COLUMN", column=False),
    Param("keep", NAMES, None, "columns of --data to learn from although every value is distinct, they have "
          "more states than half the rows or more than 20 whole numbers (refused otherwise)", metavar="COLUMN",
          column=False),
    *DISCRETIZATION,
    Param("name", TEXT, None, "name of the learned network: in its BIF file, pictures, summary and output folder "
          "(default: the network's name or the data file's stem; 'data' for a DataFrame in Python)",
          metavar="NAME", column=False),
    Param("rows", INT, 5000, "rows to sample", low=1, grid="rows"),
    SEED,
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
               "left and returns its best DAG with bound and gap; ilp, kg, kastar, s2, s2plus, hc, tabu (default: none)", metavar="SECONDS", grid="budget", axis=False)
PRESETS: dict[str, tuple[tuple[Choice, str], ...]] = {
    "mmhc": ((RESTRICTION, "mmpc"), (SOLVER, "hc")),
    "h2pc": ((RESTRICTION, "pc"), (SOLVER, "hc")),
}
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
FOLDS = Param("folds", INT, 5, "with --select or --score auto: number of folds", low=2, metavar="K", grid="folds",
              axis=False, column=False)
SELECTION = (
    Param("select", TEXT, None, "learn with the best of several settings by K-fold held-out log-likelihood: "
          "candidates of key=value overrides (run.py's option names) separated by ';', e.g. "
          "\"method=none; score=qnml\" (written to selection.csv)", metavar="\"A; B\"", grid="select",
          axis=False, column=False),
    FOLDS,
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
