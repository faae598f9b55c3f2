"""Hill climbing and tabu search (search.hill_climbing) beside the exact ILP optimum and pyAgrum.

On one bundled network's forward sample: the BDeu (ESS 1) score table with palim 3, unrestricted
(scores.candidates, exact pruning), then

* the exact optimum of that table (``ilp.solve_ilp``), the bound every search stays below;
* ours on the table: hill climbing, hill climbing with random restarts, tabu search (bnlearn's
  defaults: tabu list 10, max.tabu 10);
* ours scoring families on demand from the data (``hill_climb_on_data``, palim 3, no pruning);
* pyAgrum's greedy hill climbing and local search with tabu list (BDeu, in-degree <= palim, one
  thread), if pyagrum is installed, their DAGs rescored by our BDeu so the scores compare.

Prints CPU seconds (``time.process_time``, all threads) and score, its distance to the optimum,
the arcs and the moves made. Ours are timed after a warm-up call that loads the compiled kernels.

With ``--against-bnlearn SEEDS``, it checks instead that our searches are bnlearn's: on the
accuracy bench's samples (seeds 0 to SEEDS - 1), ours with families scored on demand (BDeu ESS 1,
no parent limit) against bnlearn's ``hc`` and ``tabu`` (``score = "bde", iss = 1``, run by
Rscript), the same DAG or not, and both scores under our BDeu.

    .venv/bin/python -m bench.hc --network alarm --rows 5000
    .venv/bin/python -m bench.hc --network water --rows 1000 --against-bnlearn 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from graphs.dag import adjacency_from_parents, parents_from_adjacency
from ilp import solve_ilp
from scores.candidates import build_score_table
from scores.local import local_score_function
from scores.table import ScoreTable
from search.hill_climbing import hill_climb, hill_climb_on_data, tabu_search
from search.score_cache import LocalScoreCache


def timed(run):
    t0 = time.process_time()
    result = run()
    return result, time.process_time() - t0


def load_kernels() -> None:
    """Load the compiled kernels (search and scoring), so that the first search timed does not pay for it."""
    hill_climb(ScoreTable.from_families([{(): 0.0, (1,): 1.0}, {(): 0.0}]), restarts=1, tabu=1)
    hill_climb_on_data(np.array([[0, 1], [1, 0]]), np.array([2, 2]), palim=None)


def agrum_parent_sets(frame, algorithm: str, palim: int) -> list[tuple[int, ...]]:
    """pyAgrum's DAG (BDeu score, no extra prior, at most ``palim`` parents) as parent sets."""
    import pyagrum as gum

    learner = gum.BNLearner(frame)
    learner.setNumberOfThreads(1)
    getattr(learner, algorithm)()
    learner.useNoPrior()
    learner.useScoreBDeu()
    learner.setMaxIndegree(palim)
    dag = learner.learnDAG()
    index = {name: k for k, name in enumerate(frame.columns)}
    parents = [set() for _ in index]
    for u, v in dag.arcs():
        parents[index[learner.nameFromId(v)]].add(index[learner.nameFromId(u)])
    return [tuple(sorted(ps)) for ps in parents]


BNLEARN_SEARCHES = {"hc": ("hc(d, score = 'bde', iss = 1)", {}),
                    "tabu": ("tabu(d, score = 'bde', iss = 1)", {"tabu": 10})}
"""bnlearn's call and our matching options of :func:`hill_climb_on_data` (bnlearn's defaults)."""


def against_bnlearn(network: str, rows: int, seeds: int) -> None:
    """Print, per sample and search, whether our DAG is bnlearn's, and both scores."""
    from bayesnet.dataset import Dataset
    from bench.accuracy import draw
    from bench.peer_learners import Sample, bnlearn_arcs, varying_columns

    model = load_network(network)
    load_kernels()
    same = dict.fromkeys(BNLEARN_SEARCHES, 0)
    print(f"{'search':6s} {'seed':>4s} {'same DAG':>8s} {'ours':>14s} {'bnlearn':>14s} {'our CPU s':>9s}")
    for seed in range(seeds):
        frame = varying_columns(draw(model, rows, seed).frame)  # as bnlearn gets it: observed states only
        observed = Dataset.from_frame(frame)
        sample = Sample(codes=observed.data, frame=frame)
        scorer = LocalScoreCache(local_score_function(observed.data, observed.arities), len(observed.arities))
        for name, (call, options) in BNLEARN_SEARCHES.items():
            ours, seconds = timed(lambda: hill_climb_on_data(observed.data, observed.arities, palim=None, **options))
            theirs = bnlearn_arcs(sample, call)
            identical = [tuple(sorted(ps)) for ps in ours.parent_sets] == parents_from_adjacency(theirs)
            same[name] += identical
            print(f"{name:6s} {seed:4d} {'yes' if identical else 'no':>8s} {ours.score:14.3f} "
                  f"{scorer.dag_score(theirs):14.3f} {seconds:9.2f}")
    print(f"{network}, {rows} rows: " + ", ".join(f"{name} {k} of {seeds} the same DAG" for name, k in same.items()))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="alarm")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--palim", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=10)
    ap.add_argument("--perturb", type=int, default=5)
    ap.add_argument("--ilp-time-limit", type=float, default=300.0)
    ap.add_argument("--against-bnlearn", type=int, metavar="SEEDS",
                    help="compare hc and tabu with bnlearn's on this many of bench.accuracy's samples instead")
    args = ap.parse_args(argv)
    if args.against_bnlearn:
        return against_bnlearn(args.network, args.rows, args.against_bnlearn)

    ds = forward_sample(load_network(args.network), args.rows, seed=args.seed)
    data, arities = ds.data, ds.arities
    table, t_table = timed(lambda: build_score_table(data, arities, palim=args.palim))
    print(f"{args.network}, {args.rows} rows, seed {args.seed}: BDeu table, palim {args.palim}, "
          f"{table.n_candidates} families ({t_table:.1f} CPU s)")
    exact, t_exact = timed(lambda: solve_ilp(table, time_limit=args.ilp_time_limit))
    optimum = exact.objective
    scorer = LocalScoreCache(local_score_function(data, arities), len(arities))

    load_kernels()
    rows = [("ILP (exact)", t_exact, optimum, exact.parent_sets, exact.status)]
    ours = {
        "hc": lambda: hill_climb(table),
        f"hc restart={args.restarts} perturb={args.perturb}": lambda: hill_climb(
            table, restarts=args.restarts, perturb=args.perturb),
        "tabu (10, max.tabu 10)": lambda: tabu_search(table),
        "hc, families on demand": lambda: hill_climb_on_data(data, arities, palim=args.palim),
        "tabu, families on demand": lambda: hill_climb_on_data(data, arities, palim=args.palim, tabu=10),
    }
    for label, run in ours.items():
        result, seconds = timed(run)
        rows.append((label, seconds, result.score, result.parent_sets, f"{result.n_iterations} moves"))
    try:
        import pyagrum  # noqa: F401
    except ImportError:
        print("pyagrum is not installed: its learners are left out")
    else:
        frame = ds.to_frame().astype(str)
        for label, algorithm in (("pyAgrum greedy hill climbing", "useGreedyHillClimbing"),
                                 ("pyAgrum tabu list", "useLocalSearchWithTabuList")):
            parent_sets, seconds = timed(lambda: agrum_parent_sets(frame, algorithm, args.palim))
            rows.append((label, seconds, scorer.dag_score(adjacency_from_parents(parent_sets)),
                         parent_sets, "rescored"))

    print(f"{'method':34s} {'CPU s':>8s} {'score':>14s} {'optimum - score':>16s} {'arcs':>5s}")
    for label, seconds, score, parent_sets, note in rows:
        arcs = sum(map(len, parent_sets))
        print(f"{label:34s} {seconds:8.2f} {score:14.3f} {optimum - score:16.3f} {arcs:5d}  {note}")
    np.testing.assert_array_less([r[2] for r in rows[1:]], optimum + 1e-6 * abs(optimum))  # the bound holds


if __name__ == "__main__":
    main()
