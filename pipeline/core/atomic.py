"""Atomic file and folder writes: a reader sees the old content or the new, never a torn file.

* :func:`replace_file` writes one file through a private temporary file in the same folder and
  moves it into place with :func:`os.replace` (atomic on POSIX and Windows).
* :func:`staged_folder` gives a temporary sibling folder that any number of writers fill; when
  the block ends without error the folder replaces the target in one rename (an older target is
  moved aside first and then removed), and on error the temporary folder is removed and the
  target is left as it was.

An ``OSError`` while writing (full disk, file-size limit, no permission) is raised again as
:class:`WriteError`, a one-line message naming the path.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from hybridbn.errors import HybridBNError, error_reason


class WriteError(HybridBNError, OSError):
    """A file or folder could not be written; the message names it (and nothing was replaced)."""


def write_error(exc: OSError, path: str | os.PathLike) -> WriteError:
    """``exc`` as a :class:`WriteError` naming ``path``."""
    reason = error_reason(exc)
    error = WriteError(f"cannot write {path}: {reason}")
    error.errno = exc.errno
    return error


def replace_file(path: str | os.PathLike, write: Callable[[Path], object],
                 final_name: Callable[[Path], str] | None = None) -> Path:
    """Write ``path`` atomically: ``write(tmp)`` fills a temporary file, which is then renamed.

    ``final_name(tmp)``, if given, picks the file name in ``path``'s folder once the content is
    written (e.g. from its checksum); returns the path written.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    except OSError as exc:
        raise write_error(exc, path) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.chmod(tmp_path, 0o644)  # mkstemp's 0600 would hide shared files from other users
        target = path.parent / final_name(tmp_path) if final_name else path
        os.replace(tmp_path, target)
    except OSError as exc:
        tmp_path.unlink(missing_ok=True)
        raise write_error(exc, path) from None
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return target


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike) -> Iterator[Path]:
    """A temporary folder next to ``target``; it becomes ``target`` when the block succeeds.

    Writers put any files into the yielded folder. On an exception nothing of it remains and
    ``target`` keeps its previous content; an ``OSError`` is re-raised as :class:`WriteError`
    naming the file when the error knows it, else the target folder.
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    except OSError as exc:
        raise write_error(exc, target) from None
    try:
        yield staging
        os.chmod(staging, 0o755)
        _swap_in(staging, target)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            name = Path(exc.filename).name if exc.filename else None
            raise write_error(exc, target / name if name else target) from None
        raise


def _swap_in(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is moved aside and removed after."""
    if not target.exists():
        os.rename(staging, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rename(target, old / target.name)
    os.rename(staging, target)
    shutil.rmtree(old, ignore_errors=True)
