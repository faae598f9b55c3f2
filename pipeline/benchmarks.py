"""The vendored bnlearn benchmark networks (``pipeline/networks/*.bif.gz``, see PROVENANCE.md)."""

from __future__ import annotations

import functools
from pathlib import Path

from pipeline.bif import read_bif
from pipeline.network import Network

NETWORK_DIR = Path(__file__).resolve().parent / "networks"
_SUFFIX = ".bif.gz"


class UnknownNetworkError(ValueError):
    """A benchmark network name that is not vendored."""


def list_networks() -> list[str]:
    """Sorted names of the vendored networks."""
    return sorted(p.name[: -len(_SUFFIX)] for p in NETWORK_DIR.glob(f"*{_SUFFIX}"))


@functools.lru_cache(maxsize=None)
def _load_cached(name: str) -> Network:
    return read_bif(NETWORK_DIR / f"{name}{_SUFFIX}")


def load_network(name: str) -> Network:
    """The named benchmark network, parsed once per process; each call returns a fresh copy."""
    known = list_networks()
    if name not in known:
        raise UnknownNetworkError(f"unknown network {name!r}; known networks: {', '.join(known)}")
    return _load_cached(name).copy()


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
