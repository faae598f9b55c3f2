"""Bundled networks converted to pgmpy and pyAgrum: every CPT entry, arc and state name read back
through the libraries' own objects (skipped where a library is missing)."""

import itertools
import sys

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.interop import MissingExtraError, to_pgmpy, to_pyagrum

NETWORKS = ["asia", "alarm"]


def parent_configurations(network, v):
    """``(index, {parent name: state name})`` for every parent configuration of ``v``."""
    parents = network.parents[v]
    for index in itertools.product(*(range(len(network.states[p])) for p in parents)):
        yield index, {network.variables[p]: network.states[p][k] for p, k in zip(parents, index)}


def our_arcs(network):
    names = network.variables
    return {(names[p], names[v]) for v, parents in enumerate(network.parents) for p in parents}


@pytest.mark.parametrize("name", NETWORKS)
def test_pgmpy_round_trip(name):
    pytest.importorskip("pgmpy")
    network = load_network(name)
    model = to_pgmpy(network)
    assert type(model).__name__ == "DiscreteBayesianNetwork"
    assert model.check_model()
    assert set(model.nodes()) == set(network.variables)
    assert set(model.edges()) == our_arcs(network)
    for v, var in enumerate(network.variables):
        cpd = model.get_cpds(var)
        evidence = cpd.variables[1:]
        assert cpd.variables[0] == var
        assert sorted(evidence) == sorted(network.variables[p] for p in network.parents[v])
        for u in [var, *evidence]:
            assert cpd.state_names[u] == network.states[network.index(u)]
        # the whole table in pgmpy's axis order (variable, *evidence) ...
        axis_of = {network.variables[p]: k for k, p in enumerate(network.parents[v])}
        ours = np.transpose(network.cpts[v], [axis_of[e] for e in evidence] + [len(evidence)])
        np.testing.assert_allclose(cpd.values, np.moveaxis(ours, -1, 0), rtol=0, atol=1e-12)
        # ... and each entry looked up by state names
        for index, config in parent_configurations(network, v):
            for k, state in enumerate(network.states[v]):
                assert cpd.get_value(**config, **{var: state}) == pytest.approx(network.cpts[v][index + (k,)], abs=1e-12)


@pytest.mark.parametrize("name", NETWORKS)
def test_pyagrum_round_trip(name):
    gum = pytest.importorskip("pyagrum")
    network = load_network(name)
    bn = to_pyagrum(network)
    assert isinstance(bn, gum.BayesNet)
    assert set(bn.names()) == set(network.variables)
    assert {(bn.variable(a).name(), bn.variable(b).name()) for a, b in bn.arcs()} == our_arcs(network)
    for v, var in enumerate(network.variables):
        assert list(bn.variable(var).labels()) == network.states[v]
        assert {bn.variable(p).name() for p in bn.parents(var)} == {network.variables[p] for p in network.parents[v]}
        table = bn.cpt(var)
        for index, config in parent_configurations(network, v):
            got = table[config] if config else table.toarray()
            np.testing.assert_allclose(got, network.cpts[v][index], rtol=0, atol=1e-12)


def test_pyagrum_joint_probability_matches():
    gum = pytest.importorskip("pyagrum")
    network = load_network("asia")
    bn = to_pyagrum(network)
    rng = np.random.default_rng(0)
    for _ in range(20):
        states = [int(rng.integers(len(s))) for s in network.states]
        ours = np.prod([network.cpts[v][tuple(states[p] for p in network.parents[v]) + (states[v],)]
                        for v in range(network.n_vars)])
        instantiation = gum.Instantiation()
        for var in network.variables:
            instantiation.add(bn.variable(var))
        for var, state in zip(network.variables, states):
            instantiation.chgVal(var, state)
        assert bn.jointProbability(instantiation) == pytest.approx(ours, rel=1e-12)


@pytest.mark.parametrize("convert, modules, extra", [
    (to_pgmpy, ["pgmpy", "pgmpy.models", "pgmpy.factors.discrete"], "hybridbn[pgmpy]"),
    (to_pyagrum, ["pyagrum", "pyAgrum"], "hybridbn[pyagrum]"),
])
def test_missing_library_names_the_extra(monkeypatch, convert, modules, extra):
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)  # "import module" raises ImportError
    with pytest.raises(MissingExtraError, match=extra.replace("[", r"\[").replace("]", r"\]")) as caught:
        convert(load_network("asia"))
    assert isinstance(caught.value, ImportError)
