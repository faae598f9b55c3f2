"""The vendored bnlearn benchmark networks (``bayesnet/networks/*.bif.gz``, see PROVENANCE.md),
and networks of the user's own, given as BIF files."""

from __future__ import annotations

import functools
from pathlib import Path

from bayesnet.bif import read_bif
from bayesnet.network import Network
from hybridbn.errors import HybridBNError

NETWORK_DIR = Path(__file__).resolve().parent / "networks"
_SUFFIX = ".bif.gz"
#: A network given by one of these endings is a BIF file, not a vendored name.
FILE_SUFFIXES = (".bif", ".bif.gz")


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


def check_network(spec: str) -> None:
    """Raise :class:`UnknownNetworkError` unless ``spec`` is a vendored name or an existing BIF file."""
    if is_network_file(spec):
        if not Path(spec).is_file():
            raise UnknownNetworkError(f"network file not found: {spec}")
        return
    known = list_networks()
    if spec not in known:
        raise UnknownNetworkError(f"unknown network {spec!r}; known networks: {', '.join(known)}; "
                                  "or give a BIF file (.bif or .bif.gz)")


def load_network(spec: str) -> Network:
    """A benchmark network by name (parsed once per process; each call returns a fresh copy), or
    the network of a BIF file."""
    check_network(spec)
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
