"""Vendored benchmark networks: listing, loading, cache isolation and the summary table."""

import numpy as np
import pytest

from pipeline.benchmarks import UnknownNetworkError, list_networks, load_network, network_summary


def test_list_networks_is_sorted_and_complete():
    names = list_networks()
    assert names == sorted(names)
    assert {"asia", "alarm", "munin", "diabetes", "link"} <= set(names)


def test_unknown_network_lists_known_ones():
    with pytest.raises(UnknownNetworkError, match=r"unknown network 'alarn'; known networks: alarm, andes"):
        load_network("alarn")
    with pytest.raises(ValueError):
        load_network("../asia")


def test_callers_cannot_corrupt_the_cache():
    first = load_network("asia")
    first.cpts[0][:] = 0.0
    first.states[0].append("maybe")
    first.parents[1].clear()
    first.variables[0] = "renamed"
    again = load_network("asia")
    np.testing.assert_allclose(again.cpts[0], [0.01, 0.99])
    assert again.states[0] == ["yes", "no"] and again.parents[1] == [0] and again.variables[0] == "asia"


def test_network_summary_rows():
    rows = {row["name"]: row for row in network_summary()}
    assert list(rows) == list_networks()
    assert rows["alarm"] == {"name": "alarm", "n_vars": 37, "n_edges": 46, "max_in_degree": 4, "max_states": 4}
    assert rows["asia"]["max_in_degree"] == 2 and rows["mildew"]["max_states"] == 100
