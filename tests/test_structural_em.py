"""Structural EM for missing cells (Friedman 1997): the most probable completion against brute
force, the rounds on data from a known network, and a dataset's missing state completed."""

import itertools

import numpy as np
import pandas as pd
import pytest

import hybridbn
from bayesnet.catalog import load_network
from bayesnet.dataset import MISSING_STATE, DataError, Dataset
from bayesnet.network import Network
from bayesnet.sampling import forward_sample
from search.structural_em import complete, complete_missing, structural_em


def small_network(seed: int = 0) -> Network:
    """a -> b -> c, a -> c with random CPTs (3, 2, 3 states)."""
    rng = np.random.default_rng(seed)
    arities = [3, 2, 3]
    parents = [[], [0], [0, 1]]
    cpts = [rng.dirichlet(np.ones(arities[v]), size=int(np.prod([arities[p] for p in parents[v]])))
            .reshape(*[arities[p] for p in parents[v]], arities[v]) for v in range(3)]
    return Network("small", ["a", "b", "c"], [[str(s) for s in range(r)] for r in arities], parents, cpts)


def joint(network: Network, row) -> float:
    return float(np.prod([network.cpts[v][tuple(row[p] for p in network.parents[v]) + (row[v],)]
                          for v in range(network.n_vars)]))


def test_one_missing_cell_gets_its_most_probable_state_given_the_rest():
    network = small_network()
    rows = np.array(list(itertools.product(range(3), range(2), range(3))))
    for v in range(3):
        missing = np.zeros(rows.shape, dtype=bool)
        missing[:, v] = True
        guesses = rows.copy()
        guesses[:, v] = 0
        completed = complete(guesses, missing, network)
        for row, got in zip(rows, completed):
            candidates = [np.where(np.arange(3) == v, s, row) for s in range(network.arities[v])]
            best = max(range(network.arities[v]), key=lambda s: (joint(network, candidates[s]), -s))
            assert got[v] == best and np.array_equal(np.delete(got, v), np.delete(row, v))


def test_rounds_recover_a_known_network_and_complete_better_than_the_mode():
    truth = load_network("asia")
    ds = forward_sample(truth, 3000, seed=1)
    missing = np.random.default_rng(0).random(ds.data.shape) < 0.15
    result = structural_em(ds.data, missing, ds.arities, score="bdeu", palim=2)
    assert result.converged and 2 <= result.iterations <= 5 and result.dag.sum() >= 6
    right = (result.data[missing] == ds.data[missing]).mean()
    modes = np.array([np.bincount(ds.data[~missing[:, v], v]).argmax() for v in range(ds.n_vars)])
    by_mode = (np.broadcast_to(modes, ds.data.shape)[missing] == ds.data[missing]).mean()
    assert right > by_mode + 0.02
    assert np.array_equal(result.data[~missing], ds.data[~missing].astype(np.int64))
    once = structural_em(ds.data, missing, ds.arities, score="bdeu", palim=2, max_iter=1)
    assert once.iterations == 1 and not once.converged


def test_a_dataset_in_the_missing_state_is_completed_and_recorded():
    codes = np.array([[0, 0]] * 40 + [[1, 1]] * 40 + [[0, 2]] * 10 + [[2, 1]] * 10, dtype=np.uint8)
    ds = Dataset(codes, ["x", "y"], [["lo", "hi", MISSING_STATE], ["u", "v", MISSING_STATE]])
    completed, record = complete_missing(ds, palim=1)
    assert completed.states == [["lo", "hi"], ["u", "v"]]
    assert record == {"iterations": 2, "converged": True, "n_completed_cells": 20, "n_arcs": 1}
    # round 1 completes by the modes (lo, v); round 2 by the arc: y after lo is u, x before v is hi
    np.testing.assert_array_equal(completed.data[80:], [[0, 0]] * 10 + [[1, 1]] * 10)
    empty = Dataset(np.array([[0, 0], [1, 0]], dtype=np.uint8), ["x", "e"], [["a", "b"], [MISSING_STATE]])
    with pytest.raises(DataError, match="column 'e' has no observed value"):
        complete_missing(empty)


def test_missing_em_in_a_run(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 600)
    frame = pd.DataFrame({"a": a, "b": a ^ (rng.random(600) < 0.1), "c": rng.integers(0, 3, 600)}).astype(object)
    frame.loc[rng.random(600) < 0.2, "b"] = None
    result = hybridbn.learn(frame, missing="em", palim=1, score="bdeu", cache_dir=tmp_path)
    meta = result.artifacts["data"].meta
    assert meta["n_rows"] == 600 and meta["structural_em"]["n_completed_cells"] == int(frame["b"].isna().sum())
    assert ("a", "b") in result.arcs or ("b", "a") in result.arcs
    assert MISSING_STATE not in result.parameters().states[1]
    state = hybridbn.learn(frame, missing="state", palim=1, score="bdeu", stage="data", cache_dir=tmp_path)
    assert state.artifacts["data"].key != result.artifacts["data"].key
