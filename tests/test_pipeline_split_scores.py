"""Score stage split into groups of children: same table and exact pruning counters."""

from __future__ import annotations

import re

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from pipeline.core.cache import StageCache
from pipeline.core.executors import DaskExecutor, LocalExecutor
from pipeline.apps.grid import parse_grid, run_grid
from pipeline.core.split_scores import split_score_table
from scores.candidates import build_score_table


@pytest.mark.parametrize("groups, restricted", [(3, False), (8, True), (20, False)])
def test_split_equals_single_call(groups, restricted):
    ds = forward_sample(load_network("asia"), 600, 4)
    n = ds.data.shape[1]
    allowed = None
    if restricted:
        allowed = np.random.default_rng(0).random((n, n)) < 0.6
        allowed = allowed & allowed.T
    options = {"score": "bdeu", "ess": 1.0, "palim": 2}
    whole = build_score_table(ds.data, ds.arities, allowed=allowed, names=ds.names, **options)
    split = split_score_table(LocalExecutor(1), ds.data, ds.arities, groups, allowed=allowed,
                              names=ds.names, **options)
    assert split.families == whole.families and split.names == whole.names
    assert split.meta["counts"] == whole.meta["counts"]
    assert split.meta["restricted"] == whole.meta["restricted"]


def test_split_with_required_parents_equals_single_call():
    """Required parents are narrowed with the groups (they used to clash with the narrowed allowed)."""
    ds = forward_sample(load_network("asia"), 600, 4)
    n = ds.data.shape[1]
    required = np.zeros((n, n), dtype=bool)
    required[0, 1] = required[2, 5] = required[3, 5] = True
    allowed = ~np.eye(n, dtype=bool)
    allowed[1, 0] = allowed[7, 6] = False
    options = {"score": "bic", "ess": 1.0, "palim": 3, "allowed": allowed, "required": required}
    whole = build_score_table(ds.data, ds.arities, names=ds.names, **options)
    split = split_score_table(LocalExecutor(1), ds.data, ds.arities, 3, names=ds.names, **options)
    assert split.families == whole.families
    assert split.meta["counts"] == whole.meta["counts"] and split.meta["restricted"]
    assert all({2, 3} <= set(ps) for ps in split.families[5])


def test_grid_jobs_split_scores_on_dask(tmp_path):
    distributed = pytest.importorskip("distributed")
    text = 'networks = ["asia"]\nrows = 400\npalims = [2]\nbaseline = false\n'
    split_grid = parse_grid(text + "score_groups = 3\n")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        frame = run_grid(split_grid, StageCache(tmp_path / "a"), DaskExecutor(client))
    reference = run_grid(parse_grid(text), StageCache(tmp_path / "b"))
    assert frame.loc[0, "objective"] == reference.loc[0, "objective"]
    assert frame.loc[0, "n_candidates"] == reference.loc[0, "n_candidates"]


def test_cli_run_scores_on_a_dask_scheduler(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    from pipeline.apps.cli import main

    argv = ["--network", "asia", "--rows", "300", "--stage", "scores", "--output-dir", str(tmp_path / "o")]
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        status = main([*argv, "--scheduler", cluster.scheduler_address, "--score-groups", "3",
                       "--cache-dir", str(tmp_path / "a")])
    split_out = capsys.readouterr().out
    assert status == 0
    assert main([*argv, "--cache-dir", str(tmp_path / "b")]) == 0
    local_out = capsys.readouterr().out
    split_counts, local_counts = _scores_counts(split_out), _scores_counts(local_out)
    assert split_counts == local_counts and split_counts["kept"] > 0


def _scores_counts(out: str) -> dict[str, int]:
    """The counts on a run report's scores line: ``N candidate parent sets kept; total N, generated N, ...``."""
    details = re.search(r"^scores\s+\d+\.\d+s\s+(?:cached\s+)?(.*)$", out, re.M).group(1)
    counts = {name: int(value) for name, value in re.findall(r"([a-z]+) (\d+)", details)}
    counts["candidates"] = int(re.match(r"(\d+) candidate parent sets kept", details).group(1))
    return counts


@pytest.mark.parametrize("method", ["pmms", "mmpc"])
def test_restrict_stage_splits_pmms_and_mmpc_targets_on_the_executor(method, tmp_path):
    """The restrict stage hands the run's executor and groups to PMMS / MMPC (``--scheduler``,
    grids): the same restriction as one process."""
    from constraints.restriction import Restriction
    from pipeline.apps.learn import config_for, run_config

    cfg, _ = config_for("insurance", {"rows": 800, "method": method, "max_order": 2})

    def restriction(**split):
        result = run_config(cfg, StageCache(tmp_path, enabled=False), stage="restrict", **split)
        return Restriction.from_frame(result.artifacts["restrict"].frames["restriction"])

    class Counting(LocalExecutor):
        tasks = 0

        def map_unordered(self, fn, arg_list):
            self.tasks += len(arg_list)
            return super().map_unordered(fn, arg_list)

    executor = Counting(1)
    assert restriction(score_executor=executor, score_groups=3).same_result(restriction())
    assert executor.tasks == 3
