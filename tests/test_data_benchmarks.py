"""Vendored benchmark networks: listing, loading, cache isolation and the summary table."""

import numpy as np
import pytest

from bayesnet.catalog import UnknownNetworkError, list_networks, load_network, network_summary


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


def test_a_bif_file_is_a_network(tmp_path):
    from bayesnet.bif import write_bif

    path = tmp_path / "Mine.BIF.GZ"
    write_bif(load_network("asia"), path)
    mine = load_network(str(path))
    asia = load_network("asia")
    assert mine.variables == asia.variables and mine.parents == asia.parents
    np.testing.assert_allclose(mine.cpts[7], asia.cpts[7])
    with pytest.raises(UnknownNetworkError, match="network file not found: .*gone.bif"):
        load_network(str(tmp_path / "gone.bif"))
    with pytest.raises(UnknownNetworkError, match="or give a BIF file"):
        load_network(str(tmp_path / "Mine"))  # a path without the BIF ending is a name
