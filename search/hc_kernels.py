"""Compiled kernels of the hill climbing and tabu search of :mod:`search.hill_climbing`.

Three records of arrays, passed to every kernel (numba types them as named tuples):

* :class:`Families`, the scored families ``W -> v`` (members padded to a common width) and an
  open-addressing hash table over them, keyed by the Zobrist hash ``h(v) ^ XOR_{p in W} g(p)``
  of :func:`child_code` and :func:`parent_code`, so that the key of ``W ± p`` is one XOR away
  from the key of ``W`` whatever the number of variables. A key match is confirmed on the
  members, so hash collisions cost a probe, never a wrong family. The store grows on demand.
* :class:`Moves`, the candidate arcs ``p -> v``: per child ``v`` the parents ``p`` that some
  family of ``v`` may hold, with the index of the opposite arc ``v -> p`` (or -1).
* :class:`Graph`, the current DAG: each child's family (a row of the store) and parent list,
  per candidate arc whether it is in the graph, the family that toggling it would give the child
  (:func:`refresh_child`) and the score change (``-inf``: no such family), the best DAG of the
  current climb, the tabu list of graph hashes and scratch space.

Only the deltas of the children whose parent set changed are recomputed after a move, as in
bnlearn's optimised hill climbing; a move's legality (acyclicity) is tested lazily, on the best
candidate only. Families a move would reach but that are not yet scored (the on-demand path,
``open_palim >= 0``) are flagged in ``Graph.need`` for the caller to score before the next move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

ADD, DELETE, REVERSE = 0, 1, 2
"""Move kinds, on a candidate arc ``p -> v``."""

CONVERGED, STEPS_DONE, NEEDS_FAMILIES = 0, 1, 2
"""Why :func:`climb` returned: no move left (hill climbing) or ``max_tabu`` moves that did not
improve since the last new best (tabu search); its step budget spent; some families must be
scored first."""

STAMP, VISIT, TABU_NEXT, TABU_FILLED, STALE, N_NEED = range(6)
"""Slots of ``Graph.counters``: move-rejection stamp, cycle-test stamp, next tabu slot, tabu
entries filled, steps since the climb's best improved, children flagged in ``need``."""

GRAPH_HASH, RNG = 0, 1
"""Slots of ``Graph.words``: the Zobrist hash of the current arc set, the splitmix64 state."""

CURRENT, BEST = 0, 1
"""Slots of ``Graph.values``: the current DAG's score, the best score of the current climb."""

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_ARC_SALT = np.uint64(0x6A09E667F3BCC909)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


class Families(NamedTuple):
    """Scored families: row ``r`` is ``members[r, :size[r]]`` (ascending) ``-> child[r]`` with
    ``score[r]``; ``count[0]`` rows are used; ``slot_row`` (-1: empty) and ``slot_key`` are the
    hash table, a power of two at least twice the capacity."""

    child: np.ndarray
    size: np.ndarray
    members: np.ndarray
    score: np.ndarray
    slot_key: np.ndarray
    slot_row: np.ndarray
    count: np.ndarray


class Moves(NamedTuple):
    """Candidate arcs ``parent[q] -> child[q]``, grouped by child (``ptr``); ``reverse[q]`` is the
    candidate arc ``child[q] -> parent[q]`` or -1; ``required[q]`` whether the arc must stay;
    ``scan`` the candidates in the order moves are compared, by parent and then child (bnlearn's)."""

    ptr: np.ndarray
    parent: np.ndarray
    child: np.ndarray
    reverse: np.ndarray
    required: np.ndarray
    scan: np.ndarray


class Graph(NamedTuple):
    """The search state (see the module docstring); ``parents[v, :n_parents[v]]`` in any order."""

    parents: np.ndarray
    n_parents: np.ndarray
    row: np.ndarray
    key: np.ndarray
    arc: np.ndarray
    delta: np.ndarray
    target: np.ndarray
    best_row: np.ndarray
    tabu: np.ndarray
    counters: np.ndarray
    words: np.ndarray
    values: np.ndarray
    need: np.ndarray
    rejected: np.ndarray
    seen: np.ndarray
    stack: np.ndarray
    work: np.ndarray
    chosen: np.ndarray


# ----------------------------------------------------------------------------------- hashing


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """The splitmix64 finaliser (Steele, Lea & Flood 2014): a bijection of ``uint64`` that scatters bits."""
    x = (x ^ (x >> _S30)) * _MIX1
    x = (x ^ (x >> _S27)) * _MIX2
    return x ^ (x >> _S31)


@njit(cache=True, nogil=True, inline="always")
def parent_code(p):
    return mix64(np.uint64(2 * p + 1))


@njit(cache=True, nogil=True, inline="always")
def child_code(v):
    return mix64(np.uint64(2 * v + 2))


@njit(cache=True, nogil=True, inline="always")
def arc_code(p, v, n):
    return mix64(np.uint64(p * n + v) ^ _ARC_SALT)


@njit(cache=True, nogil=True, inline="always")
def random_below(words, m):
    """A pseudo-random integer in ``0 .. m - 1`` from the splitmix64 stream in ``words[RNG]``."""
    words[RNG] += _GOLDEN
    return np.int64(mix64(words[RNG]) % np.uint64(m))


# ----------------------------------------------------------------------------- family store


@njit(cache=True, nogil=True)
def insert_family(fam, v, members, score):
    """Append the family ``members -> v`` (ascending, within the store's width and capacity)."""
    r = fam.count[0]
    fam.count[0] = r + 1
    fam.child[r] = v
    fam.size[r] = members.size
    fam.score[r] = score
    key = child_code(v)
    for t in range(members.size):
        fam.members[r, t] = members[t]
        key ^= parent_code(members[t])
    _place(fam, key, r)


@njit(cache=True, nogil=True, inline="always")
def _place(fam, key, r):
    mask = np.uint64(fam.slot_row.size - 1)
    s = np.int64(key & mask)
    while fam.slot_row[s] >= 0:
        s = np.int64((np.uint64(s) + np.uint64(1)) & mask)
    fam.slot_key[s] = key
    fam.slot_row[s] = r


@njit(cache=True, nogil=True)
def rehash(fam):
    """Fill the (emptied) hash table of ``fam`` from its rows, in row order."""
    for r in range(fam.count[0]):
        key = child_code(fam.child[r])
        for t in range(fam.size[r]):
            key ^= parent_code(fam.members[r, t])
        _place(fam, key, r)


@njit(cache=True, nogil=True)
def fill_families(fam, child, parent_ptr, parents, score):
    """Insert every row of a score table's columns, in table order (the first of duplicates wins)."""
    for f in range(child.size):
        insert_family(fam, child[f], parents[parent_ptr[f]:parent_ptr[f + 1]], score[f])



# The helpers called inside loops take arrays, not the records: passing a record to a function
# costs a reference count per member array, a thousand times the work of the loop's body.


@njit(cache=True, nogil=True)
def find_family(slot_key, slot_row, f_child, f_size, f_members, v, key, members, size):
    """Row of the family ``members[:size] -> v`` of hash ``key`` in the store whose columns
    (:class:`Families`) are given; -1 if it is not there."""
    mask = np.uint64(slot_row.size - 1)
    s = np.int64(key & mask)
    while True:
        r = slot_row[s]
        if r < 0:
            return -1
        if slot_key[s] == key and f_child[r] == v and f_size[r] == size:
            same = True
            for t in range(size):
                if not _holds(members, size, f_members[r, t]):
                    same = False
                    break
            if same:
                return r
        s = np.int64((np.uint64(s) + np.uint64(1)) & mask)


@njit(cache=True, nogil=True, inline="always")
def _holds(members, size, m):
    """Whether ``m`` is among ``members[:size]`` (a family's parents, the tabu list's graph hashes)."""
    for t in range(size):
        if members[t] == m:
            return True
    return False


@njit(cache=True, nogil=True)
def best_subfamily(slot_key, slot_row, f_child, f_size, f_members, f_score, v, members, size, fixed, chosen):
    """Best-scoring stored family of ``v`` made of ``members[:fixed]`` and a proper subset of
    ``members[fixed:size]`` (``chosen``: scratch space of ``size`` entries); -1 if none."""
    best, best_row = -np.inf, -1
    for pick in range((1 << (size - fixed)) - 1):
        key = child_code(v)
        k = 0
        for t in range(size):
            if t < fixed or (pick >> (t - fixed)) & 1:
                chosen[k] = members[t]
                key ^= parent_code(members[t])
                k += 1
        r = find_family(slot_key, slot_row, f_child, f_size, f_members, v, key, chosen, k)
        if r >= 0 and f_score[r] > best:
            best, best_row = f_score[r], r
    return best_row


# ------------------------------------------------------------------------------ graph state


@njit(cache=True, nogil=True)
def refresh_child(fam, moves, graph, v, open_palim):
    """Recompute, for each candidate parent ``p`` of ``v``, the family toggling ``p`` gives ``v``
    (``Graph.target``) and its score change (``Graph.delta``). When the new parent set is not in
    the store (a table pruned it), the best stored family inside it that keeps ``p`` (an
    addition) stands for it, which exact pruning makes at least as good. With ``open_palim >= 0``
    (families scored on demand) a set within the limits that is missing gets none and flags ``v``
    in ``need``. Additions beyond the store's width get none."""
    slot_key, slot_row, f_child, f_size = fam.slot_key, fam.slot_row, fam.child, fam.size
    f_members, f_score = fam.members, fam.score
    parents, work, chosen = graph.parents[v], graph.work, graph.chosen
    k = graph.n_parents[v]
    base = f_score[graph.row[v]]
    unknown = False
    for q in range(moves.ptr[v], moves.ptr[v + 1]):
        p = moves.parent[q]
        present = graph.arc[q]
        size = 0
        if not present:
            work[0] = p
            size = 1
        for t in range(k):
            if parents[t] != p:
                work[size] = parents[t]
                size += 1
        r = -1
        if size < work.size:
            r = find_family(slot_key, slot_row, f_child, f_size, f_members, v, graph.key[v] ^ parent_code(p),
                            work, size)
            if r < 0 and open_palim >= 0:
                unknown |= (not moves.required[q]) if present else size <= open_palim
            elif r < 0:
                r = best_subfamily(slot_key, slot_row, f_child, f_size, f_members, f_score, v, work, size,
                                   0 if present else 1, chosen)
        graph.target[q] = r
        graph.delta[q] = f_score[r] - base if r >= 0 else -np.inf
    if unknown and not graph.need[v]:
        graph.need[v] = True
        graph.counters[N_NEED] += 1


@njit(cache=True, nogil=True)
def family_arcs(fam, v, r, n):
    """Zobrist hash of the arcs into ``v`` of family row ``r``."""
    code = np.uint64(0)
    for t in range(fam.size[r]):
        code ^= arc_code(fam.members[r, t], v, n)
    return code


@njit(cache=True, nogil=True)
def _take_family(fam, moves, graph, v, r):
    """Child ``v``'s parents, family row and key, and its arc flags, from row ``r``."""
    key = child_code(v)
    for t in range(fam.size[r]):
        graph.parents[v, t] = fam.members[r, t]
        key ^= parent_code(fam.members[r, t])
    graph.n_parents[v] = fam.size[r]
    graph.row[v] = r
    graph.key[v] = key
    for q in range(moves.ptr[v], moves.ptr[v + 1]):
        graph.arc[q] = _holds(graph.parents[v], fam.size[r], moves.parent[q])


@njit(cache=True, nogil=True)
def set_family(fam, moves, graph, v, r):
    """Give child ``v`` the family of row ``r`` in the current graph."""
    n = graph.row.size
    graph.words[GRAPH_HASH] ^= family_arcs(fam, v, graph.row[v], n) ^ family_arcs(fam, v, r, n)
    _take_family(fam, moves, graph, v, r)


@njit(cache=True, nogil=True)
def load(fam, moves, graph, rows, open_palim):
    """Make the DAG whose family of child ``v`` is row ``rows[v]`` the current graph."""
    n = rows.size
    code = _ARC_SALT
    total = 0.0
    for v in range(n):
        _take_family(fam, moves, graph, v, rows[v])
        code ^= family_arcs(fam, v, rows[v], n)
        total += fam.score[rows[v]]
    graph.words[GRAPH_HASH] = code
    graph.values[CURRENT] = total
    for v in range(n):
        refresh_child(fam, moves, graph, v, open_palim)


@njit(cache=True, nogil=True)
def restart_climb(graph):
    """Start a climb from the current graph: it is the climb's best and the only tabu entry."""
    graph.values[BEST] = graph.values[CURRENT]
    graph.best_row[:] = graph.row
    graph.counters[STALE] = 0
    graph.counters[TABU_NEXT] = 0
    graph.counters[TABU_FILLED] = 0
    _remember(graph)


@njit(cache=True, nogil=True, inline="always")
def _remember(graph):
    """Put the current graph's hash into the tabu list (a ring of the last ``len(tabu)`` graphs)."""
    length = graph.tabu.size
    graph.tabu[graph.counters[TABU_NEXT]] = graph.words[GRAPH_HASH]
    graph.counters[TABU_NEXT] = (graph.counters[TABU_NEXT] + 1) % length
    graph.counters[TABU_FILLED] = min(graph.counters[TABU_FILLED] + 1, length)


# ------------------------------------------------------------------------------------ moves


@njit(cache=True, nogil=True, inline="always")
def applies(arc, reverse, q, op):
    """Whether move ``op`` fits the state of candidate arc ``q = p -> v`` (``Graph.arc``,
    ``Moves.reverse``): an absent arc (and no ``v -> p``) can be added, a present one deleted
    or, if ``v -> p`` is a candidate, reversed."""
    r = reverse[q]
    if op == ADD:
        return not arc[q] and (r < 0 or not arc[r])
    return arc[q] and (op == DELETE or r >= 0)


@njit(cache=True, nogil=True, inline="always")
def move_delta(delta, reverse, q, op):
    """Score change of move ``op`` on candidate arc ``q`` (``-inf`` when it has no family)."""
    if op == REVERSE:
        return delta[q] + delta[reverse[q]]
    return delta[q]


@njit(cache=True, nogil=True)
def moved_hash(fam, moves, graph, q, op):
    """Graph hash after move ``op`` on candidate arc ``q``."""
    n = graph.row.size
    v = moves.child[q]
    code = graph.words[GRAPH_HASH] ^ family_arcs(fam, v, graph.row[v], n) ^ family_arcs(fam, v, graph.target[q], n)
    if op == REVERSE:
        p, r = moves.parent[q], moves.reverse[q]
        code ^= family_arcs(fam, p, graph.row[p], n) ^ family_arcs(fam, p, graph.target[r], n)
    return code


@njit(cache=True, nogil=True)
def reaches(fam, graph, a, d, d_row):
    """Whether a directed path leads from ``a`` to ``d`` when ``d`` has the family of row
    ``d_row`` (depth-first search up the parent lists from ``d``)."""
    graph.counters[VISIT] += 1
    stamp = graph.counters[VISIT]
    seen, stack, parents, n_parents = graph.seen, graph.stack, graph.parents, graph.n_parents
    seen[d] = stamp
    top = 0
    for t in range(fam.size[d_row]):
        top = _push(seen, stack, fam.members[d_row, t], stamp, top)
    while top > 0:
        top -= 1
        x = stack[top]
        if x == a:
            return True
        for t in range(n_parents[x]):
            top = _push(seen, stack, parents[x, t], stamp, top)
    return False


@njit(cache=True, nogil=True, inline="always")
def _push(seen, stack, x, stamp, top):
    if seen[x] == stamp:
        return top
    seen[x] = stamp
    stack[top] = x
    return top + 1


@njit(cache=True, nogil=True, inline="always")
def creates_cycle(fam, moves, graph, q, op):
    """Whether move ``op`` on candidate arc ``p -> v`` would close a directed cycle: an addition
    when ``v`` reaches ``p``; a reversal when ``p`` reaches ``v`` through ``v``'s new family."""
    p, v = moves.parent[q], moves.child[q]
    if op == ADD:
        return reaches(fam, graph, v, p, graph.row[p])
    if op == REVERSE:
        return reaches(fam, graph, p, v, graph.target[q])
    return False


@njit(cache=True, nogil=True)
def select_move(fam, moves, graph, floor, tol, use_tabu):
    """The legal move of largest delta above ``floor``, not leading to a tabu graph when
    ``use_tabu``: ``(q, op)``, ``q = -1`` if none. Moves are compared as bnlearn's ``hc`` and
    ``tabu`` compare them, so that ties go the same way: all additions, then all deletions, then all
    reversals, each in ``moves.scan`` order, and a later move replaces the best so far only when
    it is larger by more than ``tol``. Cycles are tested on the best candidate only; a rejected one
    is marked and the scan repeated."""
    graph.counters[STAMP] += 1
    stamp = graph.counters[STAMP]
    arc, delta, reverse, rejected, tabu = graph.arc, graph.delta, moves.reverse, graph.rejected, graph.tabu
    filled = graph.counters[TABU_FILLED]
    while True:
        best, best_q, best_op = floor, -1, ADD
        for op in range(3):
            for q in moves.scan:
                if applies(arc, reverse, q, op):
                    d = move_delta(delta, reverse, q, op)
                    if (d - best > tol and rejected[3 * q + op] != stamp
                            and not (use_tabu and _holds(tabu, filled, moved_hash(fam, moves, graph, q, op)))):
                        best, best_q, best_op = d, q, op
        if best_q < 0 or not creates_cycle(fam, moves, graph, best_q, best_op):
            return best_q, best_op
        graph.rejected[3 * best_q + best_op] = stamp


@njit(cache=True, nogil=True)
def apply_move(fam, moves, graph, q, op, open_palim):
    """Apply a legal move and refresh the deltas of the one or two children it changed."""
    p, v = moves.parent[q], moves.child[q]
    graph.values[CURRENT] += move_delta(graph.delta, moves.reverse, q, op)
    if op == REVERSE:
        set_family(fam, moves, graph, p, graph.target[moves.reverse[q]])
    set_family(fam, moves, graph, v, graph.target[q])
    if op == REVERSE:
        refresh_child(fam, moves, graph, p, open_palim)
    refresh_child(fam, moves, graph, v, open_palim)


@njit(cache=True, nogil=True)
def climb(fam, moves, graph, use_tabu, max_tabu, tol, open_palim, max_steps):
    """At most ``max_steps`` steps of hill climbing (the best move improving by more than ``tol``)
    or, with ``use_tabu``, of bnlearn's tabu search: the best improving move not leading to a tabu
    graph; where there is none, the best non-tabu move, unless ``max_tabu`` such moves have been
    made since the last new best. Returns ``(reason, steps taken)``."""
    for step in range(max_steps):
        q, op = select_move(fam, moves, graph, 0.0, tol, use_tabu)
        if q < 0:
            if not use_tabu or graph.counters[STALE] >= max_tabu:
                return CONVERGED, step
            graph.counters[STALE] += 1
            q, op = select_move(fam, moves, graph, -np.inf, tol, use_tabu)
            if q < 0:
                return CONVERGED, step
        apply_move(fam, moves, graph, q, op, open_palim)
        if graph.values[CURRENT] > graph.values[BEST] + tol:
            graph.values[BEST] = graph.values[CURRENT]
            graph.best_row[:] = graph.row
            graph.counters[STALE] = 0
        if use_tabu:
            _remember(graph)
        if graph.counters[N_NEED] > 0:
            return NEEDS_FAMILIES, step + 1
    return STEPS_DONE, max_steps


@njit(cache=True, nogil=True, inline="always")
def _drawable(arc, delta, reverse, rejected, q, op, stamp):
    return (applies(arc, reverse, q, op) and move_delta(delta, reverse, q, op) > -np.inf
            and rejected[3 * q + op] != stamp)


@njit(cache=True, nogil=True)
def perturb_once(fam, moves, graph, open_palim):
    """One random perturbation (bnlearn's ``perturb``): a move drawn uniformly among the legal
    additions, deletions and reversals. Returns False when there is none."""
    graph.counters[STAMP] += 1
    stamp = graph.counters[STAMP]
    arc, delta, reverse, rejected = graph.arc, graph.delta, moves.reverse, graph.rejected
    while True:
        count = 0
        for q in range(reverse.size):
            for op in range(3):
                count += _drawable(arc, delta, reverse, rejected, q, op, stamp)
        if count == 0:
            return False
        k = random_below(graph.words, count)
        for q in range(reverse.size):
            for op in range(3):
                if _drawable(arc, delta, reverse, rejected, q, op, stamp):
                    if k == 0:
                        if not creates_cycle(fam, moves, graph, q, op):
                            apply_move(fam, moves, graph, q, op, open_palim)
                            return True
                        graph.rejected[3 * q + op] = stamp
                    k -= 1
