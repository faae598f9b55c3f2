"""Forward sampling: exact marginals (by brute-force/einsum elimination) vs empirical ones."""

import itertools

import numpy as np
import pytest
from scipy import stats

from bayesnet.catalog import load_network
from bayesnet.network import Network
from bayesnet.sampling import forward_sample

SMALL = ["asia", "cancer", "earthquake", "survey", "sachs", "child"]
N_ROWS = 20_000
ALPHA = 1e-3  # family-wise, Bonferroni-corrected over all variables of all networks


def exact_marginal(net: Network, targets: list[int]) -> np.ndarray:
    """P(targets) by summing the product of all CPTs over the other variables (np.einsum)."""
    operands = []
    for v in range(net.n_vars):
        operands += [net.cpts[v], [*net.parents[v], v]]
    return np.einsum(*operands, targets, optimize="greedy")


def brute_force_joint(net: Network) -> np.ndarray:
    """The full joint by explicit enumeration of all configurations."""
    joint = np.zeros(tuple(net.arities))
    for x in itertools.product(*[range(r) for r in net.arities]):
        joint[x] = np.prod([net.cpts[v][tuple(x[p] for p in net.parents[v]) + (x[v],)] for v in range(net.n_vars)])
    return joint


def test_einsum_marginals_match_brute_force_on_asia():
    net = load_network("asia")
    joint = brute_force_joint(net)
    assert joint.sum() == pytest.approx(1.0)
    for v in range(net.n_vars):
        others = tuple(i for i in range(net.n_vars) if i != v)
        np.testing.assert_allclose(exact_marginal(net, [v]), joint.sum(axis=others), atol=1e-12)


def chi_square_p(observed: np.ndarray, probs: np.ndarray) -> float:
    """Goodness-of-fit p-value, pooling cells with expected count < 5 into one cell."""
    expected = probs.ravel() * observed.sum()
    observed = observed.ravel()
    assert np.all(observed[probs.ravel() == 0] == 0), "a zero-probability state was sampled"
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    if observed.size < 2:
        return 1.0
    expected *= observed.sum() / expected.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def test_marginals_match_exact_values():
    nets = [load_network(name) for name in SMALL]
    threshold = ALPHA / sum(n.n_vars for n in nets)
    for seed, net in enumerate(nets):
        ds = forward_sample(net, N_ROWS, seed=100 + seed)
        for v in range(net.n_vars):
            observed = np.bincount(ds.data[:, v], minlength=net.arities[v])
            p = chi_square_p(observed, exact_marginal(net, [v]))
            assert p > threshold, (net.name, net.variables[v], p)


@pytest.mark.parametrize("name, child", [("asia", "dysp"), ("sachs", "Akt"), ("child", "LowerBodyO2")])
def test_parent_child_joint_matches(name, child):
    net = load_network(name)
    c = net.index(child)
    p = net.parents[c][0]
    ds = forward_sample(net, N_ROWS, seed=7)
    observed = np.zeros((net.arities[p], net.arities[c]))
    np.add.at(observed, (ds.data[:, p], ds.data[:, c]), 1)
    assert chi_square_p(observed, exact_marginal(net, [p, c])) > ALPHA / 3


def test_mis_specified_cpt_is_detected():
    """The test has power: samples of a perturbed network fail against the true marginal."""
    net = load_network("asia")
    wrong = net.copy()
    wrong.cpts[wrong.index("smoke")] = np.array([0.53, 0.47])
    ds = forward_sample(wrong, N_ROWS, seed=1)
    v = net.index("smoke")
    observed = np.bincount(ds.data[:, v], minlength=2)
    assert chi_square_p(observed, exact_marginal(net, [v])) < 1e-4


def test_deterministic_for_seed_and_layout():
    net = load_network("alarm")
    a = forward_sample(net, 1000, seed=5)
    b = forward_sample(net, 1000, seed=5)
    c = forward_sample(net, 1000, seed=6)
    np.testing.assert_array_equal(a.data, b.data)
    assert not np.array_equal(a.data, c.data)
    assert a.data.dtype == np.uint8 and a.data.shape == (1000, 37) and a.data.flags.c_contiguous
    assert a.names == net.variables and a.states == net.states
    assert np.all(a.data.max(axis=0) < net.arities)


def test_deterministic_cpt_rows_are_respected():
    net = load_network("asia")
    ds = forward_sample(net, 5000, seed=2)
    either, lung, tub = net.index("either"), net.index("lung"), net.index("tub")
    # either = lung OR tub (state 0 is "yes")
    expected = np.where((ds.data[:, lung] == 0) | (ds.data[:, tub] == 0), 0, 1)
    np.testing.assert_array_equal(ds.data[:, either], expected)


def test_wide_dtype_for_many_states():
    states = [f"s{i}" for i in range(300)]
    net = Network("wide", ["X"], [states], [[]], [np.full(300, 1 / 300)])
    ds = forward_sample(net, 2000, seed=0)
    assert ds.data.dtype == np.uint16
    assert ds.data.max() < 300 and len(np.unique(ds.data)) > 250


@pytest.mark.parametrize("n_rows", [0, -1, 2.5, True])
def test_bad_row_count(n_rows):
    with pytest.raises(ValueError, match="n_rows"):
        forward_sample(load_network("asia"), n_rows, seed=0)


def test_cycle_is_rejected():
    net = load_network("cancer")
    pollution, xray = net.index("Pollution"), net.index("Xray")
    net.parents[pollution] = [xray]  # Pollution -> Cancer -> Xray -> Pollution
    net.cpts[pollution] = np.full((2, 2), 0.5)
    with pytest.raises(ValueError, match="acyclic"):
        forward_sample(net, 10, seed=0)
