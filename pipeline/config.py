"""Run configuration of the hybrid pipeline: defaults, choices and validation.

One :class:`RunConfig` describes a single hybrid run (data -> restrict -> scores -> solve ->
evaluate); the CLI builds one from its options and an experiment grid builds one per job.
The defaults are those of ``python run.py --network alarm``: 5000 rows sampled with seed 0,
PC restriction with the G2 test at alpha 0.05 and maximum conditioning order 1, BDeu with
equivalent sample size 1 and at most 3 parents, solved exactly by the ILP.

Restriction methods: ``none``, the CI-test learners ``pc``, ``pmms``, ``mmpc``, ``cops``, and
``candidates``, the sparse candidate parents of :mod:`scores.identification` (the ``candidates``
parents of largest single-parent gain of the run's score per child, for very large networks; it
runs no CI test, so ``test``, ``alpha`` and ``max_order`` do not apply).  ``cops_time_limit``
stops the cops-and-robbers restriction after that many seconds (it then restricts to what it
had found).  ``add_candidates`` (K > 0) also allows, beyond a CI-test skeleton, each child's K
parents of largest positive single-parent gain of the run's score, so that the exact optimiser
can still choose an edge the tests dropped.  ``required``, ``forbidden`` and ``tiers`` name expert-knowledge files
(:mod:`pipeline.knowledge`), honoured by every stage.

Solvers: ``ilp`` (exact; with ``treewidth`` the exact treewidth-bounded ILP, with
``within_bags`` families confined to the bags of the cops-and-robbers tree decomposition),
``kg`` / ``kastar`` (Scanagatta et al.'s k-G / k-A*, need ``treewidth``), ``ges`` / ``sges``
(equivalence-class search on the data; SGES with the property bound ``sges_bound``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

STAGES = ("data", "restrict", "scores", "solve", "evaluate")
METHODS = ("none", "pc", "pmms", "mmpc", "cops", "candidates")
TESTS = ("g2", "x2")
SCORES = ("bdeu", "bic", "aic", "ll", "k2")
SOLVERS = ("ilp", "kg", "kastar", "ges", "sges")
TABLE_SOLVERS = ("ilp", "kg", "kastar")
"""Solvers that optimise over the score table; the others score the data on demand."""
TREEWIDTH_SOLVERS = ("kg", "kastar")
"""Solvers that need a treewidth bound."""
MISSING = ("reject", "drop")
"""What to do with rows that have a missing cell: refuse the data, or drop those rows."""
SCORE_FILE_SUFFIXES = (".jkl", ".jkl.gz")


class ConfigError(ValueError):
    """An invalid option value; the message names the option."""


@dataclass(frozen=True)
class RunConfig:
    """Parameters of one hybrid run (see the module docstring for the defaults)."""

    network: str | None = None
    data: str | None = None
    rows: int = 5000
    seed: int = 0
    method: str = "pc"
    test: str = "g2"
    alpha: float = 0.05
    max_order: int | None = 1
    score: str = "bdeu"
    ess: float = 1.0
    palim: int | None = 3
    solver: str = "ilp"
    time_limit: float | None = None
    treewidth: int | None = None
    sges_bound: str = "parents:3"
    within_bags: bool = False
    candidates: int = 16
    cops_time_limit: float | None = None
    add_candidates: int = 0
    required: str | None = None
    forbidden: str | None = None
    tiers: str | None = None
    # sources and run-wide options of the Python API (issue 20)
    scores: str | None = None
    missing: str = "reject"
    budget: float | None = None
    # arc confidence by the bootstrap (issue 19): resamples, and the averaged network's threshold
    bootstrap: int | None = None
    threshold: float | None = None

    def validated(self) -> "RunConfig":
        """Return a normalised copy (floats as float, lower-case names) or raise ConfigError."""
        if sum(x is not None for x in (self.network, self.data, self.scores)) != 1:
            raise ConfigError("give exactly one of --network NAME|FILE, --data FILE or --scores FILE.jkl")
        self._check_run_options()
        _choice("method", self.method, METHODS)
        _choice("test", self.test, TESTS)
        _choice("score", self.score, SCORES)
        _choice("solver", self.solver, SOLVERS)
        _check_int("--rows", self.rows, 1)
        _check_int("--seed", self.seed, 0)
        alpha = _number("--alpha", self.alpha)
        if not 0.0 < alpha < 1.0:
            raise ConfigError(f"--alpha must lie strictly between 0 and 1, got {self.alpha!r}")
        _check_int("--max-order", self.max_order, 0, none_ok=True)
        _check_int("--palim", self.palim, 0, none_ok=True)
        ess = _number("--ess", self.ess)
        if not 0.0 < ess <= MAX_ESS:
            raise ConfigError(f"--ess must be a positive number up to {MAX_ESS:g}, got {self.ess!r}")
        _check_int("--candidates", self.candidates, 1)
        time_limit = _seconds("--time-limit", self.time_limit)
        cops_time_limit = _seconds("--cops-time-limit", self.cops_time_limit)
        if cops_time_limit is not None and self.method.lower() != "cops":
            raise ConfigError("--cops-time-limit applies to --method cops only")
        _check_int("--add-candidates", self.add_candidates, 0)
        if self.add_candidates and self.method.lower() in ("none", "candidates"):
            raise ConfigError(f"--add-candidates applies to the CI-test methods (pc, pmms, mmpc, cops), "
                              f"not --method {self.method}")
        self._check_solver_options()
        self._check_knowledge()
        threshold = self._checked_threshold()
        return replace(
            self,
            method=self.method.lower(),
            test=self.test.lower(),
            score=self.score.lower(),
            solver=self.solver.lower(),
            alpha=alpha,
            ess=ess,
            time_limit=time_limit,
            cops_time_limit=cops_time_limit,
            missing=self.missing.lower(),
            budget=_seconds("--budget", self.budget),
            threshold=threshold,
        )

    def _checked_threshold(self) -> float | None:
        """``--bootstrap B`` (B >= 1, needs data) and ``--threshold`` in [0, 1] (needs --bootstrap)."""
        _check_int("--bootstrap", self.bootstrap, 1, none_ok=True)
        if self.bootstrap is not None and self.scores is not None:
            raise ConfigError("--bootstrap resamples the data, and --scores FILE.jkl has none: "
                              "give --network or --data")
        if self.threshold is None:
            return None
        threshold = _number("--threshold", self.threshold)
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"--threshold must lie between 0 and 1, got {self.threshold!r}")
        if self.bootstrap is None:
            raise ConfigError("--threshold applies to the averaged network of --bootstrap B")
        return threshold

    def _check_run_options(self) -> None:
        """The options of issue 20: score files, missing values, the whole-run budget."""
        _choice("missing", self.missing, MISSING)
        if self.scores is not None:
            if not str(self.scores).lower().endswith(SCORE_FILE_SUFFIXES):
                raise ConfigError(f"--scores must name a .jkl or .jkl.gz file, got {self.scores!r}")
            if self.solver.lower() not in TABLE_SOLVERS:
                raise ConfigError(f"--scores needs a solver that reads a score table "
                                  f"({', '.join(TABLE_SOLVERS)}), not --solver {self.solver}")
            if self.within_bags:
                raise ConfigError("--within-bags needs the cops restriction, which a score file does not have")
        if _seconds("--budget", self.budget) is not None and self.solver.lower() not in TABLE_SOLVERS:
            raise ConfigError(f"--budget needs a solver with a time limit ({', '.join(TABLE_SOLVERS)}), "
                              f"not --solver {self.solver}")

    def _check_solver_options(self) -> None:
        solver = self.solver.lower()
        _check_int("--treewidth", self.treewidth, 1, none_ok=True)
        if solver in TREEWIDTH_SOLVERS and self.treewidth is None:
            raise ConfigError(f"--solver {solver} needs a treewidth bound: add --treewidth K (K >= 1)")
        if self.treewidth is not None and solver not in TABLE_SOLVERS:
            raise ConfigError(f"--treewidth applies to the solvers {', '.join(TABLE_SOLVERS)}, not {solver}")
        if solver == "sges":
            from search.sges import SGESBoundError, parse_bound

            try:
                parse_bound(self.sges_bound)
            except SGESBoundError as exc:
                raise ConfigError(f"--sges-bound: {exc}") from None
        if not isinstance(self.within_bags, bool):
            raise ConfigError(f"within_bags must be true or false, got {self.within_bags!r}")
        if self.within_bags and (self.method.lower() != "cops" or solver != "ilp"):
            raise ConfigError("--within-bags needs --method cops and --solver ilp "
                              "(it confines the ILP to the cops tree decomposition)")
        if self.within_bags and self.treewidth is not None:
            raise ConfigError("give either --within-bags or --treewidth, not both")

    def _check_knowledge(self) -> None:
        """Read the knowledge files now: a malformed or contradictory one fails before any work."""
        for option, value in (("--required", self.required), ("--forbidden", self.forbidden), ("--tiers", self.tiers)):
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{option} must be a file name, got {value!r}")
        if self.has_knowledge:
            from pipeline.knowledge import check_solver, knowledge_of

            check_solver(knowledge_of(self), self.solver.lower(), self.treewidth)

    @property
    def has_knowledge(self) -> bool:
        return any(v is not None for v in (self.required, self.forbidden, self.tiers))

    def unrestricted(self) -> "RunConfig":
        """The same run without restriction (the score-only optimum G_score of the thesis)."""
        return replace(self, method="none", within_bags=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def source_name(self) -> str:
        """Short label of the data source (network name, or network or data file stem)."""
        source = next(x for x in (self.network, self.data, self.scores, "data") if x is not None)
        name = Path(str(source)).name
        return name.lstrip(".").split(".")[0] or "data"


def _check_int(option: str, value: Any, minimum: int, none_ok: bool = False) -> None:
    """An int (not a bool) of at least ``minimum`` (0 or 1), or ``None`` when ``none_ok``."""
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        alternative = " or 'none'" if none_ok else ""
        raise ConfigError(f"{option} must be {kind}{alternative}, got {value!r}")


def _number(option: str, value: Any) -> float:
    """``value`` as a float; a bool, a string or anything else not a real number is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{option} must be a number, got {value!r}")
    return float(value)


MAX_ESS = 1e6
"""Largest BDeu equivalent sample size accepted (far larger ones overflow the local scores)."""
MAX_SECONDS = 1e9
"""Largest time limit accepted (about 31 years; SCIP refuses limits beyond 1e20)."""


def _seconds(option: str, value: Any) -> float | None:
    """A time limit: ``None`` (no limit) or a positive number of seconds up to :data:`MAX_SECONDS`."""
    if value is None:
        return None
    seconds = _number(option, value)
    if not 0.0 < seconds <= MAX_SECONDS:
        raise ConfigError(f"{option} must be a positive number of seconds up to {MAX_SECONDS:g} (omit it for "
                          f"no limit), got {value!r}")
    return seconds


def _choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ConfigError(f"--{option} must be one of {', '.join(choices)}; got {value!r}")
