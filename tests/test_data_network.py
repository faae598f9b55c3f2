"""Network container: derived properties and validation."""

import numpy as np
import pytest

from bayesnet.catalog import load_network
from bayesnet.network import Network, NetworkError, parent_config_index


def small() -> Network:
    return Network(
        name="t",
        variables=["a", "b", "c"],
        states=[["0", "1"], ["x", "y", "z"], ["u", "v"]],
        parents=[[], [0], [0, 1]],
        cpts=[np.array([0.3, 0.7]), np.full((2, 3), 1 / 3), np.full((2, 3, 2), 0.5)],
    )


def test_properties():
    net = small()
    net.validate()
    assert (net.n_vars, net.n_edges) == (3, 3)
    assert net.arities.tolist() == [2, 3, 2] and net.arities.dtype == np.int64
    expected = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], dtype=bool)
    np.testing.assert_array_equal(net.adjacency, expected)
    assert net.index("c") == 2
    assert net.topological_order() == [0, 1, 2]
    with pytest.raises(ValueError, match="no variable 'd'"):
        net.index("d")


def test_parent_config_index_matches_c_order():
    a = np.array([0, 1, 1, 0])
    b = np.array([2, 0, 1, 1])
    idx = parent_config_index([a, b], [2, 3])
    np.testing.assert_array_equal(idx, np.ravel_multi_index((a, b), (2, 3)))


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda n: n.cpts.__setitem__(1, np.full((3, 3), 1 / 3)), "CPT shape (3, 3), expected (2, 3)"),
        (lambda n: n.cpts[0].__setitem__(0, 0.4), "CPT row 0 sums to 1.1"),
        (lambda n: n.cpts[2].__setitem__((0, 0), [1.5, -0.5]), "negative or non-finite"),
        (lambda n: n.parents.__setitem__(0, [2]) or n.cpts.__setitem__(0, np.full((2, 2), 0.5)), "not acyclic"),
        (lambda n: n.variables.__setitem__(1, "a"), "duplicate variable names"),
        (lambda n: n.states.__setitem__(2, ["u", "u"]), "distinct"),
        (lambda n: n.parents.__setitem__(1, [1]), "invalid parent list"),
        (lambda n: n.cpts.pop(), "3 variables but 3 state lists, 3 parent lists and 2 CPTs"),
    ],
)
def test_validate_rejects(mutate, fragment):
    net = small()
    mutate(net)
    with pytest.raises(NetworkError) as info:
        net.validate()
    assert fragment in str(info.value)


def test_copy_is_deep():
    net = load_network("cancer")
    twin = net.copy()
    twin.cpts[0][0] = 0.0
    twin.parents[2].append(4)
    assert net.cpts[0][0] != 0.0 and net.parents[2] == [0, 1]


def test_equality_compares_arrays():
    net = load_network("asia")
    twin = net.copy()
    assert twin == net
    twin.cpts[0] = np.array([0.02, 0.98])
    assert twin != net
