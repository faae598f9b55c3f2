"""``convergence.png``: how a solve that did not finish got where it stopped.

The incumbent's objective (primal) and, for the exact ILP, the proven bound on the optimum (dual)
against the seconds of the solve, as steps (each value holds until the next point), from the
solve's trajectory (:class:`hybridbn.progress.Trajectory`: ``(seconds, primal, dual)`` points,
``None`` before the first incumbent or bound). The final gap and the status are written on the
figure, whose score axis spans the incumbents and the final bound (with a margin of as much
again above it: the first LP bounds are often far weaker and run off the top). The output
folder holds it when the solve stopped at a limit or was interrupted
(:func:`pipeline.apps.outputs.write_outputs`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from hybridbn.progress import relative_gap

Point = Sequence[float | None]
DPI = 110


def series(trajectory: Sequence[Point], column: int) -> tuple[list[float], list[float]]:
    """The seconds and values of one column (1: primal, 2: dual) where it is known and finite."""
    points = [(float(p[0]), float(p[column])) for p in trajectory
              if p[column] is not None and math.isfinite(p[column])]
    return [t for t, _ in points], [v for _, v in points]


def write_convergence(path: Path, trajectory: Sequence[Point], title: str, status: str) -> Path:
    """Draw the primal and dual bound of ``trajectory`` against time into ``path`` (PNG)."""
    # deferred: matplotlib's start-up, paid only when a solve stopped early
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.2))
    ax = fig.add_subplot()
    shown = []
    for column, label in ((1, "incumbent (primal)"), (2, "bound (dual)")):
        seconds, values = series(trajectory, column)
        if seconds:
            ax.step(seconds, values, where="post", marker="o", markersize=3, label=label)
            shown.append(values)
    if len(shown) == 2:
        low, high = min(shown[0]), shown[1][-1]
        span = max(high - low, 1e-4 * max(abs(high), 1.0))
        ax.set_ylim(low - 0.1 * span, high + span)
    end = trajectory[-1] if trajectory else (0.0, None, None)
    gap = relative_gap(end[1], end[2])
    note = f"status {status} at {float(end[0]):.1f} s" + ("" if gap is None else f", gap {gap:.2%}")
    ax.set_title(f"{title}\n{note}", fontsize=10)
    ax.set_xlabel("seconds")
    ax.set_ylabel("score")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path
