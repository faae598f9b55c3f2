"""Files describing a learned network, written to ``<output-dir>/<source>-<key>/``.

* ``edges.csv``: one row per arc of the learned DAG;
* ``network.dot``: Graphviz drawing of its CPDAG, or with expert knowledge of the PDAG under it
  (compelled arcs vs reversible edges);
* ``network.bif``: the DAG with CPTs fitted to the data (``bayesnet.fitting.fit_cpts``,
  Bayesian with a BDeu-consistent Dirichlet prior by default, or maximum likelihood);
* ``model.txt``: bnlearn model string ``[A][B|A]...`` (left out, with a warning, when a variable
  name holds one of ``[ ] | :``);
* ``result.json``: configuration, per-stage times and counts, solver result, evaluation;
* ``network.png``/``.svg`` and, when the true network is known, ``comparison.png``/``.svg``:
  pictures of the learned CPDAG and of its differences from the truth (:mod:`pipeline.apps.pictures`);
* ``convergence.png`` when the solve stopped at a limit or was interrupted: its incumbent and
  bound against time (:mod:`pipeline.apps.convergence`).

An interrupted solve (Ctrl-C, SIGTERM) writes the same folder from its best DAG, with status
``interrupted`` and the bound and gap it reached in ``result.json``, its evaluation against the
truth (the ``evaluate`` stage of ``result.json``, not cached) and ``comparison.png`` where there is one; its ``completion`` says
whether the solve was ``final``, ``limited`` or ``interrupted``, its ``interrupted`` what a stop
request ended (``solve``, ``bootstrap``: the network learned, the bootstrap unfinished) or null.

The folder is written atomically (:func:`pipeline.core.atomic.staged_folder`): every file goes into a
temporary sibling folder that replaces the output folder only when all are written, so a full
disk or a crash leaves the previous folder (or none), never a torn one. A writer of more files
adds them to the same staging folder (``extra_writers``).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from bayesnet.bif import write_bif
from bayesnet.fitting import fit_cpts
from graphs.dag import GraphError
from graphs.export import to_dot, to_edge_frame, to_model_string
from hybridbn.progress import Callback
from pipeline.apps.convergence import write_convergence
from pipeline.apps.pictures import FORMATS, write_pictures
from pipeline.core.atomic import staged_folder, write_error
from pipeline.core.budget import budget_record
from pipeline.core.cache import FINAL, Artifact
from pipeline.core.config import RunConfig
from pipeline.core.stages import (dag_of, dataset_of, equivalence_class, knowledge_matrices, true_dag, truth_class,
                                   variable_names)

logger = logging.getLogger(__name__)


def output_folder(base: Path, cfg: RunConfig, artifacts: Mapping[str, Artifact], cpt_method: str = "bayes") -> Path:
    """``<base>/<network or file stem>-<first 10 hex digits of the solve key>``, with ``-mle``
    appended for maximum-likelihood CPTs (so neither estimate overwrites the other)."""
    suffix = "" if cpt_method == "bayes" else f"-{cpt_method}"
    return base / f"{cfg.source_name}-{artifacts['solve'].key[:10]}{suffix}"


def result_record(cfg: RunConfig, artifacts: Mapping[str, Artifact], cpt_method: str = "bayes",
                  interrupted: str | None = None) -> dict[str, Any]:
    """Everything about a run as one JSON-serialisable dict; ``interrupted``: what a stop request
    ended (``"solve"``, ``"bootstrap"``), if anything."""
    return {
        "config": cfg.as_dict(),
        "cpt": cpt_method,
        "completion": artifacts["solve"].completion,
        "interrupted": interrupted,
        "result": artifacts["solve"].meta["result"],
        "budget": budget_record(cfg, artifacts),
        "stages": {
            name: {"key": art.key, "seconds": art.seconds, "cached": art.cached, "meta": art.meta}
            for name, art in artifacts.items()
        },
    }


def write_outputs(
    base: Path, cfg: RunConfig, artifacts: Mapping[str, Artifact], cpt_method: str = "bayes",
    extra_writers: Sequence[Callable[[Path], None]] = (), report: Callback | None = None,
    interrupted: str | None = None,
) -> Path:
    """Write the learned network's files atomically; returns the folder.

    CPTs are fitted by ``cpt_method``: ``"bayes"`` (BDeu-consistent Dirichlet prior with the
    run's equivalent sample size) or ``"mle"`` (maximum likelihood). Each of ``extra_writers``
    is called with the staging folder and may add files to it. ``report`` receives the progress
    records of slow drawings (:func:`pipeline.apps.pictures.write_pictures`). ``interrupted``:
    what a stop request ended, for ``result.json`` (:func:`result_record`).
    """
    folder = output_folder(base, cfg, artifacts, cpt_method)
    dag = dag_of(artifacts["solve"])
    names = variable_names(artifacts)
    know = knowledge_matrices(cfg, names)
    network = None
    if "data" in artifacts:  # (a run from a score file has no data: no CPTs)
        network = fit_cpts(dag, dataset_of(artifacts["data"]), method=cpt_method, ess=cfg.ess, name=cfg.source_name)
    truth = artifacts["evaluate"].meta.get("truth") if "evaluate" in artifacts else None
    with staged_folder(folder) as staging:
        def put(name: str, write: Callable[[Path], Any]) -> None:
            try:
                write(staging / name)
            except OSError as exc:
                raise write_error(exc, folder / name) from None

        edges = to_edge_frame(dag, names).to_csv(index=False)
        put("edges.csv", lambda p: p.write_text(edges))
        put("network.dot", lambda p: p.write_text(to_dot(equivalence_class(dag, know), names)))
        try:
            model = to_model_string(dag, names) + "\n"
        except GraphError as exc:  # variable names with [ ] | : have no model string; the rest is written
            logger.warning("model.txt not written: %s", exc)
        else:
            put("model.txt", lambda p: p.write_text(model))
        if network is not None:
            put("network.bif", lambda p: write_bif(network, p))
        if _same_network(folder, edges):  # the folder's name fixes the truth: keep the drawings, not redraw
            for name in (f"{stem}.{fmt}" for stem in ("network", "comparison") for fmt in FORMATS):
                if (folder / name).is_file():
                    put(name, lambda p, old=folder / name: shutil.copy2(old, p))
        write_pictures(staging, dag, names, cfg.source_name, None if truth is None else lambda: true_dag(truth),
                       report, None if know is None else lambda d: truth_class(d, know)[0])
        if artifacts["solve"].completion != FINAL:
            _convergence(staging, cfg, artifacts["solve"].meta["result"])
        for writer in extra_writers:
            writer(staging)
        record = result_record(cfg, artifacts, cpt_method, interrupted)
        put("result.json", lambda p: p.write_text(json.dumps(record, indent=1, default=str)))
    logger.info("wrote %s", folder)
    return folder


def _same_network(folder: Path, edges: str) -> bool:
    """Whether ``folder`` holds the output of a run that learned the DAG of ``edges`` (the CSV text):
    an interrupted or limited solve shares its folder with the final solve of the same options."""
    try:
        return (folder / "edges.csv").read_text() == edges
    except OSError:
        return False


def _convergence(staging: Path, cfg: RunConfig, result: Mapping[str, Any]) -> None:
    """``convergence.png`` of a solve that stopped early, when it kept a trajectory (only warns
    when it cannot be drawn)."""
    trajectory = result.get("trajectory")
    if not trajectory:
        return
    try:
        write_convergence(staging / "convergence.png", trajectory, f"{cfg.source_name}: {cfg.solver} solve",
                          str(result.get("status")))
    except (ValueError, ImportError, OSError, RuntimeError) as exc:
        logger.warning("convergence.png not drawn: %s", exc)
