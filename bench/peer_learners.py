"""Structure learners of other libraries for ``bench.accuracy``, each returning a PDAG matrix.

Every learner takes a :class:`Sample` (state codes, names, labelled DataFrame) and returns a
boolean ``P`` with ``P[i, j] & ~P[j, i]`` an arc ``i -> j`` and ``P[i, j] & P[j, i]`` an
undirected edge (``graphs.pdag``'s convention). Learners that return a DAG are converted to its
CPDAG; learners that return a PDAG (PC, GES, BOSS, GRaSP, MIIC) are compared as returned.
Settings: CI tests G2 at alpha 0.05 (PC-stable where offered), scores BDeu with equivalent sample
size 1 where the library lets us set it, else the library's default; otherwise library defaults.
The libraries are the optional ``peers`` extra (pgmpy, causal-learn, pyAgrum); R's bnlearn runs
through ``Rscript`` when both are installed.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from typing import Callable

import numpy as np
import pandas as pd

from graphs.pdag import dag_to_cpdag, pdag_from_edges

ALPHA = 0.05


@dataclass(frozen=True)
class Sample:
    """One data set in the forms the libraries want."""

    codes: np.ndarray  # (rows, vars) state codes
    frame: pd.DataFrame  # the same data with state labels as strings

    @property
    def names(self) -> list[str]:
        return list(self.frame.columns)


def arcs_by_name(sample: Sample, edges) -> np.ndarray:
    """The DAG of the named arcs ``edges``, in the sample's column order."""
    index = {name: k for k, name in enumerate(sample.names)}
    return pdag_from_edges(len(index), [(index[u], index[v]) for u, v in edges])


def _dag_by_name(sample: Sample, edges) -> np.ndarray:
    return dag_to_cpdag(arcs_by_name(sample, edges))


def _endpoint_matrix(graph: np.ndarray) -> np.ndarray:
    """causal-learn's ``G.graph``: ``g[j, i] == 1 and g[i, j] == -1`` is ``i -> j``; ``-1, -1``
    an undirected edge (a bidirected ``1, 1`` is kept as an undirected adjacency)."""
    g = np.asarray(graph)
    return (g != 0) & ~((g == 1) & (g.T == -1))


# ----------------------------------------------------------------------------- pgmpy
def _pgmpy_bdeu(sample: Sample):
    from pgmpy.estimators import BDeu

    return BDeu(sample.frame, equivalent_sample_size=1)


def pgmpy_pc(sample: Sample) -> np.ndarray:
    from pgmpy.estimators import PC

    pdag = PC(sample.frame).estimate(variant="stable", ci_test="g_sq", return_type="pdag",
                                     significance_level=ALPHA, n_jobs=1, show_progress=False)
    index = {name: k for k, name in enumerate(sample.names)}
    return pdag_from_edges(len(index), [(index[u], index[v]) for u, v in pdag.directed_edges],
                      [(index[u], index[v]) for u, v in pdag.undirected_edges])


def pgmpy_hc(sample: Sample) -> np.ndarray:
    from pgmpy.estimators import HillClimbSearch

    dag = HillClimbSearch(sample.frame).estimate(scoring_method=_pgmpy_bdeu(sample), show_progress=False)
    return _dag_by_name(sample, dag.edges())


def pgmpy_mmhc(sample: Sample) -> np.ndarray:
    from pgmpy.estimators import MmhcEstimator

    dag = MmhcEstimator(sample.frame).estimate(scoring_method=_pgmpy_bdeu(sample), significance_level=ALPHA)
    return _dag_by_name(sample, dag.edges())


def pgmpy_ges(sample: Sample) -> np.ndarray:
    from pgmpy.estimators import GES

    pdag = GES(sample.frame).estimate(scoring_method=_pgmpy_bdeu(sample))
    index = {name: k for k, name in enumerate(sample.names)}
    return pdag_from_edges(len(index), [(index[u], index[v]) for u, v in pdag.directed_edges],
                      [(index[u], index[v]) for u, v in pdag.undirected_edges])


# ---------------------------------------------------------------------- causal-learn
def causallearn_pc(sample: Sample) -> np.ndarray:
    from causallearn.search.ConstraintBased.PC import pc

    cg = pc(sample.codes.astype(np.int64), ALPHA, "gsq", stable=True, show_progress=False)
    return _endpoint_matrix(cg.G.graph)


def causallearn_ges(sample: Sample) -> np.ndarray:
    from causallearn.search.ScoreBased.GES import ges

    return _endpoint_matrix(ges(sample.codes.astype(np.int64), score_func="local_score_BDeu")["G"].graph)


def causallearn_boss(sample: Sample) -> np.ndarray:
    from causallearn.search.PermutationBased.BOSS import boss

    return _endpoint_matrix(boss(sample.codes.astype(np.int64), score_func="local_score_BDeu", verbose=False).graph)


def causallearn_grasp(sample: Sample) -> np.ndarray:
    from causallearn.search.PermutationBased.GRaSP import grasp

    return _endpoint_matrix(grasp(sample.codes.astype(np.int64), score_func="local_score_BDeu",
                                  verbose=False).graph)


# --------------------------------------------------------------------------- pyAgrum
def _agrum(sample: Sample, algorithm: str):
    import pyagrum as gum

    learner = gum.BNLearner(sample.frame)
    getattr(learner, algorithm)()
    return learner


def _agrum_dag(sample: Sample, algorithm: str) -> np.ndarray:
    learner = _agrum(sample, algorithm)
    learner.useScoreBDeu()
    bn = learner.learnBN()
    return _dag_by_name(sample, [(bn.variable(u).name(), bn.variable(v).name()) for u, v in bn.arcs()])


def agrum_dag(sample: Sample, algorithm: str, score: str) -> np.ndarray:
    """The DAG (not its class) that pyAgrum's ``algorithm`` learns with ``score`` (a BNLearner
    method name: ``useScoreBDeu``, ``useScoreBIC``), library defaults otherwise, on one thread as
    the other learners (with its default threads on a loaded 2-core machine, greedy hill climbing
    on DEBD plants spent 60.8 CPU s where one thread took 5.5). Only the structure is learned:
    ``learnBN``'s parameter step fails without a prior on a parent configuration never seen."""
    learner = _agrum(sample, algorithm)
    learner.setNumberOfThreads(1)
    getattr(learner, score)()
    dag = learner.learnDAG()
    return arcs_by_name(sample, [(learner.nameFromId(u), learner.nameFromId(v)) for u, v in dag.arcs()])


def _agrum_pdag(sample: Sample, algorithm: str) -> np.ndarray:
    learner = _agrum(sample, algorithm)
    pdag = learner.learnPDAG()
    index = {name: k for k, name in enumerate(sample.names)}
    pos = {i: index[learner.nameFromId(i)] for i in range(len(index))}
    return pdag_from_edges(len(index), [(pos[u], pos[v]) for u, v in pdag.arcs()],
                      [(pos[u], pos[v]) for u, v in pdag.edges()])


def agrum_ghc(sample: Sample) -> np.ndarray:
    return _agrum_dag(sample, "useGreedyHillClimbing")


def agrum_tabu(sample: Sample) -> np.ndarray:
    return _agrum_dag(sample, "useLocalSearchWithTabuList")


def agrum_miic(sample: Sample) -> np.ndarray:
    return _agrum_pdag(sample, "useMIIC")


# --------------------------------------------------------------------- R's bnlearn
BNLEARN_CALLS = {
    "pc.stable": "pc.stable(d, alpha = {alpha}, test = 'mi')",
    "mmhc": "cpdag(mmhc(d, restrict.args = list(alpha = {alpha}), maximize.args = list(score = 'bde', iss = 1)))",
    "h2pc": "cpdag(h2pc(d, restrict.args = list(alpha = {alpha}), maximize.args = list(score = 'bde', iss = 1)))",
    "hc": "cpdag(hc(d, score = 'bde', iss = 1))",
    "tabu": "cpdag(tabu(d, score = 'bde', iss = 1))",
}


@cache
def bnlearn_available() -> bool:
    """Whether ``Rscript`` runs and has the bnlearn package."""
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(bnlearn)"], capture_output=True)
    return probe.returncode == 0


def bnlearn(algorithm: str) -> Callable[[Sample], np.ndarray]:
    """bnlearn's ``algorithm`` through Rscript: its arcs (an undirected edge is listed both ways)."""
    return lambda sample: bnlearn_arcs(sample, BNLEARN_CALLS[algorithm].format(alpha=ALPHA))


def varying_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns bnlearn accepts: it refuses a variable with one observed level (which can have
    no arc anyway)."""
    return frame[[name for name in frame.columns if frame[name].nunique() > 1]]


def bnlearn_arcs(sample: Sample, call: str) -> np.ndarray:
    """The arcs of the graph that the R expression ``call`` returns for the data frame ``d``, run
    by Rscript on ``sample`` (an undirected edge is listed both ways)."""
    with tempfile.TemporaryDirectory() as tmp:
        data, arcs = os.path.join(tmp, "data.csv"), os.path.join(tmp, "arcs.csv")
        varying_columns(sample.frame).to_csv(data, index=False)
        # na.strings: a state named "NA" (pathfinder has them) is a state, not a missing value
        script = (f"suppressMessages(library(bnlearn)); d <- read.csv('{data}', colClasses = 'factor', "
                  f"check.names = FALSE, na.strings = character(0)); g <- {call}; "
                  f"write.csv(arcs(g), '{arcs}', row.names = FALSE)")
        subprocess.run(["Rscript", "-e", script], check=True, capture_output=True)
        found = pd.read_csv(arcs, dtype=str, keep_default_na=False)
    index = {name: k for k, name in enumerate(sample.names)}
    return pdag_from_edges(len(index), [(index[u], index[v]) for u, v in zip(found["from"], found["to"])])


# ------------------------------------------------------------------------- registry
PEERS: dict[str, tuple[str, Callable[[Sample], np.ndarray]]] = {
    "pgmpy PC": ("pgmpy", pgmpy_pc),
    "pgmpy HC": ("pgmpy", pgmpy_hc),
    "pgmpy MMHC": ("pgmpy", pgmpy_mmhc),
    "pgmpy GES": ("pgmpy", pgmpy_ges),
    "causal-learn PC": ("causallearn", causallearn_pc),
    "causal-learn GES": ("causallearn", causallearn_ges),
    "causal-learn BOSS": ("causallearn", causallearn_boss),
    "causal-learn GRaSP": ("causallearn", causallearn_grasp),
    "pyAgrum GHC": ("pyagrum", agrum_ghc),
    "pyAgrum Tabu": ("pyagrum", agrum_tabu),
    "pyAgrum MIIC": ("pyagrum", agrum_miic),
    **{f"bnlearn {a}": ("bnlearn", bnlearn(a)) for a in BNLEARN_CALLS},
}


def unavailable(peer: str) -> str | None:
    """Why ``peer`` cannot run here (a missing library or Rscript), or None."""
    module = PEERS[peer][0]
    if module == "bnlearn":
        return None if bnlearn_available() else "not available (no Rscript with bnlearn)"
    return None if importlib.util.find_spec(module) else f"not available ({module} not installed)"


PRELOAD = ("pgmpy.estimators", "causallearn.search.ConstraintBased.PC", "causallearn.search.ScoreBased.GES",
           "causallearn.search.PermutationBased.BOSS", "causallearn.search.PermutationBased.GRaSP", "pyagrum")


def preload() -> None:
    """Import the installed peer libraries, so that no learner's time includes an import."""
    for module in PRELOAD:
        if importlib.util.find_spec(module.partition(".")[0]):
            importlib.import_module(module)
