"""How :func:`ilp.solve_ilp` solves: the model's optional rows, the plugins' settings, the route.

What is solved (the table, required / forbidden arcs, parent limit, ``extend`` hooks) and for how
long (``time_limit``) are arguments of :func:`ilp.solve_ilp`; :class:`ILPOptions` holds the rest,
with the measurement behind a default where one was taken (figures from ``docs/benchmarks.md``:
BDeu ESS 1, palim 3, solve CPU seconds). No option changes the optimum, only the search's path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from hybridbn.options import FLAG, FLOAT, INT, OptionError, Param
from ilp.portfolio import DP_MAX_VARS
from ilp.problem import ILPInputError

FREQUENCIES = ("sepa_freq", "prop_freq", "sinks_freq")
"""The options in SCIP's frequency semantics: -1 never, 0 the root only, f every f levels."""
KINDS = {"bool": FLAG, "int": INT, "float": FLOAT}
"""The :mod:`hybridbn.options` kind of each field's type; an integer is at least 0 unless
:data:`BOUNDS` says otherwise."""
BOUNDS: dict[str, dict[str, Any]] = {
    **{name: {"low": -1} for name in FREQUENCIES},
    "root_rounds": {"low": -1},
    "arc_branch_priority": {"low": -math.inf},
    "subip_maxdepth": {"low": -math.inf},
    "restart_min_fixed": {"low": 0.0, "high": 1.0},
    "inout_weight": {"low": 0.0, "high": 1.0, "open": "low"},
    "subip_time_limit": {"low": 0.0, "open": "low"},
}


@dataclass(frozen=True)
class ILPOptions:
    """Settings of the family-variable IP on SCIP (Cussens 2011; Bartlett & Cussens 2017): the
    model's optional rows (:mod:`ilp.model`), the cluster-cut constraint handler
    (:mod:`ilp.conshdlr_cluster`), the primal side (:mod:`ilp.heur_sinks`) and the run.

    Frequencies follow SCIP: every ``f`` depth levels (nodes for a heuristic), 0 the root only,
    -1 never. There is no thread count: the branch and bound runs on one thread, as SCIP's
    concurrent solvers would each copy the model without its Python plugins (the acyclicity
    constraint). Bad values raise :class:`ilp.problem.ILPInputError` naming the option.
    """

    arc_vars: bool = True
    """Binary arc variables ``I(u -> v)`` linked to the families, branched on first (on large
    tables only where ``arc_vars_max_arcs`` says)."""
    arc_vars_max_arcs: int = 2000
    """Tables with more candidate arcs than this get arc variables only for the arcs into nodes
    of at least ``2 * arc_form_min_saving`` families, the only ones whose cut shares can take the
    arc form. Each arc variable brings a linking row into every LP; branching on arcs pays on
    tables solved in the tree (alarm N=5000, 588 arcs: 6.9 s against 14.2 s without arc
    variables; alarm N=10000 ESS 10 palim 4, 796 arcs: gap 0.34 % against 0.61 % after 300 s),
    the shorter LP on large tables solved mostly at the root (munin1's hybrid table at palim 2,
    2,800 arcs: proven in 201 s instead of 345 s; at palim 3 a 0.019 % gap after 600 s instead of
    0.17 %); alarm N=1000 ESS 100 (1,327 arcs) is level (docs/benchmarks.md)."""
    arc_branch_priority: int = 10
    """Branching priority of the arc variables (with 0, alarm N=5000 took 97.4 s against 60.9 s)."""
    set_packing: bool = True
    """GOBNILP's set-packing rows of :mod:`ilp.set_packing` up front (alarm N=5000 seeds 1-2 in 39
    and 38 nodes against 126 and 179 with the ``convex4`` cuts alone, seed 0 in 108 against 87)."""
    arc_form_min_saving: int = 5000
    """A cluster cut writes a member's share through its arc variables when that saves at least
    this many nonzeros (:func:`ilp.clusters.cut_row`; only with ``arc_vars``). Pathfinder's
    hybrid table at palim 3, whose 63-state node holds 46,727 of its 53,470 families, then has
    a 0.40 % gap after 120 CPU s instead of 1.35 %. Below about 5000 the rows of tables without
    such a node change too, without a gain: with every saving taken (1), alarm N=1000 ESS 100
    and munin2 ended with weaker bounds (docs/benchmarks.md)."""
    cluster_3: bool = False
    """All 3-node cluster constraints up front instead of separated when violated."""

    sepa_freq: int = 1
    """Depth frequency of cluster-cut separation (every node: 15 % less time than every 10th
    depth level over 8 instances, 220.5 against 258.5 s)."""
    convex4: bool = True
    """The 4-node convex-hull cuts of :mod:`ilp.convex4` when no cluster cut is violated (alarm
    N=5000 root bound -53,296.4 instead of -53,115.8; optimum -53,531.96)."""
    inout_weight: float = 1.0
    """``w < 1``: the greedy cluster finder first searches ``w * x* + (1 - w) * incumbent``, and
    the LP solution ``x*`` only when it finds nothing there (in-out separation, Ben-Ameur & Neto
    2007). Its cuts are violated at ``x*`` and pass near the incumbent. With 0.8 the root bound of
    large tables closes faster (andes without restriction, palim 3: 0.575 % after 90 CPU s
    instead of 0.681 %; munin2's hybrid table after 300 s: 0.534 % instead of 0.571 %), but tables
    proven in the tree took longer (alarm N=10000 ESS 10 palim 4: 695 s instead of 593 s), so
    the default is 1, the LP solution alone (docs/benchmarks.md)."""
    subip: bool = True
    """Exact cluster-cut separation (enumeration or sub-IP, :mod:`ilp.subip`) when the greedy
    finder fails, and at the root as ``subip_root_every`` says."""
    subip_maxdepth: int = 0
    """Deepest node at which the exact separation runs (0: the root only)."""
    subip_time_limit: float = 1.0
    """Seconds for one exact separation call. Only calls on large components reach it: with 1
    instead of 5, andes without restriction (palim 3, 37,150 families) ends its root within 600
    CPU s and has a 0.276 % gap there instead of 0.533 % (0.251 % instead of 0.473 % with
    ``inout_weight`` 0.8), while five tables from alarm to pathfinder palim 3 take the same
    search and munin2's hybrid table is level after 300 s (docs/benchmarks.md)."""
    subip_root_every: int = 10
    """At the root, the exact separation also runs every this many cut rounds when the greedy
    finder did find cuts (0: only when it finds none). Late in the root the greedy cuts are
    barely violated while the most violated cluster is not (pathfinder's hybrid table after
    100 s: 0.22); with 10, pathfinder's table (palim 2) is proven optimal in 80 CPU s instead
    of still being at the root after 150 s, munin1's in 301 s instead of 622 s
    (docs/benchmarks.md)."""
    root_rounds: int = -1
    """Cut rounds at the root before branching (SCIP's ``separating/maxroundsroot``; -1: until
    no round finds a cut). No bound suits every table (docs/benchmarks.md): with the exact
    separation only on greedy failures, pathfinder's hybrid table (palim 2) was proven optimal in
    70 CPU s with 200 rounds and still at the root after 150 s without a limit, while munin1's
    (palim 2) needed its 985 rounds (optimal in 622 s; with 250, a 0.46 % gap after 605 s)."""
    steepest_edge_min_families: int = 5000
    """Tables of at least this many families solve their LPs with steepest-edge pricing (SCIP's
    ``lp/pricing`` ``s``) instead of SoPlex's default (devex on short re-solves). Each cut round
    then needs about half the dual simplex iterations: gaps after 120 CPU s 0.16 % instead of
    0.58 % on pathfinder's hybrid table (palim 3), 1.14 % instead of 2.79 % on alarm N=1000 ESS
    100; pathfinder's palim 2 table proven in 47.7 s instead of 86.7 s. On small tables the dearer
    iterations do not pay (alarm N=5000, 4,406 families: 10-12 s instead of 7-9 s), hence the
    threshold (docs/benchmarks.md)."""
    prop_freq: int = 1
    """Depth frequency of acyclicity propagation (:mod:`ilp.propagation`)."""
    restarts: int = 1
    """Restarts SCIP may make (``presolving/maxrestarts``; ``FAST`` presolving sets 0). A restart
    presolves away the families that reduced costs fixed at the root and turns the cut pool into
    rows, so that the tree's LPs are shorter (docs/benchmarks.md)."""
    restart_min_fixed: float = 0.5
    """Share of the integer variables fixed at the end of the root from which SCIP restarts
    (``presolving/restartfac`` and ``immrestartfac``). With a restart, munin1's hybrid table at palim
    3 is proven in 567 s instead of 871 s, pathfinder's (81 % of its families fixed when its root
    ends) in 249 s instead of 305 s; with no limit on restarts pathfinder took 348 s. Tables with
    fewer fixings lose the second root's rounds: alarm N=1000 ESS 10 (44 % fixed) took 37.6 s with
    a restart at SCIP's default 2.5 %, 26.6 s without."""

    sinks_freq: int = 1
    """Node frequency of the sink-finding heuristic; it also runs between the root's cut rounds,
    which on large tables improves the incumbent during the root."""
    order_search: bool = True
    """Insertion moves over orders improve each heuristic DAG (:mod:`ilp.order_search`; 11 % less
    time over alarm and hailfinder N=5000)."""
    warm_start: bool = True
    """The score-only sinks DAG (improved by ``order_search`` when it is on) as a start solution."""

    seed: int = 0
    """SCIP's random seed shift, also the sub-IP's."""
    verbose: bool = False
    """SCIP's log and statistics on stdout."""
    dp_max_vars: int = DP_MAX_VARS
    """Largest problem that :mod:`ilp.portfolio` may hand to the exact dynamic programme instead
    of SCIP (0: always SCIP); the other options then have no effect."""
    scip_params: dict[str, Any] = field(default_factory=dict)
    """SCIP parameters set last, over :mod:`ilp.solve`'s settings (a copy of the caller's dict)."""

    def __post_init__(self) -> None:
        for name, param in PARAMS.items():
            try:
                object.__setattr__(self, name, param.validated(getattr(self, name)))
            except OptionError as exc:
                raise ILPInputError(str(exc)) from None
        if not isinstance(self.scip_params, dict) or not all(isinstance(k, str) for k in self.scip_params):
            raise ILPInputError(f"scip_params must be a dict of SCIP parameter names, got {self.scip_params!r}")
        object.__setattr__(self, "scip_params", dict(self.scip_params))  # the caller's dict stays theirs


PARAMS = {f.name: Param(f.name, KINDS[f.type], f.default, "", keyword=True, **BOUNDS.get(f.name, {}))
          for f in fields(ILPOptions) if f.type in KINDS}
"""Each option but ``scip_params`` declared as a :class:`hybridbn.options.Param` (its kind from
its type, its bounds from :data:`BOUNDS`), which validates it."""
