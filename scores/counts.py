"""Contingency counts ``N_ijk`` of a child given a parent set (the counting kernel).

Parent configurations are encoded in mixed radix *one parent at a time* and re-densified after
every step, ``config(W ∪ {p}) = dense(config(W) * r_p + x_p)``, so codes stay below the number
of rows: only observed configurations are ever materialised, the radix product ``q`` may be
astronomically large, and nothing overflows int64. Re-densification uses a mark array when
``q+ * r_p`` is small and a sort otherwise.

A family's counts are produced in *compact* form: the non-zero cell counts ``n_ijk`` and the
non-zero configuration counts ``n_ij`` (all a decomposable score of ``scores.local`` needs).
Three counting paths produce them for a prefix set ``S`` extended by one parent ``p``:

* bitset (few prefix cells): every cell ``(config(S), child state)`` is a bitset of rows built
  by AND-ing one-hot bitsets of the variables; a family's counts are popcounts of
  ``cell & onehot(p = v)``. The largest cell and the most frequent value of ``p`` are derived
  from margins instead of counted, and cells with few rows are counted row by row;
* dense: one histogram over the ``(config(S), x_p, child state)`` cells, scanned when they
  are few and read back through a list of touched cells when there are more cells than rows;
* grouped: rows sorted by ``config(S)``, then a small per-group histogram with a list of touched
  cells (memory ``O(r_p * r_child)``, time ``O(N)``) for huge cell spaces.

For families of binary variables with at most three parents a fourth path needs no per-family
bitset work beyond one popcount: :func:`triple_counts` tabulates, once per data set, the rows
with state 1 in every variable of each triple (pairs and singles on its diagonals), and
:func:`count_binary` inverts those counts (Möbius inversion over the subsets of the family)
into the cells, counting only the four-variable all-ones cell on a bitset.

The kernels are numba-compiled and ``nogil`` so the score stage can run children in threads;
the per-family ones are inlined into their caller (``inline="always"``): a call passing a dozen
arrays otherwise costs about as much as counting a family of a binary network.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hybridbn.word_bits import popcount
from hybridbn.errors import HybridBNError

MARK_LIMIT = 1 << 21
"""Largest key span ``q+ * r_p`` densified with a mark array; larger spans are sorted."""


class CountsError(HybridBNError, ValueError):
    """Data or parent sets that cannot be counted."""


def as_columns(data: np.ndarray, arities: np.ndarray) -> np.ndarray:
    """Check ``(data, arities)`` and return the ``(n_vars, n_rows)`` C-contiguous code columns.

    The dtype is the smallest unsigned type holding every state code (uint8 usually).
    """
    data = np.asarray(data)
    arities = np.asarray(arities)
    if data.ndim != 2:
        raise CountsError(f"data must be 2-D (n_rows, n_vars), got shape {data.shape}")
    if arities.shape != (data.shape[1],):
        raise CountsError(
            f"arities has shape {arities.shape}, expected ({data.shape[1]},) for data of shape {data.shape}"
        )
    if data.shape[0] < 1:
        raise CountsError("data has no rows")
    if not np.issubdtype(data.dtype, np.integer):
        raise CountsError(f"data must hold integer state codes, got dtype {data.dtype}")
    if not np.issubdtype(arities.dtype, np.integer) or np.any(arities < 1):
        raise CountsError(f"arities must be integers >= 1, got {arities.tolist()}")
    if data.shape[1]:
        lo, hi = data.min(axis=0), data.max(axis=0)
        bad = np.flatnonzero((lo < 0) | (hi >= arities))
        if bad.size:
            v = int(bad[0])
            raise CountsError(
                f"column {v} has codes in [{lo[v]}, {hi[v]}] outside 0..{arities[v] - 1} "
                f"({bad.size} column(s) out of range)"
            )
    top = int(arities.max()) if arities.size else 1
    dtype = np.uint8 if top <= 1 << 8 else np.uint16 if top <= 1 << 16 else np.uint32
    return np.ascontiguousarray(data.T, dtype=dtype)


def new_mark() -> np.ndarray:
    """Scratch for :func:`refine`: ``MARK_LIMIT`` int32 entries, all ``-1``."""
    return np.full(MARK_LIMIT, -1, dtype=np.int32)


@njit(cache=True, nogil=True)
def refine(codes, q, column, r, mark):
    """Replace dense ``codes`` in ``[0, q)`` by the dense codes of ``codes * r + column``.

    Works in place, numbering configurations in order of first appearance when the key span
    ``q * r`` fits the ``mark`` scratch (left all ``-1`` again) and in key order otherwise.
    Returns the number ``q+`` of distinct new codes.
    """
    n = codes.shape[0]
    nxt = 0
    if q * r <= mark.shape[0]:
        seen = np.empty(min(n, q * r), dtype=np.int64)
        for i in range(n):
            key = codes[i] * r + column[i]
            m = mark[key]
            if m < 0:
                m = nxt
                mark[key] = m
                seen[nxt] = key
                nxt += 1
            codes[i] = m
        for t in range(nxt):
            mark[seen[t]] = -1
        return nxt
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        keys[i] = codes[i] * r + column[i]
    order = np.argsort(keys, kind="mergesort")
    prev = -1
    for t in range(n):
        i = order[t]
        if keys[i] != prev:
            prev = keys[i]
            nxt += 1
        codes[i] = nxt - 1
    return nxt


@njit(cache=True, nogil=True)
def encode(cols, variables, arities, codes, mark):
    """Dense configuration codes of ``variables`` for every row, written into ``codes``.

    Returns ``q+``, the number of observed configurations (1 for the empty set).
    """
    codes[:] = 0
    q = 1
    for v in variables:
        q = refine(codes, q, cols[v], arities[v], mark)
    return q


@njit(cache=True, nogil=True, inline="always")
def count_dense(base, stride, column, r_p, r_child, hist, cells, configs):
    """Compact counts of the family ``S ∪ {p}`` by one histogram.

    ``base[i] = config_S[i] * r_child + child[i]`` and ``stride = q+_S * r_child``; ``column`` is
    ``x_p``. ``hist`` (length >= ``stride * r_p``) must be zero and is left zero. Writes the
    non-zero cell counts into ``cells`` and the non-zero configuration counts into ``configs``
    (one entry more than their number each: the scan is branch-free, the empty cells being
    scattered among the others); returns ``(n_cells, n_configs)``.
    """
    for i in range(base.shape[0]):
        hist[column[i] * stride + base[i]] += 1
    n_cells = 0
    n_cfg = 0
    for j in range(0, stride * r_p, r_child):
        nj = 0
        for k in range(j, j + r_child):
            c = hist[k]
            cells[n_cells] = c
            n_cells += c != 0
            nj += c
            hist[k] = 0
        configs[n_cfg] = nj
        n_cfg += nj != 0
    return n_cells, n_cfg


@njit(cache=True, nogil=True, inline="always")
def count_touched(base, codes, q, column, r_child, hist, cfg_hist, touched, touched_cfg, cells, configs):
    """Like :func:`count_dense` for large, sparsely filled histograms: no scan of empty cells.

    ``codes`` are the configurations of ``S`` (``base = codes * r_child + child``, ``q`` of them).
    Records each cell when first hit, with its configuration ``x_p * q + code``, in ``touched`` and
    ``touched_cfg`` (length >= rows) and reads only those back, in order of first hit; ``cfg_hist``
    (length >= ``q * r_p``) must be zero and is left zero. Branch-free and division-free: rows
    arrive in random cell order, so a branch per row mispredicts, and a division per cell costs
    tens of cycles (about 6x faster than with both, barley families of 1000 rows).
    """
    stride = q * r_child
    n_t = 0
    for i in range(base.shape[0]):
        idx = column[i] * stride + base[i]
        touched[n_t] = idx
        touched_cfg[n_t] = column[i] * q + codes[i]
        n_t += hist[idx] == 0
        hist[idx] += 1
    for t in range(n_t):
        c = hist[touched[t]]
        hist[touched[t]] = 0
        cells[t] = c
        cfg_hist[touched_cfg[t]] += c
    n_cfg = 0
    for t in range(n_t):
        j = touched_cfg[t]
        configs[n_cfg] = cfg_hist[j]
        n_cfg += cfg_hist[j] != 0
        cfg_hist[j] = 0
    return n_t, n_cfg


@njit(cache=True, nogil=True)
def group_rows(codes, q, order, starts):
    """Counting sort of rows by dense code: rows of code ``g`` are ``order[starts[g]:starts[g+1]]``."""
    starts[: q + 1] = 0
    for i in range(codes.shape[0]):
        starts[codes[i] + 1] += 1
    for g in range(q):
        starts[g + 1] += starts[g]
    fill = starts[:q].copy()
    for i in range(codes.shape[0]):
        g = codes[i]
        order[fill[g]] = i
        fill[g] += 1


@njit(cache=True, nogil=True, inline="always")
def count_grouped(order, starts, q, column, child, r_child, scratch, touched, cells, configs):
    """Compact counts of ``S ∪ {p}`` from rows grouped by ``config_S`` (see :func:`group_rows`).

    ``scratch`` (length >= ``r_p * (r_child + 1)``, ``r_p`` the arity of ``x_p``) must be zero
    and is left zero; ``touched``
    needs ``r_p * (r_child + 1)`` entries. Returns ``(n_cells, n_configs)`` like :func:`count_dense`.
    """
    n_cells = 0
    n_cfg = 0
    width = r_child + 1  # per value of x_p: r_child cells then the configuration total
    for g in range(q):
        n_touched = 0
        for t in range(starts[g], starts[g + 1]):
            i = order[t]
            slot = column[i] * width
            cell = slot + child[i]
            if scratch[cell] == 0:
                touched[n_touched] = cell
                n_touched += 1
                if scratch[slot + r_child] == 0:
                    touched[n_touched] = slot + r_child
                    n_touched += 1
            scratch[cell] += 1
            scratch[slot + r_child] += 1
        for t in range(n_touched):
            cell = touched[t]
            if cell % width == r_child:
                configs[n_cfg] = scratch[cell]
                n_cfg += 1
            else:
                cells[n_cells] = scratch[cell]
                n_cells += 1
            scratch[cell] = 0
    return n_cells, n_cfg


@njit(cache=True, nogil=True)
def onehot_bitsets(cols, arities):
    """Row bitsets of every ``(variable, state)``: row ``offsets[v] + s`` of the result.

    Returns ``(bits, offsets)`` with ``bits`` of shape ``(sum(arities), ceil(N / 64))`` uint64.
    """
    n_vars, n = cols.shape
    n_words = (n + 63) // 64
    offsets = np.zeros(n_vars + 1, dtype=np.int64)
    for v in range(n_vars):
        offsets[v + 1] = offsets[v] + arities[v]
    bits = np.zeros((offsets[n_vars], n_words), dtype=np.uint64)
    for v in range(n_vars):
        col = cols[v]
        for i in range(n):
            bits[offsets[v] + col[i], i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    return bits, offsets


@njit(cache=True, nogil=True)
def prefix_cells(bits, offsets, arities, variables, child, levels, cell_size, small_start, small_rows,
                 small_max):
    """Bitsets of the cells ``(config of variables, child state)`` of a prefix set.

    Cells are numbered ``j * r_child + l`` with ``j`` the mixed-radix configuration (last
    variable fastest) and written into ``levels[1]`` (``levels`` is ``(2, cap, n_words)``
    scratch used as a ping-pong buffer; ``cap`` must hold ``q * r_child`` cells). Fills
    ``cell_size`` and, for cells with at most ``small_max`` rows, their row lists
    ``small_rows[small_start[c]:small_start[c + 1]]``. Returns ``(n_cells, dominant cell)``.
    """
    n_words = levels.shape[2]
    cur = 0
    levels[cur, 0, :] = ~np.uint64(0)
    count = 1
    nv = variables.shape[0]
    for t in range(nv + 1):
        v = child if t == nv else variables[t]
        r = arities[v]
        nxt = 1 - cur
        for a in range(count):
            for s in range(r):
                row = bits[offsets[v] + s]
                dst = levels[nxt, a * r + s]
                src = levels[cur, a]
                for w in range(n_words):
                    dst[w] = src[w] & row[w]
        count *= r
        cur = nxt
    if cur != 1:
        levels[1, :count] = levels[0, :count]
    dominant = 0
    filled = 0
    for c in range(count):
        cell = levels[1, c]
        size = 0
        for w in range(n_words):
            size += popcount(cell[w])
        cell_size[c] = size
        if size > cell_size[dominant]:
            dominant = c
        small_start[c] = filled
        if size <= small_max:
            for w in range(n_words):
                word = cell[w]
                while word:
                    low = word & (~word + np.uint64(1))
                    small_rows[filled] = w * 64 + popcount(low - np.uint64(1))
                    filled += 1
                    word ^= low
    small_start[count] = filled
    return count, dominant


@njit(cache=True, nogil=True, inline="always")
def count_bitset(cells_bits, cell_size, n_cells, dominant, small_start, small_rows, small_max,
                 r_child, bits, offsets, marg, cols, p, r_p, common, cnt, cells, configs):
    """Compact counts of ``S ∪ {p}`` from the prefix cells of :func:`prefix_cells`.

    ``bits``/``offsets`` are :func:`onehot_bitsets`, ``marg`` the state counts in the same
    layout, ``common`` the most frequent state of ``p``; ``cnt`` is scratch of
    ``n_cells * r_p``, ``cells`` and ``configs`` need ``n_rows + 1`` entries. Counts of the dominant
    cell and of state ``common`` come from margins.
    """
    n_words = cells_bits.shape[1]
    o = offsets[p]
    for s in range(r_p):
        cnt[dominant * r_p + s] = 0
    for c in range(n_cells):
        size = cell_size[c]
        if c == dominant:
            continue
        base = c * r_p
        for s in range(r_p):
            cnt[base + s] = 0
        if size == 0:
            continue
        if size <= small_max:
            for t in range(small_start[c], small_start[c + 1]):
                cnt[base + cols[p, small_rows[t]]] += 1
        else:
            rest = size
            cell = cells_bits[c]
            for s in range(r_p):
                if s == common:
                    continue
                total = 0
                for w in range(n_words):
                    total += popcount(cell[w] & bits[o + s, w])
                cnt[base + s] = total
                rest -= total
            cnt[base + common] = rest
        for s in range(r_p):
            cnt[dominant * r_p + s] -= cnt[base + s]
    rest = cell_size[dominant]
    for s in range(r_p):
        if s != common:
            cnt[dominant * r_p + s] += marg[o + s]
            rest -= cnt[dominant * r_p + s]
    cnt[dominant * r_p + common] = rest
    return compact_cells(cnt, n_cells, r_child, r_p, cells, configs)


@njit(cache=True, nogil=True)
def triple_counts(bits, offsets, binary):
    """``cube[a, b, c]``: rows with state 1 in each of the binary variables ``binary[a, b, c]``.

    Indices may repeat, so the diagonals hold the pair counts and the single-state counts.
    """
    nb = binary.shape[0]
    n_words = bits.shape[1]
    cube = np.empty((nb, nb, nb), dtype=np.int32)
    ab = np.empty(n_words, dtype=np.uint64)
    for a in range(nb):
        row_a = bits[offsets[binary[a]] + 1]
        for b in range(a, nb):
            row_b = bits[offsets[binary[b]] + 1]
            for w in range(n_words):
                ab[w] = row_a[w] & row_b[w]
            for c in range(b, nb):
                row_c = bits[offsets[binary[c]] + 1]
                total = 0
                for w in range(n_words):
                    total += popcount(ab[w] & row_c[w])
                cube[a, b, c] = total
                cube[a, c, b] = total
                cube[b, a, c] = total
                cube[b, c, a] = total
                cube[c, a, b] = total
                cube[c, b, a] = total
    return cube


@njit(cache=True, nogil=True)
def binary_prefix_cells(cube, bits, offsets, variables, child, prefix_bin, n_rows, lut, cell_size, ones):
    """Prefix cells of binary ``variables`` (at most two) and ``child`` from ``cube``, for :func:`count_binary`.

    ``prefix_bin`` are the cube indices of ``variables`` then ``child``. Writes the cell sizes
    in the layout of :func:`prefix_cells` (a cell mask has the first variable in its highest
    bit) by Möbius inversion of the counts of state 1 in every variable of a subset ``T``; row
    ``c`` of ``lut`` gets two cube indices whose set is the subset ``T`` of mask ``c`` (one
    repeated when ``|T| = 1``), or -1 for ``T = ∅`` and ``|T| = 3``; with three variables
    ``ones`` gets the bitset of their all-ones cell.
    """
    n_pre = variables.shape[0] + 1
    n_cells = 1 << n_pre
    for c in range(n_cells):
        a = b = -1
        size = 0
        for i in range(n_pre):
            if (c >> (n_pre - 1 - i)) & 1:
                if size == 0:
                    a = prefix_bin[i]
                b = prefix_bin[i]
                size += 1
        if size == 0:
            cell_size[c] = n_rows
        elif size == 3:
            cell_size[c] = cube[prefix_bin[0], prefix_bin[1], prefix_bin[2]]
        else:
            cell_size[c] = cube[a, a, b]
        lut[c, 0] = a if size < 3 else -1
        lut[c, 1] = b if size < 3 else -1
    for i in range(n_pre):
        bit = 1 << i
        for c in range(n_cells):
            if not c & bit:
                cell_size[c] -= cell_size[c | bit]
    if n_pre == 3:
        row_a = bits[offsets[variables[0]] + 1]
        row_b = bits[offsets[variables[1]] + 1]
        row_c = bits[offsets[child] + 1]
        for w in range(ones.shape[0]):
            ones[w] = row_a[w] & row_b[w] & row_c[w]


@njit(cache=True, nogil=True, inline="always")
def binary_cells(cube, lut, n_pre, y_bin, ones, cell_size, bits, row_y, n_y, h, cnt):
    """Counts of ``S ∪ {p}`` for binary ``p``, child and ``S`` (``|S| <= 2``) by Möbius inversion.

    ``lut``, ``ones`` and ``cell_size`` are from :func:`binary_prefix_cells` of ``S`` and the
    child (``n_pre`` variables); ``y_bin`` is ``p``'s cube index, ``row_y`` its state-1 row of
    ``bits`` and ``n_y`` that state's count. The rows with ``p = 1`` and state 1 in every
    variable of a subset ``T`` of ``S ∪ {child}`` are read from ``cube`` for ``|T| <= 2`` and
    counted on the all-ones prefix cell for ``|T| = 3``; inverting over ``T`` gives the cells
    with ``p = 1``, and the prefix cell sizes the rest. Writes all ``2^(n_pre + 1)`` cells, zeros
    included, in the layout of :func:`count_bitset` into ``cnt`` (``h`` is scratch of
    ``2^n_pre``); ``cube`` counts must fit int32. Called with a literal ``n_pre``, it compiles
    to straight-line code.
    """
    n_cells = 1 << n_pre
    h[0] = n_y
    for c in range(1, n_cells):
        if lut[c, 0] >= 0:
            h[c] = cube[lut[c, 0], lut[c, 1], y_bin]
        else:
            total = 0
            for w in range(ones.shape[0]):
                total += popcount(ones[w] & bits[row_y, w])
            h[c] = total
    for i in range(n_pre):
        bit = 1 << i
        for c in range(n_cells):
            if not c & bit:
                h[c] -= h[c | bit]
    for c in range(n_cells):
        cnt[2 * c + 1] = h[c]
        cnt[2 * c] = cell_size[c] - h[c]


@njit(cache=True, nogil=True, inline="always")
def count_binary(cube, lut, n_pre, y_bin, ones, cell_size, bits, row_y, n_y, h, cnt, cells, configs):
    """Compact counts (see :func:`compact_cells`) of :func:`binary_cells` (same arguments)."""
    binary_cells(cube, lut, n_pre, y_bin, ones, cell_size, bits, row_y, n_y, h, cnt)
    return compact_cells(cnt, 1 << n_pre, 2, 2, cells, configs)


@njit(cache=True, nogil=True, inline="always")
def compact_cells(cnt, n_cells, r_child, r_p, cells, configs):
    """Compact counts from ``cnt[(prefix cell) * r_p + x_p]`` (prefix cell ``j * r_child + l``).

    Branch-free: a zero count is written and then overwritten, so ``cells`` and ``configs`` need
    one entry more than the non-zero counts (``n_rows + 1`` suffices).
    """
    n_c = 0
    n_cfg = 0
    for j in range(n_cells // r_child):
        for s in range(r_p):
            nj = 0
            for l in range(r_child):
                k = cnt[(j * r_child + l) * r_p + s]
                cells[n_c] = k
                n_c += k != 0
                nj += k
            configs[n_cfg] = nj
            n_cfg += nj != 0
    return n_c, n_cfg


def parent_configs(data: np.ndarray, arities: np.ndarray, parents) -> tuple[np.ndarray, int]:
    """Dense code (0..q+-1, first-appearance order) of every row's parent configuration, and q+."""
    cols = as_columns(data, arities)
    variables = _check_parents(parents, cols.shape[0])
    codes = np.empty(cols.shape[1], dtype=np.int64)
    q = encode(cols, variables, np.asarray(arities, dtype=np.int64), codes, new_mark())
    return codes, int(q)


def contingency(data: np.ndarray, arities: np.ndarray, child: int, parents) -> np.ndarray:
    """Counts ``N_ijk`` as a ``(q+, r_child)`` int64 matrix over the *observed* configurations.

    Row ``j`` is the ``j``-th distinct parent configuration in order of first appearance in the
    data; unobserved configurations (all-zero rows) are left out, so ``q`` never matters.
    """
    codes, q = parent_configs(data, arities, parents)
    child = _check_parents([child], len(arities))[0]
    r = int(arities[child])
    column = np.asarray(data)[:, child].astype(np.int64)
    return np.bincount(codes * r + column, minlength=q * r).reshape(q, r)


def _check_parents(parents, n_vars: int) -> np.ndarray:
    variables = np.asarray(list(parents), dtype=np.int64)
    if variables.size and (variables.min() < 0 or variables.max() >= n_vars):
        raise CountsError(f"variable index out of range 0..{n_vars - 1}: {variables.tolist()}")
    if np.unique(variables).size != variables.size:
        raise CountsError(f"repeated variable in {variables.tolist()}")
    return variables
