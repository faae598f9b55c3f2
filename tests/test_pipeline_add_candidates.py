"""--add-candidates: the CI skeleton united with each child's best single parents by score gain."""

import numpy as np
import pytest

from constraints.restriction import Restriction
from pipeline.core.cache import StageCache
from pipeline.core.config import RunConfig
from pipeline.core.declarations import ConfigError
from pipeline.core.stages import dataset_of, run_stages
from scores.identification import pairwise_gains


def _restriction(tmp_path, **options):
    cfg = RunConfig(network="child", rows=300, **options).validated()
    art = run_stages(StageCache(tmp_path), cfg, upto="restrict")
    return art, Restriction.from_frame(art["restrict"].frames["restriction"], meta=art["restrict"].meta)


def test_union_adds_exactly_the_best_positive_gain_parents(tmp_path):
    art, plain = _restriction(tmp_path / "a")
    _, united = _restriction(tmp_path / "b", add_candidates=2)
    data = dataset_of(art["data"])
    gains = pairwise_gains(data.data, data.arities, score="bdeu", ess=1.0)
    expected = plain.allowed.copy()
    for child in range(gains.shape[1]):
        order = [p for p in np.argsort(-gains[:, child], kind="stable") if p != child][:2]
        for p in order:
            if gains[p, child] > 0:
                expected[p, child] = expected[child, p] = True
    assert np.array_equal(united.allowed, expected)
    added = int(np.triu(united.allowed & ~plain.allowed, 1).sum())
    assert added > 0 and united.n_allowed == plain.n_allowed + added
    assert united.tests_by_order == plain.tests_by_order  # the tests are the same
    assert (united.records["allowed"] == united.allowed[united.records["u"], united.records["v"]]).all()


@pytest.mark.parametrize("options", [{"add_candidates": -1}, {"add_candidates": 2, "method": "none"},
                                     {"add_candidates": 2, "method": "candidates"}])
def test_bad_add_candidates(options):
    with pytest.raises(ConfigError, match="--add-candidates"):
        RunConfig(network="asia", **options).validated()
