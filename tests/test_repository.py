"""The repository stands alone: no tracked file points to material outside it."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Names of notes that live beside the repository, never inside it.
OUTSIDE = re.compile(r"\.\./shared|REFERENCE-NOTES|cops-reference-conventions")


def tracked_text_files():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        if name.endswith((".py", ".md", ".toml", ".txt", ".cfg", ".sh")) or name == ".ci/run":
            yield ROOT / name


def test_no_tracked_file_points_outside_the_repository():
    here = Path(__file__).resolve()
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in tracked_text_files() if path.resolve() != here and path.exists()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []


def test_every_cited_reference_file_exists():
    cited = {m for path in tracked_text_files() if path.exists()
             for m in re.findall(r"docs/[\w.-]+\.md", path.read_text(errors="replace"))}
    missing = sorted(name for name in cited if not (ROOT / name).exists())
    assert missing == []
