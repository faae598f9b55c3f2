"""hybridbn: hybrid Bayesian-network structure learning (CI-test restriction, local scores with
exact pruning, an exact ILP on SCIP and heuristic optimisers).

The public entry point of the installed distribution::

    import hybridbn

    result = hybridbn.learn("asia", rows=2000, seed=1)     # a benchmark network, sampled
    result = hybridbn.learn(frame, palim=2)                 # a pandas DataFrame
    result = hybridbn.learn("scores.jkl", solver="ilp")     # a GOBNILP / BLIP score file
    result.arcs, result.objective, result.gap, result.evaluation

Importing it is cheap: the algorithm packages load when :func:`learn` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hybridbn.errors import HybridBNError

__version__ = "0.1.0"
__all__ = ["learn", "LearnResult", "RunConfig", "HybridBNError", "list_networks", "main"]

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.apps.learn import learn
    from pipeline.apps.learned import LearnResult
    from pipeline.core.config import RunConfig


def __getattr__(name: str) -> Any:
    """Load the public names on first use (PEP 562), so ``import hybridbn`` stays fast."""
    # deferred: start-up (``import hybridbn`` loads neither pandas nor numpy)
    if name == "learn":
        from pipeline.apps.learn import learn as value
    elif name == "LearnResult":
        from pipeline.apps.learned import LearnResult as value
    elif name == "RunConfig":
        from pipeline.core.config import RunConfig as value
    elif name == "list_networks":
        from bayesnet.catalog import list_networks as value
    elif name == "main":
        from pipeline.apps.cli import main as value
    else:
        raise AttributeError(f"module 'hybridbn' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
