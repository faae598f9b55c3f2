"""SHD, skeleton scores, arc differences and the export formats."""

import json

import numpy as np
import pytest
from helpers import adjacency

from graphs.export import from_model_string, to_dot, to_edge_frame, to_json, to_model_string
from graphs.metrics import edge_differences, shd, skeleton_scores
from graphs.pdag import dag_to_cpdag
from graphs.random_graphs import random_dag


def test_shd_known_cases():
    T = adjacency((0, 1), (2, 1), (1, 3), n=4)  # CPDAG of 0->1<-2, 1->3
    C = dag_to_cpdag(T)
    assert shd(C, C) == 0
    E = C.copy()
    E[0, 3] = True  # extra directed adjacency
    assert shd(E, C) == 1
    E = C.copy()
    E[1, 3] = E[3, 1] = False  # missing adjacency
    assert shd(E, C) == 1
    E = C.copy()
    E[3, 1] = True  # directed -> undirected: wrong mark
    assert shd(E, C) == 1
    E = C.copy()
    E[1, 3], E[3, 1] = False, True  # reversed
    assert shd(E, C) == 1
    assert shd(np.zeros((4, 4), bool), C) == 3


def test_shd_properties_random():
    for seed in range(30):
        A = dag_to_cpdag(random_dag(12, 0.25, seed))
        B = dag_to_cpdag(random_dag(12, 0.25, seed + 100))
        assert shd(A, A) == 0
        assert shd(A, B) == shd(B, A)
        assert (shd(A, B) == 0) == np.array_equal(A, B)
        C = dag_to_cpdag(random_dag(12, 0.25, seed + 200))
        assert shd(A, C) <= shd(A, B) + shd(B, C)  # a metric on pair marks
    with pytest.raises(ValueError, match="sizes"):
        shd(np.zeros((2, 2), bool), np.zeros((3, 3), bool))


def test_skeleton_scores():
    true = adjacency((0, 1), (1, 2), (2, 3), n=4)
    est = adjacency((1, 0), (1, 2), (0, 3), n=4)  # direction ignored
    s = skeleton_scores(est, true)
    assert (s["tp"], s["fp"], s["fn"]) == (2, 1, 1)
    assert s["precision"] == pytest.approx(2 / 3) and s["recall"] == pytest.approx(2 / 3)
    assert s["f1"] == pytest.approx(2 / 3)
    empty = np.zeros((4, 4), bool)
    assert skeleton_scores(empty, empty) == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "tp": 0, "fp": 0, "fn": 0}
    s = skeleton_scores(empty, true)
    assert (s["precision"], s["recall"], s["f1"], s["fn"]) == (1.0, 0.0, 0.0, 3)
    s = skeleton_scores(true, empty)
    assert (s["precision"], s["recall"], s["f1"], s["fp"]) == (0.0, 1.0, 0.0, 3)


def test_edge_differences():
    true = adjacency((0, 1), (1, 2), (2, 3), n=5)
    est = adjacency((1, 0), (1, 2), (0, 4), n=5)
    assert edge_differences(est, true) == {"added": 1, "missing": 1, "reversed": 1}
    assert edge_differences(true, true) == {"added": 0, "missing": 0, "reversed": 0}
    with pytest.raises(ValueError, match="undirected"):
        edge_differences(true | true.T, true)


def test_edge_frame_and_json():
    P = adjacency((0, 1), (2, 1), (2, 3), (3, 2), n=4)
    names = ["a", "b", "c", "d"]
    df = to_edge_frame(P, names)
    assert list(df.columns) == ["source", "target", "directed"]
    assert df.values.tolist() == [["a", "b", True], ["c", "b", True], ["c", "d", False]]
    doc = json.loads(to_json(P, names))
    assert doc["nodes"] == names and len(doc["edges"]) == 3
    assert doc["edges"][2] == {"source": "c", "target": "d", "directed": False}
    assert len(to_edge_frame(np.zeros((2, 2), bool), ["x", "y"])) == 0
    with pytest.raises(ValueError, match="names"):
        to_edge_frame(P, names[:3])
    with pytest.raises(ValueError, match="duplicate"):
        to_json(P, ["a", "a", "b", "c"])


def test_model_string_round_trip():
    A = adjacency((0, 2), (1, 2), (2, 3), n=4)
    names = ["A", "B", "C", "D"]
    s = to_model_string(A, names)
    assert s == "[A][B][C|A:B][D|C]"
    B, nb = from_model_string(s)
    assert nb == names and np.array_equal(A, B)
    # declaration order and whitespace are free; parents may be declared later
    B, nb = from_model_string(" [D|C] [C|A:B]\n[A][B] ")
    assert nb == ["D", "C", "A", "B"] and B[1, 0] and B[2, 1] and B[3, 1] and B.sum() == 3
    for seed in range(10):
        R = random_dag(15, 0.2, seed)
        nm = [f"v{i}" for i in range(15)]
        R2, nm2 = from_model_string(to_model_string(R, nm))
        assert nm2 == nm and np.array_equal(R, R2)


@pytest.mark.parametrize(
    "bad, msg",
    [
        ("[A][B|A", "unexpected text"),
        ("[A]x[B]", "unexpected text"),
        ("[A][A]", "twice"),
        ("[A|Z]", "not declared"),
        ("[A|A]", "itself"),
        ("[A|B][B|A]", "cycle"),
        ("[A|B:B][B]", "repeated"),
        ("[A|][B]", "empty parent"),
        ("", "empty model string"),
        ("[]", "bad node"),
    ],
)
def test_model_string_errors(bad, msg):
    with pytest.raises(ValueError, match=msg):
        from_model_string(bad)


def test_model_string_rejects_non_dags_and_bad_names():
    with pytest.raises(ValueError, match="undirected"):
        to_model_string(np.array([[0, 1], [1, 0]], bool), ["a", "b"])
    with pytest.raises(ValueError, match="cycle"):
        to_model_string(adjacency((0, 1), (1, 2), (2, 0), n=3), ["a", "b", "c"])
    with pytest.raises(ValueError, match="cannot be written"):
        to_model_string(np.zeros((1, 1), bool), ["a|b"])


def test_dot():
    P = adjacency((0, 1), (2, 1), (2, 3), (3, 2), n=4)
    names = ['x "quoted"', "b", "c\\d", "d e"]
    dot = to_dot(P, names, title="CPDAG")
    assert dot.startswith("digraph {") and dot.rstrip().endswith("}")
    assert 'label="CPDAG";' in dot
    assert '"x \\"quoted\\"" -> "b";' in dot
    assert '"c\\\\d" -> "b";' in dot
    assert '"c\\\\d" -> "d e" [dir=none, style=dashed' in dot
    assert dot.count("->") == 3 and dot.count("dir=none") == 1
