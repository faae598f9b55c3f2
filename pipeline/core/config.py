"""Run configuration of the hybrid pipeline: one run's options, and their validation.

One :class:`RunConfig` describes a single hybrid run (data -> restrict -> scores -> solve ->
evaluate); the CLI builds one from its options and an experiment grid builds one per job.
Its fields are the declarations of :data:`pipeline.core.declarations.GROUPS`
(:mod:`hybridbn.options`).  The defaults are those of ``python run.py --network alarm``: 5000
rows sampled with seed 0, PC restriction with the G2 test at alpha 0.05 and maximum
conditioning order 1, at most 3 parents scored by BDeu with equivalent sample size 1 (or by qNML
with the arc prior where a 5-fold cross-validation prefers it on every fold: ``--score auto``),
solved exactly by the ILP.

Validation checks each option against its declaration, then the rules between options: what a
selected method needs (``kg`` needs ``treewidth``), strict options given to a method they do
not apply to (``cops_time_limit`` without ``cops``), options that require another choice
(``within_bags`` needs ``cops``), and the run-wide rules below (sources, score files, budget,
knowledge files, bootstrap, selection).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, make_dataclass, replace
from pathlib import Path
from typing import Any

from hybridbn.options import Choice, Method, OptionError
from pipeline.core.declarations import (ANYTIME_SOLVERS, BREAKS, CHOICES, FOLDS, KNOWLEDGE, OPTIONS, PARAMS,
                                        PRESETS, SCORE_FILE_SUFFIXES, SOURCE_OPTIONS, TABLE_SOLVERS, ConfigError)
from pipeline.core.knowledge import check_solver, knowledge_of
from pipeline.core.overrides import candidate_label, parse_candidates
from scores.methods import AUTO, AUTO_MIN_FOLDS, AUTO_SCORES

NETWORK_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
"""What ``--name`` may be: it names the output folder and the network in its BIF file."""
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
        cfg = replace(self, **values)._with_preset()._with_score_decided_by_options()
        cfg._check_applicable()
        cfg._check_run_options()
        cfg._check_knowledge()
        cfg._check_bootstrap()
        cfg._check_selection()
        return cfg

    def _with_preset(self) -> "RunConfig":
        """The choices a ``--preset`` names (:data:`PRESETS`) set, the preset itself cleared (so a
        preset run is the same run as its options spelt out); another value of those choices is refused."""
        if self.preset is None:
            return self
        chosen = PRESETS[self.preset]
        for choice, value in chosen:
            given = getattr(self, choice.name)
            if given not in (value, choice.default):
                spelt = " ".join(f"{c.flag} {v}" for c, v in chosen)
                raise ConfigError(f"--preset {self.preset} is {spelt}; it cannot take {choice.flag} {given}")
        return replace(self, preset=None, **{choice.name: value for choice, value in chosen})

    def _with_score_decided_by_options(self) -> "RunConfig":
        """``--score auto`` is BDeu where the options alone rule out its cross-validation: a score
        file (no data), ``--select`` (whose candidates decide, with BDeu where they set no score),
        ``--budget`` or ``--time-limit`` (the folds' ten networks would take as long again)."""
        ruled_out = (self.scores, self.select, self.budget, self.time_limit)
        return self.undecided_score() if any(x is not None for x in ruled_out) else self

    def methods(self) -> dict[str, Method]:
        """The selected :class:`~hybridbn.options.Method` of each choice."""
        return {name: choice[getattr(self, name)] for name, choice in CHOICES.items()}

    def _check_applicable(self) -> None:
        """The method parameters against the selected methods: what a method needs, strict options
        given to a method they do not apply to, other choices an option requires, checks of text values."""
        for name, choice in CHOICES.items():
            method = choice[getattr(self, name)]
            for param in method.needs:
                if getattr(self, param.name) is None:
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
        """``--select`` needs data and candidates that are valid runs; ``--folds`` needs ``--select``
        or ``--score auto``, and the latter 5 folds or more."""
        if self.select is None:
            if self.folds != FOLDS.default and self.score != AUTO:
                raise ConfigError("--folds applies to the cross-validation of --select or --score auto")
            if self.score == AUTO and self.folds < AUTO_MIN_FOLDS:
                raise ConfigError(f"--score auto needs --folds {AUTO_MIN_FOLDS} or more: its sign test at 0.05 "
                                  f"cannot reject on fewer folds (give --score bdeu or --score qnml)")
            return
        if self.scores is not None:
            raise ConfigError("--select cross-validates on the data, and --scores FILE.jkl has none: "
                              "give --network or --data")
        if self.network is not None and self.folds > self.rows:
            raise ConfigError(f"--folds {self.folds} exceeds --rows {self.rows}")
        candidate_configs(self)

    def _check_run_options(self) -> None:
        """The options of issue 20 (score files, the whole-run budget) and of issue 41 (the columns
        to drop or keep, the network's name)."""
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
        if (self.drop is not None or self.keep is not None) and self.data is None:
            raise ConfigError("--drop and --keep select columns of --data; "
                              f"{'a score file' if self.scores is not None else 'data sampled from --network'} "
                              "has none to select")
        if self.discretize is not None and self.data is None:
            raise ConfigError("--discretize cuts numeric columns of --data into intervals; "
                              f"{'a score file' if self.scores is not None else 'data sampled from --network'} "
                              "has none")
        if self.breaks != BREAKS.default and self.discretize is None:
            raise ConfigError("--breaks applies to the columns of --discretize")
        if self.name is not None and not NETWORK_NAME.fullmatch(str(self.name)):
            raise ConfigError(f"--name must be letters, digits, '.', '_' or '-' (it names the output folder), "
                              f"got {self.name!r}")
        if self.budget is not None and self.solver not in ANYTIME_SOLVERS:
            raise ConfigError(f"--budget needs a solver with a time limit ({', '.join(ANYTIME_SOLVERS)}), "
                              f"not --solver {self.solver}")

    def _check_knowledge(self) -> None:
        """Read the knowledge files now: a malformed or contradictory one fails before any work."""
        if self.has_knowledge:
            check_solver(knowledge_of(self), self.solver, self.treewidth)

    @property
    def has_knowledge(self) -> bool:
        return any(getattr(self, p.name) is not None for p in KNOWLEDGE)

    def undecided_score(self) -> "RunConfig":
        """The run with ``--score auto`` taken as BDeu: a run that does not cross-validate (a stage
        before the solve, a score file, see :func:`pipeline.apps.selection.auto_score_decidable`)."""
        return replace(self, score=AUTO_SCORES[0]) if self.score == AUTO else self

    def unrestricted(self) -> "RunConfig":
        """The same run without restriction (the score-only optimum G_score of the thesis)."""
        return replace(self, method="none", within_bags=False)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def source_name(self) -> str:
        """The learned network's name: ``--name``, else a short label of the data source (network
        name, or network or data file stem)."""
        if self.name is not None:
            return self.name
        source = next(x for x in (*(getattr(self, p.name) for p in SOURCE_OPTIONS), "data") if x is not None)
        name = Path(str(source)).name.replace(":", "-")  # random:N:SEED: no colon in folder names
        return name.lstrip(".").split(".")[0] or "data"


def candidate_configs(cfg: RunConfig) -> list[tuple[str, RunConfig]]:
    """The label and validated configuration of each candidate of ``cfg.select``: the run's own
    options with the candidate's overrides (:mod:`pipeline.core.overrides`), without the selection."""
    try:
        candidates = parse_candidates(cfg.select)
    except ConfigError as exc:
        raise ConfigError(f"--select: {exc}") from None
    configs = []
    for overrides in candidates:
        label = candidate_label(overrides)
        try:
            candidate = replace(cfg, select=None, folds=FOLDS.default, **overrides)
            configs.append((label, candidate.validated().undecided_score()))  # auto in a candidate: BDeu
        except ConfigError as exc:
            raise ConfigError(f"--select candidate {label!r}: {exc}") from None
    return configs


def _choice(choice: Choice, value: Any) -> str:
    if not isinstance(value, str) or value.lower() not in choice.names:
        raise ConfigError(f"{choice.flag} must be one of {', '.join(choice.names)}; got {value!r}")
    return value.lower()
