"""bench.capture: --compare tells equal captures from different ones and names the field; a capture repeats."""

import json

from bench import capture


def _capture(arcs):
    result = {"objective": -10.5, "arcs": arcs, "status": "optimal", "bound": -10.5, "gap": 0.0, "shd": 1}
    cache = [{"stage": "data", "key": "abc", "version": "1", "params": {"rows": 500}, "inputs": {},
              "completion": "final"}]
    return {"modules": {"pipeline": "/somewhere"}, "stage_versions": {"data": "1"},
            "configurations": {"tiny": {"result": result, "artifacts": {"data": "abc"}, "cache": cache}}}


def _compare(tmp_path, a, b, capsys):
    paths = []
    for name, content in (("a.json", a), ("b.json", b)):
        (tmp_path / name).write_text(json.dumps(content))
        paths.append(str(tmp_path / name))
    code = capture.main(["--compare", *paths])
    return code, capsys.readouterr().out


def test_compare_equal_captures_exit_zero(tmp_path, capsys):
    a = _capture([["x", "y"], ["y", "z"]])
    b = {**_capture([["x", "y"], ["y", "z"]]), "modules": {"pipeline": "/elsewhere"}}  # modules not compared
    code, out = _compare(tmp_path, a, b, capsys)
    assert code == 0
    assert "tiny: same" in out


def test_compare_names_a_differing_arc(tmp_path, capsys):
    code, out = _compare(tmp_path, _capture([["x", "y"], ["y", "z"]]), _capture([["x", "y"], ["x", "z"]]), capsys)
    assert code != 0
    assert "tiny: differs" in out
    assert 'result.arcs.1.0: "y" != "x"' in out
    assert "objective" not in out


def test_compare_names_a_differing_cache_key(tmp_path, capsys):
    b = _capture([["x", "y"], ["y", "z"]])
    b["configurations"]["tiny"]["cache"][0]["key"] = "abd"
    code, out = _compare(tmp_path, _capture([["x", "y"], ["y", "z"]]), b, capsys)
    assert code != 0
    assert "cache.data/abc.key" in out and "cache.data/abd.key" in out


def test_a_real_capture_repeats(tmp_path):
    first = capture.capture(tmp_path / "cache-1", tmp_path / "inputs", only=["asia-hc"])
    second = capture.capture(tmp_path / "cache-2", tmp_path / "inputs", only=["asia-hc"])
    record = first["configurations"]["asia-hc"]
    assert record["result"]["arcs"] and record["result"]["status"] == "converged"
    assert {e["stage"] for e in record["cache"]} >= {"data", "restrict", "scores", "solve", "evaluate"}
    assert record["artifacts"]["solve"] in {e["key"] for e in record["cache"]}
    assert capture.compare(first, second) == (["asia-hc: same"], True)
