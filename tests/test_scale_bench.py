"""bench.scale: the figures of a case read back from its stages, as the child process sends them."""

import json

import pytest

from bench import scale


def _stages(case: dict) -> dict:
    return json.loads(json.dumps(scale.run_case(case), default=str))  # what in_child receives


def test_case_row_reports_each_stage_of_a_hybrid_run(tmp_path):
    options = {**scale.PC, "rows": 1000, "seed": 0, "score": "bdeu", "palim": 2, "budget": 60}
    row = scale.case_row(_stages({"source": "asia", "stage": "evaluate", "cache": str(tmp_path), "options": options}))
    import hybridbn

    result = hybridbn.learn("asia", cache_dir=tmp_path, **options)  # the same run, read from the cache
    counts = result.counts
    assert row["tests"] == counts["restrict"]["n_tests"] > 0
    assert row["allowed"] == counts["restrict"]["n_allowed"]
    assert row["kept"] == counts["scores"]["n_candidates"] == row["families"]
    assert row["generated"] >= row["kept"] and row["unscored"] == 0
    assert (row["pc_status"], row["scores_status"], row["status"]) == ("ok", "ok", "optimal")
    assert row["objective"] == pytest.approx(result.objective) and row["gap"] == 0.0
    assert (row["shd"], row["f1"]) == (result.evaluation["shd"], result.evaluation["f1"])
    assert row["cached"] == [] and all(s in row for s in ("pc_s", "scores_s", "solve_s"))


def test_case_row_of_a_score_table_export_has_no_solve(tmp_path):
    jkl = tmp_path / "asia.jkl"
    case = {"source": "asia", "stage": "scores", "cache": str(tmp_path), "write_scores": str(jkl),
            "options": {"method": "none", "rows": 500, "score": "bic", "palim": 2}}
    row = scale.case_row(_stages(case))
    assert jkl.is_file() and row["kept"] > 0 and row["tests"] == 0
    assert "status" not in row and "shd" not in row
    solved = scale.case_row(_stages({"source": str(jkl), "stage": "solve", "cache": str(tmp_path),
                                     "options": {"palim": 2}}))
    assert solved["families"] == row["kept"] and solved["status"] == "optimal"
