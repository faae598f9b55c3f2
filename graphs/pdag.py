"""PDAGs and CPDAGs: skeleton, v-structures, Meek's orientation rules, DAG <-> CPDAG.

Encoding: ``P[i, j] and not P[j, i]`` is a directed edge ``i -> j``; ``P[i, j] and P[j, i]`` is an
undirected edge ``i - j``. A DAG is a PDAG without undirected edges.
"""

from __future__ import annotations

import heapq
import logging
from collections import deque

import numpy as np

from graphs._checks import GraphError, as_adjacency
from graphs.dag import is_acyclic

logger = logging.getLogger(__name__)


def skeleton(A) -> np.ndarray:
    """Undirected skeleton (symmetric boolean matrix) of a DAG or PDAG."""
    M = as_adjacency(A)
    return M | M.T


def pdag_from_edges(n: int, arcs=(), undirected=()) -> np.ndarray:
    """The PDAG on ``n`` nodes with the arcs ``(i, j)`` (``i -> j``) and the undirected edges
    ``(i, j)`` (``i - j``), in the shared adjacency convention."""
    P = np.zeros((n, n), dtype=bool)
    for i, j in arcs:
        P[i, j] = True
    for i, j in undirected:
        P[i, j] = P[j, i] = True
    return P


def v_structures(A) -> list[tuple[int, int, int]]:
    """Unshielded colliders ``(a, c, b)`` with ``a < b``, ``a -> c <- b`` directed and ``a``, ``b`` non-adjacent.

    Works on DAGs and PDAGs (only directed edges form colliders); sorted by ``(c, a, b)``.
    """
    M = as_adjacency(A)
    D = M & ~M.T
    adj = M | M.T
    out: list[tuple[int, int, int]] = []
    for c in np.flatnonzero(D.sum(axis=0) >= 2).tolist():
        pa = np.flatnonzero(D[:, c])
        free = ~adj[np.ix_(pa, pa)]
        ia, ib = np.nonzero(np.triu(free, k=1))
        out.extend((int(pa[a]), c, int(pa[b])) for a, b in zip(ia.tolist(), ib.tolist()))
    return out


def _meek_rule(P: np.ndarray, adj: np.ndarray, i: int, j: int, rules: tuple[int, ...]) -> int:
    """First of ``rules`` (Meek 1995) that orients the undirected edge ``i - j`` as ``i -> j``, else 0.

    Rules as stated by Perkovic et al. (2017, Def. 3.1):
    R1 ``k -> i``, ``k`` non-adjacent to ``j``; R2 ``i -> k -> j``; R3 ``i - k -> j`` and ``i - l -> j``
    with ``k``, ``l`` non-adjacent; R4 ``i - k -> l -> j`` with ``k``, ``j`` non-adjacent and ``i``, ``l``
    adjacent.
    """
    into_j = P[:, j] & ~P[j, :]
    und_i = P[i, :] & P[:, i]
    und_i[j] = False
    for rule in rules:
        if rule == 1:
            # adj[j, j] is False, but P[j, i] is True so j is never in "into i"
            if np.any(P[:, i] & ~P[i, :] & ~adj[:, j]):
                return 1
        elif rule == 2:
            if np.any(P[i, :] & ~P[:, i] & into_j):
                return 2
        elif rule == 3:
            k3 = np.flatnonzero(und_i & into_j)
            if len(k3) >= 2 and adj[np.ix_(k3, k3)].sum() != len(k3) * (len(k3) - 1):
                return 3
        else:
            ks = np.flatnonzero(und_i & ~adj[:, j])
            ls = np.flatnonzero(into_j & adj[i, :])
            if len(ks) and len(ls) and (P[np.ix_(ks, ls)] & ~P[np.ix_(ls, ks)].T).any():
                return 4
    return 0


def meek_closure(P, rules: tuple[int, ...] = (1, 2, 3, 4)) -> np.ndarray:
    """Apply Meek's (1995) orientation rules R1-R4 to the PDAG ``P`` until no rule fires; returns a new array.

    A work list holds the undirected edges to (re)check; orienting ``u -> v`` re-queues the undirected
    edges at ``u``, at ``v`` and at the children of ``v`` (the only ones whose rule premises can change).
    Each check is a handful of O(n) vector operations, so alarm/andes-size graphs close in milliseconds.
    ``rules`` selects a subset (R1-R3 suffice for patterns of DAGs, Meek 1995).
    """
    M = as_adjacency(P).copy()
    rules = tuple(sorted(set(int(r) for r in rules)))
    if not set(rules) <= {1, 2, 3, 4}:
        raise GraphError(f"Meek rules are 1..4, got {rules}")
    adj = M | M.T
    iu, ju = np.nonzero(np.triu(M & M.T, k=1))
    queue = deque(zip(iu.tolist(), ju.tolist()))
    queued = set(queue)
    while queue:
        edge = queue.popleft()
        queued.discard(edge)
        a, b = edge
        if not (M[a, b] and M[b, a]):
            continue
        for i, j in ((a, b), (b, a)):
            rule = _meek_rule(M, adj, i, j, rules)
            if rule:
                break
        else:
            continue
        M[j, i] = False
        logger.debug("Meek R%d: %d -> %d", rule, i, j)
        touched = {i, j} | set(np.flatnonzero(M[j, :] & ~M[:, j]).tolist())
        for t in touched:
            for w in np.flatnonzero(M[t, :] & M[:, t]).tolist():
                e = (t, w) if t < w else (w, t)
                if e not in queued:
                    queued.add(e)
                    queue.append(e)
    return M


def dag_to_cpdag(A) -> np.ndarray:
    """CPDAG (essential graph) of the DAG ``A``: its skeleton with the v-structures oriented, closed
    under Meek's rules R1-R3 (Meek 1995, Thm 3; equals Chickering's 1995 compelled-edge labelling).

    Raises ``ValueError`` if ``A`` has an undirected edge or a directed cycle.
    """
    M = as_adjacency(A)
    if (M & M.T).any():
        raise GraphError("dag_to_cpdag expects a DAG, got undirected edges")
    if not is_acyclic(M):
        raise GraphError("dag_to_cpdag expects a DAG, got a directed cycle")
    P = M | M.T
    for a, c, b in v_structures(M):
        P[c, a] = False
        P[c, b] = False
    return meek_closure(P, rules=(1, 2, 3))


def pdag_to_dag(P) -> np.ndarray:
    """A consistent DAG extension of the PDAG ``P`` (Dor & Tarsi 1992): same skeleton, same directed
    edges, same v-structures, acyclic. Raises ``ValueError`` if ``P`` admits none.

    Repeatedly removes a node ``x`` that has no outgoing directed edge and whose undirected neighbours
    are adjacent to all other neighbours of ``x``, orienting its undirected edges into ``x``. Eligibility
    only grows as nodes are removed, so each node is re-checked only when a neighbour goes; ties pick
    the smallest index (deterministic).
    """
    M = as_adjacency(P)
    n = M.shape[0]
    adj = M | M.T
    alive = np.ones(n, dtype=bool)
    out = M & ~M.T  # result: start from the directed edges

    def eligible(x: int) -> bool:
        if np.any(M[x, :] & ~M[:, x] & alive):
            return False
        nbrs = np.flatnonzero(adj[x, :] & alive)
        und = np.flatnonzero(M[x, :] & M[:, x] & alive)
        if len(und) == 0:
            return True
        sub = adj[np.ix_(und, nbrs)] | (und[:, None] == nbrs[None, :])
        return bool(sub.all())

    heap = [x for x in range(n) if eligible(x)]
    heapq.heapify(heap)
    in_heap = np.zeros(n, dtype=bool)
    in_heap[heap] = True
    removed = 0
    while heap:
        x = heapq.heappop(heap)
        und = np.flatnonzero(M[x, :] & M[:, x] & alive)
        out[und, x] = True
        alive[x] = False
        removed += 1
        for y in np.flatnonzero(adj[x, :] & alive & ~in_heap).tolist():
            if eligible(y):
                in_heap[y] = True
                heapq.heappush(heap, y)
    if removed < n:
        stuck = np.flatnonzero(alive).tolist()
        raise GraphError(
            f"PDAG has no consistent DAG extension (Dor & Tarsi 1992); no removable node among {stuck[:10]}"
            + (" ..." if len(stuck) > 10 else "")
        )
    return out


class KnowledgeConflictError(GraphError):
    """Background knowledge that no DAG of the Markov equivalence class satisfies."""


def _knowledge_arcs(K, n: int, name: str) -> np.ndarray:
    """``K`` as an ``(n, n)`` boolean arc matrix with a False diagonal (None: no arcs)."""
    if K is None:
        return np.zeros((n, n), dtype=bool)
    M = np.array(K)
    if M.shape != (n, n):
        raise GraphError(f"{name} must be an ({n}, {n}) arc matrix like the graph, got shape {M.shape}")
    np.fill_diagonal(M, 0)
    return as_adjacency(M, name)


def orient_with_knowledge(cpdag, required=None, forbidden=None, names=None) -> np.ndarray:
    """The maximally oriented PDAG of the DAGs in the class of ``cpdag`` that hold every arc
    ``required[p, c]`` (``p -> c``) and no arc ``forbidden[p, c]`` (Meek 1995, Thm 4).

    Each undirected edge the knowledge settles is oriented (a required arc as given, a forbidden
    direction the other way), then Meek's rules R1-R4 close the PDAG; with background knowledge R4
    can fire (it never does on a plain CPDAG). ``forbidden``'s diagonal is ignored, so a tier or
    forbidden-arc matrix ``~allowed`` can be passed as is. ``names`` (one per node) label the
    messages. Raises :class:`KnowledgeConflictError` when no DAG of the class satisfies the
    knowledge: a required arc between non-adjacent nodes or against a compelled arc, a forbidden
    compelled arc, an edge forbidden both ways, or arcs that together make a cycle or a new
    v-structure (the closed PDAG's consistent extension, Dor & Tarsi 1992, is checked against the
    class).
    """
    P = as_adjacency(cpdag, "cpdag")
    n = P.shape[0]
    req = _knowledge_arcs(required, n, "required")
    forb = _knowledge_arcs(forbidden, n, "forbidden")
    label = list(names) if names is not None else [str(v) for v in range(n)]
    directed, undirected, adjacent = P & ~P.T, P & P.T, P | P.T

    def conflict(mask: np.ndarray, why: str) -> None:
        pairs = np.argwhere(mask)
        if len(pairs):
            shown = ", ".join(f"{label[p]} -> {label[c]}" for p, c in pairs[:5])
            more = f" (and {len(pairs) - 5} more)" if len(pairs) > 5 else ""
            raise KnowledgeConflictError(f"{why}: {shown}{more}")

    conflict(req & forb, "arcs both required and forbidden")
    conflict(np.triu(req & req.T), "arcs required in both directions")
    conflict(req & ~adjacent, "required arcs between nodes the class leaves non-adjacent")
    conflict(req & directed.T, "required arcs whose reverse is compelled in the class")
    conflict(forb & directed, "forbidden arcs compelled in the class")
    conflict(np.triu(forb & forb.T & undirected), "edges of the class forbidden in both directions")

    imposed = (req | forb.T) & undirected  # arcs p -> c the knowledge settles
    M = P & ~imposed.T
    closed = meek_closure(M)
    try:
        extension = pdag_to_dag(closed)
    except GraphError:
        extension = None
    if extension is None or v_structures(extension) != v_structures(P):
        if not imposed.any():
            raise GraphError("cpdag has no consistent DAG extension: it is not the CPDAG of a DAG")
        conflict(imposed, "no DAG of the equivalence class holds all these knowledge arcs together")
    return closed


def dag_to_pdag_with_knowledge(dag, required=None, forbidden=None, names=None) -> np.ndarray:
    """:func:`orient_with_knowledge` applied to the CPDAG of ``dag`` (the class that ``dag``
    represents, narrowed by the knowledge)."""
    return orient_with_knowledge(dag_to_cpdag(dag), required, forbidden, names)
