"""The vocabulary in which every method, solver and option of a run is declared once.

A :class:`Param` is one option of a run: its name (the :class:`pipeline.core.config.RunConfig`
field, the ``--name`` of the command line, the keyword of ``hybridbn.learn``), its type and
bounds, its default, its help text, how it enters the cache key of its stage, and its key in
an experiment grid.  A :class:`Method` is one choice of a :class:`Choice` (``--method pc``,
``--test g2``, ``--score bdeu``, ``--solver ilp``): its parameters, the other choices whose
settings it reads, and the function that runs it.  The declarations sit next to the
implementations (``constraints/methods.py``, ``scores/methods.py``, ``ilp/methods.py``,
``search/methods.py``); ``pipeline`` derives the command line, the validation, the grid keys
and their normalisation, the cache keys and the report columns from them.

This module imports nothing of the project but its error base and no compiled kernel, so
declaring is cheap; the run functions import their algorithms inside their bodies.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Union

from hybridbn.errors import HybridBNError

INT, FLOAT, SECONDS, TEXT, FLAG, FILE, NAMES = "int", "float", "seconds", "text", "flag", "file", "names"
"""Kinds of values: integer, real number, time limit in seconds, free text, true/false, file name,
a list of names (``--drop a b``; a tuple in a configuration)."""

MAX_SECONDS = 1e9
"""Largest time limit accepted (about 31 years; SCIP refuses limits beyond 1e20)."""


class OptionError(HybridBNError, ValueError):
    """An invalid option value; the message names the option as the command line spells it."""


@dataclass(frozen=True)
class Param:
    """One option of a run (see the module docstring).

    ``low`` / ``high`` bound a number (``open`` says which ends are excluded: ``"low"``,
    ``"high"`` or ``"both"``); ``none`` admits ``None`` ('none' on the command line: no bound).
    ``key`` is the option's name in its stage's cache key (``None``: not in any stage key);
    with ``keyed_when_set`` it enters only when it differs from its default, so that adding an
    option leaves existing keys unchanged.  ``strict``: a value other than the default is
    refused with a choice the option does not apply to (otherwise it is ignored there).
    ``requires`` names other choices the option needs (``{"method": "cops"}``); ``uses`` the
    choices (or parameters) whose settings enter the key with it when it is set (``(SCORE,)``).
    ``grid`` is its key in a grid file and ``axis`` whether that key takes a list of values to
    cross.  ``check`` validates the value when the option applies (raising ``ValueError`` with the
    reason).  ``keyword``: a keyword argument of a Python call (:class:`ilp.options.ILPOptions`),
    named as it is in messages rather than as a command-line flag.  ``tabular``: a ``FILE`` option
    that also takes the rows of a table built in Python (a tuple of tuples of text, e.g. knowledge
    given as objects, :func:`pipeline.core.knowledge.knowledge_rows`).  An ``INT`` without ``low``
    is at least 0 (``low=-math.inf``: any integer).
    """

    name: str
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    open: str = ""
    none: bool = False
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    key: str | None = None
    keyed_when_set: bool = False
    strict: bool = False
    requires: Mapping[str, str] = field(default_factory=dict)
    uses: tuple[Use, ...] = ()
    grid: str | None = None
    axis: bool = True
    column: bool = True
    check: Callable[[Any], Any] | None = None
    what: str | None = None
    keyword: bool = False
    tabular: bool = False

    @property
    def flag(self) -> str:
        """The command-line spelling, ``--max-order`` for ``max_order``."""
        return "--" + self.name.replace("_", "-")

    @property
    def called(self) -> str:
        """How messages name it: its flag, or its name as a keyword argument."""
        return self.name if self.keyword else self.flag

    @property
    def noun(self) -> str:
        """What a missing value is called in a message (``a treewidth bound``)."""
        return self.what or self.flag

    def validated(self, value: Any) -> Any:
        """``value`` normalised (floats as float, choices in lower case) or :class:`OptionError`."""
        if value is None and (self.none or self.default is None):
            return None
        if self.kind == INT:
            return self._int(value)
        if self.kind == FLAG:
            if not isinstance(value, bool):
                raise OptionError(f"{self.name} must be {'True or False' if self.keyword else 'true or false'}, "
                                  f"got {value!r}")
            return value
        if self.kind == FILE:
            if not (isinstance(value, str) or (self.tabular and _is_table(value))):
                raise OptionError(f"{self.called} must be a file name, got {value!r}")
            return value
        if self.kind == NAMES:
            names = (value,) if isinstance(value, str) else value
            if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
                raise OptionError(f"{self.called} must be a list of names, got {value!r}")
            return tuple(names) or None
        if self.kind == TEXT:
            if self.choices:
                if not isinstance(value, str) or value.lower() not in self.choices:
                    raise OptionError(f"{self.called} must be one of {', '.join(self.choices)}; got {value!r}")
                return value.lower()
            return value
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise OptionError(f"{self.called} must be a number, got {value!r}")
        number = float(value)
        if self.kind == SECONDS:
            if not 0.0 < number <= MAX_SECONDS:
                raise OptionError(f"{self.called} must be a positive number of seconds up to {MAX_SECONDS:g} "
                                  f"(omit it for no limit), got {value!r}")
            return number
        if not self._within(number):
            raise OptionError(f"{self.called} must {self._range()}, got {value!r}")
        return number

    def _int(self, value: Any) -> int:
        low = 0 if self.low is None else self.low
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            kind = {-math.inf: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
                low, f"an integer of at least {low:g}")
            raise OptionError(f"{self.called} must be {kind}{' or ' + repr('none') if self.none else ''}, "
                              f"got {value!r}")
        return int(value)

    def _within(self, x: float) -> bool:
        low_ok = self.low is None or (x > self.low if self.open in ("low", "both") else x >= self.low)
        high_ok = self.high is None or (x < self.high if self.open in ("high", "both") else x <= self.high)
        return not math.isnan(x) and low_ok and high_ok

    def _range(self) -> str:
        if self.open == "both":
            return f"lie strictly between {self.low:g} and {self.high:g}"
        if self.low == 0 and self.open == "low":
            return "be a positive number" + ("" if self.high is None else f" up to {self.high:g}")
        if self.high is None:
            return f"be at least {self.low:g}"
        return f"lie between {self.low:g} and {self.high:g}"


def _is_table(value: Any) -> bool:
    """Whether ``value`` is the rows of a table: a non-empty tuple of tuples of text."""
    return (isinstance(value, tuple) and bool(value)
            and all(isinstance(row, tuple) and all(isinstance(cell, str) for cell in row) for row in value))


@dataclass(frozen=True)
class Method:
    """One choice of a :class:`Choice`: ``name``, ``help``, its own ``params``, the choices (or
    parameters) whose settings enter its cache key (``uses``, e.g. ``(TEST,)``), constant key
    entries (``constants``), parameters it cannot run without (``needs``), the capability
    ``tags`` the run reads instead of its name (a solver's: :data:`hybridbn.solving.TAGS`) and its
    ``run`` function (whose signature the choice documents)."""

    name: str
    help: str
    run: Callable[..., Any] | None = None
    params: tuple[Param, ...] = ()
    uses: tuple[Use, ...] = ()
    constants: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[Param, ...] = ()
    knowledge: str | None = "all"
    """What of the expert knowledge enters its key: ``all``, ``adjacency`` (the required pairs) or None."""
    tags: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Choice:
    """One option that selects a :class:`Method` (``--method``, ``--test``, ``--score``,
    ``--solver``), with the parameters common to all its methods (``params``) and the constant
    entries of the key (``constants``); ``grid`` is its list key in a grid file.  ``stage`` is
    the stage it selects the algorithm of; a choice without one (the CI test) applies only to
    the methods that name it in their ``uses``."""

    name: str
    help: str
    default: str
    methods: tuple[Method, ...]
    grid: str
    stage: str | None = None
    params: tuple[Param, ...] = ()
    constants: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Method:
        return self.by_name[name]

    @property
    def flag(self) -> str:
        """The command-line spelling, ``--method``."""
        return "--" + self.name

    @property
    def by_name(self) -> dict[str, Method]:
        return {m.name: m for m in self.methods}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods)

    @property
    def method_params(self) -> tuple[Param, ...]:
        """The parameters of its methods, each once, in declaration order."""
        seen: dict[str, Param] = {}
        for method in self.methods:
            for param in method.params:
                seen.setdefault(param.name, param)
        return tuple(seen.values())

    def users(self, param: Param) -> tuple[str, ...]:
        """The methods a method parameter applies to."""
        return tuple(m.name for m in self.methods if param in m.params)


Use = Union[Param, Choice]
"""What a method or parameter reads besides its own parameters: a choice (its selected method's
key) or a parameter."""


_VALUE = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[\w.|][\w.|-]*"
"""A value after a flag in a message: quoted (a name's ``repr``) or one word (``K``, ``FILE.jkl``, ``0.5``);
a flag with its Python spelling aside may have several (``--drop 'a' 'b' (drop=['a', 'b'] in Python)``)."""
_FLAG = re.compile(rf"--([a-z][a-z0-9-]*)(?: ({_VALUE}))?")
_PYTHON_ASIDE = re.compile(rf"--[a-z][a-z0-9-]*(?: (?:{_VALUE}))* \(([^()]*) in Python\)")


def keyword_spelling(message: str, options: Iterable[Param | Choice]) -> str:
    """``message`` as a Python caller reads it: each of ``options`` spelt as its keyword rather
    than its flag (``--alpha`` -> ``alpha``; with a value, ``--treewidth K`` -> ``treewidth=K``,
    ``--solver kg`` -> ``solver='kg'``, ``--folds 6`` -> ``folds=6``; a flag option ``--within-bags``
    -> ``within_bags=True``); where a message gives both spellings, ``--missing drop
    (missing='drop' in Python)``, the Python one. Other flags are left as they are."""
    by_flag = {option.flag: option for option in options}

    def spelt(match: re.Match) -> str:
        option, value = by_flag.get("--" + match[1]), match[2]
        if option is None:
            return match[0]
        keyword = _with_value(option, value)
        if keyword is not None:
            return keyword
        keyword = f"{option.name}=True" if isinstance(option, Param) and option.kind == FLAG else option.name
        return keyword if value is None else f"{keyword} {value}"

    return _FLAG.sub(spelt, _PYTHON_ASIDE.sub(lambda match: match[1], message))


def _with_value(option: Param | Choice, value: str | None) -> str | None:
    """``name=value`` when ``value`` is the option's placeholder, one of its choices or a number
    it takes; None when the word after the flag is not its value."""
    if value is None:
        return None
    if isinstance(option, Choice):
        return f"{option.name}={value!r}" if value in option.names else None
    if value == option.metavar:
        return f"{option.name}={value}"
    if value in option.choices:
        return f"{option.name}={value!r}"
    if option.kind in (INT, FLOAT, SECONDS):
        try:
            float(value)
        except ValueError:
            return None
        return f"{option.name}={value}"
    return None


def defaults(params: tuple[Param, ...]) -> dict[str, Any]:
    """The declared default of each of ``params``, by name."""
    return {p.name: p.default for p in params}
