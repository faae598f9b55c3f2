"""The progress event handler of :func:`ilp.solve_ilp`: trajectory, progress records, stop requests.

:class:`ProgressEventhdlr` runs on every new incumbent, improvement of the dual bound (each cut
round of the root improves it), solved LP and solved node. Each time it adds the state to the
solve's :class:`hybridbn.progress.Trajectory`, reports a progress record at most every
:data:`hybridbn.progress.REPORT_INTERVAL` seconds, and, once :func:`hybridbn.interrupt.stop_requested`
says so, interrupts SCIP, which then ends with status ``"userinterrupt"`` and its best DAG and bound.
While :func:`hybridbn.interrupt.catching_signals` is active, SCIP's own Ctrl-C handler
(``misc/catchctrlc``) is switched off so that SIGINT and SIGTERM reach the same Python handler.
"""

from __future__ import annotations

import time

from pyscipopt import SCIP_EVENTTYPE, Eventhdlr

from hybridbn.interrupt import catching, stop_requested
from hybridbn.progress import REPORT_INTERVAL, Callback, Throttle, Trajectory, progress_record
from ilp.model import FamilyModel
from ilp.plugin import Plugin, guarded

EVENTS = (SCIP_EVENTTYPE.BESTSOLFOUND, SCIP_EVENTTYPE.DUALBOUNDIMPROVED, SCIP_EVENTTYPE.LPSOLVED,
          SCIP_EVENTTYPE.NODESOLVED)


class ProgressEventhdlr(Plugin, Eventhdlr):
    """Follows the solve that began at ``start`` (``time.perf_counter``) with time limit ``limit``
    (seconds or ``None``), reporting records to ``report`` (``None``: none)."""

    def __init__(self, start: float, limit: float | None, report: Callback | None):
        super().__init__()
        self.start = start
        self.limit = limit
        self.report = report
        self.trajectory = Trajectory()
        self.throttle = Throttle(REPORT_INTERVAL, time.perf_counter)
        self.done = False

    def _bounds(self) -> tuple[float | None, float | None]:
        """SCIP's primal and dual bound, ``None`` while infinite."""
        model = self.model
        primal, dual = model.getPrimalbound(), model.getDualbound()
        return (None if model.isInfinity(abs(primal)) else primal,
                None if model.isInfinity(abs(dual)) else dual)

    @guarded
    def eventinit(self):
        for event in EVENTS:
            self.model.catchEvent(event, self)

    def close(self) -> None:
        """Ignore the events that follow (call when ``optimize`` returns): SCIP fires some when it
        frees the tree of a stopped solve, whenever the model happens to be garbage-collected."""
        self.done = True

    @guarded
    def eventexec(self, event):
        if self.done:
            return {}
        if stop_requested() is not None:
            self.model.interruptSolve()
        elapsed = time.perf_counter() - self.start
        primal, dual = self._bounds()
        self.trajectory.add(elapsed, primal, dual)
        if self.report is not None and self.throttle.ready():
            self.report(progress_record("solve", "ilp", elapsed, limit=self.limit, primal=primal, dual=dual,
                                        nodes=self.model.getNTotalNodes()))
        return {}


def include_progress_eventhdlr(fm: FamilyModel, start: float, limit: float | None,
                               report: Callback | None) -> ProgressEventhdlr:
    """Include the handler (``progress``) in ``fm``'s model; see the module docstring."""
    handler = ProgressEventhdlr(start, limit, report)
    fm.model.includeEventhdlr(handler, "progress", "trajectory, progress records and stop requests")
    if catching():
        fm.model.setParam("misc/catchctrlc", False)
    return handler
