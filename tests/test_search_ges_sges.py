"""SGES: property bounds, Selective-Generate-Ops (Chickering & Meek 2015, section 4.3, Figure 5)."""

import numpy as np
import pytest

from graphs.pdag import dag_to_cpdag
from graphs.random_graphs import random_dag
from graphs.bitsets import bits, to_mask
from search.chordal import is_clique, max_clique_size
from search.ges_ops import CPDAGMasks
from search.sges import SGESBoundError, clique_bound, parse_bound, selective_generate_ops, sges


def test_parse_bound_forms_and_errors():
    assert parse_bound(("parents", 3)) == ("parents", 3)
    assert parse_bound("vwidth:2") == ("vwidth", 2)
    assert parse_bound(" Clique :0".replace(" :", ":")) == ("clique", 0)
    with pytest.raises(SGESBoundError, match=">= 0"):
        parse_bound(("parents", -1))
    with pytest.raises(SGESBoundError, match="unknown SGES property 'treewidth'.*parents, clique, vwidth"):
        parse_bound("treewidth:2")
    with pytest.raises(SGESBoundError, match="NAME:K"):
        parse_bound("parents")
    with pytest.raises(SGESBoundError, match="integer"):
        parse_bound("parents:two")
    with pytest.raises(SGESBoundError, match="integer"):
        parse_bound(("parents", 1.5))
    with pytest.raises(ValueError):  # public entry point propagates the same error
        sges(lambda c, p: 0.0, 3, bound=("parents", -2))


def test_clique_bounds_per_property():
    # parents<=k: a clique of size m in H gives its lowest node m+1 parents -> b = k-1
    assert clique_bound("parents", 3) == 2
    assert clique_bound("clique", 3) == 2
    assert clique_bound("vwidth", 3) == 3
    assert clique_bound("parents", 0) == 0  # clamped: the empty H is always allowed


def test_paper_example_single_clique():
    # NA_{Y,X} is one clique {0, 1, 2}: H0 is empty; b=0 -> {}, b=1 -> {} and singletons, b=3 -> all.
    adj = [0b111 & ~(1 << v) for v in range(3)]
    na = 0b111
    assert selective_generate_ops(na, adj, 0) == [0]
    assert sorted(selective_generate_ops(na, adj, 1)) == [0, 1, 2, 4]
    assert sorted(selective_generate_ops(na, adj, 3)) == list(range(8))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("b", [0, 1, 2])
def test_generates_every_bounded_valid_operator(seed, b):
    """Proposition 1: every valid H whose cliques are <= b is generated; all generated are valid."""
    P = dag_to_cpdag(random_dag(8, edge_prob=0.7, seed=seed))
    m = CPDAGMasks.of(P)
    for y in range(8):
        for x in bits(m.pa[y] | m.ne[y]):
            na = m.ne[y] & m.adj[x]
            gen = selective_generate_ops(na, m.adj, b)
            assert len(gen) == len(set(gen))
            for h in gen:
                assert h & ~na == 0 and is_clique(na & ~h, m.adj)
            need = {h for h in range(1 << 8) if h & ~na == 0 and is_clique(na & ~h, m.adj)
                    and max_clique_size(h, m.adj) <= b}
            assert need <= set(gen)


def test_generation_is_polynomial_in_complete_graph():
    n, b = 12, 1
    adj = [((1 << n) - 1) & ~(1 << v) for v in range(n)]
    gen = selective_generate_ops(to_mask(range(n)), adj, b)
    assert len(gen) == 1 + n  # empty set and singletons of the single maximal clique


def test_sges_start_and_bad_input():
    score = lambda child, parents: -float(len(parents))  # independence everywhere
    r = sges(score, 4, "parents:2", start="complete")
    assert not r.cpdag.any() and r.n_inserts == 0 and r.n_deletes == 6
    with pytest.raises(ValueError, match="start must be one of"):
        sges(score, 4, start="full")
    with pytest.raises(ValueError, match="allowed must have shape"):
        sges(score, 4, allowed=np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="palim"):
        sges(score, 4, palim=-1)
