"""The one-line reason an I/O error gives, for messages that name the file it concerns."""

from __future__ import annotations


def error_reason(exc: BaseException) -> str:
    """The OS's words for ``exc`` (``strerror``), else its message, else its type's name."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
