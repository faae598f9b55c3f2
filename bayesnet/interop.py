"""A :class:`~bayesnet.network.Network` as pgmpy's or pyAgrum's own network object, CPTs included.

Both libraries are optional extras (``pip install 'hybridbn[pgmpy]'`` / ``'hybridbn[pyagrum]'``),
imported only when a conversion is asked for.
"""

from __future__ import annotations

import numpy as np

from bayesnet.network import Network
from hybridbn.errors import HybridBNError


class MissingExtraError(HybridBNError, ImportError):
    """An optional library a conversion needs is not installed."""


def _missing(function: str, library: str, extra: str) -> MissingExtraError:
    return MissingExtraError(f"{function} needs {library}: pip install 'hybridbn[{extra}]'")


def to_pgmpy(network: Network):
    """pgmpy's ``DiscreteBayesianNetwork`` (pgmpy >= 1.0) with one ``TabularCPD`` per variable.

    The state names are kept; a CPD's evidence is the variable's parents in our (BIF) order, its
    values one column per parent configuration with the last parent varying fastest, which is
    ``cpt.reshape(-1, r).T`` of our C-order tables.
    """
    try:
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork
    except ImportError:
        raise _missing("to_pgmpy", "pgmpy >= 1.0", "pgmpy") from None
    names = network.variables
    model = DiscreteBayesianNetwork()
    model.name = network.name
    model.add_nodes_from(names)
    model.add_edges_from((names[p], names[v]) for v, parents in enumerate(network.parents) for p in parents)
    cpds = []
    for v, name in enumerate(names):
        parents = network.parents[v]
        r = len(network.states[v])
        cpds.append(TabularCPD(
            variable=name,
            variable_card=r,
            values=np.asarray(network.cpts[v], dtype=np.float64).reshape(-1, r).T,
            evidence=[names[p] for p in parents] or None,
            evidence_card=[len(network.states[p]) for p in parents] or None,
            state_names={names[u]: list(network.states[u]) for u in (v, *parents)},
        ))
    model.add_cpds(*cpds)
    return model


def _import_pyagrum():
    try:
        import pyagrum  # pyAgrum >= 2.0
    except ImportError:
        try:
            import pyAgrum as pyagrum  # pyAgrum 1.x
        except ImportError:
            raise _missing("to_pyagrum", "pyAgrum", "pyagrum") from None
    return pyagrum


def to_pyagrum(network: Network):
    """pyAgrum's ``BayesNet`` with labelled variables (our states, in order) and the CPTs filled in.

    pyAgrum stores a table with its first variable varying fastest, so each CPT is filled with our
    table transposed to pyAgrum's variable order reversed, flattened in C order.
    """
    gum = _import_pyagrum()
    names = network.variables
    bn = gum.BayesNet(network.name)
    for name, states in zip(names, network.states):
        variable = gum.LabelizedVariable(name, name, 0)
        for state in states:
            variable.addLabel(state)
        bn.add(variable)
    for v, parents in enumerate(network.parents):
        for p in parents:
            bn.addArc(names[p], names[v])
    for v, name in enumerate(names):
        table = bn.cpt(name)
        our_axis = {names[p]: axis for axis, p in enumerate(network.parents[v])}
        our_axis[name] = len(network.parents[v])
        theirs = [table.variable(i).name() for i in range(table.nbrDim())]
        values = np.transpose(np.asarray(network.cpts[v], dtype=np.float64), [our_axis[n] for n in reversed(theirs)])
        table.fillWith(values.ravel().tolist())
    return bn
