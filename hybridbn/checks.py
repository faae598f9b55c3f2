"""Checks of arguments that several algorithm packages take, each stated once.

The caller passes its own error class (a ``ValueError`` of its package), so that a bad argument
raises the error its callers expect. A run's options are checked earlier, by their declarations
(:mod:`hybridbn.options`: ``--palim``, ``--alpha``); these checks guard the algorithms' own
Python API.
"""

from __future__ import annotations

import numbers


def check_parent_limit(palim, error: type[Exception]) -> int | None:
    """``palim`` as an ``int`` (None: no limit), or ``error`` unless a non-negative integer."""
    if palim is None:
        return None
    if isinstance(palim, bool) or not isinstance(palim, numbers.Integral) or palim < 0:
        raise error(f"palim must be a non-negative integer or None, got {palim!r}")
    return int(palim)


def check_significance(alpha, error: type[Exception]) -> float:
    """``alpha`` as a ``float``, or ``error`` unless a number strictly between 0 and 1."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
        raise error(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return float(alpha)
