"""The parameters that several algorithm packages take, each declared once, and their one check.

``palim`` (the score table, GES / SGES, hill climbing, the ILP's problem) and ``alpha`` (the CI
tests, PC, the cops) are declared here as :class:`hybridbn.options.Param` (``--palim`` of
:mod:`scores.methods`, ``--alpha`` of :mod:`constraints.methods`), so that a value is checked by
its declaration, with one message, whether it comes from ``run.py``, :func:`hybridbn.learn` or an
algorithm's own Python API. The algorithms call :func:`check_parent_limit` and
:func:`check_significance` with their own error class (a ``ValueError`` of their package), so
that a bad argument raises the error their callers expect, as :class:`ilp.options.ILPOptions`
does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hybridbn.options import FLOAT, INT, OptionError, Param

PALIM = Param("palim", INT, 3, "parent limit, or 'none'", none=True, key="palim", grid="palims")
ALPHA = Param("alpha", FLOAT, 0.05, "significance level in (0,1)", low=0.0, high=1.0, open="both",
              key="alpha", grid="alphas")


def checked(param: Param, value: Any, error: type[Exception]) -> Any:
    """``param.validated(value)``, or ``error`` with its message, the option spelt as the keyword
    argument it is in Python (``palim``, not ``--palim``): the message :func:`hybridbn.learn`
    gives for the same value."""
    try:
        return replace(param, keyword=True).validated(value)
    except OptionError as exc:
        raise error(str(exc)) from None


def check_parent_limit(palim: Any, error: type[Exception]) -> int | None:
    """``palim`` as an ``int`` (None: no limit), or ``error`` unless a non-negative integer."""
    return checked(PALIM, palim, error)


def check_significance(alpha: Any, error: type[Exception]) -> float:
    """``alpha`` as a ``float``, or ``error`` unless a number strictly between 0 and 1."""
    return checked(ALPHA, alpha, error)
