"""Stage cache: keys, atomic concurrent writes, corruption detection, errors."""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import sys

import numpy as np
import pandas as pd
import pytest

from pipeline.core.cache import (
    FINAL,
    LIMITED,
    Artifact,
    CacheError,
    StageCache,
    resolve_cache_dir,
    stage_key,
)


def _frame(seed: int, n: int = 20_000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.random(n), "c": [[1, 2]] * n})


def _compute():
    return {"table": _frame(0)}, {"count": 3, "orders": {"0": 5}}


def _writer(root: str, barrier, writer_id: int) -> None:
    cache = StageCache(root)
    key = stage_key("scores", "1", {"palim": 3}, {"data": "abc"})
    barrier.wait()
    for _ in range(5):  # several overlapping rounds of compute + store
        frames, meta = _compute()
        meta["writer"] = writer_id  # manifests differ; both are valid
        cache.store(Artifact("scores", key, frames, meta, seconds=0.1), {"palim": 3}, {"data": "abc"}, "1")


def test_key_depends_on_every_part():
    base = stage_key("scores", "1", {"palim": 3, "ess": 1.0}, {"data": "k"})
    assert base == stage_key("scores", "1", {"ess": 1.0, "palim": 3}, {"data": "k"})  # order-free
    assert base != stage_key("scores", "2", {"palim": 3, "ess": 1.0}, {"data": "k"})
    assert base != stage_key("scores", "1", {"palim": 2, "ess": 1.0}, {"data": "k"})
    assert base != stage_key("scores", "1", {"palim": 3, "ess": 1.0}, {"data": "j"})
    assert base != stage_key("solve", "1", {"palim": 3, "ess": 1.0}, {"data": "k"})


def test_roundtrip_and_hit(tmp_path):
    cache = StageCache(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return _compute()

    first = cache.get_or_compute("scores", "1", {"palim": 3}, {}, compute)
    second = cache.get_or_compute("scores", "1", {"palim": 3}, {}, compute)
    assert len(calls) == 1 and not first.cached and second.cached
    pd.testing.assert_frame_equal(first.frames["table"], second.frames["table"])
    assert first.meta == second.meta == {"count": 3, "orders": {"0": 5}}
    assert second.seconds == pytest.approx(first.seconds)
    manifest = json.loads((tmp_path / "scores" / first.key / "manifest.json").read_text())
    assert manifest["params"] == {"palim": 3} and "pandas" in manifest["libraries"]
    assert set(manifest["files"]) == {"table"}


def test_a_result_its_limit_cut_is_cached_apart_from_the_unlimited_one(tmp_path):
    """``limit`` enters the key only of a limited result: an unlimited run never reuses it, a
    rerun with the same limit does; a final result is the unlimited run's, whatever the limit."""
    cache = StageCache(tmp_path)
    calls = []

    def run(completion: str, limit: float | None):
        def compute():
            calls.append(completion)
            return {}, {"status": completion}
        return cache.get_or_compute("scores", "1", {"palim": 3}, {}, compute, completion=lambda m: m["status"],
                                    limit=limit)

    plain = stage_key("scores", "1", {"palim": 3}, {})
    cut = run(LIMITED, 2.0)
    assert cut.key == stage_key("scores", "1", {"palim": 3, "limit": 2.0}, {}) != plain
    assert run(LIMITED, 2.0).cached and not run(LIMITED, 3.0).cached
    assert not run(FINAL, None).cached and run(LIMITED, 2.0).meta["status"] == FINAL
    assert calls == [LIMITED, LIMITED, FINAL]
    finished = StageCache(tmp_path / "other")
    first = finished.get_or_compute("scores", "1", {}, {}, lambda: ({}, {}), limit=1.0)
    assert first.key == stage_key("scores", "1", {}, {}) and finished.get_or_compute(
        "scores", "1", {}, {}, lambda: ({}, {})).cached


def test_disabled_cache_never_writes(tmp_path):
    cache = StageCache(tmp_path / "c", enabled=False)
    art = cache.get_or_compute("data", "1", {}, {}, _compute)
    assert not art.cached and not (tmp_path / "c").exists()


def test_concurrent_writers_leave_one_valid_artifact(tmp_path):
    ctx = mp.get_context("spawn" if sys.platform == "darwin" else "fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), barrier, i)) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    key = stage_key("scores", "1", {"palim": 3}, {"data": "abc"})
    art = StageCache(tmp_path).load("scores", key)
    assert art is not None and art.meta["writer"] in (0, 1)
    pd.testing.assert_frame_equal(art.frames["table"], _frame(0))
    leftovers = [p for p in (tmp_path / "scores" / key).iterdir() if p.name.startswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "manifest"])
def test_corrupt_artifact_is_recomputed_with_warning(tmp_path, caplog, damage):
    cache = StageCache(tmp_path)
    art = cache.get_or_compute("scores", "1", {"palim": 3}, {}, _compute)
    directory = tmp_path / "scores" / art.key
    parquet = next(directory.glob("table.*.parquet"))
    if damage == "truncate":
        parquet.write_bytes(parquet.read_bytes()[:100])
    elif damage == "flip":
        raw = bytearray(parquet.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        parquet.write_bytes(bytes(raw))
    else:
        (directory / "manifest.json").write_text('{"files": ')
    calls = []

    def compute():
        calls.append(1)
        return _compute()

    with caplog.at_level(logging.WARNING, logger="pipeline.core.cache"):
        again = cache.get_or_compute("scores", "1", {"palim": 3}, {}, compute)
    assert calls == [1] and not again.cached
    assert any("corrupt" in r.getMessage() for r in caplog.records)
    third = cache.get_or_compute("scores", "1", {"palim": 3}, {}, compute)
    assert third.cached and calls == [1]
    pd.testing.assert_frame_equal(third.frames["table"], _frame(0))


def test_missing_file_counts_as_absent(tmp_path):
    cache = StageCache(tmp_path)
    art = cache.get_or_compute("scores", "1", {"palim": 3}, {}, _compute)
    next((tmp_path / "scores" / art.key).glob("table.*.parquet")).unlink()
    assert cache.load("scores", art.key) is None


def test_unwritable_cache_dir_is_a_clear_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    cache = StageCache(blocker / "cache")  # cannot be created, even by root
    with pytest.raises(CacheError, match="cannot write"):
        cache.check_writable()
    with pytest.raises(CacheError, match="cannot write"):
        cache.get_or_compute("data", "1", {}, {}, _compute)


def test_full_disk_is_a_clear_error(tmp_path, monkeypatch):
    cache = StageCache(tmp_path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    with pytest.raises(CacheError, match="No space left on device"):
        cache.get_or_compute("data", "1", {}, {}, _compute)
    assert not list(tmp_path.rglob("manifest.json"))


def test_resolve_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("HYBRIDBN_CACHE_DIR", str(tmp_path / "env"))
    assert resolve_cache_dir(tmp_path / "opt") == tmp_path / "opt"
    assert resolve_cache_dir(None) == tmp_path / "env"
    monkeypatch.delenv("HYBRIDBN_CACHE_DIR")
    assert str(resolve_cache_dir(None)) == ".hybridbn-cache"
