"""Layout of the engine's search state, shared by its kernels and its driver.

The solver's int64 meta array ``sm``, the columns of its uint64 frame stack ``frames``, the
status codes of ``constraints.cops.compiled_search.advance`` and :func:`step_margin`.
"""

from __future__ import annotations

from numba import njit

# kernel status codes
DONE, PAUSED, GROW_SETS, GROW_PRESOLVE, GROW_EXTRACT = range(5)

# solver meta fields (int64 array ``sm``)
SP, PEND_TOP, RESUMING, RETURNED, K, RESULT, PRE_COUNT, EX_COUNT, MEMO_CAP = range(9)
# frame columns (uint64 array ``frames``): cops, robbers, pruned cops, component, untried advancements
F_C, F_R, F_NEWC, F_COMP, F_TODO = 0, 2, 4, 6, 8


@njit(inline="always")
def step_margin(n):
    """Table entries one step of the search may add (an EXTRACTCOMPONENT set, k + 1 pruning sets,
    a frame's pending PRESOLVE keys): the tables are grown before a step when fewer are free."""
    return 2 * n + 8
