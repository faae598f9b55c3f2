"""BIF reader/writer: the vendored bnlearn networks, round trips and malformed input."""

import numpy as np
import pytest

from bayesnet.bif import BIFError, format_bif, read_bif, write_bif
from bayesnet.catalog import NETWORK_DIR, list_networks, load_network

# (variables, arcs) as published by the bnlearn repository
KNOWN_COUNTS = {
    "asia": (8, 8), "cancer": (5, 4), "earthquake": (5, 4), "survey": (6, 6), "sachs": (11, 17),
    "child": (20, 25), "insurance": (27, 52), "water": (32, 66), "mildew": (35, 46),
    "alarm": (37, 46), "barley": (48, 84), "hailfinder": (56, 66), "hepar2": (70, 123),
    "win95pts": (76, 112), "andes": (223, 338), "pathfinder": (109, 195), "pigs": (441, 592),
    "link": (724, 1125), "munin1": (186, 273), "munin2": (1003, 1244), "munin": (1041, 1397),
    "diabetes": (413, 602),
}


def test_all_known_networks_are_vendored():
    assert set(KNOWN_COUNTS) <= set(list_networks())


@pytest.mark.parametrize("name", list_networks())
def test_vendored_network_reads_validates_and_round_trips(name, tmp_path):
    net = load_network(name)
    assert net.name == name
    if name in KNOWN_COUNTS:
        assert (net.n_vars, net.n_edges) == KNOWN_COUNTS[name]
    net.validate(tol=1e-12)
    path = tmp_path / f"{name}.bif.gz"
    write_bif(net, path)
    back = read_bif(path)
    assert back.variables == net.variables
    assert back.states == net.states
    assert back.parents == net.parents
    for a, b in zip(back.cpts, net.cpts):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_asia_structure_and_cpt_layout():
    net = load_network("asia")
    either = net.index("either")
    assert [net.variables[p] for p in net.parents[either]] == ["lung", "tub"]
    cpt = net.cpts[either]
    assert cpt.shape == (2, 2, 2)
    # (lung=no, tub=yes) -> either=yes with probability 1; (no, no) -> either=no
    np.testing.assert_array_equal(cpt[1, 0], [1.0, 0.0])
    np.testing.assert_array_equal(cpt[1, 1], [0.0, 1.0])
    np.testing.assert_allclose(net.cpts[net.index("asia")], [0.01, 0.99])
    adj = net.adjacency
    assert adj[net.index("lung"), either] and not adj[either, net.index("lung")]
    assert net.arities.dtype == np.int64


TEXT = """// a comment
network "odd net" { property author = "me; and \\"you;\\""; }
/* block
   comment */
variable A { type discrete [ 2 ] { a0, "a 1" }; property position = (1, 2); property note = "x;y"; }
variable "B;x" {
  type discrete [ 3 ] { 12+, 0-3_days, "q\\"uote" };
}
probability ( A ) { table 0.25, 0.75; property source = "a;b"; }
probability ( "B;x" | A ) {
  ("a 1") 0.2, 0.3, 0.5;
  default 0.1, 0.1, 0.8;
}
"""


def test_comments_properties_quoted_names_and_default():
    net = read_bif(TEXT)
    assert net.name == "odd net"
    assert net.variables == ["A", "B;x"]
    assert net.states == [["a0", "a 1"], ["12+", "0-3_days", 'q"uote']]
    np.testing.assert_allclose(net.cpts[1], [[0.1, 0.1, 0.8], [0.2, 0.3, 0.5]])
    back = read_bif(format_bif(net))
    assert back.states == net.states and back.variables == net.variables
    np.testing.assert_array_equal(back.cpts[1], net.cpts[1])


def test_table_with_parents_lists_child_slowest():
    text = """variable A { type discrete [ 2 ] { a0, a1 }; }
variable B { type discrete [ 3 ] { b0, b1, b2 }; }
probability ( A ) { table 0.5, 0.5; }
probability ( B | A ) { table 0.1, 0.2,  0.3, 0.4,  0.6, 0.4; }
"""
    net = read_bif(text)
    np.testing.assert_allclose(net.cpts[1], [[0.1, 0.3, 0.6], [0.2, 0.4, 0.4]])


def test_rows_within_tolerance_are_renormalised():
    text = "variable A { type discrete [ 2 ] { x, y }; }\nprobability ( A ) { table 0.33335, 0.66670; }"
    cpt = read_bif(text).cpts[0]
    assert cpt.sum() == pytest.approx(1.0, abs=1e-15)


GOOD_HEAD = """network n {
}
variable A {
  type discrete [ 2 ] { a0, a1 };
}
variable B {
  type discrete [ 2 ] { b0, b1 };
}
probability ( A ) {
  table 0.5, 0.5;
}
"""


@pytest.mark.parametrize(
    "body, line, fragment",
    [
        ("probability ( B | C ) {\n  (a0) 0.5, 0.5;\n}\n", 12, "unknown variable 'C'"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1) 0.5, 0.3, 0.2;\n}\n", 14, "expected 2 values"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (zz) 0.5, 0.5;\n}\n", 14, "no state 'zz'"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n}\n", 12, "missing CPT row"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1) 0.5, 0.6;\n}\n", 12, "(a1) sums to 1.1"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1) 0.5, x;\n}\n", 14, "invalid probability value 'x'"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1) 0.5, 0.5;\n", 15, "expected '('"),
        ("variable A {\n  type discrete [ 2 ] { c, d };\n}\n", 12, "duplicate variable 'A'"),
        ("variable C {\n  type discrete [ 3 ] { c, d };\n}\n", 13, "declares 3 states but lists 2"),
        ("variable C {\n  type discrete [ 2 ] { c d };\n}\n", 13, "expected ','"),
        ("", 12, "missing probability block for 1 variable(s): 'B'"),
        ("probability ( A ) {\n  table 0.5, 0.5;\n}\n", 12, "duplicate probability block"),
        ("potential ( B ) {}\n", 12, "found 'potential'"),
        ("probability ( B ) {\n  table 0.5, 0.5;\n  property p = \"x;\n}\n", 14, "expected ';' to end the property"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1) 1.5, -0.5;\n}\n", 12, "(a1) has a negative"),
        ("probability ( B | A ) {\n  (a0) 0.5, 0.5;\n  (a1, b0) 0.5, 0.5;\n}\n", 14, "has 2 states for 1 parents"),
    ],
)
def test_malformed_input_reports_line(body, line, fragment):
    with pytest.raises(BIFError) as info:
        read_bif(GOOD_HEAD + body)
    message = str(info.value)
    assert message.startswith(f"line {line}: "), message
    assert fragment in message, message
    assert info.value.line == line


def test_cycle_is_an_error():
    text = """variable A { type discrete [ 2 ] { a0, a1 }; }
variable B { type discrete [ 2 ] { b0, b1 }; }
probability ( A | B ) { table 0.5, 0.5, 0.5, 0.5; }
probability ( B | A ) { table 0.5, 0.5, 0.5, 0.5; }
"""
    with pytest.raises(BIFError, match=r"line 3: the parents form a directed cycle: A -> B -> A"):
        read_bif(text)


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.bif"
    path.write_text(GOOD_HEAD + "probability ( B ) {\n  table 0.5;\n}\n")
    with pytest.raises(BIFError, match=r"bad\.bif: line 13: expected 2 values"):
        read_bif(path)


def test_missing_file():
    with pytest.raises(FileNotFoundError):
        read_bif(NETWORK_DIR / "nope.bif.gz")


def test_odd_names_round_trip(tmp_path):
    from bayesnet.network import Network

    odd = ["a b", 'q"x', "back\\slash", "c,d", "e/f", "//g", "é", "", "(h)", "table", "1.5"]
    net = Network(
        name="odd name",
        variables=["V one", "table"],
        states=[odd, ["x;y", "{z}"]],
        parents=[[], [0]],
        cpts=[np.full(len(odd), 1 / len(odd)), np.tile([0.25, 0.75], (len(odd), 1))],
    )
    write_bif(net, tmp_path / "odd.bif")
    assert read_bif(tmp_path / "odd.bif") == net
