"""What one run learned, as returned by :func:`hybridbn.learn`: the DAG, its CPDAG (under the
expert knowledge, if any), the fitted parameters, the solver's objective / bound / gap / status,
per-stage times and counts, the evaluation against the true network when one is known, and
conversions (edge list, networkx, BIF, DOT, pgmpy, pyAgrum) and the output folder of ``run.py``;
with ``bootstrap=B`` also the arc strengths and the averaged network of B bootstrap networks
(:attr:`LearnResult.bootstrap`); with ``select`` the cross-validation that chose the setting
(:attr:`LearnResult.selection`).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from bayesnet.bif import format_bif
from bayesnet.fitting import fit_cpts
from bayesnet.interop import to_pgmpy, to_pyagrum
from graphs.export import to_dot, to_edge_frame
from pipeline.apps.bootstrap import UnfinishedBootstrap
from pipeline.apps.outputs import write_outputs
from pipeline.apps.report import format_run_summary
from pipeline.apps.selection import UnfinishedSelection
from pipeline.core.atomic import replace_file
from pipeline.core.budget import budget_record
from hybridbn.progress import reporting
from pipeline.core.cache import INTERRUPTED, Artifact
from pipeline.core.config import RunConfig
from pipeline.core.stages import (dag_of, dataset_of, equivalence_class, knowledge_matrices, table_of,
                                   variable_names)
from scores.jkl import jkl_bytes, name_writable


class LearnResult:
    """The outcome of :func:`hybridbn.learn` (read-only views of the stage artifacts)."""

    def __init__(self, config: RunConfig, artifacts: Mapping[str, Artifact], bootstrap=None, selection=None):
        self.config = config
        self.artifacts = dict(artifacts)
        self.bootstrap = bootstrap
        """With ``bootstrap=B``: the :class:`pipeline.apps.bootstrap.BootstrapResult` (``strengths()``
        table, ``averaged`` PDAG, ``threshold``, ``evaluation``), or the
        :class:`pipeline.apps.bootstrap.UnfinishedBootstrap` of one a stop request ended; else None."""
        self.selection = selection
        """With ``select`` or ``score="auto"``: the :class:`pipeline.apps.selection.SelectionResult`
        (``table()`` of held-out log-likelihoods, the ``chosen`` candidate, whose configuration is
        :attr:`config`), or the :class:`pipeline.apps.selection.UnfinishedSelection` of a
        ``score="auto"`` that a stop request ended; None where nothing was cross-validated."""

    def __repr__(self) -> str:
        if "solve" not in self.artifacts:
            return f"LearnResult({self.config.source_name}: stages {', '.join(self.artifacts)})"
        return (f"LearnResult({self.config.source_name}: {len(self.names)} variables, {len(self.arcs)} arcs, "
                f"objective {self.objective:.6g}, status {self.status})")

    # ------------------------------------------------------------------------- structure
    @cached_property
    def names(self) -> list[str]:
        """Variable names, in column order (the indices of :attr:`adjacency`)."""
        return variable_names(self.artifacts)

    @cached_property
    def adjacency(self) -> np.ndarray:
        """The learned DAG as a boolean matrix, ``adjacency[p, c]`` for an arc ``p -> c``."""
        return dag_of(self._stage("solve"))

    @property
    def arcs(self) -> list[tuple[str, str]]:
        """The arcs ``(parent, child)`` of the learned DAG, by name."""
        return [(self.names[p], self.names[c]) for p, c in zip(*np.nonzero(self.adjacency))]

    @property
    def parents(self) -> dict[str, list[str]]:
        """Each variable's parents, by name."""
        return {name: [self.names[p] for p in np.flatnonzero(self.adjacency[:, v])]
                for v, name in enumerate(self.names)}

    @cached_property
    def cpdag(self) -> np.ndarray:
        """The equivalence class of the DAG: ``P[i, j] & ~P[j, i]`` a compelled arc, ``P[i, j] &
        P[j, i]`` a reversible (undirected) edge. Its CPDAG, or with expert knowledge the maximally
        oriented PDAG under it (Meek's rules with background knowledge: an arc the tiers or the
        required arcs fix is compelled, with what follows from it)."""
        return equivalence_class(self.adjacency, knowledge_matrices(self.config, self.names))

    # ---------------------------------------------------------------------------- solver
    @property
    def solver_result(self) -> dict[str, Any]:
        """Everything the solver reported (objective, dual_bound, gap, status and its counters)."""
        return dict(self._stage("solve").meta["result"])

    @property
    def objective(self) -> float:
        """Total local score of the learned DAG."""
        return float(self.solver_result["objective"])

    @property
    def bound(self) -> float | None:
        """Upper bound on the best score (exact ILP; None for the heuristics, and when ``--budget``
        cut the scoring: see :attr:`status`)."""
        return self.solver_result.get("dual_bound")

    @property
    def gap(self) -> float | None:
        """Relative gap between :attr:`objective` and :attr:`bound` (0 when proven optimal)."""
        return self.solver_result.get("gap")

    @property
    def status(self) -> str:
        """Solver status, e.g. ``optimal``, ``timelimit``, ``converged``; ``limited`` when ``--budget``
        cut the scoring, ``interrupted`` when a stop request (Ctrl-C, SIGTERM) ended the solve (the
        solver's own status is ``solver_result["solver_status"]``, the reason ``solver_result["reason"]``)."""
        return str(self.solver_result.get("status"))

    @property
    def stopped_in(self) -> str | None:
        """What a stop request (Ctrl-C, SIGTERM) ended: ``"solve"`` (the DAG is the best found so
        far, not cached), ``"bootstrap"`` (the network is learned, the bootstrap unfinished:
        :attr:`bootstrap` is a :class:`pipeline.apps.bootstrap.UnfinishedBootstrap`), ``"selection"``
        (BDeu's network is learned, the cross-validation of ``--score auto`` unfinished:
        :attr:`selection` is a :class:`pipeline.apps.selection.UnfinishedSelection`), or ``None``."""
        if "solve" in self.artifacts and self.artifacts["solve"].completion == INTERRUPTED:
            return "solve"
        if isinstance(self.bootstrap, UnfinishedBootstrap):
            return "bootstrap"
        if isinstance(self.selection, UnfinishedSelection):
            return "selection"
        return None

    @property
    def interrupted(self) -> bool:
        """Whether a stop request ended the run (see :attr:`stopped_in`)."""
        return self.stopped_in is not None

    @property
    def trajectory(self) -> list[tuple[float, float | None, float | None]]:
        """The solve's ``(seconds, incumbent objective, bound)`` points (:class:`hybridbn.progress.Trajectory`;
        ``None`` where not known: no bound for the heuristics); empty for GES / SGES."""
        return [(float(t), primal, dual) for t, primal, dual in self.solver_result.get("trajectory") or []]

    # ---------------------------------------------------------------------------- stages
    @property
    def times(self) -> dict[str, float]:
        """Seconds per stage (as first computed; a cached stage keeps its original time)."""
        return {name: float(art.seconds) for name, art in self.artifacts.items()}

    @property
    def cached(self) -> dict[str, bool]:
        """Whether each stage came from the cache."""
        return {name: bool(art.cached) for name, art in self.artifacts.items()}

    @property
    def counts(self) -> dict[str, dict[str, Any]]:
        """Each stage's counts and summary (rows, CI tests, parent sets kept, solver result...)."""
        return {name: dict(art.meta) for name, art in self.artifacts.items()}

    @property
    def budget(self) -> dict[str, Any] | None:
        """With ``budget=SECONDS``: the budget and each stage's time limit and time used."""
        return budget_record(self.config, self.artifacts)

    @property
    def evaluation(self) -> dict[str, Any] | None:
        """SHD (between the equivalence classes of :attr:`cpdag`; with knowledge
        ``knowledge_conflicts_truth`` says whether the true network breaks it, the SHD then being
        against its plain CPDAG), skeleton precision / recall / F1 and arc differences against the
        network that generated the data; None when it is not known (user data, score files)."""
        art = self.artifacts.get("evaluate")
        if art is None or art.meta.get("truth") is None:
            return None
        return dict(art.meta)

    def summary(self, output: Path | None = None) -> str:
        """The report ``run.py`` prints: one line per stage with its time and counts."""
        lines = [format_run_summary(self.config, self.artifacts, output=output)]
        lines += [extra.summary() for extra in (self.selection, self.bootstrap) if extra is not None]
        return "\n".join(lines)

    # ------------------------------------------------------------------------ parameters
    def parameters(self, method: str = "bayes") -> Any:
        """The DAG with CPTs fitted to the data (:class:`bayesnet.network.Network`): ``"bayes"``
        (BDeu-consistent Dirichlet prior of size ``ess``) or ``"mle"``."""
        if "data" not in self.artifacts:
            raise ValueError("parameters need data: a run from a score file has none")
        return fit_cpts(self.adjacency, dataset_of(self.artifacts["data"]), method=method,
                        ess=self.config.ess, name=self.config.source_name)

    # ------------------------------------------------------------------------ conversions
    def to_edge_frame(self, cpdag: bool = False) -> pd.DataFrame:
        """Columns ``source``, ``target``, ``directed``: the DAG's arcs, or the edges of :attr:`cpdag`
        (under the knowledge, if any)."""
        return to_edge_frame(self.cpdag if cpdag else self.adjacency, self.names)

    def to_networkx(self):
        """The DAG as a ``networkx.DiGraph`` (needs networkx: ``pip install networkx``)."""
        try:
            import networkx as nx  # deferred: networkx is optional
        except ImportError:
            raise ImportError("to_networkx needs networkx: pip install networkx") from None
        graph = nx.DiGraph()
        graph.add_nodes_from(self.names)
        graph.add_edges_from(self.arcs)
        return graph

    def to_bif(self, method: str = "bayes") -> str:
        """BIF text of the DAG with fitted CPTs (see :meth:`parameters`)."""
        return format_bif(self.parameters(method))

    def to_pgmpy(self, method: str = "bayes"):
        """The DAG with fitted CPTs (see :meth:`parameters`) as pgmpy's ``DiscreteBayesianNetwork``
        (needs pgmpy >= 1.0: ``pip install 'hybridbn[pgmpy]'``)."""
        return to_pgmpy(self.parameters(method))

    def to_pyagrum(self, method: str = "bayes"):
        """The DAG with fitted CPTs (see :meth:`parameters`) as pyAgrum's ``BayesNet`` (needs
        pyAgrum: ``pip install 'hybridbn[pyagrum]'``)."""
        return to_pyagrum(self.parameters(method))

    def to_dot(self) -> str:
        """Graphviz DOT of :attr:`cpdag` (compelled arcs vs reversible edges)."""
        return to_dot(self.cpdag, self.names)

    def write(self, output_dir: str | Path = "output", cpt: str = "bayes", progress=False) -> Path:
        """Write the files of ``run.py`` (edges.csv, network.dot, network.bif, model.txt,
        result.json, pictures; convergence.png for a solve stopped early; with the bootstrap
        strengths.csv, averaged.csv, bootstrap.json, averaged.png; with the selection
        selection.csv, selection.json) to ``<output_dir>/<source>-<key>/`` and return that folder.
        ``progress`` (as for :func:`hybridbn.learn`) reports the drawing of large networks."""
        self._stage("solve")
        extra = tuple(x.write for x in (self.selection, self.bootstrap) if x is not None)
        with reporting(progress) as report:
            return write_outputs(Path(output_dir), self.config, self.artifacts, cpt_method=cpt,
                                 extra_writers=extra, report=report, interrupted=self.stopped_in)

    def write_scores(self, path: str | Path) -> Path:
        """Export the scores stage's table as a ``.jkl`` file (GOBNILP / BLIP format; by name when
        every name is a single token, else by index; gzip when the name ends in ``.gz``)."""
        path = Path(path)
        table = table_of(self._stage("scores"), self.names)
        data = jkl_bytes(table, use_names=all(map(name_writable, self.names)), compress=path.suffix == ".gz")
        return replace_file(path, lambda tmp: tmp.write_bytes(data))

    def _stage(self, name: str) -> Artifact:
        try:
            return self.artifacts[name]
        except KeyError:
            raise ValueError(f"this run stopped before the {name} stage (stages run: "
                             f"{', '.join(self.artifacts)})") from None
