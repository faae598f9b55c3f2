"""The vendored bnlearn benchmark networks (``bayesnet/networks/*.bif.gz``, see PROVENANCE.md),
networks of the user's own, given as BIF files, and generated ones, ``random:N[:SEED]``
(:func:`bayesnet.random_network.random_network`: N variables, 2-4 states, 0-6 parents)."""

from __future__ import annotations

import functools
from pathlib import Path

from bayesnet.bif import read_bif
from bayesnet.network import Network
from bayesnet.random_network import random_network
from hybridbn.errors import HybridBNError

NETWORK_DIR = Path(__file__).resolve().parent / "networks"
_SUFFIX = ".bif.gz"
#: A network given by one of these endings is a BIF file, not a vendored name.
FILE_SUFFIXES = (".bif", ".bif.gz")
#: A network given with this prefix is generated: ``random:N`` or ``random:N:SEED`` (seed 0 by default).
RANDOM_PREFIX = "random:"


class UnknownNetworkError(HybridBNError, ValueError):
    """Neither a vendored network name nor an existing BIF file."""


def list_networks() -> list[str]:
    """Sorted names of the vendored networks."""
    return sorted(p.name[: -len(_SUFFIX)] for p in NETWORK_DIR.glob(f"*{_SUFFIX}"))


@functools.lru_cache(maxsize=None)
def _load_cached(name: str) -> Network:
    return read_bif(NETWORK_DIR / f"{name}{_SUFFIX}")


def is_network_file(spec: str) -> bool:
    """Whether a network is given as a BIF file (``.bif`` or ``.bif.gz``) rather than by name."""
    return str(spec).lower().endswith(FILE_SUFFIXES)


def random_spec(spec: str) -> tuple[int, int] | None:
    """``(n_vars, seed)`` of a generated network's spelling ``random:N[:SEED]``, ``None`` for any other
    network; :class:`UnknownNetworkError` when the prefix is there but the rest is malformed."""
    if not str(spec).startswith(RANDOM_PREFIX):
        return None
    fields = str(spec)[len(RANDOM_PREFIX):].split(":")
    if len(fields) <= 2 and all(f.isascii() and f.isdigit() for f in fields) and int(fields[0]) >= 1:
        return int(fields[0]), int(fields[1]) if len(fields) == 2 else 0
    raise UnknownNetworkError(f"bad generated network {spec!r}: expected random:N or random:N:SEED with N a "
                              "positive number of variables and SEED a non-negative integer, e.g. random:2000:1")


@functools.lru_cache(maxsize=4)
def _generated(n_vars: int, seed: int) -> Network:
    return random_network(n_vars, seed)


def check_network(spec: str) -> None:
    """Raise :class:`UnknownNetworkError` unless ``spec`` is a vendored name, an existing BIF file or
    a well-formed ``random:N[:SEED]``."""
    if random_spec(spec) is not None:
        return
    if is_network_file(spec):
        if not Path(spec).is_file():
            raise UnknownNetworkError(f"network file not found: {spec}")
        return
    known = list_networks()
    if spec not in known:
        raise UnknownNetworkError(f"unknown network {spec!r}; known networks: {', '.join(known)}; "
                                  "or give a BIF file (.bif or .bif.gz) or random:N[:SEED]")


def load_network(spec: str) -> Network:
    """A benchmark network by name (parsed once per process; each call returns a fresh copy), the
    network of a BIF file, or a generated one (``random:N[:SEED]``, also kept for the process)."""
    check_network(spec)
    generated = random_spec(spec)
    if generated is not None:
        return _generated(*generated).copy()
    if is_network_file(spec):
        return read_bif(Path(spec))
    return _load_cached(spec).copy()


def network_summary() -> list[dict[str, int | str]]:
    """One row per vendored network: name, n_vars, n_edges, max in-degree, max states."""
    rows = []
    for name in list_networks():
        net = _load_cached(name)
        rows.append(
            {
                "name": name,
                "n_vars": net.n_vars,
                "n_edges": net.n_edges,
                "max_in_degree": max(len(p) for p in net.parents),
                "max_states": int(net.arities.max()),
            }
        )
    return rows
