"""Hill climbing and tabu search as solvers of a run (``--solver hc|tabu``, search.methods), the
MMHC / H2PC presets, and their keys, statuses, bounds, knowledge and kernels' warm-up."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hybridbn
from pipeline.core.cache import FINAL, INTERRUPTED, LIMITED
from pipeline.core.config import RunConfig
from pipeline.core.declarations import PRESETS, TABLE_SOLVERS, ConfigError
from pipeline.core.kernels import WARM_UP_TABLE, kernel_groups
from pipeline.core.knowledge import KnowledgeError
from pipeline.core.stages import solve_completion, solve_params, table_of
from search.methods import best_families_bound

ROWS = 1000
CLIMBERS = ("hc", "tabu")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One stage cache for the module: the runs share their data, restriction and table."""
    return tmp_path_factory.mktemp("cache")


def learn(cache, **options) -> hybridbn.LearnResult:
    return hybridbn.learn("asia", cache_dir=cache, **{"rows": ROWS, "seed": 2, **options})


def table(result):
    return table_of(result.artifacts["scores"], result.names)


# ------------------------------------------------------------------------------- the solve
@pytest.mark.parametrize("solver", CLIMBERS)
def test_a_climb_scores_its_dag_by_the_table_and_stays_below_the_bound_and_the_optimum(tmp_path, solver):
    """Before any ILP on its table a climb's gap is to the best families; once the ILP has
    proved the table's optimum (rerun or cached climb alike), to that optimum."""
    result = learn(tmp_path, solver=solver)
    scores = table(result)
    parent_sets = [tuple(int(p) for p in np.flatnonzero(result.adjacency[:, v])) for v in range(len(result.names))]
    assert result.objective == pytest.approx(scores.score_of(parent_sets), abs=1e-9)
    assert result.status == "converged" and result.artifacts["solve"].completion == FINAL
    best = sum(max(families.values()) for families in scores.families)  # every child at its best family
    assert result.bound == pytest.approx(best) and result.bound >= result.objective
    assert result.gap == pytest.approx((best - result.objective) / abs(result.objective))
    assert f"-> {solver}" in result.summary() and "to the best families bound" in result.summary()
    exact = learn(tmp_path)  # the ILP on the same table (the exact DP at this size)
    assert exact.artifacts["scores"].key == result.artifacts["scores"].key and exact.status == "optimal"
    assert exact.objective >= result.objective - 1e-9 and exact.bound <= result.bound + 1e-9
    again = learn(tmp_path, solver=solver)
    assert again.cached["solve"] and again.arcs == result.arcs and again.objective == result.objective
    assert again.bound == pytest.approx(exact.objective) and again.solver_result["exact"]["status"] == "optimal"
    assert again.gap == pytest.approx((exact.objective - result.objective) / abs(result.objective))
    assert again.solver_result["best_families_bound"] == pytest.approx(best)
    assert "below the ILP's proven optimum" in again.summary()


def test_the_bound_counts_only_families_that_honour_the_knowledge():
    from scores.table import ScoreTable

    scores = ScoreTable.from_families([{(1,): -1.0, (): -3.0}, {(0,): -2.0, (): -4.0}])
    assert best_families_bound(scores) == -3.0  # a cycle: not a DAG's score, an upper bound
    assert best_families_bound(scores, forbidden_arcs=[(1, 0)]) == -5.0
    assert best_families_bound(scores, required_arcs=[(1, 0)], forbidden_arcs=[(0, 1)]) == -5.0


def test_restarts_keep_the_first_climb_and_tabu_search_does_at_least_as_well(cache):
    plain = learn(cache, solver="hc")
    restarted = learn(cache, solver="hc", restart=3, perturb=2)
    assert restarted.solver_result["n_restarts"] == 3 and restarted.objective >= plain.objective - 1e-9
    tabu = learn(cache, solver="tabu", tabu=5, max_tabu=5)
    assert tabu.objective >= plain.objective - 1e-9  # its first steps are the climb's, then it keeps the best


def test_the_move_limit_is_a_final_status(cache):
    limited = learn(cache, solver="hc", max_iter=2)
    assert limited.status == "max_iter" and limited.solver_result["n_iterations"] == 2
    assert limited.artifacts["solve"].completion == FINAL and len(limited.arcs) <= 2
    assert learn(cache, solver="hc", max_iter=2).cached["solve"]


@pytest.mark.parametrize("status, completion", [
    ("converged", FINAL), ("max_iter", FINAL), ("timelimit", LIMITED), ("userinterrupt", INTERRUPTED)])
def test_statuses_of_a_climb_map_to_cache_completions(status, completion):
    assert solve_completion({"result": {"status": status}}) == completion


# ------------------------------------------------------------------------------- knowledge
@pytest.fixture(scope="module")
def knowledge(tmp_path_factory):
    folder = tmp_path_factory.mktemp("knowledge")
    (folder / "required.csv").write_text("source,target\nasia,tub\n")
    (folder / "pair.csv").write_text("source,target,directed\nasia,tub,false\n")
    return folder


@pytest.mark.parametrize("solver", CLIMBERS)
def test_required_and_forbidden_arcs_are_honoured(cache, knowledge, tmp_path, solver):
    free = learn(cache, solver=solver)
    learned = free.arcs[:2]  # two arcs the search takes, forbidden below
    assert ("asia", "tub") not in free.arcs and len(learned) == 2
    forbidden = tmp_path / "forbidden.csv"
    forbidden.write_text("source,target\n" + "".join(f"{p},{c}\n" for p, c in learned))
    held = learn(cache, solver=solver, restart=1, required=str(knowledge / "required.csv"), forbidden=str(forbidden))
    assert ("asia", "tub") in held.arcs and not set(learned) & set(held.arcs)
    assert held.bound >= held.objective


@pytest.mark.parametrize("solver", CLIMBERS)
def test_an_undirected_requirement_is_refused_before_any_work(knowledge, solver):
    with pytest.raises(KnowledgeError, match="undirected requirement asia - tub"):
        RunConfig(network="asia", solver=solver, required=str(knowledge / "pair.csv")).validated()


# ------------------------------------------------------------------------ budget and files
def test_a_budget_gives_the_climb_its_time_limit_and_a_cut_table_no_bound(tmp_path):
    within = hybridbn.learn("asia", rows=500, solver="tabu", budget=60, cache_dir=tmp_path / "within")
    assert within.status == "converged" and within.budget["stages"]["solve"]["limit"] > 0
    assert within.solver_result["time_limit"] == pytest.approx(within.budget["stages"]["solve"]["limit"])
    cut = hybridbn.learn("asia", rows=500, solver="hc", budget=1e-9, cache_dir=tmp_path / "cut")
    result = cut.solver_result
    assert (result["status"], result["solver_status"], result["dual_bound"]) == ("limited", "converged", None)
    assert cut.arcs == []  # the cut table holds the empty families only


def test_a_score_file_is_climbed_like_the_table_it_was_written_from(cache, tmp_path, cli):
    from_data = learn(cache, solver="tabu")
    path = from_data.write_scores(tmp_path / "asia.jkl")
    from_file = hybridbn.learn(str(path), solver="tabu", cache_dir=cache)
    assert from_file.objective == pytest.approx(from_data.objective) and from_file.arcs == from_data.arcs
    status, out, _ = cli("--scores", str(path), "--solver", "hc", "--cache-dir", str(cache), "--output-dir",
                         str(tmp_path / "out"))
    assert status == 0 and "to the best families bound" in out and "arc moves" in out
    record = json.loads((next((tmp_path / "out").iterdir()) / "result.json").read_text())
    assert record["result"]["objective"] == pytest.approx(learn(cache, solver="hc").objective)


# ------------------------------------------------------------------------ options and keys
def test_the_climbers_are_table_solvers_with_strict_options():
    assert set(CLIMBERS) <= set(TABLE_SOLVERS)
    for options, message in [({"solver": "hc", "tabu": 5}, "--tabu applies to --solver tabu only"),
                             ({"restart": 2}, "--restart applies to --solver hc, tabu only"),
                             ({"solver": "tabu", "perturb": 0}, "--perturb must be a positive integer"),
                             ({"solver": "hc", "max_iter": 0}, "--max-iter must be a positive integer")]:
        with pytest.raises(ConfigError, match=message):
            RunConfig(network="asia", **options).validated()


def test_solve_keys_hold_the_climbers_options_and_leave_the_others_unchanged():
    key = solve_params(RunConfig(network="asia", solver="tabu", restart=2).validated())
    assert key == {"solver": "tabu", "time_limit": None, "solver_seed": 0, "tabu": 10, "max_tabu": None,
                   "restart": 2, "perturb": 1, "max_iter": None}
    assert solve_params(RunConfig(network="asia", solver="hc").validated()) == {
        "solver": "hc", "time_limit": None, "solver_seed": 0, "restart": 0, "perturb": 1, "max_iter": None}
    assert solve_params(RunConfig(network="asia").validated()) == {"solver": "ilp", "time_limit": None,
                                                                    "solver_seed": 0}


def test_the_warm_up_compiles_the_restart_kernels_under_a_time_limit():
    *_, warm = kernel_groups(RunConfig(network="asia", solver="tabu", max_iter=3).validated())
    assert (warm.key, warm.upto, warm.run.scores) == ("solver/tabu", "solve", str(WARM_UP_TABLE))
    assert (warm.run.solver, warm.run.restart, warm.run.max_iter, warm.run.time_limit) == ("tabu", 1, None, 2.0)
    *_, ilp = kernel_groups(RunConfig(network="asia").validated())
    assert ilp.run.restart == 0
    solvers = {kernel_groups(RunConfig(network="asia", solver=s).validated())[-1].key
               for s in ("ilp", "ges", *CLIMBERS)}
    assert len(solvers) == 4


# --------------------------------------------------------------------------------- presets
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_preset_is_its_method_and_solver_spelt_out(preset):
    spelt = RunConfig(network="alarm", restart=1, **{choice.name: name for choice, name in PRESETS[preset]}).validated()
    assert RunConfig(network="alarm", restart=1, preset=preset.upper()).validated() == spelt
    assert spelt.solver == "hc" and spelt.preset is None


def test_a_preset_refuses_another_method_or_solver():
    with pytest.raises(ConfigError, match="--preset mmhc is --method mmpc --solver hc; it cannot take --solver"):
        RunConfig(network="asia", preset="mmhc", solver="tabu").validated()
    with pytest.raises(ConfigError, match="--preset h2pc is --method pc --solver hc; it cannot take --method"):
        RunConfig(network="asia", preset="h2pc", method="mmpc").validated()
    with pytest.raises(ConfigError, match="--preset must be one of mmhc, h2pc"):
        RunConfig(network="asia", preset="gs").validated()


def test_mmhc_runs_from_the_command_line_and_from_python(cache, tmp_path, cli):
    status, out, _ = cli("--network", "asia", "--rows", str(ROWS), "--seed", "2", "--preset", "mmhc",
                         "--cache-dir", str(cache), "--output-dir", str(tmp_path / "out"))
    assert status == 0 and "mmpc (" in out and "-> hc (" in out
    result = learn(cache, preset="mmhc")
    assert all(result.cached.values())  # the same run as the command line's
    assert result.config.method == "mmpc" and result.config.solver == "hc"
