"""The base class of every error the project raises on purpose, so callers can catch them all."""

from __future__ import annotations


class HybridBNError(Exception):
    """An error of hybridbn: bad input, an infeasible problem, a failed stage or an I/O failure.

    Each package's errors derive from it (often together with the builtin they refine, e.g.
    ``ValueError``), so ``except hybridbn.HybridBNError`` catches the project's own errors and
    nothing else.
    """
