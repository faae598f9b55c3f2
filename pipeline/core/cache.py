"""Stage cache: parquet artifacts plus a JSON manifest, keyed by a hash of the stage inputs.

Layout under the cache root::

    <root>/<stage>/<key>/manifest.json
    <root>/<stage>/<key>/<name>.<sha256[:16]>.parquet

``key`` is a hash of (stage name, stage version, parameters, keys of the input artifacts), so a
changed parameter, a changed upstream artifact or a bumped stage version gives a new key.

Writes are atomic and safe for concurrent writers sharing a filesystem (batch jobs, Dask
workers): every file is written to a temporary file in the same directory and moved into place
with :func:`os.replace`; parquet files are content-addressed (their name carries their checksum),
and the manifest, which lists the files and their checksums, is replaced last. The manifest
carries the SHA-256 of its own content (``checksum``), so a changed value in it (a flipped bit
in an objective) is detected like a damaged parquet file. An artifact therefore exists only when
its manifest exists, matches its own checksum and every file it lists has the listed checksum;
two writers of the same key each leave a complete, consistent artifact and the last manifest
wins. A truncated or corrupted artifact is detected on load (checksum mismatch, unreadable
manifest or parquet), reported with a warning and recomputed by the caller; this also covers a
file left empty by a crash between rename and flush, so no fsync is needed.

Final results only: ``get_or_compute`` asks the stage whether a fresh result is ``final``,
``limited`` (stopped by a time or work limit: stored with its status, reused by a rerun with the
same parameters, which say so) or ``interrupted`` (Ctrl-C: never stored; raised as
:class:`StageInterrupted` carrying what the stage had).

A time limit that is not one of a stage's parameters (its share of ``--budget``) enters the key
only when it cut the result: ``get_or_compute(..., limit=seconds)`` stores a final result under
the plain key, where an unlimited run finds it, and a limited one under the key of the parameters
plus ``limit``, where only a rerun with the same limit finds it; it looks under both.

The root is chosen by :func:`resolve_cache_dir`: the ``--cache-dir`` option, else the
environment variable ``HYBRIDBN_CACHE_DIR``, else ``./.hybridbn-cache``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hybridbn.errors import HybridBNError, error_reason
from pipeline.core.atomic import replace_file

logger = logging.getLogger(__name__)

ENV_VAR = "HYBRIDBN_CACHE_DIR"
DEFAULT_DIR = ".hybridbn-cache"
MANIFEST = "manifest.json"
_LIBRARIES = ("numpy", "scipy", "pandas", "pyarrow", "pyscipopt", "numba")


FINAL, LIMITED, INTERRUPTED = "final", "limited", "interrupted"
"""How a stage result ended: complete, stopped by a limit, or interrupted (never cached)."""


class CacheError(HybridBNError, OSError):
    """The cache directory cannot be used (not writable, disk full, ...)."""


class StageInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a stage that still returned a result; ``artifact`` holds it (not cached).

    ``artifacts`` (filled by the stage driver) holds the artifacts of the run up to this one.
    """

    def __init__(self, artifact: "Artifact"):
        super().__init__(f"stage {artifact.stage} interrupted")
        self.artifact = artifact
        self.artifacts: dict[str, Artifact] = {artifact.stage: artifact}

    def __reduce__(self):  # crosses process boundaries (grid workers) with its artifact
        return type(self), (self.artifact,), {"artifacts": self.artifacts}


@dataclass
class Artifact:
    """The output of one stage: named tables plus JSON-serialisable metadata.

    A table is a pandas frame or, for columnar data kept as it is (the score table), an Arrow
    table; each is loaded back as the kind it was stored as.

    ``meta`` holds the stage's summary (counts, small results); ``seconds`` the compute time
    recorded when the artifact was first computed (kept when it is later loaded from the cache).
    """

    stage: str
    key: str
    frames: dict[str, pd.DataFrame | pa.Table] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False
    completion: str = FINAL


def resolve_cache_dir(option: str | os.PathLike | None = None) -> Path:
    """Cache root: ``option`` (``--cache-dir``), else ``$HYBRIDBN_CACHE_DIR``, else ``./.hybridbn-cache``."""
    if option:
        return Path(option).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return Path(DEFAULT_DIR)


def _canonical(obj: Any) -> Any:
    """JSON-stable form of parameters (tuples as lists, numpy scalars as Python scalars)."""
    if isinstance(obj, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canonical(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    return obj


def stage_key(stage: str, version: str, params: Mapping[str, Any], inputs: Mapping[str, str]) -> str:
    """Hex key of a stage run: hash of stage name, version, parameters and input keys."""
    payload = json.dumps(
        {"stage": stage, "version": version, "params": _canonical(params), "inputs": _canonical(inputs)},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def library_versions() -> dict[str, str]:
    """Versions of Python and the numerical libraries, recorded in every manifest."""
    out = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _os_error(exc: OSError, what: str) -> CacheError:
    return CacheError(f"cannot {what}: {error_reason(exc)} (choose another --cache-dir or free disk space)")


def manifest_checksum(manifest: Mapping[str, Any]) -> str:
    """SHA-256 of a manifest's content without its ``checksum`` entry (canonical JSON)."""
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class NotCached(HybridBNError, LookupError):
    """A read-only cache (``StageCache(..., read_only=True)``) lacks an artifact it was asked for."""


class StageCache:
    """Parquet + manifest cache rooted at ``root``; ``enabled=False`` never reads nor writes;
    ``read_only=True`` reads, and raises :class:`NotCached` where it would have to compute."""

    def __init__(self, root: str | os.PathLike | None = None, enabled: bool = True, read_only: bool = False):
        self.root = resolve_cache_dir(root)
        self.enabled = enabled
        self.read_only = read_only

    def check_writable(self) -> None:
        """Raise :class:`CacheError` (one-line message) unless the root can be created and written."""
        if not self.enabled:
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".probe.", dir=self.root)
            os.close(fd)
            os.unlink(tmp)
        except OSError as exc:
            raise _os_error(exc, f"write to cache directory {self.root}") from None

    def _dir(self, stage: str, key: str) -> Path:
        return self.root / stage / key

    def has(self, stage: str, key: str) -> bool:
        """True if a complete manifest exists (checksums are verified only by :meth:`load`)."""
        return self.enabled and (self._dir(stage, key) / MANIFEST).is_file()

    def load(self, stage: str, key: str) -> Artifact | None:
        """The cached artifact, or None if absent; a corrupt one is reported and discarded."""
        if not self.enabled:
            return None
        directory = self._dir(stage, key)
        manifest_path = directory / MANIFEST
        if not manifest_path.is_file():
            return None
        try:
            manifest = json.loads(manifest_path.read_text())
            if "checksum" not in manifest:
                raise ValueError(f"{MANIFEST} has no checksum (written by an older version)")
            if manifest["checksum"] != manifest_checksum(manifest):
                raise ValueError(f"checksum mismatch in {MANIFEST}")
            frames = {}
            for name, entry in manifest["files"].items():
                path = directory / entry["file"]
                if file_sha256(path) != entry["sha256"]:
                    raise ValueError(f"checksum mismatch in {path.name}")
                frames[name] = pq.read_table(path) if entry.get("arrow") else pd.read_parquet(path)
        except Exception as exc:  # any unreadable piece means: recompute
            logger.warning(
                "cache artifact %s/%s is corrupt or incomplete (%s); recomputing", stage, key, exc
            )
            self._discard(manifest_path)
            return None
        return Artifact(
            stage=stage,
            key=key,
            frames=frames,
            meta=manifest.get("meta", {}),
            seconds=float(manifest.get("seconds", 0.0)),
            cached=True,
            completion=manifest.get("completion", FINAL),
        )

    @staticmethod
    def _discard(manifest_path: Path) -> None:
        try:
            manifest_path.unlink(missing_ok=True)
        except OSError:
            pass

    def store(
        self,
        artifact: Artifact,
        params: Mapping[str, Any],
        inputs: Mapping[str, str],
        version: str,
    ) -> None:
        """Write ``artifact`` atomically (files first, manifest last). No-op when disabled."""
        if not self.enabled:
            return
        directory = self._dir(artifact.stage, artifact.key)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            files = {}
            for name, frame in artifact.frames.items():
                digests: dict[str, str] = {}

                def content_name(tmp: Path, name: str = name) -> str:
                    digests["sha256"] = file_sha256(tmp)
                    return f"{name}.{digests['sha256'][:16]}.parquet"

                arrow = isinstance(frame, pa.Table)
                write = (lambda path, frame=frame: pq.write_table(frame, path)) if arrow else frame.to_parquet
                target = replace_file(directory / f"{name}.parquet", write, content_name)
                files[name] = {
                    "file": target.name,
                    "sha256": digests["sha256"],
                    "bytes": target.stat().st_size,
                    **({"arrow": True} if arrow else {}),
                }
            manifest = {
                "stage": artifact.stage,
                "version": version,
                "key": artifact.key,
                "params": _canonical(params),
                "inputs": dict(inputs),
                "seconds": artifact.seconds,
                "meta": artifact.meta,
                "completion": artifact.completion,
                "files": files,
                "libraries": library_versions(),
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "host": platform.node(),
                "pid": os.getpid(),
            }
            manifest = json.loads(json.dumps(manifest, default=_json_default))
            manifest["checksum"] = manifest_checksum(manifest)
            text = json.dumps(manifest, indent=1)
            replace_file(directory / MANIFEST, lambda p: p.write_text(text))
        except OSError as exc:
            raise _os_error(exc, f"write cache artifact under {directory}") from None

    def get_or_compute(
        self,
        stage: str,
        version: str,
        params: Mapping[str, Any],
        inputs: Mapping[str, str],
        compute: Callable[[], tuple[dict[str, pd.DataFrame | pa.Table], dict[str, Any]]],
        prepare: Callable[[], Any] | None = None,
        completion: Callable[[dict[str, Any]], str] | None = None,
        limit: float | None = None,
    ) -> Artifact:
        """Load the artifact for these parameters and inputs, or compute, time and store it.

        ``compute()`` returns ``(frames, meta)``; the stage time recorded is its wall time.
        ``prepare()``, run on a miss before the clock starts, does untimed set-up (imports).
        ``completion(meta)`` says how a fresh result ended (:data:`FINAL` when not given): a
        :data:`LIMITED` one is stored with that mark, an :data:`INTERRUPTED` one is not stored
        but raised as :class:`StageInterrupted`. ``limit``: the stage's time limit when it is not
        in ``params`` (see the module docstring).
        """
        key = stage_key(stage, version, params, inputs)
        limited_params = None if limit is None else {**params, "limit": limit}
        keys = [key] if limited_params is None else [key, stage_key(stage, version, limited_params, inputs)]
        for k in keys:
            hit = self.load(stage, k)
            if hit is not None:
                logger.debug("cache hit %s/%s", stage, k)
                return hit
        if self.read_only:
            raise NotCached(f"{stage}/{key} is not in the cache {self.root}")
        if prepare is not None:
            prepare()
        start = time.perf_counter()
        frames, meta = compute()
        # round-trip through JSON so a fresh artifact looks exactly like a cached one
        meta = json.loads(json.dumps(meta, default=_json_default))
        artifact = Artifact(stage, key, frames, meta, seconds=time.perf_counter() - start,
                            completion=completion(meta) if completion is not None else FINAL)
        if artifact.completion == INTERRUPTED:
            raise StageInterrupted(artifact)
        if artifact.completion == LIMITED and limited_params is not None:
            artifact.key, params = keys[1], limited_params
        self.store(artifact, params, inputs, version)
        return artifact


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
