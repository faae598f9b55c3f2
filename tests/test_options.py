"""The declared options (hybridbn.options) and what the pipeline derives from them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import hybridbn
from constraints.citests import CITest, CITestError
from constraints.pc import PCError, pc_skeleton
from hybridbn.errors import HybridBNError
from hybridbn.options import FLOAT, INT, SECONDS, Choice, OptionError, Param
from pipeline.apps.cli import build_parser
from pipeline.core.config import RunConfig
from pipeline.core.declarations import CHOICES, OPTIONS, ConfigError
from pipeline.apps.grid import LIST_KEYS, parse_grid
from pipeline.core.stages import restrict_params, score_params, solve_params
from scores.candidates import CandidateError, build_score_table
from search.ges import GESError, check_palim


@pytest.mark.parametrize("param, value, message", [
    (Param("x", FLOAT, 0.5, "", low=0.0, high=1.0, open="both"), 1.0, "--x must lie strictly between 0 and 1"),
    (Param("x", FLOAT, 0.5, "", low=0.0, high=1.0), float("nan"), "--x must lie between 0 and 1"),
    (Param("x", FLOAT, 1.0, "", low=0.0, high=10.0, open="low"), 0.0, "--x must be a positive number up to 10"),
    (Param("x", FLOAT, 1.0, ""), "1", "--x must be a number"),
    (Param("x_y", INT, 1, "", low=1), 0, "--x-y must be a positive integer, got 0"),
    (Param("x", INT, 1, "", none=True), True, "--x must be a non-negative integer or 'none'"),
    (Param("x", SECONDS, None, ""), 0, "--x must be a positive number of seconds"),
])
def test_a_value_outside_its_declaration_is_refused_naming_the_option(param, value, message):
    with pytest.raises(OptionError, match=message) as info:
        param.validated(value)
    assert isinstance(info.value, HybridBNError) and isinstance(info.value, ValueError)


def test_values_are_normalised():
    assert Param("x", FLOAT, 1.0, "", low=0.0, high=2.0).validated(1) == 1.0
    assert Param("x", INT, 1, "", none=True).validated(None) is None
    assert RunConfig(network="asia", method="PC", score="BIC").validated().method == "pc"


def test_every_declared_option_is_a_field_a_command_line_option_and_validated():
    fields = [f.name for f in dataclasses.fields(RunConfig)]
    assert fields == [o.name for o in OPTIONS]
    flags = {a.dest for a in build_parser()._actions}
    assert set(fields) <= flags
    choices = {c.name for c in OPTIONS if isinstance(c, Choice)}
    assert choices == set(CHOICES) and {c.grid for c in CHOICES.values()} <= set(LIST_KEYS)
    for choice in CHOICES.values():  # each choice refuses an unknown method, naming the known ones
        with pytest.raises(ConfigError, match=f"--{choice.name} must be one of {', '.join(choice.names)}"):
            RunConfig(network="asia", **{choice.name: "nope"}).validated()


@pytest.mark.parametrize("options, stage_params, expected", [
    ({}, restrict_params, {"method": "pc", "test": "g2", "alpha": 0.05, "max_order": 1}),
    ({"method": "none", "alpha": 0.01}, restrict_params, {"method": "none"}),
    ({"method": "cops", "cops_time_limit": 5}, restrict_params,
     {"method": "cops", "test": "g2", "alpha": 0.05, "time_limit": 5.0}),
    ({"method": "candidates", "candidates": 3}, restrict_params,
     {"method": "candidates", "candidates": 3, "conditional": 4, "score": "bdeu", "ess": 1.0}),
    ({"method": "pmms", "add_candidates": 2, "score": "bic"}, restrict_params,
     {"method": "pmms", "test": "g2", "alpha": 0.05, "max_order": 1, "add_candidates": 2, "score": "bic"}),
    ({"score": "bic", "palim": None}, score_params, {"score": "bic", "palim": None}),
    ({"treewidth": 2}, solve_params, {"solver": "ilp", "time_limit": None, "solver_seed": 0, "treewidth": 2}),
    ({"method": "cops", "within_bags": True}, solve_params,
     {"solver": "ilp", "time_limit": None, "solver_seed": 0, "within_bags": True}),
    ({"solver": "sges"}, solve_params, {"solver": "sges", "time_limit": None, "solver_seed": 0, "score": "bdeu",
                                        "ess": 1.0, "palim": 3, "sges_bound": "parents:3"}),
])
def test_cache_keys_derived_from_the_declarations_are_those_of_earlier_versions(options, stage_params, expected):
    cfg = RunConfig(network="asia", **options).validated().undecided_score()  # as the stages run it
    assert stage_params(cfg) == expected


@pytest.mark.parametrize("options, message", [
    ({"solver": "kastar"}, "--solver kastar needs a treewidth bound: add --treewidth K"),
    ({"method": "pmms", "add_candidates": 1, "cops_time_limit": None}, None),
    ({"method": "none", "add_candidates": 1}, "--add-candidates applies to --method pc, pmms, mmpc, cops only"),
    ({"solver": "ges", "treewidth": 2}, "--treewidth applies to --solver ilp, kg, kastar, s2, s2plus only"),
    ({"within_bags": True}, "--within-bags needs --method cops and --solver ilp"),
    ({"solver": "sges", "sges_bound": "width:2"}, "--sges-bound: unknown SGES property"),
])
def test_rules_between_options_follow_the_declarations(options, message):
    if message is None:
        RunConfig(network="asia", **options).validated()
        return
    with pytest.raises(ConfigError, match=message):
        RunConfig(network="asia", **options).validated()


def test_grid_normalisation_resets_what_the_selected_methods_do_not_use():
    grid = parse_grid('networks = ["asia"]\nmethods = ["none", "cops"]\ntests = ["g2", "x2"]\nmax_orders = [1, 2]\n'
                      'scores = ["bic"]\ness = [1, 5]\n')
    assert sorted((c.method, c.test, c.max_order, c.ess) for c in grid.configs) == [
        ("cops", "g2", 1, 1.0), ("cops", "x2", 1, 1.0), ("none", "g2", 1, 1.0)]


def _refusal(call, error=ValueError) -> str:
    with pytest.raises(error) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("option, value", [("palim", -1), ("palim", 1.5), ("alpha", 1.5), ("alpha", True)])
def test_a_shared_parameter_is_refused_with_one_message_by_the_run_and_by_the_algorithms(option, value, tmp_path):
    """``palim`` and ``alpha`` are checked by their declarations (:mod:`hybridbn.checks`), whether
    they come from the command line, from ``hybridbn.learn`` or from an algorithm's own API, which
    raises its own error class with the message ``learn`` gives."""
    data, arities = np.zeros((10, 3), dtype=np.uint8), np.array([2, 2, 2])
    command_line = _refusal(lambda: RunConfig(network="asia", **{option: value}).validated(), ConfigError)
    learned = _refusal(lambda: hybridbn.learn("asia", cache_dir=tmp_path, **{option: value}))
    assert command_line.startswith(f"--{option} must ") and learned == command_line.removeprefix("--")
    if option == "palim":
        own = {_refusal(lambda: build_score_table(data, arities, palim=value), CandidateError),
               _refusal(lambda: check_palim(value), GESError)}
    else:
        own = {_refusal(lambda: CITest(data, arities, alpha=value), CITestError),
               _refusal(lambda: pc_skeleton(CITest(data, arities), 3, alpha=value), PCError)}
    assert own == {learned}
