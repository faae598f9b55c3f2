"""Pictures of the learned network: arc classes against the truth, the layered fallback layout,
and the PNG/SVG files drawn with Graphviz or, without its ``dot`` program, with matplotlib."""

from __future__ import annotations

import logging
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from graphs.layout import assign_layers, layered_layout
from graphs.metrics import EDGE_CLASSES, edge_classes, shd
from graphs.pdag import dag_to_cpdag, pdag_from_edges
from graphs.random_graphs import random_dag
from pipeline.apps import pictures

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_edge_classes_known_case():
    # truth: 0->1, 1->2, 3-4 (undirected), 4->5, 0->5 ; estimate: 0->1, 2->1, 3->4, 4-5, 2->5
    truth = pdag_from_edges(6, [(0, 1), (1, 2), (4, 5), (0, 5)], undirected=[(3, 4)])
    est = pdag_from_edges(6, [(0, 1), (2, 1), (3, 4), (2, 5)], undirected=[(4, 5)])
    assert edge_classes(est, truth) == [
        (0, 1, True, "correct"),
        (0, 5, True, "missing"),       # with the truth's direction
        (2, 1, True, "reversed"),      # with the estimate's direction
        (2, 5, True, "extra"),
        (3, 4, True, "misoriented"),   # directed here, undirected in the truth
        (4, 5, False, "misoriented"),  # undirected here, directed in the truth
    ]


@pytest.mark.parametrize("seed", range(8))
def test_edge_classes_count_the_cpdag_shd(seed):
    est = dag_to_cpdag(random_dag(9, 0.3, seed=2 * seed))
    truth = dag_to_cpdag(random_dag(9, 0.3, seed=2 * seed + 1))
    rows = edge_classes(est, truth)
    assert sum(kind != "correct" for *_, kind in rows) == shd(est, truth)
    pairs = {frozenset((i, j)) for i, j, _, _ in rows}
    adjacent = {frozenset((int(i), int(j))) for i, j in zip(*np.nonzero(est | truth)) if i != j}
    assert pairs == adjacent and len(rows) == len(pairs)
    assert {kind for *_, kind in rows} <= set(EDGE_CLASSES)
    assert all(kind == "correct" for *_, kind in edge_classes(est, est))


@pytest.mark.parametrize("seed", range(6))
def test_layers_point_down_within_the_width_and_nodes_do_not_overlap(seed):
    dag = random_dag(30, 0.12, seed=seed)
    widths = np.random.default_rng(seed).uniform(0.5, 2.0, 30)
    layer = assign_layers(dag, max_width=6)
    assert all(layer[i] < layer[j] for i, j in zip(*np.nonzero(dag)))
    assert np.bincount(layer).max() <= 6
    lay = layered_layout(dag, widths, node_gap=0.2, max_width=6)
    assert np.array_equal(lay.layer, layer) and (lay.x - widths / 2).min() >= -1e-9
    for lv in np.unique(layer):
        nodes = np.flatnonzero(layer == lv)
        order = nodes[np.argsort(lay.x[nodes])]
        gaps = np.diff(lay.x[order]) - (widths[order][:-1] + widths[order][1:]) / 2
        assert (gaps >= 0.2 - 1e-9).all()
        assert np.allclose(lay.y[nodes], lay.y[nodes[0]])
    for (i, j), bends in lay.bends.items():  # one bend per layer crossed
        assert dag[i, j] and len(bends) == layer[j] - layer[i] - 1


def assert_pictures_valid(paths, producer):
    png, svg = paths
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert producer in svg.read_text()


def _small_case():
    """All arcs compelled: 2 correct, 1 reversed, 2 extra, 1 missing."""
    truth = pdag_from_edges(6, [(0, 2), (1, 2), (2, 3), (3, 4)])
    est = pdag_from_edges(6, [(0, 2), (1, 2), (3, 2), (2, 4), (5, 4)])
    return est, truth, ["asia", "tub", "either", "lung", "xray", "smoke"]


def test_fallback_draws_with_matplotlib_when_dot_is_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(pictures.shutil, "which", lambda program: None)
    assert not pictures.graphviz_available()
    est, truth, names = _small_case()
    assert_pictures_valid(pictures.draw(pictures.network_drawing(est, names, "learned"), tmp_path / "network"),
                 "matplotlib")
    paths = pictures.draw(pictures.comparison_drawing(est, truth, names, "compared"), tmp_path / "comparison")
    assert_pictures_valid(paths, "matplotlib")
    text = paths[1].read_text()
    assert "extra (learned only): 2" in text and "missing (true only), dashed: 1" in text
    assert "reversed: 1" in text and "correct: 2" in text
    assert "either" in text  # names are text, not paths


def test_a_failing_graphviz_falls_back_to_matplotlib(tmp_path, monkeypatch, caplog):
    def broken(drawing, paths):
        raise subprocess.CalledProcessError(1, ["dot"], stderr=b"syntax error")

    monkeypatch.setattr(pictures, "graphviz_available", lambda: True)
    monkeypatch.setattr(pictures, "_render_graphviz", broken)
    est, truth, names = _small_case()
    with caplog.at_level(logging.WARNING):
        paths = pictures.draw(pictures.network_drawing(est, names, "learned"), tmp_path / "network")
    assert_pictures_valid(paths, "matplotlib")
    assert "Graphviz failed" in caplog.text


@pytest.mark.skipif(not pictures.graphviz_available(), reason="needs Graphviz's dot and its Python binding")
def test_graphviz_draws_when_available(tmp_path):
    est, truth, names = _small_case()
    assert_pictures_valid(pictures.draw(pictures.comparison_drawing(est, truth, names, "compared"), tmp_path / "c"),
                 "Generated by graphviz")


def test_dot_text_styles_each_class_and_keeps_layers_of_the_truth():
    est, truth, names = _small_case()
    text = pictures.to_dot_text(pictures.comparison_drawing(est, truth, names, "a & b"))
    lines = {line.split("[")[0].strip(): line for line in text.splitlines() if "->" in line}
    assert "style=dashed" in lines['"lung" -> "xray"'] and "#1f77b4" in lines['"lung" -> "xray"']
    assert "#d62728" in lines['"either" -> "xray"'] and "constraint=false" in lines['"either" -> "xray"']
    reversed_arc = lines['"either" -> "lung"']  # ranked as in the truth, the head at "either"
    assert "#ff7f0e" in reversed_arc and "dir=back" in reversed_arc and "constraint" not in reversed_arc
    assert 'color="#000000"' in lines['"asia" -> "either"'] and "dashed" not in lines['"asia" -> "either"']
    assert "a &amp; b" in text


def test_write_pictures_skips_existing_and_only_warns_when_too_large(tmp_path, monkeypatch, caplog):
    est, truth, names = _small_case()
    written = pictures.write_pictures(tmp_path, est, names, "toy", lambda: truth)
    assert sorted(p.name for p in written) == ["comparison.png", "comparison.svg", "network.png", "network.svg"]
    stamps = [p.stat().st_mtime_ns for p in written]
    assert pictures.write_pictures(tmp_path, est, names, "toy", lambda: truth) == written
    assert [p.stat().st_mtime_ns for p in written] == stamps
    monkeypatch.setattr(pictures, "MAX_NODES", 4)
    with caplog.at_level(logging.WARNING):
        assert pictures.write_pictures(tmp_path / "big", est, names, "toy") == []
    assert "network.png/.svg not drawn: 6 nodes" in caplog.text
