"""The stages of the hybrid learner, each a pure computation wrapped by the stage cache.

    data (network + rows + seed | user file) -> restrict (method, test, alpha, max order | candidates)
        -> scores (score, ess, palim, restriction) -> solve (ilp | kg | kastar) -> evaluate
    data + restrict -> solve (ges | sges: they score the data on demand) -> evaluate

Each stage function takes the cache, the run configuration and the artifacts of the stages it
depends on, and returns its own :class:`~pipeline.cache.Artifact`; its key is a hash of its
parameters and its inputs' keys (Su 2023, section 5.6, describes the restrict/score/maximise
split). The algorithm packages are imported lazily, so a missing one only disables its stage.

When a result is final (:func:`solve_completion`, :func:`restrict_completion`): a solve is final
when the solver finished (ILP ``optimal``, GES/SGES ``converged``, k-G/k-A* ``exhausted``);
stopped by a limit (``timelimit``, a cops time limit, ...) it is *limited*: cached with its
status and reused by a rerun with the same limit; interrupted (SCIP ``userinterrupt``) it is
never cached. A non-final exact-ILP result also leaves its incumbent (:mod:`pipeline.incumbent`),
from which any later solve of the same problem (e.g. with a larger time limit) warm-starts.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline import incumbent
from pipeline.cache import FINAL, INTERRUPTED, LIMITED, Artifact, StageCache, StageInterrupted, file_sha256
from pipeline.config import STAGES, TABLE_SOLVERS, RunConfig
from pipeline.solvers import SOLVE, SolveInputs, json_ready

logger = logging.getLogger(__name__)

# restrict 2: a conditional CI test with zero degrees of freedom is undecided (dependent), issue 19
VERSIONS = {"data": "1", "restrict": "2", "scores": "1", "solve": "1", "evaluate": "1"}


class StageUnavailable(RuntimeError):
    """An algorithm package a stage needs is not installed or not yet written."""


def _module(name: str, stage: str):
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise StageUnavailable(f"stage '{stage}' is not available: {exc}") from None


def _imports(stage: str, *modules: str):
    """A ``prepare`` callable importing ``modules`` (so import time is not charged to the stage)."""
    return lambda: [_module(m, stage) for m in modules]


def _compiled(cfg: RunConfig) -> None:
    """Compile the run's numba kernels on first use, once per installation (:mod:`pipeline.kernels`)."""
    from pipeline.kernels import ensure_compiled

    ensure_compiled(cfg)


# --------------------------------------------------------------------------------------- data

def data_stage(cache: StageCache, cfg: RunConfig, frame: pd.DataFrame | None = None) -> Artifact:
    """Sample ``cfg.rows`` rows from a benchmark network (seed ``cfg.seed``), read ``cfg.data``,
    or encode ``frame`` (a table given in Python, keyed by its content); with ``cfg.missing ==
    "drop"`` the rows of a file or frame with a missing cell are dropped and counted."""
    dataset_module = "bayesnet.dataset"
    if frame is not None:
        params: dict[str, Any] = {"frame": frame_sha256(frame)}

        def compute():
            dataset, dropped = _module(dataset_module, "data").encode_frame(frame, cfg.missing)
            return {"data": dataset.to_frame()}, _data_meta(dataset, None, dropped)

    elif cfg.network is not None:
        benchmarks = _module("bayesnet.catalog", "data")
        benchmarks.check_network(cfg.network)
        network_ref = cfg.network
        params = {"network": network_ref, "rows": cfg.rows, "seed": cfg.seed}
        if benchmarks.is_network_file(cfg.network):  # keyed by content, evaluated from anywhere
            network_ref = str(Path(cfg.network).resolve())
            params.update(network=network_ref, sha256=file_sha256(network_ref))

        def compute():
            network = benchmarks.load_network(network_ref)
            sampling = _module("bayesnet.sampling", "data")
            dataset = sampling.forward_sample(network, cfg.rows, cfg.seed)
            return {"data": dataset.to_frame()}, _data_meta(dataset, network_ref)

    else:
        path = Path(str(cfg.data))
        if not path.is_file():
            raise FileNotFoundError(f"data file not found: {path}")
        params = {"file": str(path.resolve()), "sha256": file_sha256(path)}

        def compute():
            module = _module(dataset_module, "data")
            dataset, dropped = module.encode_frame(module.read_frame(path), cfg.missing, source=str(path))
            return {"data": dataset.to_frame()}, _data_meta(dataset, None, dropped)

    if cfg.missing != "reject" and cfg.network is None:  # (absent by default: old keys unchanged)
        params["missing"] = cfg.missing
    return cache.get_or_compute("data", VERSIONS["data"], params, {}, compute,
                                _imports("data", "bayesnet.catalog", "bayesnet.sampling", dataset_module))


def frame_sha256(frame: pd.DataFrame) -> str:
    """Content hash of a table: column names, dtypes and every cell."""
    digest = hashlib.sha256(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def _data_meta(dataset, network: str | None, dropped: int = 0) -> dict[str, Any]:
    return {
        "n_rows": int(dataset.data.shape[0]),
        "n_vars": int(dataset.data.shape[1]),
        "network": network,
        "n_dropped_rows": dropped,
    }


def dataset_of(art: Artifact):
    """The :class:`bayesnet.dataset.Dataset` stored in a data artifact."""
    return _module("bayesnet.dataset", "data").Dataset.from_frame(art.frames["data"], warn=False)


# ----------------------------------------------------------------------------------- restrict

def restrict_params(cfg: RunConfig) -> dict[str, Any]:
    if cfg.method == "none":
        return {"method": "none"}
    if cfg.method == "cops":  # no order limit: the cops find theirs (k + 1)
        params = {"method": "cops", "test": cfg.test, "alpha": cfg.alpha}
        if cfg.cops_time_limit is not None:  # (absent when unset, as before the option existed)
            params["time_limit"] = cfg.cops_time_limit
        return _with_knowledge(_with_added_candidates(params, cfg), cfg, adjacency_only=True)
    if cfg.method == "candidates":  # no CI test: the pairwise gains of the run's score
        params: dict[str, Any] = {"method": "candidates", "candidates": cfg.candidates,
                                  "conditional": CANDIDATES_CONDITIONAL, "score": cfg.score}
        if cfg.score == "bdeu":
            params["ess"] = cfg.ess
        return _with_knowledge(params, cfg)  # forbidden parents take no candidate's place
    params = {"method": cfg.method, "test": cfg.test, "alpha": cfg.alpha, "max_order": cfg.max_order}
    return _with_knowledge(_with_added_candidates(params, cfg), cfg, adjacency_only=True)


def _with_added_candidates(params: dict[str, Any], cfg: RunConfig) -> dict[str, Any]:
    """``params`` plus ``--add-candidates`` and the score it ranks by (unchanged keys without)."""
    if not cfg.add_candidates:
        return params
    return {**params, "add_candidates": cfg.add_candidates, "score": cfg.score,
            **({"ess": cfg.ess} if cfg.score == "bdeu" else {})}


def _with_knowledge(params: dict[str, Any], cfg: RunConfig, adjacency_only: bool = False) -> dict[str, Any]:
    """``params`` plus the content hash of the run's knowledge (unchanged keys without any)."""
    if cfg.has_knowledge:
        knowledge = _module("pipeline.knowledge", "knowledge").knowledge_of(cfg)
        digest = knowledge.adjacency_digest() if adjacency_only else knowledge.digest()
        if digest is not None:
            params = {**params, "knowledge": digest}
    return params


def knowledge_matrices(cfg: RunConfig, data: Artifact | list[str]):
    """The run's :class:`pipeline.knowledge.KnowledgeMatrices` over the data's variables, or the
    given names (None: no knowledge)."""
    if not cfg.has_knowledge:
        return None
    names = data if isinstance(data, list) else names_of(data)
    return _module("pipeline.knowledge", "knowledge").knowledge_of(cfg).matrices(names)


CANDIDATES_CONDITIONAL = 4
"""Parents per child the candidate restriction adds given the child's best candidate
(``scores.identification.identify_candidates(conditional=...)``)."""

RESTRICT_MODULES = {"none": [], "pc": ["constraints.pc"], "pmms": ["constraints.pmms"],
                    "mmpc": ["constraints.pmms"], "cops": ["constraints.cops"],
                    "candidates": ["scores.identification"]}


def restrict_stage(cache: StageCache, cfg: RunConfig, data: Artifact, progress: bool = False,
                   n_jobs: int = 1, executor=None, n_groups: int = 1) -> Artifact:
    """Restriction: which edges the score stage may use (PC skeleton, PMMS, MMPC, cops, or the
    sparse candidate parents of :mod:`scores.identification`); the candidate scores and the PC
    tests are computed in ``n_jobs`` threads, or each PC level as ``n_groups`` tasks on
    ``executor`` (same result).

    For cops-and-robbers the tree decomposition it found (Talvitie & Parviainen, section 3.1)
    is kept in the metadata (``bags``, ``tree_edges``, ``treewidth``) for ``--within-bags``.
    The candidate restriction is directional: its frame ``allowed`` lists the allowed arcs
    ``parent -> child``.
    """
    params = restrict_params(cfg)

    def compute():
        if cfg.method == "none":
            return {}, {"method": "none", "n_tests": 0, "tests_by_order": {}, "removed_by_order": {}}
        dataset = dataset_of(data)
        if cfg.method == "candidates":
            return _candidate_restriction(cfg, dataset, n_jobs, knowledge_matrices(cfg, data))
        citests = _module("constraints.citests", "restrict")
        test = citests.CITest(dataset.data, dataset.arities, statistic=cfg.test)
        n = dataset.data.shape[1]
        know = knowledge_matrices(cfg, data)
        keep = {} if know is None else {"keep": know.adjacent}  # required: never tested, never removed
        extra: dict[str, Any] = {}
        if cfg.method == "cops":
            restriction, found = _module("constraints.cops", "restrict").cops_restriction(
                test, n, alpha=cfg.alpha, time_limit=cfg.cops_time_limit, **keep)
            extra = _decomposition_meta(found)
        elif cfg.method == "pc":
            algorithm = _module("constraints.pc", "restrict").pc_skeleton
            restriction = algorithm(test, n, alpha=cfg.alpha, max_order=cfg.max_order, progress=progress,
                                    n_jobs=n_jobs, executor=executor, n_groups=n_groups, **keep)
        else:
            algorithm = getattr(_module("constraints.pmms", "restrict"), cfg.method)
            restriction = algorithm(test, n, alpha=cfg.alpha, max_order=cfg.max_order, progress=progress, **keep)
        if cfg.add_candidates:
            restriction, extra["n_added_by_candidates"] = _add_candidates(restriction, cfg, dataset, n_jobs, know)
        if know is not None:
            restriction = _module("pipeline.knowledge", "restrict").keep_adjacent(restriction, know.adjacent)
        meta = {**restriction.meta(), "n_pairs": n * (n - 1) // 2, **extra}
        return {"restriction": restriction.to_frame()}, meta

    modules = RESTRICT_MODULES[cfg.method] + (["scores.identification"] if cfg.add_candidates else [])
    load = _imports("restrict", "constraints.citests", *modules)

    def prepare():
        _compiled(cfg)
        load()
        if cfg.method == "candidates":
            _warm_up_candidates(dataset_of(data), cfg)
        elif cfg.method != "none":
            _warm_up_tests(dataset_of(data), cfg.test)

    return cache.get_or_compute("restrict", VERSIONS["restrict"], params, {"data": data.key}, compute, prepare,
                                restrict_completion)


def restrict_completion(meta: dict[str, Any]) -> str:
    """A cops restriction stopped by ``--cops-time-limit`` is limited; every other one final."""
    return LIMITED if meta.get("cops_status") == "timeout" else FINAL


def _candidate_restriction(cfg: RunConfig, dataset, n_jobs: int,
                           know=None) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Frames and metadata of the sparse candidate restriction (no CI tests; ``know``: the
    knowledge's excluded arcs are never candidates)."""
    identify = _module("scores.identification", "restrict").identify_candidates
    allowed = identify(dataset.data, dataset.arities, m=cfg.candidates, score=cfg.score, ess=cfg.ess,
                       conditional=CANDIDATES_CONDITIONAL, n_jobs=n_jobs,
                       excluded=None if know is None else ~know.allowed)
    n = allowed.shape[0]
    parent, child = np.nonzero(allowed)
    frame = pd.DataFrame({"parent": parent.astype("int32"), "child": child.astype("int32")})
    per_child = allowed.sum(axis=0)
    meta = {
        "method": "candidates", "candidates": cfg.candidates, "conditional": CANDIDATES_CONDITIONAL,
        "n_vars": n, "n_tests": 0,
        "tests_by_order": {}, "removed_by_order": {},
        "n_allowed": int(np.triu(allowed | allowed.T, 1).sum()), "n_pairs": n * (n - 1) // 2,
        "n_arcs_allowed": int(allowed.sum()), "max_candidates": int(per_child.max()) if n else 0,
        "children_without_candidates": int((per_child == 0).sum()),
    }
    return {"allowed": frame}, meta


def _add_candidates(restriction, cfg: RunConfig, dataset, n_jobs: int, know=None):
    """The CI restriction with each child's ``cfg.add_candidates`` best single parents (largest
    positive gain of the run's score, :mod:`scores.identification`) allowed too; and how many
    pairs that added.  Knowledge-forbidden arcs are never chosen."""
    best = _module("scores.identification", "restrict").identify_candidates(
        dataset.data, dataset.arities, m=cfg.add_candidates, score=cfg.score, ess=cfg.ess, conditional=0,
        n_jobs=n_jobs, excluded=None if know is None else ~know.allowed)
    pairs = best | best.T
    added = int(np.triu(pairs & ~restriction.allowed, 1).sum())
    return _module("pipeline.knowledge", "restrict").keep_adjacent(restriction, pairs), added


def _warm_up_candidates(dataset, cfg: RunConfig) -> None:
    """Identify candidates on a tiny slice so numba's first-call load is not charged to the stage."""
    data, arities = _sample(dataset)
    _module("scores.identification", "restrict").identify_candidates(data, arities, m=1, score=cfg.score,
                                                                     ess=cfg.ess)


def _decomposition_meta(found) -> dict[str, Any]:
    """The cops tree decomposition (if phase 1 finished) as JSON-ready metadata."""
    td = found.tree_decomposition
    meta: dict[str, Any] = {"cops_status": found.status, "treewidth": found.k}
    if td is not None:
        meta["bags"] = [sorted(int(v) for v in bag) for bag in td.bags]
        meta["tree_edges"] = [[int(a), int(b)] for a, b in td.edges]
    return meta


def bags_of(art: Artifact) -> list[list[int]]:
    """The tree-decomposition bags a cops restriction artifact carries (error if none)."""
    bags = art.meta.get("bags")
    if bags is None:
        raise ValueError("--within-bags needs the tree decomposition of --method cops, and this "
                         f"restriction has none (method {art.meta.get('method')!r}, "
                         f"cops status {art.meta.get('cops_status')!r})")
    return [list(b) for b in bags]


def _sample(dataset, n_vars: int = 3, n_rows: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """A tiny C-contiguous slice of the data with the same dtype (for JIT warm-up)."""
    return np.ascontiguousarray(dataset.data[:n_rows, :n_vars]), np.asarray(dataset.arities[:n_vars])


def _warm_up_tests(dataset, statistic: str) -> None:
    """Run two tiny CI tests so numba's first-call compile/load is not charged to the stage time."""
    data, arities = _sample(dataset)
    if data.shape[1] >= 3:
        test = _module("constraints.citests", "restrict").CITest(data, arities, statistic=statistic)
        test(0, 1, ())
        test(0, 1, (2,))


def _warm_up_scores(dataset, cfg: RunConfig) -> None:
    """Score a tiny slice so numba's first-call compile/load is not charged to the stage time."""
    data, arities = _sample(dataset)
    _module("scores.candidates", "scores").build_score_table(
        data, arities, score=cfg.score, ess=cfg.ess, palim=None if cfg.palim is None else min(cfg.palim, 2)
    )


def allowed_of(art: Artifact) -> np.ndarray | None:
    """The ``allowed[p, c]`` parent matrix of a restriction artifact (None: no restriction)."""
    if "allowed" in art.frames:  # directional (sparse candidates): the allowed arcs
        n = int(art.meta["n_vars"])
        frame = art.frames["allowed"]
        allowed = np.zeros((n, n), dtype=bool)
        allowed[frame["parent"].to_numpy(dtype=np.int64), frame["child"].to_numpy(dtype=np.int64)] = True
        return allowed
    if "restriction" not in art.frames:
        return None
    restriction_cls = _module("constraints.restriction", "restrict").Restriction
    return restriction_cls.from_frame(art.frames["restriction"], meta=art.meta).allowed_parents()


# ------------------------------------------------------------------------------------- scores

def score_params(cfg: RunConfig) -> dict[str, Any]:
    params: dict[str, Any] = {"score": cfg.score, "palim": cfg.palim}
    if cfg.score == "bdeu":
        params["ess"] = cfg.ess
    return _with_knowledge(params, cfg)


def scores_stage(
    cache: StageCache,
    cfg: RunConfig,
    data: Artifact,
    restrict: Artifact,
    progress: bool = False,
    n_jobs: int = 1,
    executor=None,
    groups: int = 1,
) -> Artifact:
    """Local scores of the candidate parent sets allowed by the restriction, with exact pruning.

    With an ``executor`` and ``groups > 1`` the children are scored as ``groups`` tasks on it
    (:mod:`pipeline.split_scores`); the table is the same, so the cache key does not change.
    """
    params = score_params(cfg)

    def compute():
        candidates = _module("scores.candidates", "scores")
        dataset = dataset_of(data)
        n = dataset.data.shape[1]
        options = {"score": cfg.score, "ess": cfg.ess, "palim": cfg.palim}
        allowed, names = allowed_of(restrict), list(dataset.names)
        know = knowledge_matrices(cfg, data)
        if know is not None:  # forbidden arcs never scored, required parents in every set
            allowed, options["required"] = know.restrict(allowed), know.required
        if executor is not None and groups > 1:
            from pipeline.split_scores import split_score_table

            table = split_score_table(executor, dataset.data, dataset.arities, groups, allowed=allowed,
                                      names=names, **options)
        else:
            table = candidates.build_score_table(dataset.data, dataset.arities, allowed=allowed, names=names,
                                                 n_jobs=n_jobs, progress=progress, **options)
        if know is not None and len(know.undirected):
            def build(allowed_c, required_c):
                return candidates.build_score_table(dataset.data, dataset.arities, allowed=allowed_c, names=names,
                                                    **{**options, "required": required_c})

            table = _module("pipeline.knowledge", "scores").add_adjacency_families(table, know, allowed, build)
        meta = {"n_candidates": int(table.n_candidates), "n_vars": n, "table_meta": dict(table.meta)}
        return {"table": table.to_frame()}, meta

    inputs = {"data": data.key, "restrict": restrict.key}
    load = _imports("scores", "scores.candidates", "constraints.restriction")

    def prepare():
        _compiled(cfg)
        load()
        _warm_up_scores(dataset_of(data), cfg)

    return cache.get_or_compute("scores", VERSIONS["scores"], params, inputs, compute, prepare)


def score_file_stage(cache: StageCache, cfg: RunConfig) -> Artifact:
    """The score table of a ``.jkl`` file (GOBNILP / BLIP format, :mod:`scores.jkl`), keyed by content."""
    path = Path(str(cfg.scores))
    if not path.is_file():
        raise FileNotFoundError(f"--scores: file not found: {path}")

    def compute():
        table = _module("scores.jkl", "scores").read_jkl(path)
        names = table.names or [str(v) for v in range(table.n_vars)]
        meta = {"n_candidates": int(table.n_candidates), "n_vars": table.n_vars, "names": names,
                "table_meta": {}, "file": str(path)}
        return {"table": table.to_frame()}, meta

    params = {"file": str(path.resolve()), "sha256": file_sha256(path)}
    return cache.get_or_compute("scores", VERSIONS["scores"], params, {}, compute, _imports("scores", "scores.jkl"))


def table_of(art: Artifact, names: list[str] | None = None):
    """The :class:`scores.table.ScoreTable` stored in a scores artifact."""
    from scores.table import ScoreTable

    return ScoreTable.from_frame(
        art.frames["table"], art.meta["n_vars"], names=names, meta=art.meta.get("table_meta", {})
    )


# -------------------------------------------------------------------------------------- solve

def solve_params(cfg: RunConfig) -> dict[str, Any]:
    params: dict[str, Any] = {"solver": cfg.solver, "time_limit": cfg.time_limit, "solver_seed": 0}
    if cfg.treewidth is not None:
        params["treewidth"] = cfg.treewidth
    if cfg.within_bags:
        params["within_bags"] = True
    if cfg.solver not in TABLE_SOLVERS:  # they score the data themselves
        params.update(score_params(cfg))
        if cfg.solver == "sges":
            params["sges_bound"] = cfg.sges_bound
    return _with_knowledge(params, cfg)


FINAL_STATUSES = frozenset({"optimal", "infeasible", "converged", "exhausted", "max_orders"})
"""Solver statuses of a finished search (any other status, e.g. ``timelimit``, is a limit)."""
INTERRUPTED_STATUSES = frozenset({"userinterrupt"})


def solve_completion(meta: dict[str, Any]) -> str:
    """Final, limited or interrupted, from the solver's status (see the module docstring)."""
    status = meta["result"].get("status")
    if status in INTERRUPTED_STATUSES:
        return INTERRUPTED
    return FINAL if status in FINAL_STATUSES else LIMITED


def solve_stage(
    cache: StageCache, cfg: RunConfig, data: Artifact | None, restrict: Artifact | None, scores: Artifact | None
) -> Artifact:
    """Maximise the score over DAGs with ``cfg.solver`` (:mod:`pipeline.solvers`).

    The exact ILP of Su 2023 section 5.6 and k-G / k-A* read the score table; GES and SGES read
    the data and the restriction. The exact ILP warm-starts from the incumbent a non-final
    solve of the same problem left (:mod:`pipeline.incumbent`).
    """
    params = solve_params(cfg)
    names = variable_names({"data": data} if data is not None else {"scores": scores})
    keys = {"scores": scores.key} if scores is not None else {"data": data.key, "restrict": restrict.key}
    if cfg.within_bags:
        keys["restrict"] = restrict.key
    resume = incumbent.Incumbents(cache, params, keys, VERSIONS["solve"])
    warm = incumbent.supports_warm_start(cfg)  # an incumbent is kept only for a solver that can use it

    def compute():
        start = resume.load() if warm else None
        inputs = SolveInputs(names=names, knowledge=knowledge_matrices(cfg, names),
                             start=None if start is None else start.parent_sets)
        if scores is not None:
            inputs.table = table_of(scores, names)
            if data is None and inputs.knowledge is not None:  # a score file: drop the sets it forbids
                inputs.table = inputs.knowledge.filter_table(inputs.table)
        else:
            inputs.dataset, inputs.allowed = dataset_of(data), allowed_of(restrict)
            if inputs.knowledge is not None:
                inputs.allowed = inputs.knowledge.restrict(inputs.allowed)
        if cfg.within_bags:
            inputs.bags = bags_of(restrict)
        solution = SOLVE[cfg.solver](cfg, inputs)
        if inputs.knowledge is not None:
            _module("pipeline.knowledge", "solve").check_solution(inputs.knowledge, solution.parent_sets, cfg.solver)
        frame = pd.DataFrame({
            "child": np.arange(len(solution.parent_sets), dtype="int32"),
            "parents": [list(ps) for ps in solution.parent_sets],
        })
        meta = {"result": solution.summary, "n_vars": len(solution.parent_sets)}
        if start is not None:
            meta["warm_start"] = start.summary()
        if warm and solve_completion(meta) != FINAL:
            resume.offer(solution.parent_sets, solution.summary)
        return {"parents": frame}, meta

    load = _imports("solve", "ilp")
    return cache.get_or_compute("solve", VERSIONS["solve"], params, keys, compute,
                                lambda: (_compiled(cfg), load()), solve_completion)


def dag_of(art: Artifact) -> np.ndarray:
    """The learned DAG (boolean adjacency, ``A[p, c]`` for an arc p -> c) of a solve artifact."""
    frame = art.frames["parents"]
    n = int(art.meta["n_vars"])
    dag = np.zeros((n, n), dtype=bool)
    for child, parents in zip(frame["child"], frame["parents"]):
        dag[np.asarray(parents, dtype=int), int(child)] = True
    return dag


# ----------------------------------------------------------------------------------- evaluate

def true_dag(network_name: str) -> np.ndarray:
    network = _module("bayesnet.catalog", "evaluate").load_network(network_name)
    return np.asarray(network.adjacency, dtype=bool)


def compare(dag: np.ndarray, reference: np.ndarray) -> dict[str, Any]:
    """SHD between CPDAGs, skeleton precision/recall/F1 and arc differences of two DAGs."""
    pdag = _module("graphs.pdag", "evaluate")
    metrics = _module("graphs.metrics", "evaluate")
    out: dict[str, Any] = {"shd": int(metrics.shd(pdag.dag_to_cpdag(dag), pdag.dag_to_cpdag(reference)))}
    out.update({k: json_ready(v) for k, v in metrics.skeleton_scores(dag, reference).items()})
    out.update({k: json_ready(v) for k, v in metrics.edge_differences(dag, reference).items()})
    return out


def evaluate_stage(cache: StageCache, cfg: RunConfig, data: Artifact, solve: Artifact) -> Artifact:
    """Compare the learned DAG with the network that generated the data (when it is known)."""
    network = data.meta.get("network")
    params = {"truth": network}

    def compute():
        if network is None:
            return {}, {"truth": None}
        return {}, {"truth": network, **compare(dag_of(solve), true_dag(network))}

    inputs = {"data": data.key, "solve": solve.key}
    return cache.get_or_compute("evaluate", VERSIONS["evaluate"], params, inputs, compute)


# ------------------------------------------------------------------------------------- driver

def run_stages(
    cache: StageCache,
    cfg: RunConfig,
    upto: str = "evaluate",
    progress: bool = False,
    n_jobs: int = 1,
    score_executor=None,
    score_groups: int = 1,
    frame: pd.DataFrame | None = None,
) -> dict[str, Artifact]:
    """Run the stages in order up to and including ``upto``; returns the artifacts by stage.

    ``n_jobs`` threads score the children and run the PC tests, or, with ``score_executor``
    (e.g. a Dask cluster), ``score_groups`` tasks do (per PC level). ``frame``: the data as a
    table (the Python API) instead of a network or a file. A score file (``cfg.scores``) skips
    data, restriction and evaluation.
    With ``cfg.budget`` the restriction and the solver get the time limits of :mod:`pipeline.budget`.
    A stage interrupted with a result raises :class:`StageInterrupted` holding the artifacts so far.
    """
    out: dict[str, Artifact] = {}
    try:
        _run_stages(out, cache, cfg, STAGES.index(upto), progress, n_jobs, score_executor, score_groups, frame)
    except StageInterrupted as exc:  # report what the run had, the interrupted stage included
        exc.artifacts = {**out, exc.artifact.stage: exc.artifact}
        raise
    return out


def _run_stages(out, cache, cfg, last, progress, n_jobs, score_executor, score_groups, frame) -> None:
    """The body of :func:`run_stages`, filling ``out`` stage by stage."""
    from pipeline.budget import solve_config

    if cfg.scores is not None:
        out["scores"] = score_file_stage(cache, cfg)
        knowledge_matrices(cfg, variable_names(out))  # unknown variable names fail before solving
        if last >= 3:
            out["solve"] = solve_stage(cache, solve_config(cfg, out), None, None, out["scores"])
        return
    out["data"] = data_stage(cache, cfg, frame)
    knowledge_matrices(cfg, out["data"])  # unknown variable names fail before the other stages
    model_stages(out, cache, cfg, last, progress, n_jobs, score_executor, score_groups)


def model_stages(out: dict[str, Artifact], cache: StageCache, cfg: RunConfig, last: int, progress: bool = False,
                 n_jobs: int = 1, score_executor=None, score_groups: int = 1) -> None:
    """The stages after the data (``out["data"]``) up to ``STAGES[last]``, into ``out``; with
    ``cfg.budget`` the restriction and the solver get the time limits of :mod:`pipeline.budget`."""
    from pipeline.budget import restrict_config, solve_config

    if last >= 1:
        out["restrict"] = restrict_stage(cache, restrict_config(cfg), out["data"], progress, n_jobs,
                                         score_executor, score_groups)
    if last >= 2 and cfg.solver in TABLE_SOLVERS:
        out["scores"] = scores_stage(cache, cfg, out["data"], out["restrict"], progress, n_jobs,
                                     score_executor, score_groups)
    if last >= 3:
        out["solve"] = solve_stage(cache, solve_config(cfg, out), out["data"], out["restrict"], out.get("scores"))
    if last >= 4:
        out["evaluate"] = evaluate_stage(cache, cfg, out["data"], out["solve"])


def names_of(data: Artifact) -> list[str]:
    """Variable names of a data artifact, in column order."""
    return [str(c) for c in data.frames["data"].columns]


def variable_names(artifacts: dict[str, Artifact]) -> list[str]:
    """Variable names of a run: its data's columns, or the names of its score file."""
    if "data" in artifacts:
        return names_of(artifacts["data"])
    return list(artifacts["scores"].meta["names"])
