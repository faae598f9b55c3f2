"""The CI-order table of docs/experiments.md from a results table of ``grids/thesis-order.toml``,
and its check against the page: python -m bench.experiments_page RESULTS [--check].

Without ``--check`` it prints the table's Markdown rows (what the page holds); with ``--check`` it
compares the columns that do not depend on the machine (network, order, CI tests, edges removed,
parent sets, the two F-scores) with the page's rows and exits 1 on a difference, naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "experiments.md"
SECTION = "## The order of the CI tests"
HEADER = ("network", "order", "CI tests", "edges removed", "T_restrict", "parent sets", "T_hybrid",
          "T_score (unrestr.)", "F vs G_score", "F vs truth")
DETERMINISTIC = (0, 1, 2, 3, 5, 8, 9)
"""The columns of :data:`HEADER` that the same code gives on every machine (the others are times)."""


def order_rows(frame: pd.DataFrame) -> list[list[str]]:
    """The page's rows, one per job of a thesis-order results table, formatted as the page has them."""
    rows = []
    for _, r in frame.iterrows():
        rows.append([str(r["dataset"]), str(int(r["max_order"])), str(int(r["n_tests"])),
                     str(int(r["n_pairs"] - r["n_allowed"])), f"{r['t_restrict']:.2f}", str(int(r["n_candidates"])),
                     f"{r['t_hybrid']:.2f}", f"{r['t_unrestricted']:.2f}", f"{r['f1_vs_unrestricted']:.3f}",
                     f"{r['f1']:.3f}"])
    return rows


def markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * (len(HEADER) - 1)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def page_rows(text: str) -> list[list[str]]:
    """The rows of the first table after :data:`SECTION` in the page's text."""
    section = text.split(SECTION, 1)[1]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| network | order |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def differences(ours: list[list[str]], page: list[list[str]]) -> list[str]:
    """The deterministic cells in which the two tables differ, as ``network order: column ours != page``."""
    if len(ours) != len(page):
        return [f"{len(ours)} rows against the page's {len(page)}"]
    out = []
    for mine, theirs in zip(ours, page):
        out += [f"{mine[0]} {mine[1]}: {HEADER[c]} {mine[c]} != {theirs[c]}" for c in DETERMINISTIC
                if mine[c] != theirs[c]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="results.parquet of run.py grid grids/thesis-order.toml")
    parser.add_argument("--check", action="store_true", help="compare with docs/experiments.md")
    args = parser.parse_args(argv)
    rows = order_rows(pd.read_parquet(args.results))
    if not args.check:
        print(markdown(rows))
        return 0
    found = differences(rows, page_rows(PAGE.read_text()))
    print("\n".join(found) or f"the {len(rows)} rows match docs/experiments.md")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
