"""The state tuples of the score-table kernel label their buffers by name, never by position.

The kernel (``scores.enumeration`` and the modules it inlines) hands ten ``NamedTuple`` s of
buffers around; a field read by position would silently take another buffer when the fields are
reordered. Checked twice: statically (no tuple variable is unpacked, no state tuple is built from
positional arguments) and by compiling the kernel anew with the fields of every state tuple
reversed, which must give the same tables bit for bit.
"""

import ast
import collections
import importlib
import inspect
import types

import numba
import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

import scores.candidates as candidates
from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample

KERNEL_MODULES = ("scores.enumeration", "scores.alive_sets", "scores.family_counting", "scores.score_memo",
                  "scores.pruning")
"""The modules of the enumeration kernel, which declare its state tuples."""


def _state_tuples(modules):
    """The ``NamedTuple`` classes declared in ``modules``."""
    return {obj for mod in modules for obj in vars(mod).values()
            if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")
            and obj.__module__ == mod.__name__}


def _positional_uses(source, tuple_names):
    """``(line, what)`` of each positional use of a state tuple in ``source``: a tuple variable (or
    attribute, but an array's ``shape``) unpacked by an assignment, or a state tuple built from
    positional arguments."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) \
                and (isinstance(node.value, ast.Name) or isinstance(node.value, ast.Attribute)
                     and node.value.attr != "shape"):
            found.append((node.lineno, f"unpacks {ast.unparse(node.value)}"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in tuple_names \
                and node.args:
            found.append((node.lineno, f"builds {node.func.id} from positions"))
    return found


def test_no_state_tuple_is_read_or_built_by_position():
    modules = [importlib.import_module(m) for m in (*KERNEL_MODULES, "scores.candidates")]
    names = {cls.__name__ for cls in _state_tuples(modules)}
    assert {"CountScratch", "Prefix", "ChildConstants", "ScoreMemo", "AliveSets", "CountingData"} <= names
    for module in modules:
        assert _positional_uses(inspect.getsource(module), names) == [], module.__name__


def test_the_static_check_finds_positional_uses():
    source = "def f(scratch, memo):\n    mark, codes = scratch\n    a, b = memo.pair\n    return Prefix(True, nv=0)\n"
    assert _positional_uses(source, {"Prefix"}) == [
        (2, "unpacks scratch"), (3, "unpacks memo.pair"), (4, "builds Prefix from positions")]
    assert _positional_uses("a, b = f(x)\nc, d = x.c, x.d\ne = Prefix(nv=0)\nn, m = x.shape\n", {"Prefix"}) == []


def _reordered_kernel(module_names):
    """``(child_kernel, reorder)``: the kernel compiled anew (no disk cache) with the fields of every
    state tuple of ``module_names`` reversed, and the conversion of an input tuple to its reversed type."""
    modules = [importlib.import_module(m) for m in module_names]
    swap = {cls: collections.namedtuple(cls.__name__, cls._fields[::-1]) for cls in _state_tuples(modules)}
    spaces = {mod.__name__: dict(vars(mod)) for mod in modules}
    for mod in modules:
        for obj in vars(mod).values():
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ == mod.__name__:
                f = obj.py_func
                copy = types.FunctionType(f.__code__, spaces[mod.__name__], f.__name__, f.__defaults__, f.__closure__)
                options = {k: v for k, v in obj.targetoptions.items() if k != "nopython"}
                swap[obj] = numba.njit(**options)(copy)
    for space in spaces.values():  # every module sees the copies, its own and those it imports
        for name, obj in space.items():
            if isinstance(obj, (type, Dispatcher)) and obj in swap:
                space[name] = swap[obj]
    kernel = swap[importlib.import_module("scores.enumeration").child_kernel]
    return kernel, lambda value: swap[type(value)](**value._asdict())


CASES = [  # (network, rows, score, palim, required arcs): binary (cube, quad paths) and multi-state data
    ("asia", 400, "bdeu", 3, False),
    ("asia", 400, "bic", 3, True),
    ("insurance", 1500, "bic", 3, False),
    ("insurance", 1500, "qnml", 2, True),
    ("insurance", 800, "bdeu", 3, True),
]


def _tables():
    out = []
    for net, n_rows, score, palim, with_required in CASES:
        ds = forward_sample(load_network(net), n_rows, 1)
        n = ds.data.shape[1]
        required = np.zeros((n, n), dtype=bool)
        if with_required:
            required[0, n - 1] = required[n - 1, 1] = True
        out.append(candidates.build_score_table(ds.data, ds.arities, score, palim=palim, required=required))
    return out


@pytest.mark.slow  # compiles the whole kernel anew, without its disk cache: minutes on 2 cores
def test_reversed_state_fields_give_the_same_tables(monkeypatch):
    """Compiles the kernel anew (tens of seconds): with every state tuple's fields in reverse order,
    a buffer read by position would take another's place (a typing error or another table)."""
    tables = _tables()
    kernel, reorder = _reordered_kernel(KERNEL_MODULES)
    calls = []

    def reordered(data, task, rule):
        inputs = reorder(data), reorder(task), reorder(rule)
        calls.append(inputs[0]._fields)
        return kernel(*inputs)

    monkeypatch.setattr(candidates, "child_kernel", reordered)
    again = _tables()
    assert len(calls) == sum(t.n_vars for t in tables) and calls[0][0] == "cube_index"
    for (net, n_rows, score, _, _), table, other in zip(CASES, tables, again):
        for column in ("child", "parent_ptr", "parents", "score"):
            assert getattr(table, column).tobytes() == getattr(other, column).tobytes(), (net, score, column)
        assert table.meta["counts"] == other.meta["counts"]
    assert sum(len(t.score) for t in tables) > 100  # the cases are not trivial
