"""The base class of every error the project raises on purpose, so callers can catch them all,
and the one-line reason an I/O error gives."""

from __future__ import annotations


class HybridBNError(Exception):
    """An error of hybridbn: bad input, an infeasible problem, a failed stage or an I/O failure.

    Each package's errors derive from it (often together with the builtin they refine, e.g.
    ``ValueError``), so ``except hybridbn.HybridBNError`` catches the project's own errors and
    nothing else.
    """


def error_reason(exc: BaseException) -> str:
    """The OS's words for ``exc`` (``strerror``), else its message, else its type's name."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
