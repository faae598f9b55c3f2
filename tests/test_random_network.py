"""The generated networks of the bounded-treewidth paper's size (bayesnet.random_network) and their
spelling ``random:N[:SEED]`` in the catalog."""

import numpy as np
import pytest

import hybridbn
from bayesnet.catalog import UnknownNetworkError, check_network, load_network, random_spec
from bayesnet.random_network import RandomNetworkError, random_network
from bayesnet.sampling import forward_sample
from graphs.dag import is_acyclic
from pipeline.apps.grid import GridError, parse_grid
from pipeline.core.config import RunConfig
from pipeline.core.stages import dataset_of


@pytest.mark.parametrize("n,seed", [(1, 0), (7, 1), (300, 2)])
def test_properties(n, seed):
    net = random_network(n, seed)
    net.validate(tol=1e-12)  # shapes, CPT rows summing to 1, names, acyclicity
    assert net.n_vars == n
    assert set(net.arities.tolist()) <= {2, 3, 4}
    counts = np.array([len(ps) for ps in net.parents])
    assert counts.min() >= 0 and counts.max() <= 6
    assert is_acyclic(net.adjacency)
    for cpt, ps, r in zip(net.cpts, net.parents, net.arities):
        rows = cpt.reshape(-1, r)
        assert rows.shape[0] == np.prod(net.arities[ps])
        assert np.allclose(rows.sum(axis=1), 1.0, atol=1e-12) and (rows >= 0).all()


def test_ranges_are_covered_and_order_is_hidden():
    net = random_network(2000, 0)
    counts = np.array([len(ps) for ps in net.parents])
    assert set(net.arities.tolist()) == {2, 3, 4}
    assert set(counts.tolist()) == set(range(7))
    # parent counts uniform on 0..6 except where few predecessors cap them: mean close to 3
    assert abs(counts.mean() - 3.0) < 0.2
    # the index order is not a topological order: some arcs go from a higher to a lower index
    assert any(p > c for c, ps in enumerate(net.parents) for p in ps)


def test_custom_ranges_and_concentration():
    net = random_network(200, 5, states=(3, 3), parents=(2, 2), concentration=0.3)
    assert (net.arities == 3).all()
    assert sorted(len(ps) for ps in net.parents)[2:] == [2] * 198  # all but the first two of the order
    net.validate(tol=1e-12)


def test_seeded_reproducibility():
    a, b, c = random_network(150, 3), random_network(150, 3), random_network(150, 4)
    assert a == b
    assert a != c
    assert forward_sample(a, 50, 1).data.tolist() == forward_sample(b, 50, 1).data.tolist()


@pytest.mark.parametrize("bad", [dict(n_vars=0), dict(n_vars=True), dict(states=(1, 0)), dict(parents=(-1, 2)),
                                 dict(concentration=0.0)])
def test_bad_arguments(bad):
    args = dict(n_vars=5, seed=0) | bad
    with pytest.raises(RandomNetworkError):
        random_network(**args)


def test_catalog_spelling():
    assert random_spec("random:2000") == (2000, 0)
    assert random_spec("random:40:7") == (40, 7)
    assert random_spec("alarm") is None
    check_network("random:40:7")
    net = load_network("random:40:7")
    assert net == random_network(40, 7)
    net.cpts[0][...] = 0.0  # a copy: the process's cached network is untouched
    assert load_network("random:40:7") == random_network(40, 7)
    assert load_network("random:40") == random_network(40, 0)


@pytest.mark.parametrize("spec", ["random:abc", "random:", "random:0", "random:10:x", "random:10:-1",
                                  "random:10:1:2", "random:1e3"])
def test_catalog_spelling_errors(spec):
    with pytest.raises(UnknownNetworkError, match=r"expected random:N or random:N:SEED"):
        check_network(spec)
    with pytest.raises(UnknownNetworkError, match=r"expected random:N or random:N:SEED"):
        load_network(spec)


def test_unknown_name_mentions_generated_networks():
    with pytest.raises(UnknownNetworkError, match=r"random:N\[:SEED\]"):
        check_network("no-such-network")


def test_a_run_samples_the_generated_network():
    """The data stage samples ``random:N:SEED`` as a bundled network; its folder name has no colon."""
    result = hybridbn.learn("random:12:3", rows=300, seed=1, stage="data", use_cache=False)
    expected = forward_sample(random_network(12, 3), 300, 1)
    assert result.names == expected.names
    np.testing.assert_array_equal(dataset_of(result.artifacts["data"]).data, expected.data)
    assert RunConfig(network="random:12:3").source_name == "random-12-3"


def test_grids_take_generated_networks():
    grid = parse_grid('networks = ["random:30:2", "asia"]\nsolvers = ["hc"]\n')
    assert [cfg.network for cfg in grid.configs] == ["random:30:2", "asia"]
    with pytest.raises(GridError, match="bad generated network 'random:x'"):
        parse_grid('networks = ["random:x"]\n')
