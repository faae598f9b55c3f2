"""The repository stands alone: no tracked file points to a file outside it or to a missing doc."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FOLDER_ABOVE = re.compile(r"(?<![\w.])(?:\.\./)+[\w-]+/[\w./-]*")
"""A relative path that climbs out of its folder and into another (``../<folder>/<file>``)."""
DOCS_PAGE = re.compile(r"docs/[\w.-]+\.md")


def text_lines():
    """``(path, line number, line)`` of every tracked text file."""
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        path = ROOT / name
        if path.exists() and (path.suffix in (".py", ".md", ".toml", ".txt", ".cfg", ".sh") or name == ".ci/run"):
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                yield path, number, line


def test_no_relative_path_leads_outside_the_repository():
    offenders = [f"{path.relative_to(ROOT)}:{number}: {ref}"
                 for path, number, line in text_lines() for ref in FOLDER_ABOVE.findall(line)
                 if not (path.parent / ref).resolve().is_relative_to(ROOT) or not (path.parent / ref).exists()]
    assert offenders == []


def test_every_docs_page_named_exists():
    missing = sorted({name for _, _, line in text_lines() for name in DOCS_PAGE.findall(line)
                      if not (ROOT / name).exists()})
    assert missing == []
