"""Restriction: records, forbidden lists, allowed-parents matrix, parquet round trip."""

import numpy as np
import pandas as pd
import pytest

from constraints.citests import DSeparationOracle
from constraints.pc import pc_skeleton
from constraints.restriction import Restriction, RestrictionError


def _collider_restriction():
    A = np.zeros((4, 4), bool)
    A[0, 2] = A[1, 2] = A[2, 3] = True
    return pc_skeleton(DSeparationOracle(A), 4), A


def test_records_and_forbidden_edges():
    r, A = _collider_restriction()
    assert np.array_equal(r.allowed, A | A.T)
    assert r.forbidden_edges() == [(0, 1), (0, 3), (1, 3)]
    rec = r.records.set_index(["u", "v"])
    assert len(rec) == 6
    assert rec.loc[(0, 1), "sepset"] == [] and rec.loc[(0, 1), "order"] == 0
    assert rec.loc[(0, 3), "sepset"] == [2] and rec.loc[(0, 3), "order"] == 1
    assert rec.loc[(0, 1), "p_value"] == 1.0 and rec.loc[(0, 2), "p_value"] == 0.0
    assert r.removed_by_order == {0: 1, 1: 2}
    P = r.allowed_parents()
    assert P.dtype == bool and not P.diagonal().any() and np.array_equal(P, A | A.T)
    assert r.n_allowed == 3 and r.method == "pc" and r.params["alpha"] == 0.05


def test_parquet_round_trip(tmp_path):
    r, _ = _collider_restriction()
    path = tmp_path / "restriction.parquet"
    r.to_frame().to_parquet(path)
    back = Restriction.from_frame(pd.read_parquet(path))
    assert np.array_equal(back.allowed, r.allowed)
    assert back.tests_by_order == r.tests_by_order and back.removed_by_order == r.removed_by_order
    assert back.method == "pc" and back.params == r.params
    assert back.records["sepset"].tolist() == r.records["sepset"].tolist()
    assert back.forbidden_edges() == r.forbidden_edges()
    meta = r.meta()
    plain = pd.read_parquet(path)
    plain.attrs.clear()
    with pytest.raises(RestrictionError, match="metadata"):
        Restriction.from_frame(plain)
    assert Restriction.from_frame(plain, meta=meta).n_allowed == r.n_allowed


def test_invalid_restrictions():
    with pytest.raises(RestrictionError, match="symmetric"):
        Restriction(2, np.array([[False, True], [False, False]]), pd.DataFrame())
    with pytest.raises(RestrictionError, match="lacks columns"):
        Restriction.from_frame(pd.DataFrame({"u": [0]}), meta={"n_vars": 2})
