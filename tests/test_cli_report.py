"""``run.py report RESULTS``: Markdown tables and sweep figures from a grid's results."""

from __future__ import annotations

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
    assert "| network | N |" in md and md.count("| asia |") == 3
    assert "F1 vs G_score" in md and "![significance level alpha](sweep-alpha.png)" in md
    assert "sweep-max_order" not in md  # the order did not vary
    assert "ValueError: boom\\|x" in md
    png = (tmp_path / "rep" / "sweep-alpha.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.parquet")]) == 2
    assert "results file not found" in capsys.readouterr().err
    other = tmp_path / "other.csv"
    pd.DataFrame({"a": [1]}).to_csv(other, index=False)
    assert main(["report", str(other)]) == 2
    assert "not a grid results table" in capsys.readouterr().err


def test_sweep_lines_keep_other_parameters_apart_and_show_none():
    from pipeline.apps.report import _sweep_axis, _sweep_groups

    rows = [{"network": "asia", "status": "optimal", "alpha": alpha, "palim": palim, "seed": seed,
             "f1": 0.5, "t_hybrid": 1.0}
            for alpha in (0.01, 0.05) for palim in (2, 3, None) for seed in (0, 1)]
    frame = pd.DataFrame(rows)
    groups = _sweep_groups(frame, "palim")
    assert [label for label, _ in groups] == ["asia, alpha=0.01", "asia, alpha=0.05"]
    assert all(len(g) == 6 for _, g in groups)  # both seeds of the three limits
    x, positions, labels = _sweep_axis(groups[0][1]["palim"])
    assert labels == ["2", "3", "none"] and positions == [2.0, 3.0, 4.0]
    assert sorted(set(x)) == positions
    by_palim = _sweep_groups(frame, "alpha")
    assert [label for label, _ in by_palim] == ["asia, palim=2", "asia, palim=3", "asia, palim=none"]


def test_report_of_a_grid_without_finished_jobs(tmp_path):
    results = tmp_path / "results.parquet"
    frame = pd.DataFrame([{"job": 0, "network": "asia", "status": "missing"},
                          {"job": 1, "network": "asia", "status": "error", "error": "boom"}])
    frame.reindex(columns=RESULT_COLUMNS).to_parquet(results)
    assert main(["report", str(results)]) == 0
    md = (tmp_path / "report.md").read_text()
    assert "2 jobs, 0 finished, 1 failed, 1 not run" in md
    assert "## Results\n\n(none)\n" in md and "|  |" not in md


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
