"""Exception handling for PySCIPOpt plugin callbacks."""

from __future__ import annotations

import functools

from pyscipopt import SCIP_RESULT


def guarded(method):
    """Keep the first exception raised inside a SCIP callback and stop the solve.

    PySCIPOpt cannot propagate exceptions out of C callbacks; the caller re-raises ``error``.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Exception as err:  # noqa: BLE001 - re-raised by the caller after the solve
            if self.error is None:
                self.error = err
            self.model.interruptSolve()
            return {"result": SCIP_RESULT.DIDNOTRUN}

    return wrapper
