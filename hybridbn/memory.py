"""The memory a run may hold, and what it holds now: the budget the score table plans against.

The score table plans against :data:`DEFAULT_SHARE` of the machine's memory
(:func:`machine_memory`: the physical memory, or the control group's limit where a batch
scheduler set a smaller one): it caps the buffers of each child's enumeration by what that limit
leaves (:func:`headroom`), so that real data, where pruning keeps almost every parent set, ends
with a cut table and a warning instead of the operating system's out-of-memory killer.
(``--memory-limit`` is the megabytes SCIP may hold by its own account, :mod:`ilp.solve`.)
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

MB = 1 << 20
DEFAULT_SHARE = 0.75
"""Share of the machine's memory a run plans against when it is given no limit."""
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""Where a control group (Slurm, a container) states its memory limit (cgroup v2, then v1)."""


def machine_memory() -> int:
    """Bytes of memory this process can have: the physical memory, or a smaller cgroup limit."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in CGROUP_LIMITS:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def default_limit() -> int:
    """Bytes the score table plans against: the default share of the machine's memory."""
    return int(DEFAULT_SHARE * machine_memory())


def resident() -> int:
    """Bytes of physical memory the process holds now (its resident set)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):  # not Linux: the peak is an upper bound
        return peak_resident()
    return pages * os.sysconf("SC_PAGE_SIZE")


def peak_resident() -> int:
    """Bytes of the process's largest resident set so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def headroom(limit: int) -> int:
    """Bytes the process may still allocate under ``limit`` bytes (never negative)."""
    return max(limit - resident(), 0)
