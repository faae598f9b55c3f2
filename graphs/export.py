"""Graph exports: edge tables, JSON, bnlearn model strings (``[A][B|A]``) and Graphviz DOT."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from graphs._checks import GraphError, as_adjacency
from graphs.dag import find_cycle

_MODEL_RESERVED = re.compile(r"[\[\]|:]")


def _check_names(P: np.ndarray, names) -> list[str]:
    names = [str(x) for x in names]
    if len(names) != P.shape[0]:
        raise GraphError(f"{len(names)} names for a graph with {P.shape[0]} nodes")
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise GraphError(f"duplicate node names: {dup[:10]}")
    return names


def edge_list(P: np.ndarray) -> list[tuple[int, int, bool]]:
    """``(i, j, directed)`` per edge; undirected edges once with ``i < j``; sorted by ``(i, j)``."""
    directed = P & ~P.T
    undirected = np.triu(P & P.T, k=1)
    rows = [(int(i), int(j), True) for i, j in zip(*np.nonzero(directed))]
    rows += [(int(i), int(j), False) for i, j in zip(*np.nonzero(undirected))]
    return sorted(rows)


def to_edge_frame(P, names) -> pd.DataFrame:
    """One row per edge of a DAG/PDAG: columns ``source``, ``target`` (names), ``directed`` (bool).
    Undirected edges appear once, ``source`` being the lower index."""
    M = as_adjacency(P)
    names = _check_names(M, names)
    rows = edge_list(M)
    return pd.DataFrame(
        {
            "source": pd.Series([names[i] for i, _, _ in rows], dtype=object),
            "target": pd.Series([names[j] for _, j, _ in rows], dtype=object),
            "directed": pd.Series([d for _, _, d in rows], dtype=bool),
        }
    )


def to_json(P, names, indent: int | None = None) -> str:
    """JSON text ``{"nodes": [...], "edges": [{"source", "target", "directed"}, ...]}``."""
    M = as_adjacency(P)
    names = _check_names(M, names)
    doc = {
        "nodes": names,
        "edges": [{"source": names[i], "target": names[j], "directed": d} for i, j, d in edge_list(M)],
    }
    return json.dumps(doc, indent=indent)


def to_model_string(dag, names) -> str:
    """bnlearn model string of a DAG, e.g. ``[A][C][B|A:C]``: nodes in index order, parents in index order."""
    M = as_adjacency(dag)
    names = _check_names(M, names)
    if (M & M.T).any():
        raise GraphError("to_model_string needs a DAG; the graph has undirected edges")
    cycle = find_cycle(M)
    if cycle is not None:
        raise GraphError(f"to_model_string needs a DAG; cycle {[names[v] for v in cycle]}")
    bad = [x for x in names if _MODEL_RESERVED.search(x) or not x.strip()]
    if bad:
        raise GraphError(f"names cannot be written in a model string (empty or contain [ ] | :): {bad[:5]}")
    parts = []
    for v, name in enumerate(names):
        pa = np.flatnonzero(M[:, v])
        parts.append(f"[{name}|{':'.join(names[p] for p in pa)}]" if len(pa) else f"[{name}]")
    return "".join(parts)


def from_model_string(s: str) -> tuple[np.ndarray, list[str]]:
    """Parse a bnlearn model string ``[A][B|A:C][C]`` into ``(A, names)``; names in order of appearance.

    Raises ``ValueError`` naming the problem: text outside brackets, empty or duplicate nodes,
    undeclared or repeated parents, self-loops, cycles.
    """
    if not isinstance(s, str):
        raise GraphError(f"model string must be str, got {type(s).__name__}")
    text = s.strip()
    pos = 0
    entries: list[tuple[str, list[str]]] = []
    for m in re.finditer(r"\[([^\[\]]*)\]", text):
        gap = text[pos : m.start()]
        if gap.strip():
            raise GraphError(f"unexpected text {gap.strip()!r} at position {pos} of the model string")
        pos = m.end()
        body = m.group(1)
        node, _, rest = body.partition("|")
        node = node.strip()
        if not node or ":" in node:
            raise GraphError(f"bad node declaration [{body}] at position {m.start()}")
        parents = [p.strip() for p in rest.split(":")] if "|" in body else []
        if any(not p for p in parents):
            raise GraphError(f"empty parent name in [{body}]")
        entries.append((node, parents))
    if text[pos:].strip():
        raise GraphError(f"unexpected text {text[pos:].strip()!r} at position {pos} of the model string")
    if not entries:
        raise GraphError("empty model string: expected [node] or [node|parent:...] blocks")
    names = [node for node, _ in entries]
    index = {}
    for k, x in enumerate(names):
        if x in index:
            raise GraphError(f"node {x!r} declared twice")
        index[x] = k
    A = np.zeros((len(names), len(names)), dtype=bool)
    for node, parents in entries:
        if len(set(parents)) != len(parents):
            raise GraphError(f"repeated parent in the declaration of {node!r}")
        for p in parents:
            if p not in index:
                raise GraphError(f"parent {p!r} of {node!r} is not declared as a node")
            if p == node:
                raise GraphError(f"node {node!r} lists itself as a parent")
            A[index[p], index[node]] = True
    cycle = find_cycle(A)
    if cycle is not None:
        raise GraphError(f"model string has a directed cycle: {' -> '.join(names[v] for v in cycle)}")
    return A, names


def dot_quote(x: str) -> str:
    return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(P, names, title: str | None = None) -> str:
    """Graphviz DOT text of a DAG/PDAG/CPDAG: directed (compelled) edges as solid arrows, undirected
    (reversible) edges as dashed lines with ``dir=none``. All identifiers are double-quoted and escaped."""
    M = as_adjacency(P)
    names = _check_names(M, names)
    lines = ["digraph {"]
    if title is not None:
        lines.append(f"  label={dot_quote(title)};")
        lines.append("  labelloc=t;")
    lines.append("  node [shape=ellipse];")
    lines.extend(f"  {dot_quote(x)};" for x in names)
    for i, j, directed in edge_list(M):
        attrs = "" if directed else ' [dir=none, style=dashed, color="gray40"]'
        lines.append(f"  {dot_quote(names[i])} -> {dot_quote(names[j])}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"
