"""CPT estimation (MLE and BDeu posterior mean) for a given DAG."""

import numpy as np
import pytest

from bayesnet.bif import read_bif, write_bif
from bayesnet.catalog import load_network
from bayesnet.dataset import Dataset
from bayesnet.fitting import fit_cpts
from bayesnet.sampling import forward_sample


@pytest.fixture(scope="module")
def alarm_sample():
    net = load_network("alarm")
    return net, forward_sample(net, 200_000, seed=11)


def test_mle_recovers_cpts_at_large_n(alarm_sample):
    net, ds = alarm_sample
    fitted = fit_cpts(net.adjacency, ds, method="mle")
    assert fitted.variables == net.variables and fitted.states == net.states
    assert fitted.parents == [sorted(p) for p in net.parents]
    for v in range(net.n_vars):
        order = np.argsort(net.parents[v])  # fitted parents are sorted; align the true CPT
        truth = np.transpose(net.cpts[v], tuple(order) + (len(order),)).reshape(-1, net.arities[v])
        got = fitted.cpts[v].reshape(-1, net.arities[v])
        config_counts = np.bincount(
            np.ravel_multi_index(ds.data[:, sorted(net.parents[v])].T, fitted.cpts[v].shape[:-1])
            if net.parents[v] else np.zeros(ds.n_rows, dtype=np.intp),
            minlength=got.shape[0],
        )
        well_observed = config_counts >= 2000
        assert well_observed.any()
        np.testing.assert_allclose(got[well_observed], truth[well_observed], atol=0.04)


def test_mle_counts_exactly_and_uniform_for_unseen_configs():
    data = np.array([[0, 0], [0, 1], [0, 1], [0, 1]], dtype=np.uint8)
    ds = Dataset(data, ["a", "b"], [["x", "y"], ["u", "v"]])
    adj = np.array([[False, True], [False, False]])
    fitted = fit_cpts(adj, ds)
    np.testing.assert_allclose(fitted.cpts[0], [1.0, 0.0])
    np.testing.assert_allclose(fitted.cpts[1], [[0.25, 0.75], [0.5, 0.5]])  # a=y never seen


def test_bayes_is_bdeu_posterior_mean_and_shrinks():
    data = np.array([[0, 0], [0, 1], [0, 1], [0, 1]], dtype=np.uint8)
    ds = Dataset(data, ["a", "b"], [["x", "y"], ["u", "v"]])
    adj = np.array([[False, True], [False, False]])
    fitted = fit_cpts(adj, ds, method="bayes", ess=2.0)
    # q=2, r=2: pseudo-count 0.5 per cell
    np.testing.assert_allclose(fitted.cpts[1], [[1.5 / 5, 3.5 / 5], [0.5, 0.5]])
    np.testing.assert_allclose(fitted.cpts[0], [5 / 6, 1 / 6])  # root: q=1, 1.0 per cell
    mle = fit_cpts(adj, ds, method="mle")
    assert abs(fitted.cpts[1][0, 0] - 0.5) < abs(mle.cpts[1][0, 0] - 0.5)
    big = fit_cpts(adj, ds, method="bayes", ess=1e6)
    np.testing.assert_allclose(big.cpts[1], 0.5, atol=1e-5)


def test_bayes_rows_sum_to_one_on_benchmark(alarm_sample):
    net, ds = alarm_sample
    fitted = fit_cpts(net.adjacency, Dataset(ds.data[:500], ds.names, ds.states), method="bayes", ess=1.0)
    for cpt in fitted.cpts:
        np.testing.assert_allclose(cpt.sum(axis=-1), 1.0, atol=1e-12)
        assert np.all(cpt > 0)


def test_fitted_network_round_trips_through_bif(alarm_sample, tmp_path):
    net, ds = alarm_sample
    fitted = fit_cpts(net.adjacency, Dataset(ds.data[:1000], ds.names, ds.states), method="mle")
    write_bif(fitted, tmp_path / "fitted.bif")
    back = read_bif(tmp_path / "fitted.bif")
    assert back.parents == fitted.parents and back.states == fitted.states
    for a, b in zip(back.cpts, fitted.cpts):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_bad_arguments():
    ds = Dataset(np.zeros((3, 2), dtype=np.uint8), ["a", "b"], [["x"], ["u"]])
    with pytest.raises(ValueError, match="shape"):
        fit_cpts(np.zeros((3, 3), dtype=bool), ds)
    with pytest.raises(ValueError, match="unknown parameter-learning method 'map'"):
        fit_cpts(np.zeros((2, 2), dtype=bool), ds, method="map")
    with pytest.raises(ValueError, match="ess must be positive"):
        fit_cpts(np.zeros((2, 2), dtype=bool), ds, method="bayes", ess=0)
    with pytest.raises(ValueError, match="acyclic"):
        fit_cpts(np.array([[False, True], [True, False]]), ds)
