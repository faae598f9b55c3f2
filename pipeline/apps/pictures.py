"""Pictures of a learned network for its output folder.

* ``network.png`` / ``network.svg``: the learned CPDAG, or with expert knowledge the PDAG under
  it (compelled arcs solid, reversible edges dashed grey without heads, as in ``network.dot``);
* ``comparison.png`` / ``comparison.svg`` when the true network is known: learned against true
  CPDAG in the style of bnlearn's ``graphviz.compare`` (correct, extra, missing dashed, reversed,
  misoriented; :func:`graphs.metrics.edge_classes`), with a legend counting each class;
* ``averaged.png`` / ``averaged.svg`` with ``--bootstrap``: the averaged network, each arc as wide
  as its bootstrap strength (:func:`strength_drawing`).

Graphviz's ``dot`` draws them when the program and its Python binding (``pip install graphviz``)
are installed; otherwise matplotlib draws them on the layered layout of :mod:`graphs.layout`,
so a machine without Graphviz still gets its pictures. Colours are matplotlib's default cycle,
as in the figures of ``run.py report``.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from graphs._checks import GraphError
from graphs.export import dot_quote, edge_list
from graphs.layout import layered_layout
from graphs.metrics import EDGE_CLASSES, edge_classes
from graphs.pdag import dag_to_cpdag, pdag_to_dag
from hybridbn.progress import Callback, progress_record

logger = logging.getLogger(__name__)

#: colour, dashed, legend text per edge class (graphs.metrics.EDGE_CLASSES) and per CPDAG mark
STYLES = {
    "correct": ("#000000", False, "correct"),
    "extra": ("#d62728", False, "extra (learned only)"),
    "missing": ("#1f77b4", True, "missing (true only)"),
    "reversed": ("#ff7f0e", False, "reversed"),
    "misoriented": ("#9467bd", False, "directed vs undirected"),
    "directed": ("#000000", False, "directed (compelled)"),
    "undirected": ("#666666", True, "undirected (reversible)"),
    "arc": ("#000000", False, "arc"),
    "edge": ("#666666", True, "undirected (both directions 1/2)"),
}
MAX_NODES = 300
"""Larger networks are not drawn (a picture of hundreds of nodes is not readable)."""
SLOW_NODES = 60
"""Drawings of more nodes take seconds (andes' 223: about 17 s): they are reported as progress."""
FORMATS = ("png", "svg")
DPI = 110


@dataclass(frozen=True)
class Drawing:
    """What a picture shows: nodes, styled edges ``(source, target, directed, style)``, the DAG
    that sets the layers, a title and the legend's entries ``(style, count)``."""

    names: list[str]
    edges: list[tuple[int, int, bool, str]]
    layering: np.ndarray
    title: str
    legend: list[tuple[str, int]]
    widths: tuple[float, ...] | None = None
    """Line width per edge (in points; None: all 1.1)."""


PdagOf = Callable[[np.ndarray], np.ndarray]
"""The equivalence class of a DAG as a run reports it: its CPDAG (:func:`graphs.pdag.dag_to_cpdag`),
or with expert knowledge the PDAG under it (:func:`pipeline.core.stages.equivalence_class`)."""


def network_drawing(dag: np.ndarray, names: list[str], title: str, pdag_of: PdagOf = dag_to_cpdag) -> Drawing:
    """The learned DAG's CPDAG (or PDAG, ``pdag_of``), laid out along the DAG."""
    edges = [(i, j, d, "directed" if d else "undirected") for i, j, d in edge_list(pdag_of(dag))]
    n_directed = sum(d for _, _, d, _ in edges)
    return Drawing(list(names), edges, dag, title,
                   [("directed", n_directed), ("undirected", len(edges) - n_directed)])


def comparison_drawing(dag: np.ndarray, truth: np.ndarray, names: list[str], title: str,
                       pdag_of: PdagOf = dag_to_cpdag) -> Drawing:
    """Learned against true CPDAG (or PDAGs, ``pdag_of``), laid out along the true DAG."""
    edges = edge_classes(pdag_of(dag), pdag_of(truth))
    counts = [(kind, sum(k == kind for *_, k in edges)) for kind in EDGE_CLASSES]
    return Drawing(list(names), edges, truth, title, counts)


MAX_WIDTH = 4.0
"""Line width in points of an arc of strength 1 in :func:`strength_drawing`."""


def strength_drawing(pdag: np.ndarray, strength: np.ndarray, names: list[str], title: str) -> Drawing:
    """A PDAG (the averaged network) with each edge ``MAX_WIDTH * strength`` points wide, laid
    out along a DAG extending it (Dor & Tarsi 1992), or along its directed part when none exists."""
    try:
        layering = pdag_to_dag(pdag)
    except GraphError:
        layering = pdag & ~pdag.T  # acyclic (graphs.averaging.averaged_network)

    edges = [(i, j, d, "arc" if d else "edge") for i, j, d in edge_list(pdag)]
    n_directed = sum(d for _, _, d, _ in edges)
    widths = tuple(max(0.3, MAX_WIDTH * float(strength[i, j])) for i, j, _, _ in edges)
    return Drawing(list(names), edges, layering, f"{title}; width: strength",
                   [("arc", n_directed), ("edge", len(edges) - n_directed)], widths)


def write_pictures(folder: Path, dag: np.ndarray, names: list[str], source: str,
                   truth: Callable[[], np.ndarray] | None = None, report: Callback | None = None,
                   pdag_of: PdagOf | None = None) -> list[Path]:
    """Draw ``network.*`` and, when ``truth()`` gives the true DAG, ``comparison.*`` into
    ``folder``; returns the files. Skipped when they are there already (kept from an earlier
    run that learned the same network); a picture that cannot be drawn only warns, the run's
    other outputs stand. ``report`` receives a progress record before and after a drawing of
    more than :data:`SLOW_NODES` nodes (stage ``pictures``, the file, its ``variables``).
    ``pdag_of``: the classes drawn with expert knowledge (None: the CPDAGs), so named in the titles."""
    kind = "CPDAG" if pdag_of is None else "PDAG with the knowledge"
    pdag_of = pdag_of or dag_to_cpdag
    drawings = {"network": lambda: network_drawing(dag, names, f"{source}: learned network ({kind})", pdag_of)}
    if truth is not None:
        drawings["comparison"] = lambda: comparison_drawing(dag, truth(), names, f"{source}: learned vs true {kind}",
                                                            pdag_of)
    written = []
    for stem, make in drawings.items():
        paths = [folder / f"{stem}.{fmt}" for fmt in FORMATS]
        if not all(p.is_file() for p in paths):
            try:
                _timed(lambda: draw(make(), folder / stem), f"{stem}.png", len(names), report)
            except (ValueError, ImportError, OSError, RuntimeError) as exc:
                logger.warning("%s.png/.svg not drawn: %s", stem, exc)
                continue
        written += paths
    return written


def _timed(work: Callable[[], object], name: str, n_nodes: int, report: Callback | None) -> None:
    """``work()``, reported to ``report`` before and after (status ``drawn``) when it draws more
    than :data:`SLOW_NODES` nodes (at most :data:`MAX_NODES`: larger ones are refused at once)."""
    if report is None or not SLOW_NODES < n_nodes <= MAX_NODES:
        work()
        return
    start = time.perf_counter()
    report(progress_record("pictures", name, 0.0, variables=n_nodes))
    work()
    report(progress_record("pictures", name, time.perf_counter() - start, variables=n_nodes, status="drawn"))


def graphviz_available() -> bool:
    """Both the ``dot`` program and the ``graphviz`` Python binding are installed."""
    return shutil.which("dot") is not None and importlib.util.find_spec("graphviz") is not None


def draw(drawing: Drawing, stem: Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` with Graphviz, or with matplotlib when Graphviz is
    missing or fails; returns their paths. Raises ValueError above :data:`MAX_NODES` nodes."""
    if len(drawing.names) > MAX_NODES:
        raise ValueError(f"{len(drawing.names)} nodes, more than the {MAX_NODES} drawn")
    paths = [stem.with_suffix(f".{fmt}") for fmt in FORMATS]
    if graphviz_available():
        try:
            _render_graphviz(drawing, paths)
            return paths
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:  # a broken Graphviz
            logger.warning("Graphviz failed (%s); drawing with matplotlib", str(exc).splitlines()[0])
    _render_matplotlib(drawing, paths)
    return paths


# ----------------------------------------------------------------------------------- Graphviz

def to_dot_text(drawing: Drawing) -> str:
    """DOT text of a drawing: edges styled by class, title and legend as the graph's label.
    Edges that are not arcs of the layering DAG do not move the layers."""
    lines = ["digraph {", '  graph [fontname="DejaVu Sans", labelloc=t, fontsize=16, pad=0.2];',
             '  node [shape=ellipse, fontname="DejaVu Sans", fontsize=12];', '  edge [arrowsize=0.7];']
    lines.extend(f"  {dot_quote(x)};" for x in drawing.names)
    for k, (i, j, directed, style) in enumerate(drawing.edges):
        colour, dashed, _ = STYLES[style]
        attrs = [f'color="{colour}"']
        if drawing.widths is not None:
            attrs.append(f"penwidth={drawing.widths[k]:.2f}")
        tail, head = (j, i) if drawing.layering[j, i] else (i, j)  # ranks follow the layering DAG
        if not directed:
            attrs.append("dir=none")
        elif tail != i:
            attrs.append("dir=back")
        if dashed:
            attrs.append("style=dashed")
        if not (drawing.layering[i, j] or drawing.layering[j, i]):
            attrs.append("constraint=false")
        lines.append(f"  {dot_quote(drawing.names[tail])} -> {dot_quote(drawing.names[head])} [{', '.join(attrs)}];")
    legend = " &nbsp; ".join(
        f'<font color="{STYLES[s][0]}">{_html(legend_label(s, c))}</font>' for s, c in drawing.legend)
    lines.append(f"  label=<<b>{_html(drawing.title)}</b><br/><font point-size=\"12\">{legend}</font>>;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def legend_label(style: str, count: int) -> str:
    """A legend entry, e.g. ``missing (true only), dashed: 2``."""
    _, dashed, text = STYLES[style]
    return f"{text}{', dashed' if dashed else ''}: {count}"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _render_graphviz(drawing: Drawing, paths: list[Path]) -> None:
    import graphviz  # deferred: graphviz is optional

    source = graphviz.Source(to_dot_text(drawing))
    for path in paths:
        path.write_bytes(source.pipe(format=path.suffix[1:]))


# --------------------------------------------------------------------------------- matplotlib

FONT_SIZE = 9
CHAR_WIDTH = 0.07    # inches per character at FONT_SIZE (DejaVu Sans; capitals and digits 0.09)
NODE_HEIGHT = 0.32   # inches
LAYER_GAP = 0.85     # inches between layer centres
NODE_GAP = 0.18      # inches between neighbouring nodes
MARGIN = 0.3         # inches around the graph
HEADER = 0.75        # inches above the graph for the title and the legend


def _render_matplotlib(drawing: Drawing, paths: list[Path]) -> None:
    # deferred: matplotlib's start-up, paid only when a picture is drawn without Graphviz
    from matplotlib import rc_context
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Ellipse, FancyArrowPatch

    widths = np.array([_text_width(x) + 0.3 for x in drawing.names])
    lay = layered_layout(drawing.layering, widths, layer_gap=LAYER_GAP, node_gap=NODE_GAP,
                         max_width=max(8, int(1.5 * np.sqrt(len(widths)))))
    extent_x = float((lay.x + widths / 2).max()) if len(widths) else 1.0
    extent_y = float(-lay.y.min()) if len(widths) else 0.0
    legend_width = sum(_text_width(legend_label(s, c)) + 0.9 for s, c in drawing.legend)
    fig_w = max(extent_x + 2 * MARGIN, legend_width, len(drawing.title) * 0.1 + 1, 4.0)
    fig_h = extent_y + NODE_HEIGHT + 2 * MARGIN + HEADER
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    left = (fig_w - extent_x) / 2  # centre the graph
    ax.set_xlim(-left, fig_w - left)
    top = NODE_HEIGHT / 2 + HEADER + MARGIN
    ax.set_ylim(top - fig_h, top)
    for v, name in enumerate(drawing.names):
        ax.add_patch(Ellipse((lay.x[v], lay.y[v]), widths[v], NODE_HEIGHT, facecolor="white",
                             edgecolor="black", linewidth=0.8, zorder=2))
        ax.text(lay.x[v], lay.y[v], name, ha="center", va="center", fontsize=FONT_SIZE, zorder=3)
    for k, (i, j, directed, style) in enumerate(drawing.edges):
        colour, dashed, _ = STYLES[style]
        points = _route(lay, widths, i, j)
        ax.add_patch(FancyArrowPatch(
            path=_smooth(points), arrowstyle="-|>" if directed else "-", mutation_scale=9,
            color=colour, linewidth=1.1 if drawing.widths is None else drawing.widths[k],
            linestyle=(0, (4, 3)) if dashed else "-", zorder=1))
    handles = [Line2D([], [], color=STYLES[s][0], linestyle="--" if STYLES[s][1] else "-",
                      label=legend_label(s, c)) for s, c in drawing.legend]
    ax.text(fig_w / 2 - left, top - 0.2, drawing.title, ha="center", va="center", fontsize=12,
            fontweight="bold")
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1 - 0.38 / fig_h),
               ncol=len(handles), fontsize=FONT_SIZE, frameon=False, handlelength=2.5)
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "hybridbn"}):
        for path in paths:
            fig.savefig(path, dpi=DPI)


def _text_width(text: str) -> float:
    """Approximate width in inches of ``text`` at FONT_SIZE."""
    return sum(1.3 * CHAR_WIDTH if c.isupper() or c.isdigit() else CHAR_WIDTH for c in text)


def _smooth(points: np.ndarray):
    """A matplotlib path through the ends of ``points`` that rounds each bend (quadratic Bezier
    pieces with the bends as control points and the midpoints between them on the curve)."""
    from matplotlib.path import Path as MplPath  # deferred: matplotlib's start-up (see above)

    if len(points) == 2:
        return MplPath(points)
    vertices, codes = [points[0]], [MplPath.MOVETO]
    for k in range(1, len(points) - 1):
        end = points[k + 1] if k == len(points) - 2 else (points[k] + points[k + 1]) / 2
        vertices += [points[k], end]
        codes += [MplPath.CURVE3, MplPath.CURVE3]
    return MplPath(np.array(vertices), codes)


def _route(lay, widths: np.ndarray, i: int, j: int) -> np.ndarray:
    """The polyline from node i to node j through the layout's bends, clipped at both ellipses.
    An edge the layout did not route (not an arc of the layering DAG) bows to one side, so that
    it does not run through the nodes of a layer."""
    start, end = np.array([lay.x[i], lay.y[i]]), np.array([lay.x[j], lay.y[j]])
    if (i, j) in lay.bends or (j, i) in lay.bends:
        bends = lay.bends[(i, j)] if (i, j) in lay.bends else lay.bends[(j, i)][::-1]
    elif abs(lay.layer[i] - lay.layer[j]) == 1:
        bends = []
    else:
        d = end - start
        bends = [(start + end) / 2 + 0.2 * np.array([-d[1], d[0]])]
    points = np.array([start, *bends, end], dtype=float)
    points[0] = _clip(points[0], points[1], widths[i])
    points[-1] = _clip(points[-1], points[-2], widths[j])
    return points


def _clip(centre: np.ndarray, toward: np.ndarray, width: float) -> np.ndarray:
    """Where the segment from an ellipse's centre toward a point leaves the ellipse."""
    d = toward - centre
    scale = np.hypot(d[0] / (width / 2), d[1] / (NODE_HEIGHT / 2))
    return centre + d / scale if scale > 1 else centre
