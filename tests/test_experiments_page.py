"""docs/experiments.md shows what the code does (issue 54, point 6): the rows of
``grids/thesis-order.toml`` equal the page's CI-order table in every column that does not depend on
the machine (bench.experiments_page). The asia rows run in seconds; the whole grid is slow."""

from __future__ import annotations

import pytest

from bench.experiments_page import PAGE, differences, order_rows, page_rows
from pipeline.apps.grid import parse_grid, run_grid
from pipeline.core.cache import StageCache

GRID = PAGE.parents[1] / "grids" / "thesis-order.toml"


def _grid_of(networks: list[str] | None = None):
    text = GRID.read_text()
    if networks is not None:
        text = "\n".join(f"networks = {networks!r}".replace("'", '"') if line.startswith("networks =") else line
                         for line in text.splitlines())
    return parse_grid(text, name="thesis-order", base_dir=GRID.parent)


def test_the_page_table_has_a_row_per_job_of_the_grid():
    grid = _grid_of()
    rows = page_rows(PAGE.read_text())
    assert [(r[0], r[1]) for r in rows] == [(c.network, str(c.max_order)) for c in grid.configs]


def test_the_asia_rows_of_the_thesis_order_grid_equal_the_pages(tmp_path):
    frame = run_grid(_grid_of(["asia"]), StageCache(tmp_path / "cache"))
    page = [row for row in page_rows(PAGE.read_text()) if row[0] == "asia"]
    assert differences(order_rows(frame), page) == []


@pytest.mark.slow
def test_every_row_of_the_thesis_order_grid_equals_the_pages(tmp_path):
    frame = run_grid(_grid_of(), StageCache(tmp_path / "cache"))
    assert differences(order_rows(frame), page_rows(PAGE.read_text())) == []
