"""The score stage of a large network spread over an executor (process pool or Dask cluster).

The children are split into ``k`` groups; group ``g`` is one task calling
:func:`scores.candidates.build_score_table` with the restriction (and the required parents)
narrowed so that children outside ``g`` have no allowed parent (each of them then costs a single
empty-set score). The
families of each group's children are merged into one table, identical to a single call.
The pruning counters are merged exactly: every child outside its group contributes the
counters of an empty-parent-only run, so ``sum over groups - (k - 1) * (run with no allowed
parent at all)`` equals the counters of the single call. With a ``deadline`` in the options
each task checks it before each child (:func:`scores.candidates.build_score_table`); the
children the tasks cut are listed in ``meta["unscored"]``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from scores.table import ScoreTable, offsets

logger = logging.getLogger(__name__)


def _score_group(data: np.ndarray, arities: np.ndarray, allowed: np.ndarray, required: np.ndarray,
                 options: dict[str, Any]):
    """One task: a score table in which only the group's children have allowed (and required) parents."""
    from scores.candidates import build_score_table  # deferred: numba kernels, loaded by the tasks only

    return build_score_table(data, arities, allowed=allowed, required=required, **options)


def split_score_table(
    executor,
    data: np.ndarray,
    arities: np.ndarray,
    n_groups: int,
    allowed: np.ndarray | None = None,
    names: list[str] | None = None,
    required: np.ndarray | None = None,
    **options: Any,
):
    """Score table of ``build_score_table(data, arities, allowed=allowed, required=required, names=names,
    **options)``
    computed as ``n_groups`` tasks on ``executor`` (see the module docstring)."""
    start = time.perf_counter()
    n = data.shape[1]
    base = np.ones((n, n), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool).copy()
    np.fill_diagonal(base, False)
    need = np.zeros_like(base) if required is None else np.asarray(required, dtype=bool)
    groups = [g for g in np.array_split(np.arange(n), max(1, min(int(n_groups), n))) if g.size]
    tasks = []
    for group in groups:
        narrowed, narrowed_need = np.zeros_like(base), np.zeros_like(base)
        narrowed[:, group], narrowed_need[:, group] = base[:, group], need[:, group]
        tasks.append((data, arities, narrowed, narrowed_need, options))
    tasks.append((data, arities, np.zeros_like(base), np.zeros_like(base), options))  # every child: empty set only
    tables: dict[int, Any] = {}
    for i, table, exc in executor.map_unordered(_score_group, tasks):
        if exc is not None:
            raise exc
        tables[i] = table
    parts = [tables[i].select(np.isin(tables[i].child, group)) for i, group in enumerate(groups)]
    empty = tables[len(groups)].meta["counts"]
    counts = {
        key: sum(tables[i].meta["counts"][key] for i in range(len(groups))) - (len(groups) - 1) * empty[key]
        for key in empty
    }
    meta = dict(tables[0].meta)
    meta.update(
        counts=counts,
        time_s=time.perf_counter() - start,
        restricted=bool((~base).sum() > n) or bool(need.any()),
        groups=len(groups),
        unscored=sorted(v for table in tables.values() for v in table.meta["unscored"]),
        memory_cut=sorted(v for table in tables.values() for v in table.meta["memory_cut"]),
    )
    logger.info("scored %d children in %d groups in %.2f s", n, len(groups), meta["time_s"])
    child = np.concatenate([t.child for t in parts])
    sizes = np.concatenate([t.sizes for t in parts])
    members = np.concatenate([t.parents for t in parts])
    return ScoreTable.from_columns(n, child, offsets(sizes), members, np.concatenate([t.score for t in parts]),
                                   names, meta)
