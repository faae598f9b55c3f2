"""``run.py report RESULTS``: Markdown tables and sweep figures from a grid's results."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.grid import RESULT_COLUMNS


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
