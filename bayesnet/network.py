"""Discrete Bayesian networks: variables, ordered states, parents and CPTs.

Conventions (docs/architecture.md, "pipeline/ (data side)"): ``parents[v]`` lists the parent
indices of ``v`` in the order of its BIF ``probability`` block, and ``cpts[v]`` has shape
``(*[r_p for p in parents[v]], r_v)`` in C order, so ``cpts[v].reshape(-1, r_v)`` gives one
conditional distribution per parent configuration with the last parent varying fastest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from graphs.dag import topological_order
from hybridbn.errors import HybridBNError

logger = logging.getLogger(__name__)

#: Absolute tolerance on the sum of a CPT row.
ROW_SUM_TOL = 1e-4


class NetworkError(HybridBNError, ValueError):
    """A network whose parts are inconsistent (shapes, probabilities, cycles)."""


@dataclass
class Network:
    """A discrete Bayesian network (structure and conditional probability tables)."""

    name: str
    variables: list[str]
    states: list[list[str]]
    parents: list[list[int]]
    cpts: list[np.ndarray]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Network):
            return NotImplemented
        return (
            (self.name, self.variables, self.states, self.parents)
            == (other.name, other.variables, other.states, other.parents)
            and all(np.array_equal(a, b) for a, b in zip(self.cpts, other.cpts))
        )

    @property
    def n_vars(self) -> int:
        """Number of variables."""
        return len(self.variables)

    @property
    def n_edges(self) -> int:
        """Number of arcs."""
        return sum(len(p) for p in self.parents)

    @property
    def arities(self) -> np.ndarray:
        """State counts ``r_v`` as an int64 array."""
        return np.array([len(s) for s in self.states], dtype=np.int64)

    @property
    def adjacency(self) -> np.ndarray:
        """Boolean DAG adjacency matrix, ``A[p, c]`` True iff ``p -> c``."""
        a = np.zeros((self.n_vars, self.n_vars), dtype=bool)
        for child, ps in enumerate(self.parents):
            a[ps, child] = True
        return a

    def index(self, name: str) -> int:
        """Index of the variable called ``name`` (``ValueError`` if absent)."""
        try:
            return self.variables.index(name)
        except ValueError:
            raise NetworkError(f"network {self.name!r} has no variable {name!r}") from None

    def topological_order(self) -> list[int]:
        """Variable indices with every parent before its children (``NetworkError`` on a cycle)."""
        try:
            return [int(v) for v in topological_order(self.adjacency)]
        except ValueError as exc:
            raise NetworkError(f"network {self.name!r} is not acyclic: {exc}") from None

    def copy(self) -> "Network":
        """A deep copy (new lists and arrays)."""
        return Network(
            name=self.name,
            variables=list(self.variables),
            states=[list(s) for s in self.states],
            parents=[list(p) for p in self.parents],
            cpts=[np.array(c, dtype=np.float64, copy=True) for c in self.cpts],
        )

    def validate(self, tol: float = ROW_SUM_TOL) -> None:
        """Raise :class:`NetworkError` unless names, shapes, probabilities and acyclicity are valid."""
        n = self.n_vars
        if not (len(self.states) == len(self.parents) == len(self.cpts) == n):
            raise NetworkError(
                f"{n} variables but {len(self.states)} state lists, {len(self.parents)} parent "
                f"lists and {len(self.cpts)} CPTs"
            )
        if len(set(self.variables)) != n:
            dup = sorted({v for v in self.variables if self.variables.count(v) > 1})
            raise NetworkError(f"duplicate variable names: {dup}")
        arities = self.arities
        for v, name in enumerate(self.variables):
            states = self.states[v]
            if len(states) < 1 or len(set(states)) != len(states):
                raise NetworkError(f"variable {name!r}: states must be non-empty and distinct")
            ps = self.parents[v]
            if len(set(ps)) != len(ps) or any(not 0 <= p < n or p == v for p in ps):
                raise NetworkError(f"variable {name!r}: invalid parent list {ps}")
            shape = tuple(int(arities[p]) for p in ps) + (int(arities[v]),)
            cpt = np.asarray(self.cpts[v])
            if cpt.shape != shape:
                raise NetworkError(f"variable {name!r}: CPT shape {cpt.shape}, expected {shape}")
            rows = cpt.reshape(-1, shape[-1])
            if not np.all(np.isfinite(rows)) or np.any(rows < 0):
                raise NetworkError(f"variable {name!r}: CPT has negative or non-finite entries")
            bad = np.flatnonzero(np.abs(rows.sum(axis=1) - 1.0) > tol)
            if bad.size:
                raise NetworkError(
                    f"variable {name!r}: CPT row {int(bad[0])} sums to "
                    f"{rows[bad[0]].sum():.6g}, not 1 (tolerance {tol})"
                )
        self.topological_order()


def parent_config_index(parent_columns: list[np.ndarray], radix: list[int]) -> np.ndarray:
    """Row-wise CPT row index of the parents' codes: mixed radix with the last parent fastest.

    ``parent_columns[i]`` holds the codes of the ``i``-th parent, whose arity is ``radix[i]``;
    the result indexes ``cpt.reshape(-1, r_child)`` (a root has the single configuration 0).
    """
    if not parent_columns:
        raise ValueError("parent_config_index needs at least one parent column")
    config = parent_columns[0].astype(np.intp)
    for column, base in zip(parent_columns[1:], radix[1:]):
        config *= int(base)
        config += column
    return config

