"""Contracts every registered restriction method and solver must honour.

The methods and solvers are read from the registry (:data:`constraints.methods.RESTRICTION`,
:data:`pipeline.core.declarations.SOLVER`), so a newly declared one is held to the same contracts:

* a restriction allows no self-loop, never drops a required adjacency, never offers a forbidden
  arc as a candidate parent, and is deterministic for a seed;
* a solver returns an acyclic graph that uses only arcs the restriction allowed, contains the
  required arcs and none of the forbidden ones (or refuses knowledge it cannot honour with a
  one-line error), and is deterministic for a seed;
* a solver declares only known capability tags, and honours what its tags promise: ``arcs``
  (required and forbidden arcs; without it such knowledge is refused) and ``adjacency``
  (undirected requirements; refused without it);
* an invalid option is refused, before any work, with the library's error, and a bad time limit
  by every algorithm's Python API with the same message.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import hybridbn
from constraints.cops import cops_and_robbers
from constraints.cops.learner import CopsInputError
from constraints.methods import RESTRICTION
from graphs.dag import is_acyclic
from hybridbn.errors import HybridBNError
from hybridbn.solving import ADJACENCY, ARCS, TAGS
from ilp import ILPInputError, solve_ilp
from pipeline.core.declarations import SOLVER
from pipeline.core.stages import allowed_of
from scores.table import ScoreTable
from search.hill_climbing import HillClimbError, hill_climb
from search.kgreedy import k_greedy
from search.ktree_search import BoundedSearchError

ROWS = 1000
NAMES = ["asia", "tub", "smoke", "lung", "bronc", "either", "xray", "dysp"]
REQUIRED = ("asia", "tub")
"""A true arc that the tests at 1000 rows tend to drop (weak dependence): a real test of 'kept'."""
FORBIDDEN = ("smoke", "lung")
"""A strong true arc: the data pull it in, the knowledge keeps it out."""
EXTRA = {"kg": {"treewidth": 2}, "kastar": {"treewidth": 2}, "s2": {"treewidth": 2, "ktrees": 50},
         "s2plus": {"treewidth": 2, "ktrees": 50}}
"""Options a solver cannot run without (k-G / k-A* / S2 / S2+ need a treewidth bound; S2 / S2+ never
exhaust their space, so a number of k-trees makes them deterministic and quick)."""


@pytest.fixture(scope="module")
def knowledge(tmp_path_factory):
    folder = tmp_path_factory.mktemp("knowledge")
    required, forbidden, pair = folder / "required.csv", folder / "forbidden.csv", folder / "pair.csv"
    required.write_text("source,target\n" + ",".join(REQUIRED) + "\n")
    forbidden.write_text("source,target\n" + ",".join(FORBIDDEN) + "\n")
    pair.write_text("source,target,directed\n" + ",".join(FORBIDDEN) + ",false\n")
    return {"required": str(required), "forbidden": str(forbidden), "pair": str(pair)}


def learn(stage: str, **options) -> hybridbn.LearnResult:
    """A fresh run (no cache), so that two calls really compute twice."""
    return hybridbn.learn("asia", use_cache=False, stage=stage, **{"rows": ROWS, "seed": 3, **options})


def allowed_arcs(result) -> np.ndarray:
    """``allowed[p, c]``: the arcs the restriction left to the scores (all, without one)."""
    allowed = allowed_of(result.artifacts["restrict"])
    return ~np.eye(len(NAMES), dtype=bool) if allowed is None else allowed


def index(arc: tuple[str, str]) -> tuple[int, int]:
    return NAMES.index(arc[0]), NAMES.index(arc[1])


# ------------------------------------------------------------------------------ restriction
@pytest.mark.parametrize("method", RESTRICTION.names)
def test_restriction_keeps_required_pairs_no_loops_and_is_deterministic(method, knowledge):
    options = {"method": method, "required": knowledge["required"], "forbidden": knowledge["forbidden"]}
    first, second = learn("restrict", **options), learn("restrict", **options)
    allowed = allowed_arcs(first)
    assert first.names == NAMES
    assert not allowed.diagonal().any()
    p, c = index(REQUIRED)
    assert allowed[p, c], "a required arc is not among the allowed arcs"
    if "allowed" in first.artifacts["restrict"].frames:  # directional candidates: none forbidden
        assert not allowed[index(FORBIDDEN)]
    np.testing.assert_array_equal(allowed, allowed_arcs(second))
    assert first.counts["restrict"].get("n_tests") == second.counts["restrict"].get("n_tests")


# ----------------------------------------------------------------------------------- solvers
@pytest.mark.parametrize("solver", SOLVER.names)
def test_solver_returns_an_allowed_acyclic_dag_that_honours_the_knowledge(solver, knowledge):
    equivalence = ARCS not in SOLVER[solver].tags  # GES / SGES: forbidden pairs only, no required arcs
    options = {"solver": solver, **EXTRA.get(solver, {})}
    if equivalence:
        with pytest.raises(ValueError, match="equivalence classes"):
            learn("solve", required=knowledge["required"], **options)
        options["forbidden"] = knowledge["pair"]
    else:
        options.update(required=knowledge["required"], forbidden=knowledge["forbidden"])
    first, second = learn("solve", **options), learn("solve", **options)
    dag = first.adjacency.astype(bool)
    assert is_acyclic(dag)
    assert not (dag & ~allowed_arcs(first)).any(), "an arc the restriction did not allow"
    p, c = index(FORBIDDEN)
    assert not dag[p, c] and not (equivalence and dag[c, p])
    if not equivalence:
        assert dag[index(REQUIRED)]
    np.testing.assert_array_equal(dag, second.adjacency.astype(bool))
    assert first.objective == pytest.approx(second.objective)


# ---------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize("options", [
    {"method": "no-such-method"}, {"solver": "no-such-solver"}, {"alpha": -0.1}, {"alpha": 1.5},
    {"palim": -1}, {"ess": 0}, {"seed": -1}, {"rows": 0}, {"max_order": -2}, {"time_limit": -5},
    {"solver": "kg"},  # needs a treewidth bound
    {"solver": "hc", "restart": -1}, {"solver": "tabu", "max_tabu": 0}, {"solver": "hc", "tabu": 5},
    {"preset": "mmhc", "solver": "tabu"},
], ids=str)
def test_invalid_options_raise_the_library_error(options):
    with pytest.raises(HybridBNError):
        learn("solve", **options)


@pytest.mark.parametrize("solver", SOLVER.names)
def test_solver_declares_known_tags_and_honours_an_undirected_requirement_only_with_its_tag(solver, knowledge):
    assert SOLVER[solver].tags <= set(TAGS)
    options = {"solver": solver, **EXTRA.get(solver, {}), "required": knowledge["pair"]}  # smoke - lung, either way
    if ADJACENCY not in SOLVER[solver].tags:
        with pytest.raises(ValueError, match="undirected requirement"):
            learn("solve", **options)
        return
    dag = learn("solve", **options).adjacency.astype(bool)
    p, c = index(FORBIDDEN)
    assert dag[p, c] or dag[c, p]


def _time_limited_calls():
    table = ScoreTable.from_families([{(): -3.0, (1,): -2.0}, {(): -4.0, (0,): -3.5}, {(): -1.0}])
    return {"ilp": (ILPInputError, lambda t: solve_ilp(table, time_limit=t)),
            "hill climbing": (HillClimbError, lambda t: hill_climb(table, time_limit=t)),
            "k-G": (BoundedSearchError, lambda t: k_greedy(table, 1, time_limit=t)),
            "cops": (CopsInputError, lambda t: cops_and_robbers(lambda x, y, S: False, 3, time_limit=t))}


@pytest.mark.parametrize("api", list(_time_limited_calls()))
@pytest.mark.parametrize("value", [0, -1.5, math.inf, math.nan, 2e9])
def test_a_bad_time_limit_is_refused_by_every_api_with_one_message(api, value):
    error, call = _time_limited_calls()[api]
    message = f"time_limit must be a positive number of seconds up to 1e+09 (omit it for no limit), got {value!r}"
    with pytest.raises(error) as raised:
        call(value)
    assert str(raised.value) == message
