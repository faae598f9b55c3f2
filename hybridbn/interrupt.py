"""A process-wide request to stop the running solve at its next safe point (Ctrl-C, SIGTERM).

Inside :func:`catching_signals`, SIGINT and SIGTERM (which Slurm sends at a job's time limit,
SIGKILL following about 30 s later) only record the request; the solvers poll
:func:`stop_requested` and return their best result so far with status ``"userinterrupt"``
(:func:`ilp.solve_ilp` through SCIP's ``interruptSolve``). A second signal while a stop is pending
raises ``KeyboardInterrupt``: quit at once. Python runs a signal handler between two bytecodes of
the main thread, so a solve inside compiled code notices the signal when it next calls Python
(SCIP calls the IP's plugins many times a second). The caller reports the stop with exit status
:func:`exit_code` (the shell's ``128 + signum``: 130 for SIGINT, 143 for SIGTERM). A worker process
(of a bootstrap, a selection or a grid) calls :func:`follow` once: it then takes both the signals
it receives and the stop requests of the process that started it as its own.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

logger = logging.getLogger(__name__)

_requested: int | None = None
_depth = 0  # nesting depth of catching_signals


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask the running solve to stop; the first request's signal number is kept."""
    global _requested
    if _requested is None:
        _requested = int(signum)


def stop_requested() -> int | None:
    """The signal number of the pending stop request, or ``None``."""
    return _requested


def clear() -> None:
    """Forget the stop request."""
    global _requested
    _requested = None


def catching() -> bool:
    """Whether a :func:`catching_signals` block is active (its handlers are installed)."""
    return _depth > 0


def exit_code(signum: int) -> int:
    """The exit status of a run stopped by signal ``signum``: ``128 + signum``."""
    return 128 + int(signum)


@dataclass
class StopRequest:
    """What a :func:`catching_signals` block yields: ``signum`` is the signal that asked the run to
    stop (read it inside or after the block), ``None`` if none did."""

    _signum: int | None = None
    _open: bool = True

    @property
    def signum(self) -> int | None:
        return stop_requested() if self._open else self._signum


def _handler(signum, frame) -> None:
    if stop_requested() is not None:
        raise KeyboardInterrupt(f"{signal.Signals(signum).name} again: quitting at once")
    request_stop(signum)
    logger.warning("%s: stopping at the next safe point (send it again to quit at once)", signal.Signals(signum).name)


def _record(signum, frame) -> None:
    request_stop(signum)


@contextmanager
def catching_signals(signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[StopRequest]:
    """Record ``signals`` as stop requests inside the block, restoring the previous handlers after it.

    The outermost block starts and ends with no request pending (a later solve in the same process
    is not stopped by an old signal). Outside the main thread, where Python cannot install signal
    handlers, nothing is installed and only :func:`request_stop` asks for a stop.
    """
    global _depth
    stop = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    if _depth == 0:
        clear()
    previous = {signum: signal.signal(signum, _handler) for signum in signals}
    _depth += 1
    try:
        yield stop
    finally:
        _depth -= 1
        stop._signum, stop._open = stop_requested(), False
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if _depth == 0:
            clear()


def follow(parent: Callable[[], int | None], interval: float = 0.1,
           signals: Iterable[int] = (signal.SIGINT, signal.SIGTERM)) -> None:
    """In a worker process, for the rest of its life: take ``signals`` as stop requests, and the
    stop requests of the process that started it, which ``parent()`` returns (a signal number, or
    ``None`` while there is none), polled every ``interval`` seconds by a daemon thread;
    :func:`catching` is then true, so the stages stop at their safe points and the solvers return
    their best result, as in the parent. The signals are only recorded: no warning (the parent
    gives it) and no quitting at once on a second one (the parent, which gets it too or forwarded
    its request first, kills its workers). Call it in the main thread (a pool's initializer)."""
    global _depth
    for signum in signals:
        signal.signal(signum, _record)
    _depth += 1

    def watch() -> None:
        while (signum := parent()) is None:
            time.sleep(interval)
        request_stop(signum)

    threading.Thread(target=watch, name="stop-requests", daemon=True).start()
