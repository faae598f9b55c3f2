"""Human-readable reports: the summary of one run, the network list, and grid reports.

``format_*`` functions return strings (the CLI prints them); :func:`write_report` turns a grid's
results table into ``report.md`` with Markdown tables and matplotlib PNG figures.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from hybridbn.errors import error_reason
from hybridbn.options import FLAG, SECONDS, Choice, Param
from pipeline.core.atomic import replace_file
from pipeline.core.budget import budget_record
from pipeline.core.cache import Artifact
from pipeline.core.config import RunConfig
from pipeline.core.declarations import CHOICES, PARAM_COLUMNS
from scores.methods import PALIM

logger = logging.getLogger(__name__)


def format_network_list(rows: Sequence[Mapping[str, Any]]) -> str:
    """A fixed-width table of the benchmark networks (rows of ``network_summary()``)."""
    if not rows:
        return "(no networks)"
    columns = list(rows[0].keys())
    widths = [max(len(str(c)), *(len(str(r[c])) for r in rows)) for c in columns]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(columns, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        cells = [
            str(r[c]).rjust(w) if isinstance(r[c], (int, float)) else str(r[c]).ljust(w)
            for c, w in zip(columns, widths)
        ]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def _counts(mapping: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(mapping.items(), key=lambda kv: int(kv[0]))) or "-"


def _pruning(table_meta: Mapping[str, Any]) -> str:
    """Non-zero pruning counters of the score stage (``table.meta['counts']``)."""
    counts = table_meta.get("counts", {})
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items() if v)


def describe_config(cfg: RunConfig) -> str:
    """One line naming the source and each stage's method with its settings: the parameters its
    declaration lists (:mod:`hybridbn.options`), so a new parameter shows here too."""
    source = f"{cfg.network}, {cfg.rows} rows (seed {cfg.seed})" if cfg.network else f"data {cfg.data}"
    solver = _method_phrase(CHOICES["solver"], cfg)
    if cfg.scores is not None:
        return f"score file {cfg.scores} -> {solver}"
    restrict = _method_phrase(CHOICES["method"], cfg)
    score = f"{_method_phrase(CHOICES['score'], cfg)}, {_setting(PALIM, cfg.palim)}"
    return f"{source} -> {restrict} -> {score} -> {solver}"


def _method_phrase(choice: Choice, cfg: RunConfig) -> str:
    """``pc (g2, alpha 0.05, max order 1)``: the selected method, the CI test it uses and the
    settings of its parameters and its choice's; one not set (no value, off, or an optional
    extra at its default) is left out, 'none' where it lifts a bound."""
    method = choice[getattr(cfg, choice.name)]
    if method.run is None:  # --method none
        return "no restriction"
    settings = [getattr(cfg, use.name) for use in method.uses if isinstance(use, Choice) and use.stage is None]
    for param in (*method.params, *choice.params):
        value = getattr(cfg, param.name)
        unset = value is False or (value is None and param.default is None) or (
            param.keyed_when_set and value == param.default)
        if not unset:
            settings.append(_setting(param, value))
    return method.name + (f" ({', '.join(settings)})" if settings else "")


def _setting(param: Param, value: Any) -> str:
    """``alpha 0.05``, ``max order none``, ``time limit 60 s``, ``within bags``."""
    words = param.name.replace("_", " ")
    if param.kind == FLAG:
        return words
    shown = "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
    return f"{words} {shown}" + (" s" if param.kind == SECONDS and value is not None else "")


def stage_details(stage: str, art: Artifact) -> str:
    """The counts of one stage as a short phrase."""
    m = art.meta
    if stage == "data":
        dropped = m.get("n_dropped_rows")
        return f"{m['n_rows']} rows x {m['n_vars']} variables" + (
            f" ({dropped} rows with a missing cell dropped)" if dropped else "")
    if stage == "restrict":
        if m.get("method") == "none":
            return "no restriction: every edge allowed"
        if m.get("method") == "candidates":
            return (f"at most {m['candidates']} + {m.get('conditional', 0)} (given the best) candidate parents "
                    f"per child: {m['n_arcs_allowed']} arcs, "
                    f"{m['n_allowed']} of {m['n_pairs']} pairs allowed; "
                    f"{m['children_without_candidates']} children without candidates")
        text = (
            f"{m['n_tests']} tests (by order {_counts(m['tests_by_order'])}); "
            f"edges removed by order {_counts(m['removed_by_order'])}; "
            f"{m['n_allowed']} of {m['n_pairs']} pairs allowed"
        )
        if m.get("method") == "cops":
            text += f"; cops {m.get('cops_status')}, treewidth {_num(m.get('treewidth'))}"
        elif m.get("status") == "timeout":
            text += "; stopped at its time limit (a superset of its skeleton)"
        return text
    if stage == "scores" and "file" in m:
        return f"{m['n_candidates']} parent sets of {m['n_vars']} variables read from {m['file']}"
    if stage == "scores":
        pruning = _pruning(m.get("table_meta", {}))
        unscored = m.get("table_meta", {}).get("unscored")
        cut = (f"; stopped at its time limit: {len(unscored)} children unscored (required or empty set only)"
               if unscored else "")
        prior = m.get("table_meta", {}).get("dominated_with_prior")
        prior = "" if prior is None else f"; structure prior: {prior} more dominated"
        return f"{m['n_candidates']} candidate parent sets kept" + (f"; {pruning}" if pruning else "") + prior + cut
    if stage == "solve":
        r = m["result"]
        against = f" to the {r['bound']} bound" if r.get("bound") and r.get("gap") is not None else ""
        if r.get("exact") and r.get("gap") is not None:  # a climb beside the ILP on its table
            against = (" below the ILP's proven optimum" if r["exact"]["status"] == "optimal"
                       else " to the ILP's bound")
        text = f"objective {_num(r.get('objective'))}, gap {_pct(r.get('gap'))}{against}, status {r.get('status')}"
        extras = [f"{r[k]} {label}" for k, label in SOLVE_EXTRAS if r.get(k) is not None]
        if r.get("local_search"):
            extras.append(local_search_phrase(r["local_search"]))
        return text + ("; " + ", ".join(extras) if extras else "")
    if stage == "evaluate":
        if m.get("truth") is None:
            return "no true network (user data): not evaluated"
        return evaluation_phrase(m)
    return ""


#: solver-specific counters shown after the objective (key in the result, label)
SOLVE_EXTRAS = (("n_score_evaluations", "local scores evaluated"), ("n_orders", "orders explored"),
                ("n_iterations", "arc moves"), ("n_restarts", "restarts"))


def local_search_phrase(ls: Mapping[str, Any]) -> str:
    """What the tabu search from a stopped ILP's incumbent found (:func:`ilp.methods.polish_incumbent`)."""
    found = (f"raised it by {ls['objective'] - ls['start_objective']:.6g} (kept)" if ls["adopted"]
             else "found no better DAG")
    return f"{ls['solver']} search from the incumbent {found} in {ls['seconds']:.1f} s, {ls['n_iterations']} arc moves"


def evaluation_phrase(m: Mapping[str, Any]) -> str:
    """SHD, skeleton precision/recall/F1 and arc differences, as one phrase."""
    diffs = ", ".join(f"{k} {m[k]}" for k in ("added", "missing", "reversed") if k in m)
    return (
        f"SHD {m['shd']} (CPDAGs), skeleton precision {m['precision']:.3f} recall {m['recall']:.3f} "
        f"F1 {m['f1']:.3f}" + (f"; arcs {diffs}" if diffs else "")
    )


def _num(x: Any) -> str:
    return "-" if x is None else f"{x:.6g}" if isinstance(x, float) else str(x)


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.4g}%"


def format_run_summary(cfg: RunConfig, artifacts: Mapping[str, Artifact], output: Path | None = None) -> str:
    """The short report printed after ``run.py``: one line per stage with time and counts."""
    lines = [describe_config(cfg), ""]
    lines.append(f"{'stage':<9} {'time':>9}  {'':6}  details")
    for stage, art in artifacts.items():
        flag = "cached" if art.cached else ""
        lines.append(f"{stage:<9} {art.seconds:8.2f}s  {flag:6}  {stage_details(stage, art)}")
    hybrid = [s for s in ("restrict", "scores", "solve") if s in artifacts]
    if "solve" in hybrid:
        total = sum(artifacts[s].seconds for s in hybrid)
        lines.append(f"{'hybrid':<9} {total:8.2f}s          {' + '.join(hybrid)}")
    if cfg.budget is not None and "solve" in artifacts:
        record = budget_record(cfg, artifacts)
        cut = [stage for stage, got in record["stages"].items() if got["limited"]]
        lines.append(f"{'budget':<9} {cfg.budget:8.3g}s          solver time limit "
                     f"{record['stages']['solve']['limit']:g} s after {record['used'] - artifacts['solve'].seconds:.2f} s "
                     "of restriction and scoring" + (f"; stopped by their limits: {', '.join(cut)}" if cut else ""))
    if output is not None:
        lines += ["", f"learned network written to {output}/"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- grid reports

#: parameters that may vary in a grid, and the sweeps drawn when they do (Su 2023, Figs 7-11)
SWEEPS = {"alpha": "significance level alpha", "max_order": "CI order", "palim": "parent limit"}
#: headers of the run parameters (every option a grid sets, :data:`pipeline.core.declarations.PARAM_COLUMNS`)
#: where they differ from the option's name
PARAM_HEADERS = {"rows": "N", "max_order": "order", "treewidth": "treewidth bound"}
PARAMETER_COLUMNS = [(c, PARAM_HEADERS.get(c, c)) for c in PARAM_COLUMNS]
TABLE_COLUMNS = [
    *PARAMETER_COLUMNS, ("n_tests", "tests"),
    ("edges_removed", "edges removed"), ("n_candidates", "parent sets"), ("t_restrict", "T_restrict"),
    ("t_score", "T_score"), ("t_solve", "T_solve"), ("t_hybrid", "T_hybrid"),
    ("t_unrestricted", "T_unrestricted"), ("status_unrestricted", "status alone"), ("reduction", "reduction"),
    ("gap", "gap"), ("status", "status"),
    ("shd", "SHD"), ("f1", "F1 vs truth"), ("f1_vs_unrestricted", "F1 vs G_score"),
]


#: columns the report reads (a results table of ``run.py grid`` has them all)
REPORTED_COLUMNS = ("network", "status", "t_hybrid", "t_unrestricted", "n_pairs", "n_allowed", "f1",
                    "f1_vs_unrestricted")
#: run parameters that tell the lines of a sweep figure apart when they vary (seeds are averaged)
LINE_PARAMETERS = tuple(c for c in PARAM_COLUMNS if c not in ("network", "seed"))


def read_results(path: Path) -> pd.DataFrame:
    """A results table written by ``run.py grid`` (parquet or CSV)."""
    if not path.is_file():
        raise FileNotFoundError(f"results file not found: {path}")
    try:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, EOFError) as exc:  # empty, truncated, unreadable or not a table
        raise ValueError(f"cannot read results table {path}: {error_reason(exc)}") from None
    missing = set(REPORTED_COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"{path} is not a grid results table (missing columns {sorted(missing)})")
    frame = frame.copy()
    frame["edges_removed"] = frame["n_pairs"] - frame["n_allowed"]
    return frame


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, columns: Sequence[tuple[str, str]]) -> str:
    """A GitHub-flavoured Markdown table of the given (column, header) pairs that exist and vary."""
    cols = [(c, h) for c, h in columns if c in frame.columns and frame[c].notna().any()]
    if frame.empty or not cols:
        return "(none)"
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_cell(row[c]) for c, _ in cols) + " |")
    return "\n".join(lines)


def _sweep_groups(frame: pd.DataFrame, param: str) -> list[tuple[str, pd.DataFrame]]:
    """The lines of a sweep over ``param``: the finished jobs of one network and one value of every
    other varying parameter (seeds are averaged), when ``param`` takes several values there."""
    ok = frame[~frame["status"].isin(["error", "missing"])]
    others = [c for c in LINE_PARAMETERS if c != param and c in ok.columns
              and ok[c].astype(str).nunique() > 1]
    groups = []
    for keys, g in ok.groupby(["network", *others], sort=True, dropna=False):
        if g[param].astype(str).nunique() > 1:
            label = ", ".join([str(keys[0]), *(f"{c}={_value_label(v)}" for c, v in zip(others, keys[1:]))])
            groups.append((label, g))
    return groups


def _value_label(value: Any) -> str:
    if pd.isna(value):
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _sweep_axis(values: pd.Series) -> tuple[pd.Series, list[float], list[str]]:
    """x positions of a parameter's values: the numbers themselves, and 'none' (no bound, for the
    order and the parent limit) one step right of the largest."""
    numbers = pd.to_numeric(values, errors="coerce")
    finite = sorted(numbers.dropna().unique())
    if numbers.notna().all():
        return numbers, finite, [_value_label(v) for v in finite]
    step = (finite[-1] - finite[0]) / max(len(finite) - 1, 1) if len(finite) > 1 else 1.0
    none_at = (finite[-1] if finite else 0.0) + step
    return numbers.fillna(none_at), [*finite, none_at], [*(_value_label(v) for v in finite), "none"]


def sweep_figure(frame: pd.DataFrame, param: str, path: Path) -> Path | None:
    """Three panels against ``param``: edges removed, F-scores, times (one line per network and
    setting of the other varying parameters, averaged over seeds)."""
    groups = _sweep_groups(frame, param)
    if not groups:
        return None
    import matplotlib  # deferred: matplotlib's start-up, paid only by a report with figures

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    ticks: dict[float, str] = {}
    for k, (label, g) in enumerate(groups):
        x, positions, labels = _sweep_axis(g[param])
        ticks.update(zip(positions, labels))
        agg = g.assign(_x=x).groupby("_x").mean(numeric_only=True).reset_index()
        style = {"color": f"C{k % 10}"}
        axes[0].plot(agg["_x"], agg["edges_removed"], marker="o", label=label, **style)
        axes[1].plot(agg["_x"], agg["f1_vs_unrestricted"], marker="o", label=f"{label} vs G_score", **style)
        axes[1].plot(agg["_x"], agg["f1"], marker="x", linestyle="--", label=f"{label} vs truth", **style)
        axes[2].plot(agg["_x"], agg["t_hybrid"], marker="o", label=f"{label} hybrid", **style)
        if agg["t_unrestricted"].notna().any():
            axes[2].plot(agg["_x"], agg["t_unrestricted"], marker="x", linestyle="--",
                         label=f"{label} score only", **style)
    titles = ("edges removed by the restriction", "skeleton F-score", "time (s)")
    for ax, title in zip(axes, titles):
        ax.set_xlabel(SWEEPS[param])
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if "none" in ticks.values():
            ax.set_xticks(list(ticks), list(ticks.values()))
    axes[1].set_ylim(0, 1.05)
    axes[2].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(results: Path, out: Path | None = None) -> Path:
    """``report.md`` (Markdown tables) and one PNG per varying sweep parameter; returns report.md."""
    frame = read_results(results)
    out = out or results.parent
    out.mkdir(parents=True, exist_ok=True)
    ok = frame[~frame["status"].isin(["error", "missing"])]
    lines = [f"# Grid report: {results.name}", "",
             f"{len(frame)} jobs, {len(ok)} finished, {int((frame['status'] == 'error').sum())} failed, "
             f"{int((frame['status'] == 'missing').sum())} not run.", "",
             "Times in seconds (T_hybrid = T_restrict + T_score + T_solve; T_unrestricted = scores + solve "
             "without restriction, the thesis' T_score). F1 vs G_score compares the skeleton with the "
             "unrestricted optimum (Su 2023, section 6); reduction = 1 - T_hybrid / T_unrestricted.", "",
             "## Results", "", markdown_table(ok, TABLE_COLUMNS), ""]
    for param, label in SWEEPS.items():
        png = sweep_figure(frame, param, out / f"sweep-{param}.png")
        if png is not None:
            lines += [f"## Sweep over the {label}", "", f"![{label}]({png.name})", ""]
    failed = frame[frame["status"] == "error"]
    if len(failed):
        cols = [("job", "job"), *PARAMETER_COLUMNS, ("error", "error")]
        lines += ["## Failed jobs", "", markdown_table(failed, cols), ""]
    path = out / "report.md"
    replace_file(path, lambda p: p.write_text("\n".join(lines)))
    return path
