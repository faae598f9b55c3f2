"""Checks run before any stage, so that bad input fails in a second rather than after the solve.

Each check raises :class:`~pipeline.core.declarations.ConfigError` (a ``ValueError``: one line, exit 2)
naming the option and the path or value: the data or network file exists, is a file and can be
read; its header names variables and the columns of ``--discretize`` (:func:`check_columns`);
``--treewidth`` fits the number of variables; the sample of ``--rows`` rows fits in memory; the
output folder can be written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from bayesnet.catalog import load_network
from bayesnet.dataset import data_columns, select_columns
from bayesnet.discretize import parse_spec
from hybridbn.errors import error_reason
from pipeline.core.config import RunConfig
from pipeline.core.declarations import ConfigError


def check_readable(option: str, path: Path) -> None:
    """``path`` is an existing, readable file (not a folder)."""
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a directory; give a file")
    if not path.exists():
        raise ConfigError(f"{option} file not found: {path}")
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot read the file: {error_reason(exc)}") from None


def check_writable_folder(option: str, folder: Path) -> None:
    """``folder`` accepts new files, or can be created (nothing is created here)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{option} {folder} cannot be written: {existing} is not a folder")
    if existing == folder:
        try:
            fd, probe = tempfile.mkstemp(prefix=".probe.", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise ConfigError(f"{option} {folder} cannot be written: {error_reason(exc)}") from None
    elif not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {folder} cannot be created: {existing} is not writable")


def check_columns(cfg: RunConfig, frame: pd.DataFrame | None = None) -> None:
    """The header of the user's data (``frame``, or the file ``cfg.data``) against
    :func:`bayesnet.dataset.select_columns`: no empty or generated name (an index column), the
    names of ``--drop``, ``--keep`` and ``--discretize`` (whose spec must parse,
    :func:`bayesnet.discretize.parse_spec`) among the columns, at least two columns left. The
    values (continuous-like columns, identifiers, too many states) are checked when the data stage
    reads them, before it encodes them."""
    if cfg.data is None:
        return
    plan = parse_spec(cfg.discretize, cfg.breaks)
    names = list(frame.columns) if frame is not None else data_columns(Path(str(cfg.data)))
    select_columns(pd.DataFrame(columns=names), cfg.drop or (), cfg.keep or (), tuple(plan.columns))


def n_variables(cfg: RunConfig) -> int | None:
    """Number of variables of the run's network or data file (the header only is read, less the
    columns of ``--drop``); None for a score file."""
    if cfg.scores is not None:
        return None
    if cfg.network is not None:
        return load_network(cfg.network).n_vars
    return len(data_columns(Path(str(cfg.data)))) - len(cfg.drop or ())


def physical_memory() -> int | None:
    """Bytes of physical memory, None where the platform does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_sizes(cfg: RunConfig) -> None:
    """``--treewidth K`` needs ``K <= n - 1`` for ``n`` variables, and a sample of ``--rows``
    rows (one byte per cell) must fit in the machine's memory."""
    sampled = cfg.network is not None
    if cfg.treewidth is None and not sampled:
        return
    n = n_variables(cfg)
    memory = physical_memory()
    if sampled and memory is not None and cfg.rows * n > memory:
        raise ConfigError(f"--rows {cfg.rows}: a sample of {cfg.rows} rows x {n} variables needs "
                          f"{cfg.rows * n / 2**30:.3g} GiB, more than this machine's {memory / 2**30:.3g} GiB")
    if cfg.treewidth is not None and n is not None and cfg.treewidth > n - 1:
        raise ConfigError(f"--treewidth must be at most n - 1 = {n - 1} for the {n} variables of "
                          f"{cfg.source_name}, got {cfg.treewidth} (or leave it out for no bound)")
