"""Human-readable reports: the summary of one run, the network list, and grid reports.

``format_*`` functions return strings (the CLI prints them); :func:`write_report` turns a grid's
results table into ``report.md`` with Markdown tables and matplotlib PNG figures.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from constraints.methods import ALPHA, MAX_ORDER, RESTRICTION
from hybridbn.errors import error_reason
from hybridbn.options import FLAG, SECONDS, Choice, Param
from pipeline.core.atomic import replace_file
from pipeline.core.budget import budget_record
from pipeline.core.cache import Artifact
from pipeline.core.config import RunConfig
from pipeline.core.declarations import NETWORK, PARAM_COLUMNS, SEED, SOLVER
from scores.methods import PALIM, SCORE

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
    solver = _method_phrase(SOLVER, cfg)
    if cfg.scores is not None:
        return f"score file {cfg.scores} -> {solver}"
    restrict = _method_phrase(RESTRICTION, cfg)
    score = f"{_method_phrase(SCORE, cfg)}, {_setting(PALIM, cfg.palim)}"
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
        notes = []
        if m.get("n_dropped_rows"):
            notes.append(f"{m['n_dropped_rows']} rows with a missing cell dropped")
        if m.get("n_missing_cells"):
            notes.append(f"{m['n_missing_cells']} missing cells kept as a state")
        if m.get("structural_em"):
            em = m["structural_em"]
            notes.append(f"{em['n_completed_cells']} missing cells completed by structural EM in {em['iterations']} "
                         f"rounds{'' if em['converged'] else ', not converged'}")
        cut = m.get("discretized") or {}
        if cut:
            shown = [f"{name} {r['method']} {r['intervals']}" for name, r in list(cut.items())[:5]]
            notes.append(f"{len(cut)} discretized: {', '.join(shown)}{' ...' if len(cut) > 5 else ''}")
        return f"{m['n_rows']} rows x {m['n_vars']} variables" + (f" ({'; '.join(notes)})" if notes else "")
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
        by = "the memory limit" if m.get("status") == "memory" else "its time limit"
        cut = f"; stopped at {by}: {len(unscored)} children not fully scored" if unscored else ""
        prior = m.get("table_meta", {}).get("dominated_with_prior")
        prior = "" if prior is None else f"; structure prior: {prior} more dominated"
        return f"{m['n_candidates']} candidate parent sets kept" + (f"; {pruning}" if pruning else "") + prior + cut
    if stage == "solve":
        r = m["result"]
        against = f" to the {r['bound']} bound" if r.get("bound") and r.get("gap") is not None else ""
        if r.get("exact") and r.get("gap") is not None:  # a climb beside the ILP on its table
            against = (" below the ILP's proven optimum" if r["exact"]["status"] == "optimal"
                       else " to the ILP's bound")
        if r.get("dual_bound_from"):  # a resumed exact solve: the bound an unfinished solve proved
            against += f" (bound from an {r['dual_bound_from']})"
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
    """What the tabu search from a stopped ILP's incumbent found (:func:`pipeline.core.polish.polish_incumbent`)."""
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

#: the sweeps drawn when their parameter varies in a grid (Su 2023, Figs 7-11), with their axis label
SWEEPS = ((ALPHA, "significance level alpha"), (MAX_ORDER, "CI order"), (PALIM, "parent limit"))
#: run parameters whose values are replicates: a setting's jobs differ only in them (averaged)
REPLICATES = (SEED.name,)
#: run parameters that tell settings apart (the lines of a sweep figure, the rows of the aggregated table)
SETTING_PARAMETERS = tuple(c for c in PARAM_COLUMNS if c != NETWORK.name and c not in REPLICATES)
#: what the tables show of each job, (column, header)
METRIC_COLUMNS = (
    ("n_tests", "tests"), ("edges_removed", "edges removed"), ("n_candidates", "parent sets"),
    ("t_restrict", "T_restrict"), ("t_score", "T_score"), ("t_solve", "T_solve"), ("t_hybrid", "T_hybrid"),
    ("t_unrestricted", "T_unrestricted"), ("reduction", "reduction"), ("gap", "gap"), ("shd", "SHD"),
    ("f1", "F1 vs truth"), ("f1_vs_unrestricted", "F1 vs G_score"),
)
AGGREGATED_COLUMNS = tuple((c, h) for c, h in METRIC_COLUMNS if c not in ("t_restrict", "t_score", "t_solve"))
"""The metrics of the aggregated table (the stages' times are in the jobs' rows)."""
STATUS_COLUMNS = (("status", "status"), ("status_unrestricted", "status alone"))
#: columns the report reads (a results table of ``run.py grid`` has them all)
REPORTED_COLUMNS = ("network", "status", "t_hybrid", "t_unrestricted", "n_pairs", "n_allowed", "f1",
                    "f1_vs_unrestricted")
#: the figures of a sweep: (file suffix, title, series (column, line style, marker, meaning))
PANELS = (
    ("edges", "edges removed by the restriction", (("edges_removed", "-", "o", None),)),
    ("f1", "skeleton F-score", (("f1_vs_unrestricted", "-", "o", "against G_score"),
                                ("f1", "--", "x", "against the truth"))),
    ("time", "time (s)", (("t_hybrid", "-", "o", "hybrid (T_hybrid)"),
                          ("t_unrestricted", "--", "x", "score only (T_unrestricted)"))),
)
FACET_COLUMNS = 4
"""Facets (one per data set) per row of a sweep figure."""


def read_results(path: Path) -> pd.DataFrame:
    """A results table written by ``run.py grid`` (parquet or CSV), with ``edges_removed`` and
    (for tables of older grids) ``dataset`` added."""
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
    named = pd.Series([Path(str(n)).name.split(".")[0] for n in frame[NETWORK.name]], index=frame.index)
    given = frame["dataset"].astype(object) if "dataset" in frame.columns else named
    frame["dataset"] = given.where(given.notna(), named)
    return frame


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, columns: Sequence[tuple[str, str]]) -> str:
    """A GitHub-flavoured Markdown table of the given (column, header) pairs that exist and hold a value."""
    cols = [(c, h) for c, h in columns if c in frame.columns and frame[c].notna().any()]
    if frame.empty or not cols:
        return "(none)"
    lines = ["| " + " | ".join(h for _, h in cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_cell(row[c]) for c, _ in cols) + " |")
    return "\n".join(lines)


def finished(frame: pd.DataFrame) -> pd.DataFrame:
    """The jobs that ran to a result (not failed, not missing)."""
    return frame[~frame["status"].isin(["error", "missing"])]


def varying(frame: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns among ``columns`` that take more than one value in ``frame`` ("none" included)."""
    return [c for c in columns if c in frame.columns and frame[c].astype(str).nunique() > 1]


def settings_of(frame: pd.DataFrame) -> list[str]:
    """The columns that tell a grid's settings apart: the data set and the varying run parameters
    other than the replicates."""
    return ["dataset", *varying(frame, SETTING_PARAMETERS)]


def aggregate(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per setting (:func:`settings_of`) of the finished jobs: the number of jobs, and each
    metric's mean, standard deviation, minimum and maximum over the replicates (``<metric>``,
    ``<metric>_sd``, ``<metric>_min``, ``<metric>_max``)."""
    ok = finished(frame)
    keys = settings_of(ok)
    metrics = [c for c, _ in METRIC_COLUMNS if c in ok.columns]
    values = ok[metrics].apply(pd.to_numeric, errors="coerce")
    grouped = values.groupby([ok[k].astype(str) for k in keys], sort=False, dropna=False)
    out = grouped.mean()
    for stat in ("std", "min", "max"):
        out = out.join(getattr(grouped, stat)().add_suffix(f"_{stat.replace('std', 'sd')}"))
    out["jobs"] = grouped.size()
    out = out.reset_index()
    firsts = ok.groupby([ok[k].astype(str) for k in keys], sort=False, dropna=False)[keys].first().reset_index(drop=True)
    out[keys] = firsts[keys]  # the settings with their own types (numbers, not their text)
    return out


def _spread_cell(row: pd.Series, column: str) -> str:
    """``mean ± sd`` over a setting's jobs (the mean alone for one job or no spread)."""
    mean, sd = row[column], row.get(f"{column}_sd")
    if mean is None or mean != mean:
        return ""
    if row["jobs"] > 1 and sd == sd and sd > 0:
        return f"{_cell(float(mean))} ± {_cell(float(sd))}"
    return _cell(float(mean))


def aggregated_table(frame: pd.DataFrame) -> str:
    """The Markdown table of :func:`aggregate`: one row per setting, the metrics as mean ± sd."""
    table = aggregate(frame)
    if table.empty:
        return "(none)"
    keys = settings_of(finished(frame))
    metrics = [(c, h) for c, h in AGGREGATED_COLUMNS if c in table.columns and table[c].notna().any()]
    header = [*keys, "jobs", *(h for _, h in metrics)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        cells = [_cell(row[k]) for k in keys] + [str(int(row["jobs"]))] + [_spread_cell(row, c) for c, _ in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def common_settings(frame: pd.DataFrame) -> str:
    """The run parameters every finished job shares, as ``name=value`` (those set)."""
    ok = finished(frame)
    shared = [c for c in SETTING_PARAMETERS if c in ok.columns and c not in varying(ok, SETTING_PARAMETERS)
              and ok[c].notna().any()]
    return ", ".join(f"{c}={_value_label(ok[c].iloc[0])}" for c in shared)


def _value_label(value: Any) -> str:
    if value is None or pd.isna(value):
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


def _setting_label(columns: Sequence[str], values: Sequence[Any]) -> str:
    return ", ".join(f"{c}={_value_label(v)}" for c, v in zip(columns, values))


def sweep_figures(frame: pd.DataFrame, param: str, label: str) -> list[tuple[str, Any]]:
    """The figures of a sweep over ``param`` (when it varies among the finished jobs): one per panel
    of :data:`PANELS`, ``(file name, matplotlib figure)``. Each has a facet per data set in which
    ``param`` varies, a line per setting of the other varying parameters, the mean over the
    replicates (seeds) with bars from their minimum to their maximum, and one legend, outside the
    facets (colours: the settings; line styles: the series)."""
    ok = finished(frame)
    datasets = [d for d, g in ok.groupby("dataset", sort=False) if g[param].astype(str).nunique() > 1]
    if not datasets:
        return []
    from matplotlib import colormaps  # deferred: matplotlib's start-up, paid only by a report with figures
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    others = [c for c in varying(ok, SETTING_PARAMETERS) if c != param]
    settings = sorted({tuple(_value_label(v) for v in row) for row in ok[others].itertuples(index=False)})
    colours = colormaps["tab10" if len(settings) <= 10 else "tab20" if len(settings) <= 20 else "viridis"]
    colour = {s: colours(k if len(settings) <= 20 else k / max(len(settings) - 1, 1)) for k, s in enumerate(settings)}
    replicated = bool(varying(ok, REPLICATES))
    figures = []
    for suffix, title, series in PANELS:
        series = [s for s in series if s[0] in ok.columns and ok[s[0]].notna().any()]
        if not series:
            continue
        ncols = min(FACET_COLUMNS, len(datasets))
        nrows = -(-len(datasets) // ncols)
        fig = Figure(figsize=(3.4 * ncols + 2.6, 2.7 * nrows + 0.7), layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=False)
        for ax, dataset in zip(axes.flat, datasets):
            sub = ok[ok["dataset"] == dataset]
            x, positions, labels = _sweep_axis(sub[param])
            sub = sub.assign(_x=x.to_numpy(), _setting=[tuple(_value_label(v) for v in row)
                                                        for row in sub[others].itertuples(index=False)])
            span = (max(positions) - min(positions)) or 1.0
            for setting, g in sub.groupby("_setting", sort=True):
                dodge = (settings.index(setting) - (len(settings) - 1) / 2) * 0.012 * span  # bars side by side
                for column, style, marker, _ in series:
                    stats = pd.to_numeric(g[column], errors="coerce").groupby(g["_x"]).agg(["mean", "min", "max"])
                    stats = stats.dropna()
                    if stats.empty:
                        continue
                    ax.errorbar(stats.index + dodge, stats["mean"], yerr=[stats["mean"] - stats["min"],
                                                                  stats["max"] - stats["mean"]],
                                color=colour[setting], linestyle=style, marker=marker, markersize=4, capsize=2,
                                linewidth=1.2)
            ax.set_title(str(dataset), fontsize=10)
            ax.set_xlabel(label, fontsize=9)
            ax.set_xticks(positions, labels, fontsize=8)
            ax.tick_params(axis="y", labelsize=8)
            ax.grid(alpha=0.3)
            if suffix == "f1":
                ax.set_ylim(0, 1.05)
        for ax in axes.flat[len(datasets):]:
            fig.delaxes(ax)
        handles = [Line2D([], [], color=colour[s], marker="o", label=_setting_label(others, s))
                   for s in settings if others]
        handles += [Line2D([], [], color="0.3", linestyle=style, marker=marker, label=meaning)
                    for _, style, marker, meaning in series if meaning is not None and len(series) > 1]
        if handles:
            fig.legend(handles=handles, loc="outside right upper", fontsize=8, ncols=-(-len(handles) // 30),
                       frameon=False)
        spread = ": mean over seeds, bars from min to max" if replicated else ""
        fig.suptitle(f"{title} against the {label}{spread}", fontsize=11)
        figures.append((f"sweep-{param}-{suffix}.png", fig))
    return figures


def write_report(results: Path, out: Path | None = None) -> Path:
    """``report.md`` and the PNG figures of each varying sweep parameter; returns report.md.

    report.md holds the aggregated table first (a row per setting, the metrics as mean ± sd over
    the seeds), then the sweeps' figures, then every job's row and the failed jobs' errors."""
    frame = read_results(results)
    out = out or results.parent
    out.mkdir(parents=True, exist_ok=True)
    ok = finished(frame)
    common = common_settings(frame)
    lines = [f"# Grid report: {results.name}", "",
             f"{len(frame)} jobs, {len(ok)} finished, {int((frame['status'] == 'error').sum())} failed, "
             f"{int((frame['status'] == 'missing').sum())} not run.", "",
             "Times in seconds (T_hybrid = T_restrict + T_score + T_solve; T_unrestricted = scores + solve "
             "without restriction, the thesis' T_score). F1 vs G_score compares the skeleton with the "
             "unrestricted optimum (Su 2023, section 6); reduction = 1 - T_hybrid / T_unrestricted.", ""]
    if common:
        lines += [f"Common to every job: {common}.", ""]
    lines += ["## Settings (mean ± sd over seeds)", "", aggregated_table(frame), ""]
    for param, label in SWEEPS:
        figures = sweep_figures(frame, param.name, label)
        if figures:
            lines += [f"## Sweep over the {label}", ""]
        for name, fig in figures:
            fig.savefig(out / name, dpi=110)
            lines += [f"![{label}: {name}]({name})", ""]
    keys = [("job", "job"), *((c, c) for c in settings_of(frame)), *((r, r) for r in REPLICATES)]
    lines += ["## All jobs", "", markdown_table(ok, [*keys, *METRIC_COLUMNS, *STATUS_COLUMNS]), ""]
    failed = frame[frame["status"] == "error"]
    if len(failed):
        lines += ["## Failed jobs", "", markdown_table(failed, [*keys, ("error", "error")]), ""]
    path = out / "report.md"
    replace_file(path, lambda p: p.write_text("\n".join(lines)))
    return path
