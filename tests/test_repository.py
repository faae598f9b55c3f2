"""The repository stands alone (no tracked file points to a file outside it or to a missing doc),
and its modules import each other in layers: no import cycle, no lower floor importing a higher one."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

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


# ------------------------------------------------------------------------------------ imports

LIBRARY = ("hybridbn", "bayesnet", "pipeline", "constraints", "scores", "ilp", "search", "graphs")
"""The packages of the library (tests/ and bench/ stand outside it)."""


def library_modules() -> dict[str, Path]:
    """Every module of the library by dotted name (a package by its ``__init__``), and ``run``."""
    modules = {"run": ROOT / "run.py"}
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The import statements under ``if TYPE_CHECKING:``, which never run."""
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(n for stmt in node.body for n in ast.walk(stmt))
    return guarded


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The library modules that module ``name`` imports anywhere in its body (function-local
    imports included): ``from a.b import c`` imports ``a.b.c`` when that is a module, else ``a.b``."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    guarded = _type_checking_only(tree)
    found = set()
    for node in ast.walk(tree):
        if node in guarded:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], *filter(None, [base])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules)
    return found - {name}


def import_graph() -> dict[str, set[str]]:
    modules = library_modules()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components of mutually reachable modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def test_the_cycle_finder_finds_a_known_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d", "e"}}
    assert sorted(strongly_connected_components(graph)) == [["a", "b", "c"], ["d"], ["e"]]


def test_no_import_cycle_between_modules():
    cycles = [c for c in strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize("importer, imported", [
    ("pipeline.core", "pipeline.apps"),
    *((package, "pipeline") for package in ("graphs", "bayesnet", "scores", "constraints", "ilp", "search")),
    ("ilp", "search"),
])
def test_a_lower_floor_imports_nothing_from_a_higher_one(importer, imported):
    """The run core never imports its applications; the algorithm packages never import the run layer;
    the exact solvers (``ilp``) never import the searches, which may call them (k-G / k-A*'s root
    problems)."""
    def inside(module: str, package: str) -> bool:
        return module == package or module.startswith(package + ".")

    offenders = sorted(f"{a} imports {b}" for a, targets in import_graph().items() if inside(a, importer)
                       for b in targets if inside(b, imported))
    assert offenders == []
