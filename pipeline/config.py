"""Run configuration of the hybrid pipeline: defaults, choices and validation.

One :class:`RunConfig` describes a single hybrid run (data -> restrict -> scores -> solve ->
evaluate); the CLI builds one from its options and an experiment grid builds one per job.
The defaults are those of ``python run.py --network alarm``: 5000 rows sampled with seed 0,
PC restriction with the G2 test at alpha 0.05 and maximum conditioning order 1, BDeu with
equivalent sample size 1 and at most 3 parents, solved exactly by the ILP.

Restriction methods: ``none``, the CI-test learners ``pc``, ``pmms``, ``mmpc``, ``cops``, and
``candidates``, the sparse candidate parents of :mod:`scores.identification` (the ``candidates``
parents of largest single-parent gain of the run's score per child, for very large networks; it
runs no CI test, so ``test``, ``alpha`` and ``max_order`` do not apply).

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

    def validated(self) -> "RunConfig":
        """Return a normalised copy (floats as float, lower-case names) or raise ConfigError."""
        if (self.network is None) == (self.data is None):
            raise ConfigError("give exactly one of --network NAME|FILE or --data FILE")
        _choice("method", self.method, METHODS)
        _choice("test", self.test, TESTS)
        _choice("score", self.score, SCORES)
        _choice("solver", self.solver, SOLVERS)
        if not isinstance(self.rows, int) or self.rows < 1:
            raise ConfigError(f"--rows must be a positive integer, got {self.rows!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"--seed must be a non-negative integer, got {self.seed!r}")
        if not 0.0 < float(self.alpha) < 1.0:
            raise ConfigError(f"--alpha must lie strictly between 0 and 1, got {self.alpha!r}")
        if self.max_order is not None and (not isinstance(self.max_order, int) or self.max_order < 0):
            raise ConfigError(f"--max-order must be a non-negative integer or 'none', got {self.max_order!r}")
        if self.palim is not None and (not isinstance(self.palim, int) or self.palim < 0):
            raise ConfigError(f"--palim must be a non-negative integer or 'none', got {self.palim!r}")
        if not float(self.ess) > 0.0:
            raise ConfigError(f"--ess must be positive, got {self.ess!r}")
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) or self.candidates < 1:
            raise ConfigError(f"--candidates must be a positive integer, got {self.candidates!r}")
        if self.time_limit is not None and not float(self.time_limit) > 0.0:
            raise ConfigError(f"--time-limit must be positive, got {self.time_limit!r}")
        self._check_solver_options()
        return replace(
            self,
            method=self.method.lower(),
            test=self.test.lower(),
            score=self.score.lower(),
            solver=self.solver.lower(),
            alpha=float(self.alpha),
            ess=float(self.ess),
            time_limit=None if self.time_limit is None else float(self.time_limit),
        )

    def _check_solver_options(self) -> None:
        solver = self.solver.lower()
        if self.treewidth is not None and (
            isinstance(self.treewidth, bool) or not isinstance(self.treewidth, int) or self.treewidth < 1
        ):
            raise ConfigError(f"--treewidth must be a positive integer, got {self.treewidth!r}")
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

    def unrestricted(self) -> "RunConfig":
        """The same run without restriction (the score-only optimum G_score of the thesis)."""
        return replace(self, method="none", within_bags=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def source_name(self) -> str:
        """Short label of the data source (network name, or network or data file stem)."""
        return Path(str(self.network if self.network is not None else self.data)).name.split(".")[0]


def _choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ConfigError(f"--{option} must be one of {', '.join(choices)}; got {value!r}")
