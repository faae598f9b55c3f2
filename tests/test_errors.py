"""One base for the project's errors: ``except hybridbn.HybridBNError`` catches them all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import hybridbn
from hybridbn.errors import HybridBNError

PACKAGES = ["hybridbn", "bayesnet", "pipeline", "constraints", "scores", "ilp", "search", "graphs"]


def project_exceptions() -> list[type]:
    """Every exception class defined in the project's packages (imported module by module;
    warning categories are not errors and are left out)."""
    found = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        modules = [package] + [importlib.import_module(info.name)
                               for info in pkgutil.walk_packages(package.__path__, f"{name}.")]
        for module in modules:
            found += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                      if issubclass(cls, BaseException) and not issubclass(cls, Warning)
                      and cls.__module__ == module.__name__]
    return found


def test_every_project_exception_derives_from_the_base():
    """Ctrl-C stays a KeyboardInterrupt (``StageInterrupted``), never an error to catch."""
    classes = project_exceptions()
    assert len(classes) > 30  # the walk reached the packages
    stray = [f"{cls.__module__}.{cls.__qualname__}" for cls in classes
             if not issubclass(cls, (HybridBNError, KeyboardInterrupt))]
    assert not stray, f"exceptions without the HybridBNError base: {stray}"
    assert not [cls for cls in classes if issubclass(cls, KeyboardInterrupt) and issubclass(cls, Exception)]


@pytest.mark.parametrize("options", [{"palim": -1}, {"network": "no-such-network"}, {"method": "nope"}], ids=str)
def test_a_bad_run_is_caught_as_the_library_error(options, tmp_path):
    with pytest.raises(hybridbn.HybridBNError):
        hybridbn.learn(options.pop("network", "asia"), rows=100, cache_dir=tmp_path, **options)


def test_the_builtin_bases_are_kept():
    """Code that catches ValueError / OSError keeps working."""
    from ilp.problem import ILPInputError
    from pipeline.core.atomic import WriteError

    assert issubclass(ILPInputError, ValueError) and issubclass(WriteError, OSError)
