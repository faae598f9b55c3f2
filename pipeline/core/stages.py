"""The stages of the hybrid learner, each a pure computation wrapped by the stage cache.

    data (network + rows + seed | user file) -> restrict (method, test, alpha, max order | candidates)
        -> scores (score, ess, palim, restriction) -> solve (ilp | kg | kastar | hc | tabu) -> evaluate
    data + restrict -> solve (ges | sges: they score the data on demand) -> evaluate

Each stage function takes the cache, the run configuration and the artifacts of the stages it
depends on, and returns its own :class:`~pipeline.core.cache.Artifact`; its key is a hash of its
parameters and its inputs' keys (Su 2023, section 5.6, describes the restrict/score/maximise
split). Which parameters enter a key is declared with each method (:func:`method_key`); the
algorithm packages are imported inside the declared run functions, so a rerun from the cache
loads none of their kernels.

When a result is final (:func:`solve_completion`, :func:`timeout_completion`): a solve is final
when the solver finished (ILP ``optimal``, GES/SGES ``converged``, k-G/k-A* ``exhausted``, hill
climbing / tabu search ``converged`` or at their ``--max-iter``);
stopped by a limit (``timelimit``, a cops time limit, ...) it is *limited*: cached with its
status and reused by a rerun with the same limit; interrupted (a solver's ``userinterrupt``,
reported as ``interrupted``) it is never cached. A restriction or score table stopped by a time
limit (status ``timeout``) is limited too; one cut by its share of ``--budget`` is cached under its key plus that limit
(:mod:`pipeline.core.budget`). A non-final exact-ILP result also leaves its incumbent
(:mod:`pipeline.core.incumbent`), from which any later solve of the same problem (e.g. with a larger
time limit) warm-starts.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bayesnet.catalog import check_network, is_network_file, load_network
from bayesnet.dataset import Dataset, drop_missing, encode_frame, read_frame, select_columns
from bayesnet.discretize import discretize_frame, parse_spec
from bayesnet.sampling import forward_sample
from constraints.methods import RESTRICTION, TEST, ci_test
from constraints.restriction import Restriction
from graphs.metrics import edge_differences, shd, skeleton_scores
from graphs.pdag import KnowledgeConflictError, dag_to_cpdag, dag_to_pdag_with_knowledge
from hybridbn.memory import MB, default_limit
from hybridbn.options import Choice, Param, Use
from hybridbn.progress import Callback
from hybridbn.solving import SolveInputs, json_ready
from pipeline.core import incumbent
from pipeline.core.exact_bound import exact_bound_slot, proves_bound
from pipeline.core.budget import budget_left, restrict_limit, scores_limit, solve_config
from pipeline.core.cache import (FINAL, INTERRUPTED, LIMITED, Artifact, StageCache, StageInterrupted,
                                 file_sha256, stage_key)
from pipeline.core.config import RunConfig
from pipeline.core.declarations import DISCRETIZATION, SOLVER, STAGES, TABLE_SOLVERS
from pipeline.core.kernels import prepare_kernels
from pipeline.core.knowledge import (KnowledgeMatrices, add_adjacency_families, check_solution, keep_adjacent,
                                     knowledge_of, solver_arcs)
from pipeline.core.polish import polished
from pipeline.core.split_scores import split_score_table
from pipeline.core.stopping import check_stop, stage_deadline
from scores.jkl import read_jkl
from scores.methods import PALIM, SCORE
from scores.structure_prior import with_structure_prior
from scores.table import ScoreTable

logger = logging.getLogger(__name__)

# A version changes when a stage's result changes under the same key: restrict 2 counts a zero-df test
# dependent (issue 19), 3 decides it by the complement test, 4 leaves a half copy undecided (issue 42);
# solve 2 polishes an ILP stopped at a limit with tabu search, 3 breaks the greedy searches' ties as
# bnlearn does (issue 42).
VERSIONS = {"data": "1", "restrict": "4", "scores": "1", "solve": "3", "evaluate": "1"}


def _ready(stage: str, cfg: RunConfig, data: Artifact | None = None, n_jobs: int = 1) -> None:
    """The numba kernels of ``cfg``'s ``stage`` compiled once per installation (on ``n_jobs``
    threads) and loaded, on a tiny slice of ``data``, before its clock starts
    (:func:`pipeline.core.kernels.prepare_kernels`, whose warm-ups run by :func:`run_stages`)."""
    prepare_kernels(stage, cfg, run_stages, None if data is None else dataset_of(data), n_jobs)


# --------------------------------------------------------------------------------------- data

def data_stage(cache: StageCache, cfg: RunConfig, frame: pd.DataFrame | None = None) -> Artifact:
    """Sample ``cfg.rows`` rows from a benchmark network (seed ``cfg.seed``), read ``cfg.data``,
    or encode ``frame`` (a table given in Python, keyed by its content). A file's or frame's
    columns are prepared first (:func:`table_dataset`)."""
    if frame is not None:
        params: dict[str, Any] = {"frame": frame_sha256(frame)}

        def compute():
            return table_dataset(frame, cfg)

    elif cfg.network is not None:
        check_network(cfg.network)
        network_ref = cfg.network
        params = {"network": network_ref, "rows": cfg.rows, "seed": cfg.seed}
        if is_network_file(cfg.network):  # keyed by content, evaluated from anywhere
            network_ref = str(Path(cfg.network).resolve())
            params.update(network=network_ref, sha256=file_sha256(network_ref))

        def compute():
            dataset = forward_sample(load_network(network_ref), cfg.rows, cfg.seed,
                                     checkpoint=lambda: check_stop("data"))
            return {"data": dataset.to_frame()}, _data_meta(dataset, network_ref)

    else:
        path = Path(str(cfg.data))
        if not path.is_file():
            raise FileNotFoundError(f"data file not found: {path}")
        params = {"file": str(path.resolve()), "sha256": file_sha256(path)}

        def compute():
            return table_dataset(read_frame(path), cfg, source=str(path))

    if cfg.network is None:  # (absent by default: old keys unchanged; keep changes no data)
        if cfg.missing != "reject":
            params["missing"] = cfg.missing
        if cfg.drop is not None:
            params["drop"] = sorted(cfg.drop)
        for param in DISCRETIZATION:  # (--breaks without --discretize is refused: never a key alone)
            params.update(_param_key(param, cfg))
        if cfg.missing == "em":
            params["em"] = _em_settings(cfg)
    return cache.get_or_compute("data", VERSIONS["data"], params, {}, compute)


def table_dataset(table: pd.DataFrame, cfg: RunConfig, source: str | None = None) -> tuple[dict, dict[str, Any]]:
    """The data artifact's frames and meta of a user's table: its variables selected
    (:func:`bayesnet.dataset.select_columns`: ``cfg.drop`` left out; an index column refused, and,
    unless kept or discretized, a continuous-like column, an identifier or a near-identifier),
    with ``--missing drop`` the rows with a missing cell dropped and counted, the columns of
    ``--discretize`` cut into intervals (:func:`bayesnet.discretize.discretize_frame`, recorded in
    the meta's ``discretized``), then encoded (``--missing state``: a missing cell is a state;
    ``--missing em``: completed by structural EM, :func:`search.structural_em.complete_missing`,
    recorded in ``structural_em``)."""
    plan = parse_spec(cfg.discretize, cfg.breaks)
    frame = select_columns(table, cfg.drop or (), cfg.keep or (), tuple(plan.columns), plan.default is not None)
    dropped = 0
    if cfg.missing == "drop":
        frame, dropped = drop_missing(frame, source)
    frame, discretized = discretize_frame(frame, plan, cfg.keep or ())
    dataset, _ = encode_frame(frame, "state" if cfg.missing == "em" else cfg.missing, source)
    completed = None
    if cfg.missing == "em":
        from search.structural_em import complete_missing  # (numba's hill-climbing kernels: --missing em only)

        dataset, completed = complete_missing(dataset, **_em_settings(cfg))
    meta = _data_meta(dataset, None, dropped)
    if discretized:
        meta["discretized"] = discretized
    if cfg.missing == "state":
        meta["n_missing_cells"] = int(frame.isna().to_numpy().sum())
    if completed is not None:
        meta["structural_em"] = completed
    return {"data": dataset.to_frame()}, meta


def _em_settings(cfg: RunConfig) -> dict[str, Any]:
    """The score, ESS and parent limit of the hill climbing inside ``--missing em`` (BDeu for
    ``--score auto``): the run's own."""
    return {"score": cfg.undecided_score().score, "ess": cfg.ess, "palim": cfg.palim}


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
    return Dataset.from_frame(art.frames["data"], warn=False)


# ----------------------------------------------------------------------------------- restrict

def method_key(choice: Choice, cfg: RunConfig) -> dict[str, Any]:
    """The cache-key entries of the method ``cfg`` selects for ``choice``: its name, the constant
    entries, the keys of the choices and parameters it uses, and its keyed parameters."""
    method = choice[getattr(cfg, choice.name)]
    params: dict[str, Any] = {choice.name: method.name, **choice.constants, **method.constants}
    for use in method.uses:
        params.update(_use_key(use, cfg))
    for param in (*choice.params, *method.params):
        params.update(_param_key(param, cfg))
    return params


def _use_key(use: Use, cfg: RunConfig) -> dict[str, Any]:
    """The key entries of a choice (its selected method's) or of one parameter."""
    return method_key(use, cfg) if isinstance(use, Choice) else _param_key(use, cfg)


def _param_key(param: Param, cfg: RunConfig) -> dict[str, Any]:
    value = getattr(cfg, param.name)
    if param.key is None or (param.keyed_when_set and value == param.default):
        return {}
    params = {param.key: value}
    for use in param.uses:
        params.update(_use_key(use, cfg))
    return params


def restrict_params(cfg: RunConfig) -> dict[str, Any]:
    return _with_knowledge(method_key(RESTRICTION, cfg), cfg, RESTRICTION[cfg.method].knowledge)


def _with_knowledge(params: dict[str, Any], cfg: RunConfig, what: str | None = "all") -> dict[str, Any]:
    """``params`` plus the content hash of the run's knowledge (``what``: ``all``, or ``adjacency``
    for the required pairs only, or None: nothing); unchanged keys without any."""
    if cfg.has_knowledge and what is not None:
        knowledge = knowledge_of(cfg)
        digest = knowledge.adjacency_digest() if what == "adjacency" else knowledge.digest()
        if digest is not None:
            params = {**params, "knowledge": digest}
    return params


def knowledge_matrices(cfg: RunConfig, data: Artifact | list[str]):
    """The run's :class:`pipeline.core.knowledge.KnowledgeMatrices` over the data's variables, or the
    given names (None: no knowledge)."""
    if not cfg.has_knowledge:
        return None
    names = data if isinstance(data, list) else names_of(data)
    return knowledge_of(cfg).matrices(names)


def restrict_stage(cache: StageCache, cfg: RunConfig, data: Artifact, progress: bool = False,
                   n_jobs: int = 1, executor=None, n_groups: int = 1, limit: float | None = None) -> Artifact:
    """Restriction: which edges the score stage may use (PC skeleton, PMMS, MMPC, cops, or the
    sparse candidate parents of :mod:`scores.identification`); the candidate scores and the CI
    tests are computed in ``n_jobs`` threads, or each PC level and the PMMS/MMPC targets as
    ``n_groups`` tasks on ``executor`` (same result).

    For cops-and-robbers the tree decomposition it found (Talvitie & Parviainen, section 3.1)
    is kept in the metadata (``bags``, ``tree_edges``, ``treewidth``) for ``--within-bags``.
    The candidate restriction is directional: its frame ``allowed`` lists the allowed arcs
    ``parent -> child``. ``limit``: the stage's time limit under ``--budget``; a CI-test method
    past it returns a superset of its skeleton with status ``timeout`` (:mod:`pipeline.core.budget`).
    """
    params = restrict_params(cfg)
    method = RESTRICTION[cfg.method]

    def compute():
        deadline = stage_deadline("restrict", limit)
        if method.run is None:
            return {}, {"method": "none", "n_tests": 0, "tests_by_order": {}, "removed_by_order": {}}
        dataset = dataset_of(data)
        know = knowledge_matrices(cfg, data)
        if TEST not in method.uses:  # the sparse candidates: directional, no CI test
            return _candidate_restriction(cfg, dataset, n_jobs, know)
        test = ci_test(dataset.data, dataset.arities, cfg)
        n = dataset.data.shape[1]
        restriction, extra = method.run(test, n, cfg, keep=None if know is None else know.adjacent,
                                        progress=progress, n_jobs=n_jobs, executor=executor, n_groups=n_groups,
                                        deadline=deadline)
        if restriction.status == "timeout":
            logger.warning("the %s restriction stopped at its time limit: it allows %d of %d pairs, a superset "
                           "of its skeleton", cfg.method, restriction.n_allowed, n * (n - 1) // 2)
        if cfg.add_candidates:
            restriction, extra["n_added_by_candidates"] = _add_candidates(restriction, cfg, dataset, n_jobs, know)
        if know is not None:  # required pairs: never tested, never removed
            restriction = keep_adjacent(restriction, know.adjacent)
        meta = {**restriction.meta(), "n_pairs": n * (n - 1) // 2, **extra}
        return {"restriction": restriction.to_frame()}, meta

    def prepare():
        _ready("restrict", cfg, data, n_jobs if executor is None else 1)

    return cache.get_or_compute("restrict", VERSIONS["restrict"], params, {"data": data.key}, compute, prepare,
                                timeout_completion, limit)


CUT_STATUSES = ("timeout", "memory")
"""Statuses of a restriction or score table that a limit cut: the time limit, or (a table) memory."""


def timeout_completion(meta: dict[str, Any]) -> str:
    """A restriction or score table a time limit cut (``--cops-time-limit``, ``--budget``: status
    ``timeout``) or the memory limit cut (a score table's status ``memory``) is limited; a
    finished one final."""
    return LIMITED if meta.get("status") in CUT_STATUSES else FINAL


def _candidate_restriction(cfg: RunConfig, dataset, n_jobs: int,
                           know=None) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Frames and metadata of the sparse candidate restriction (no CI tests; ``know``: the
    knowledge's excluded arcs are never candidates)."""
    allowed = RESTRICTION[cfg.method].run(dataset.data, dataset.arities, cfg, n_jobs=n_jobs,
                                          excluded=None if know is None else ~know.allowed)
    if know is not None:  # required pairs are candidates in the directions the knowledge allows
        allowed = know.restrict(allowed)
    n = allowed.shape[0]
    parent, child = np.nonzero(allowed)
    frame = pd.DataFrame({"parent": parent.astype("int32"), "child": child.astype("int32")})
    per_child = allowed.sum(axis=0)
    meta = {
        **method_key(RESTRICTION, cfg), "n_vars": n, "n_tests": 0,
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
    from scores.identification import identify_candidates  # deferred: numba kernels, for this option only

    best = identify_candidates(
        dataset.data, dataset.arities, m=cfg.add_candidates, score=cfg.score, ess=cfg.ess, conditional=0,
        n_jobs=n_jobs, excluded=None if know is None else ~know.allowed)
    pairs = best | best.T
    added = int(np.triu(pairs & ~restriction.allowed, 1).sum())
    return keep_adjacent(restriction, pairs), added


def bags_of(art: Artifact) -> list[list[int]]:
    """The tree-decomposition bags a cops restriction artifact carries (error if none)."""
    bags = art.meta.get("bags")
    if bags is None:
        raise ValueError("--within-bags needs the tree decomposition of --method cops, and this "
                         f"restriction has none (method {art.meta.get('method')!r}, "
                         f"cops status {art.meta.get('cops_status')!r})")
    return [list(b) for b in bags]


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
    return Restriction.from_frame(art.frames["restriction"], meta=art.meta).allowed_parents()


# ------------------------------------------------------------------------------------- scores

def score_params(cfg: RunConfig) -> dict[str, Any]:
    return _with_knowledge({**method_key(SCORE, cfg), **_param_key(PALIM, cfg)}, cfg)


def scores_stage(
    cache: StageCache,
    cfg: RunConfig,
    data: Artifact,
    restrict: Artifact,
    progress: bool = False,
    n_jobs: int = 1,
    executor=None,
    groups: int = 1,
    limit: float | None = None,
) -> Artifact:
    """Local scores of the candidate parent sets allowed by the restriction, with exact pruning.

    With an ``executor`` and ``groups > 1`` the children are scored as ``groups`` tasks on it
    (:mod:`pipeline.core.split_scores`); the table is the same, so the cache key does not change.
    ``limit``: the stage's time limit under ``--budget``; the children not started by then keep
    only their required (or empty) parent set, listed as the table's ``unscored``, and the
    stage's status is ``timeout`` (:mod:`pipeline.core.budget`).
    """
    params = score_params(cfg)
    memory_limit = default_limit()  # (--memory-limit is SCIP's own account: see hybridbn.memory)

    def compute():
        score_table = SCORE[cfg.score].run
        deadline = stage_deadline("scores", limit)
        dataset = dataset_of(data)
        n = dataset.data.shape[1]
        allowed, names = allowed_of(restrict), list(dataset.names)
        know = knowledge_matrices(cfg, data)
        required = {}
        if know is not None:  # forbidden arcs never scored, required parents in every set
            allowed, required = know.restrict(allowed), {"required": know.required}
        if executor is not None and groups > 1:
            table = split_score_table(executor, dataset.data, dataset.arities, groups, allowed=allowed, names=names,
                                      score=cfg.score, ess=cfg.ess, palim=cfg.palim, deadline=deadline, **required,
                                      memory_limit=memory_limit)
        else:
            table = score_table(dataset.data, dataset.arities, cfg, allowed=allowed, names=names, n_jobs=n_jobs,
                                progress=progress, deadline=deadline, **required, memory_limit=memory_limit)
        table = _with_prior(table, cfg)
        unscored = table.meta["unscored"]
        timed_out = len(unscored) > len(table.meta["memory_cut"])  # (the memory cuts are warned of by the table)
        if timed_out:
            logger.warning("the scoring stopped at its %g s of the budget: %d of %d children were not fully "
                           "scored", limit, len(unscored) - len(table.meta["memory_cut"]), n)
        if know is not None and len(know.undirected):
            def build(allowed_c, required_c):  # pruned given the required parents, so the prior is added here too
                return _with_prior(score_table(dataset.data, dataset.arities, cfg, allowed=allowed_c, names=names,
                                               required=required_c), cfg)

            table = add_adjacency_families(table, know, allowed, build)
        status = "ok" if not unscored else "timeout" if timed_out else "memory"
        meta = {"n_candidates": int(table.n_candidates), "n_vars": n, "table_meta": dict(table.meta),
                "status": status}
        return {"table": table.to_arrow()}, meta

    inputs = {"data": data.key, "restrict": restrict.key}

    def prepare():
        _ready("scores", cfg, data)

    cut_key = limit if limit is not None else {"memory_mb": memory_limit // MB}  # what a cut table is keyed by
    return cache.get_or_compute("scores", VERSIONS["scores"], params, inputs, compute, prepare,
                                timeout_completion, cut_key)


def _with_prior(table, cfg: RunConfig):
    """``table`` with the arc prior of ``--structure-prior`` (:mod:`scores.structure_prior`), if any."""
    if cfg.structure_prior is None:
        return table
    return with_structure_prior(table, cfg.structure_prior)


def score_file_stage(cache: StageCache, cfg: RunConfig) -> Artifact:
    """The score table of a ``.jkl`` file (GOBNILP / BLIP format, :mod:`scores.jkl`), keyed by content."""
    path = Path(str(cfg.scores))
    if not path.is_file():
        raise FileNotFoundError(f"--scores: file not found: {path}")

    def compute():
        table = read_jkl(path)
        names = table.names or [str(v) for v in range(table.n_vars)]
        meta = {"n_candidates": int(table.n_candidates), "n_vars": table.n_vars, "names": names,
                "table_meta": {}, "file": str(path)}
        return {"table": table.to_arrow()}, meta

    params = {"file": str(path.resolve()), "sha256": file_sha256(path)}
    return cache.get_or_compute("scores", VERSIONS["scores"], params, {}, compute)


def table_of(art: Artifact, names: list[str] | None = None):
    """The :class:`scores.table.ScoreTable` stored in a scores artifact."""
    return ScoreTable.from_arrow(
        art.frames["table"], art.meta["n_vars"], names=names, meta=art.meta.get("table_meta", {})
    )


# -------------------------------------------------------------------------------------- solve

def solve_params(cfg: RunConfig) -> dict[str, Any]:
    return _with_knowledge(method_key(SOLVER, cfg), cfg)


FINAL_STATUSES = frozenset({"optimal", "infeasible", "converged", "exhausted", "max_orders", "max_iter"})
"""Solver statuses of a finished search (any other status, e.g. ``timelimit``, is a limit)."""
INTERRUPTED_STATUSES = frozenset({"userinterrupt", "interrupted"})


def cut_table_result(result: dict[str, Any], unscored: list[int]) -> dict[str, Any]:
    """A solver's ``result`` on a score table the budget cut (children ``unscored``): the DAG and
    its objective stand (each of its families is scored exactly), but the solver's bound holds
    only for the cut table, so the status is ``limited`` (its own is kept as ``solver_status``;
    an interruption stays one), with no bound or gap and the ``reason``."""
    status = result.get("status")
    return {**result, "status": status if status in INTERRUPTED_STATUSES else "limited", "solver_status": status,
            "dual_bound": None, "gap": None,
            "reason": f"the budget or the memory limit ended the scoring: {len(unscored)} children were not fully "
                      "scored, so no bound on the best score is known"}


def solve_completion(meta: dict[str, Any]) -> str:
    """Final, limited or interrupted, from the solver's status (see the module docstring)."""
    status = meta["result"].get("status")
    if status in INTERRUPTED_STATUSES:
        return INTERRUPTED
    return FINAL if status in FINAL_STATUSES else LIMITED


def solve_stage(
    cache: StageCache, cfg: RunConfig, data: Artifact | None, restrict: Artifact | None, scores: Artifact | None,
    report: Callback | None = None,
) -> Artifact:
    """Maximise the score over DAGs with ``cfg.solver`` (:mod:`ilp.methods`, :mod:`search.methods`).

    The exact ILP of Su 2023 section 5.6, k-G / k-A*, hc and tabu read the score table; GES and
    SGES read the data and the restriction. What happens around the solver follows its capability
    tags (:data:`hybridbn.solving.TAGS`): a ``warm_start`` solver starts from the incumbent a
    non-final solve of the same problem left, and an ``exact_bound`` one reports the tighter of its
    bound and the one that solve proved (:mod:`pipeline.core.incumbent`); a ``polish`` one stopped
    at a limit hands its DAG to the tabu search (:mod:`pipeline.core.polish`); an ``exact_bound``
    one leaves its bound on the table, against which the ``exact_gap`` climbs on it report their
    gap (:mod:`pipeline.core.exact_bound`). On a score table the budget cut the result claims no
    bound (:func:`cut_table_result`). ``report`` receives the solver's progress records
    (:mod:`hybridbn.progress`). A solver stopped by a stop request (:mod:`hybridbn.interrupt`)
    returns its best DAG with status ``interrupted`` (its own word kept as ``solver_status``), raised
    as :class:`StageInterrupted`, never cached.
    """
    params = solve_params(cfg)
    names = variable_names({"data": data} if data is not None else {"scores": scores})
    keys = {"scores": scores.key} if scores is not None else {"data": data.key, "restrict": restrict.key}
    if cfg.within_bags:
        keys["restrict"] = restrict.key
    resume = incumbent.Incumbents(cache, params, keys, VERSIONS["solve"])
    warm = incumbent.supports_warm_start(cfg)  # an incumbent is kept only for a solver that can use it
    bound = exact_bound_slot(cache, cfg, params, scores)
    exact = proves_bound(cfg)

    def compute():
        start = resume.load() if warm else None
        earlier = start if exact else None  # the bound the unfinished solves proved holds for this one
        know = knowledge_matrices(cfg, names)
        inputs = SolveInputs(names=names, start=None if start is None else start.parent_sets,
                             progress=incumbent.reporting_earlier_bound(report, earlier, cfg.solver),
                             **({} if know is None else solver_arcs(know)))
        if scores is not None:
            inputs.table = table_of(scores, names)
            if data is None and know is not None:  # a score file: drop the sets it forbids
                inputs.table = know.filter_table(inputs.table)
        else:
            inputs.dataset, inputs.allowed = dataset_of(data), allowed_of(restrict)
            if know is not None:
                inputs.allowed = know.restrict(inputs.allowed)
        if cfg.within_bags:
            inputs.bags = bags_of(restrict)
        solution = polished(cfg, inputs, SOLVER[cfg.solver].run(cfg, inputs))
        solution.summary = incumbent.with_earlier_bound(solution.summary, earlier)
        if scores is not None and scores.meta.get("status") in CUT_STATUSES:
            solution.summary = cut_table_result(solution.summary, scores.meta["table_meta"]["unscored"])
        if solution.summary.get("status") == "userinterrupt":
            solution.summary = {**solution.summary, "status": "interrupted", "solver_status": "userinterrupt"}
        if know is not None:
            check_solution(know, solution.parent_sets, cfg.solver)
        frame = pd.DataFrame({
            "child": np.arange(len(solution.parent_sets), dtype="int32"),
            "parents": [list(ps) for ps in solution.parent_sets],
        })
        meta = {"result": solution.summary, "n_vars": len(solution.parent_sets)}
        if start is not None:
            meta["warm_start"] = start.summary()
        if warm and solve_completion(meta) != FINAL:
            resume.offer(solution.parent_sets, solution.summary)
        if bound is not None and exact:
            bound.offer(solution.summary)
        return {"parents": frame}, meta

    solve = cache.get_or_compute("solve", VERSIONS["solve"], params, keys, compute,
                                 lambda: _ready("solve", cfg), solve_completion)
    return solve if bound is None or exact else bound.annotate(solve)


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
    network = load_network(network_name)
    return np.asarray(network.adjacency, dtype=bool)


def equivalence_class(dag: np.ndarray, know: KnowledgeMatrices | None = None) -> np.ndarray:
    """The PDAG a run reports for ``dag``: its CPDAG, or with expert knowledge the maximally
    oriented PDAG of the DAGs of its class that hold the required arcs and none of the excluded
    ones (forbidden, against the tiers): Meek's rules with background knowledge (Meek 1995,
    :func:`graphs.pdag.dag_to_pdag_with_knowledge`). Raises
    :class:`graphs.pdag.KnowledgeConflictError` when no DAG of the class holds the knowledge."""
    if know is None:
        return dag_to_cpdag(dag)
    return dag_to_pdag_with_knowledge(dag, know.required, ~know.allowed, know.names)


def truth_class(truth: np.ndarray, know: KnowledgeMatrices | None = None) -> tuple[np.ndarray, bool]:
    """:func:`equivalence_class` of the true DAG, and whether the truth breaks the knowledge, in
    which case its plain CPDAG stands in."""
    try:
        return equivalence_class(truth, know), False
    except KnowledgeConflictError:
        return dag_to_cpdag(truth), True


def compare(dag: np.ndarray, reference: np.ndarray, know: KnowledgeMatrices | None = None) -> dict[str, Any]:
    """SHD between the equivalence classes (:func:`equivalence_class`, under the knowledge ``know``
    if any), skeleton precision/recall/F1 and arc differences of two DAGs; with knowledge also
    ``knowledge_conflicts_truth``, whether the reference breaks it (the SHD is then against its
    plain CPDAG)."""
    reference_class, conflicts = truth_class(reference, know)
    out: dict[str, Any] = {"shd": int(shd(equivalence_class(dag, know), reference_class))}
    if know is not None:
        out["knowledge_conflicts_truth"] = conflicts
    out.update({k: json_ready(v) for k, v in skeleton_scores(dag, reference).items()})
    out.update({k: json_ready(v) for k, v in edge_differences(dag, reference).items()})
    return out


def evaluate_stage(cache: StageCache, cfg: RunConfig, data: Artifact, solve: Artifact) -> Artifact:
    """Compare the learned DAG with the network that generated the data (when it is known), under
    the run's knowledge (whose digest enters the key only when there is some). The best DAG of an
    interrupted solve is evaluated too, never cached (its solve key is the final solve's)."""
    network = data.meta.get("network")
    params = _with_knowledge({"truth": network}, cfg)

    def compute():
        if network is None:
            return {}, {"truth": None}
        return {}, {"truth": network, **compare(dag_of(solve), true_dag(network), knowledge_matrices(cfg, data))}

    inputs = {"data": data.key, "solve": solve.key}
    if solve.completion == INTERRUPTED:
        frames, meta = compute()
        return Artifact("evaluate", stage_key("evaluate", VERSIONS["evaluate"], params, inputs), frames, meta,
                        completion=INTERRUPTED)
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
    report: Callback | None = None,
) -> dict[str, Artifact]:
    """Run the stages in order up to and including ``upto``; returns the artifacts by stage.

    ``n_jobs`` threads score the children and run the CI tests, or, with ``score_executor``
    (e.g. a Dask cluster), ``score_groups`` tasks do (per PC level; ranges of PMMS/MMPC targets).
    ``frame``: the data as a table (the Python API) instead of a network or a file. A score file
    (``cfg.scores``) skips data, restriction and evaluation.
    With ``cfg.budget`` the restriction, the scoring and the solver get the time limits of
    :mod:`pipeline.core.budget`. ``progress`` shows the progress bars of the restriction and the
    scoring; ``report`` receives the solver's progress records (:mod:`hybridbn.progress`).
    A stage interrupted with a result raises :class:`StageInterrupted` holding the artifacts so far;
    a stop request in another stage raises :class:`pipeline.core.stopping.StageStopped`.
    """
    out: dict[str, Artifact] = {}
    cfg = cfg.undecided_score()  # decided by the selection (pipeline.apps.selection) where it runs
    try:
        _run_stages(out, cache, cfg, STAGES.index(upto), progress, n_jobs, score_executor, score_groups, frame,
                    report)
    except StageInterrupted as exc:  # report what the run had, the interrupted stage included
        exc.artifacts = {**out, exc.artifact.stage: exc.artifact}
        raise
    return out


def _run_stages(out, cache, cfg, last, progress, n_jobs, score_executor, score_groups, frame, report) -> None:
    """The body of :func:`run_stages`, filling ``out`` stage by stage."""
    if cfg.scores is not None:
        check_stop("scores")
        out["scores"] = score_file_stage(cache, cfg)
        knowledge_matrices(cfg, variable_names(out))  # unknown variable names fail before solving
        if last >= 3:
            check_stop("solve")
            out["solve"] = solve_stage(cache, solve_config(cfg, out), None, None, out["scores"],
                                       _budget_report(report, cfg, out))
        return
    check_stop("data")
    out["data"] = data_stage(cache, cfg, frame)
    knowledge_matrices(cfg, out["data"])  # unknown variable names fail before the other stages
    model_stages(out, cache, cfg, last, progress, n_jobs, score_executor, score_groups, report)


def model_stages(out: dict[str, Artifact], cache: StageCache, cfg: RunConfig, last: int, progress: bool = False,
                 n_jobs: int = 1, score_executor=None, score_groups: int = 1, report: Callback | None = None) -> None:
    """The stages after the data (``out["data"]``) up to ``STAGES[last]``, into ``out``; with
    ``cfg.budget`` the restriction, the scoring and the solver get the time limits of
    :mod:`pipeline.core.budget`. A stop request ends the stages other than the solve at their safe
    points (:mod:`pipeline.core.stopping`); the solver returns its best DAG."""
    if last >= 1:
        check_stop("restrict")
        out["restrict"] = restrict_stage(cache, cfg, out["data"], progress, n_jobs, score_executor, score_groups,
                                         restrict_limit(cfg))
    if last >= 2 and cfg.solver in TABLE_SOLVERS:
        check_stop("scores")
        out["scores"] = scores_stage(cache, cfg, out["data"], out["restrict"], progress, n_jobs,
                                     score_executor, score_groups, scores_limit(cfg, out))
    if last >= 3:
        check_stop("solve")
        out["solve"] = solve_stage(cache, solve_config(cfg, out), out["data"], out["restrict"], out.get("scores"),
                                   _budget_report(report, cfg, out))
    if last >= 4:
        check_stop("evaluate")
        out["evaluate"] = evaluate_stage(cache, cfg, out["data"], out["solve"])


def _budget_report(report: Callback | None, cfg: RunConfig, artifacts: dict[str, Artifact]) -> Callback | None:
    """``report`` with each record's ``budget_left`` (seconds) under ``--budget``: what restriction
    and scoring left, less the solver's elapsed time."""
    left = budget_left(cfg, artifacts)
    if report is None or left is None:
        return report

    def with_budget(record):
        report({**record, "budget_left": round(max(left - record["elapsed"], 0.0), 1)})

    return with_budget


def names_of(data: Artifact) -> list[str]:
    """Variable names of a data artifact, in column order."""
    return [str(c) for c in data.frames["data"].columns]


def variable_names(artifacts: dict[str, Artifact]) -> list[str]:
    """Variable names of a run: its data's columns, or the names of its score file."""
    if "data" in artifacts:
        return names_of(artifacts["data"])
    return list(artifacts["scores"].meta["names"])
