"""``run.py report RESULTS``: Markdown tables and sweep figures from a grid's results."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from pipeline.apps.cli import main
from pipeline.apps.grid import RESULT_COLUMNS


def _results(path):
    rows = []
    for net, base in (("asia", 1.0), ("alarm", 10.0)):
        for k, alpha in enumerate((0.01, 0.05, 0.1)):
            rows.append({
                "network": net, "rows": 1000, "seed": 0, "method": "pc", "test": "g2", "alpha": alpha,
                "max_order": 1, "score": "bdeu", "ess": 1.0, "palim": 2, "solver": "ilp", "status": "optimal",
                "t_restrict": 0.1, "t_score": 0.2, "t_solve": base, "t_hybrid": base + 0.3,
                "t_unrestricted": 2 * base, "reduction": 0.4, "n_tests": 50 + k, "n_allowed": 10 - k,
                "n_pairs": 28, "n_candidates": 40, "objective": -100.0, "gap": 0.0, "shd": 2, "f1": 0.9,
                "f1_vs_unrestricted": 0.95 - k / 10, "job": len(rows),
            })
    rows.append({"network": "child", "alpha": 0.05, "status": "error", "error": "ValueError: boom|x",
                 "job": len(rows), "t_hybrid": None, "n_pairs": None, "n_allowed": None})
    frame = pd.DataFrame(rows).reindex(columns=RESULT_COLUMNS)
    frame.to_parquet(path)
    return frame


def test_report_writes_markdown_and_sweep_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    results = tmp_path / "results.parquet"
    _results(results)
    assert main(["report", str(results), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "7 jobs, 6 finished, 1 failed" in md
    settings, rows = md.split("## Settings")[1].split("## All jobs")
    assert "| dataset | alpha | jobs |" in settings and settings.count("| asia |") == 3  # the aggregated rows
    assert rows.index("## Failed jobs") > rows.rindex("| asia |")  # the raw rows, then the errors
    assert "Common to every job: rows=1000, method=pc, test=g2, max_order=1" in md
    assert "F1 vs G_score" in md and "(sweep-alpha-f1.png)" in md
    assert "sweep-max_order" not in md  # the order did not vary
    assert "ValueError: boom\\|x" in md
    for panel in ("edges", "f1", "time"):
        png = (tmp_path / "rep" / f"sweep-alpha-{panel}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.parquet")]) == 2
    assert "results file not found" in capsys.readouterr().err
    other = tmp_path / "other.csv"
    pd.DataFrame({"a": [1]}).to_csv(other, index=False)
    assert main(["report", str(other)]) == 2
    assert "not a grid results table" in capsys.readouterr().err


def test_settings_are_aggregated_over_seeds_and_none_is_a_value():
    from pipeline.apps.report import _sweep_axis, aggregate

    rows = [{"dataset": "asia", "status": "optimal", "alpha": alpha, "palim": palim, "seed": seed,
             "f1": 0.5 + seed / 10, "t_hybrid": 1.0 + alpha}
            for alpha in (0.01, 0.05) for palim in (2, 3, None) for seed in (0, 1)]
    table = aggregate(pd.DataFrame(rows))
    assert [(a, None if pd.isna(p) else p) for a, p in zip(table["alpha"], table["palim"])] == [
        (0.01, 2), (0.01, 3), (0.01, None), (0.05, 2), (0.05, 3), (0.05, None)]
    assert (table["jobs"] == 2).all()
    assert table["f1"].tolist() == pytest.approx([0.55] * 6)
    assert table["f1_sd"].tolist() == pytest.approx([0.1 / 2 ** 0.5] * 6)
    assert table["f1_min"].tolist() == pytest.approx([0.5] * 6) and table["f1_max"].tolist() == pytest.approx([0.6] * 6)
    x, positions, labels = _sweep_axis(pd.Series([2, 3, None, 2]))
    assert labels == ["2", "3", "none"] and positions == [2.0, 3.0, 4.0]
    assert list(x) == [2.0, 3.0, 4.0, 2.0]


def test_report_of_a_grid_without_finished_jobs(tmp_path):
    results = tmp_path / "results.parquet"
    frame = pd.DataFrame([{"job": 0, "network": "asia", "status": "missing"},
                          {"job": 1, "network": "asia", "status": "error", "error": "boom"}])
    frame.reindex(columns=RESULT_COLUMNS).to_parquet(results)
    assert main(["report", str(results)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "2 jobs, 0 finished, 1 failed, 1 not run" in md
    assert "## Settings (mean ± sd over seeds)\n\n(none)\n" in md and "## All jobs\n\n(none)\n" in md


def test_report_names_missing_columns(tmp_path, capsys):
    results = tmp_path / "results.csv"
    _results(tmp_path / "r.parquet").drop(columns="f1").to_csv(results, index=False)
    assert main(["report", str(results)]) == 2
    assert "missing columns ['f1']" in capsys.readouterr().err


@pytest.mark.parametrize("options, line", [
    ({}, "alarm, 5000 rows (seed 0) -> pc (g2, alpha 0.05, max order 1) -> auto (ess 1), palim 3 -> ilp"),
    ({"method": "pc", "test": "x2", "max_order": None, "add_candidates": 2, "score": "bic", "palim": None},
     "alarm, 5000 rows (seed 0) -> pc (x2, alpha 0.05, max order none, add candidates 2) -> bic, palim none -> ilp"),
    ({"method": "cops", "cops_time_limit": 10, "within_bags": True, "time_limit": 60},
     "alarm, 5000 rows (seed 0) -> cops (g2, alpha 0.05, cops time limit 10 s) -> bdeu (ess 1), palim 3 "
     "-> ilp (within bags, time limit 60 s)"),
    ({"method": "candidates", "candidates": 4, "solver": "kg", "treewidth": 2},
     "alarm, 5000 rows (seed 0) -> candidates (candidates 4) -> auto (ess 1), palim 3 -> kg (treewidth 2)"),
    ({"method": "none", "solver": "sges"},
     "alarm, 5000 rows (seed 0) -> no restriction -> auto (ess 1), palim 3 -> sges (sges bound parents:3)"),
])
def test_run_summary_names_each_stage_method_with_its_declared_settings(options, line):
    """The summary's first line: each selected method with the CI test it uses and its parameters
    and its choice's, as declared; unset ones (no value, off, an extra at its default) left out."""
    from pipeline.core.config import RunConfig
    from pipeline.apps.report import describe_config

    assert describe_config(RunConfig(network="alarm", **options).validated()) == line
    assert describe_config(RunConfig(scores="t.jkl", time_limit=5).validated()) == "score file t.jkl -> ilp (time limit 5 s)"


def _seventy_two_jobs() -> pd.DataFrame:
    """A results table of 72 jobs: 4 networks x 2 methods x 3 alphas x 3 seeds."""
    rng = np.random.default_rng(0)
    rows = []
    for net, method, alpha, seed in itertools.product(("asia", "child", "insurance", "alarm"), ("pc", "mmpc"),
                                                      (0.01, 0.05, 0.1), (0, 1, 2)):
        rows.append({"job": len(rows), "dataset": net, "network": net, "rows": 5000, "seed": seed, "method": method,
                     "test": "g2", "alpha": alpha, "max_order": 1, "score": "bdeu", "palim": 2, "solver": "ilp",
                     "status": "optimal", "t_restrict": 0.1, "t_score": 0.2, "t_solve": 1.0,
                     "t_hybrid": 1.3 + rng.random(), "t_unrestricted": 3.0, "reduction": 0.5, "n_tests": 100,
                     "n_allowed": 20 - int(alpha * 50), "n_pairs": 28, "n_candidates": 40,
                     "shd": int(rng.integers(0, 5)), "f1": rng.random(), "f1_vs_unrestricted": rng.random()})
    return pd.DataFrame(rows).reindex(columns=RESULT_COLUMNS)


def test_a_72_job_report_keeps_its_legends_outside_the_facets_and_its_text_inside_the_figure(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from pipeline.apps.report import read_results, sweep_figures, write_report

    results = tmp_path / "results.parquet"
    _seventy_two_jobs().to_parquet(results)
    figures = sweep_figures(read_results(results), "alpha", "significance level alpha")
    assert [name for name, _ in figures] == ["sweep-alpha-edges.png", "sweep-alpha-f1.png", "sweep-alpha-time.png"]
    for name, fig in figures:
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)  # lays the figure out (constrained layout), as savefig does
        box = fig.bbox
        axes = fig.axes
        assert sorted(ax.get_title() for ax in axes) == ["alarm", "asia", "child", "insurance"]  # a facet each
        (legend,) = fig.legends
        labels = [t.get_text() for t in legend.get_texts()]
        assert labels[:2] == ["method=mmpc", "method=pc"]
        legend_box = legend.get_window_extent(renderer)
        assert all(not legend_box.overlaps(ax.get_window_extent(renderer)) for ax in axes), name
        texts = [t for t in fig.findobj(matplotlib_text()) if t.get_visible() and t.get_text()]
        for text in texts:
            extent = text.get_window_extent(renderer)
            assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, (name, text.get_text())
            assert box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1, (name, text.get_text())
        for ax in axes:  # means with their min-max bars: one errorbar per setting and series
            assert len(ax.containers) == 2 * (2 if name.endswith(("f1.png", "time.png")) else 1)
    md = write_report(results).read_text()
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings == ["## Settings (mean ± sd over seeds)", "## Sweep over the significance level alpha",
                        "## All jobs"]
    settings = md.split("## Settings")[1].split("## Sweep")[0]
    assert settings.count("\n| ") == 1 + 24  # header and one row per setting: 72 jobs over 3 seeds
    assert md.split("## All jobs")[1].count("\n| ") == 1 + 72


def matplotlib_text():
    from matplotlib.text import Text

    return Text
