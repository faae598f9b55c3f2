"""Expert knowledge (required / forbidden arcs, tiers): files, contradictions, and every stage honouring it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesnet.catalog import load_network
from bayesnet.sampling import forward_sample
from constraints.citests import CITest, DSeparationOracle
from constraints.cops import cops_restriction
from constraints.pc import pc_skeleton
from constraints.pmms import mmpc, pmms
from graphs.dag import adjacency_from_parents as dag_of_parents
from graphs.dag import find_cycle
from graphs.random_graphs import random_dag
from hybridbn.solving import SolveInputs
from ilp.exact_dp import exact_optimum
from ilp.methods import run_ilp
from pipeline.core.cache import StageCache
from pipeline.apps.cli import main
from pipeline.core.config import RunConfig
from pipeline.apps.grid import job_key, parse_grid
from pipeline.core.knowledge import (KnowledgeError, add_adjacency_families, keep_adjacent, solver_arcs,
                                knowledge_rows, read_knowledge)
from pipeline.core.stages import dag_of, run_stages
from scores.candidates import build_score_table
from scores.table import ScoreTable

ASIA = ["asia", "tub", "smoke", "lung", "bronc", "either", "xray", "dysp"]


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


# ------------------------------------------------------------------------------ files and checks

def test_files_read_directed_undirected_and_tiers(tmp_path):
    req = write(tmp_path / "r.csv", "source,target,directed\nasia,tub,true\n\nsmoke,lung,false\nxray,dysp,no\n")
    forb = write(tmp_path / "f.csv", "Source, Target, directed\nbronc,dysp,false\nlung,either,true\n")
    tiers = write(tmp_path / "t.csv", "variable,tier\nasia,0\nxray,2\n")
    k = read_knowledge(req, forb, tiers)
    assert [(a.source, a.target) for a in k.required] == [("asia", "tub")]
    assert {(a.source, a.target) for a in k.adjacent} == {("smoke", "lung"), ("xray", "dysp")}
    assert {(a.source, a.target) for a in k.forbidden} == {("bronc", "dysp"), ("dysp", "bronc"), ("lung", "either")}
    m = k.matrices(ASIA)
    i = {v: j for j, v in enumerate(ASIA)}
    assert m.required.sum() == 1 and m.required[i["asia"], i["tub"]]
    assert m.adjacent[i["lung"], i["smoke"]] and m.adjacent[i["tub"], i["asia"]]
    assert not m.allowed[i["dysp"], i["bronc"]] and not m.allowed[i["bronc"], i["dysp"]]
    assert not m.allowed[i["lung"], i["either"]] and m.allowed[i["either"], i["lung"]]
    assert not m.allowed[i["xray"], i["asia"]] and m.allowed[i["asia"], i["xray"]]  # tiers
    assert m.allowed[i["xray"], i["tub"]]  # tub has no tier: unconstrained
    assert sorted(map(tuple, m.undirected.tolist())) == [(i["smoke"], i["lung"]), (i["xray"], i["dysp"])]


def test_both_directions_required_is_an_undirected_requirement(tmp_path):
    k = read_knowledge(write(tmp_path / "r.csv", "source,target\nlung,smoke\nsmoke,lung\n"))
    assert not k.required and [(a.source, a.target) for a in k.adjacent] == [("lung", "smoke")]


def test_an_excluded_direction_orients_an_undirected_requirement(tmp_path):
    req = write(tmp_path / "r.csv", "source,target,directed\nsmoke,lung,false\n")
    k = read_knowledge(req, forbidden=write(tmp_path / "f.csv", "source,target\nlung,smoke\n"))
    assert [(a.source, a.target) for a in k.required] == [("smoke", "lung")] and not k.adjacent
    k = read_knowledge(req, tiers=write(tmp_path / "t.csv", "variable,tier\nsmoke,1\nlung,0\n"))
    assert [(a.source, a.target) for a in k.required] == [("lung", "smoke")]


@pytest.mark.parametrize("files, message", [
    ({"required": "source,target\na,b\nb,c\nc,a\n"}, "directed cycle: "),
    ({"required": "source,target\na,b\n", "forbidden": "source,target\nx,y\na,b\n"},
     "r.csv line 2: required arc a -> b is forbidden (--forbidden"),
    ({"required": "source,target\na,b\n", "tiers": "variable,tier\na,1\nb,0\n"},
     "required arc a -> b is against the tiers (a in tier 1, b in tier 0)"),
    ({"required": "source,target,directed\na,b,false\n", "forbidden": "source,target,directed\nb,a,false\n"},
     "required adjacency a - b contradicts"),
    ({"required": "source,target\na,a\n"}, "line 2: a -> a is a self-loop"),
    ({"required": "from,to\na,b\n"}, "line 1: header must be source,target"),
    ({"forbidden": "source,target\na,b\nc\n"}, "f.csv line 3: expected 2 fields, got 1"),
    ({"forbidden": "source,target,directed\na,b,maybe\n"}, "directed must be true or false"),
    ({"tiers": "variable,tier\na,one\n"}, "t.csv line 2: tier must be an integer"),
    ({"tiers": "variable,tier\na,1\nb,2\na,3\n"}, "line 4: variable 'a' already has a tier (line 2)"),
    ({"required": ""}, "empty file"),
])
def test_malformed_or_contradictory_files_are_one_line_errors(tmp_path, files, message):
    paths = {key: write(tmp_path / f"{key[0]}.csv", text) for key, text in files.items()}
    with pytest.raises(KnowledgeError) as err:
        read_knowledge(**paths)
    assert message in str(err.value) and "\n" not in str(err.value)
    if "cycle" in message:
        assert all(arc in str(err.value) for arc in ("a -> b", "b -> c", "c -> a"))


def test_unknown_variable_names_the_file_and_line(tmp_path):
    k = read_knowledge(forbidden=write(tmp_path / "f.csv", "source,target\nasia,tub\nasia,Tub\n"))
    with pytest.raises(KnowledgeError, match=r"f.csv line 3: unknown variable 'Tub'"):
        k.matrices(ASIA)


def test_digest_is_by_content(tmp_path):
    a = read_knowledge(write(tmp_path / "a.csv", "source,target\nasia,tub\nsmoke,lung\n"))
    b = read_knowledge(write(tmp_path / "b.csv", "source , target\n\nsmoke,lung\nasia,tub\n"))
    c = read_knowledge(write(tmp_path / "c.csv", "source,target\nasia,tub\n"))
    assert a.digest() == b.digest() != c.digest()


# ------------------------------------------------------------------------ restriction (oracle)

def _restrict(method: str, test, n: int, adjacent: np.ndarray) -> np.ndarray:
    """The restriction stage's rule: required pairs are never tested (``keep``), and put back."""
    if method == "cops":
        restriction, _ = cops_restriction(test, n, alpha=0.05, keep=adjacent)
    else:
        learner = {"pc": pc_skeleton, "pmms": pmms, "mmpc": mmpc}[method]
        restriction = learner(test, n, alpha=0.05, max_order=None, keep=adjacent)
    return keep_adjacent(restriction, adjacent).allowed, restriction


@pytest.mark.parametrize("method", ["pc", "pmms", "mmpc", "cops"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_restriction_keeps_required_adjacencies_with_a_dseparation_oracle(method, seed):
    n = 8
    dag = random_dag(n, 0.3, seed=seed)
    truth = dag | dag.T
    rng = np.random.default_rng(seed)
    absent = np.argwhere(np.triu(~truth, 1))
    adjacent = np.zeros((n, n), dtype=bool)
    for u, v in absent[rng.choice(len(absent), size=min(3, len(absent)), replace=False)]:
        adjacent[u, v] = adjacent[v, u] = True  # required, though d-separable in the truth
    oracle = DSeparationOracle(dag)
    allowed, raw = _restrict(method, oracle, n, adjacent)
    assert (allowed[adjacent]).all() and (allowed[truth]).all()
    assert (raw.allowed[adjacent]).all()  # the learners alone already keep them
    # with nothing required the oracle restriction is the true skeleton (PC, MMPC, cops are exact)
    if method in ("pc", "mmpc", "cops"):
        plain, _ = _restrict(method, DSeparationOracle(dag), n, np.zeros((n, n), dtype=bool))
        assert np.array_equal(plain, truth)


@pytest.mark.parametrize("method", ["pc", "pmms", "mmpc", "cops"])
def test_required_pairs_are_never_tested(method):
    dag = random_dag(7, 0.3, seed=4)
    adjacent = np.zeros((7, 7), dtype=bool)
    adjacent[0, 6] = adjacent[6, 0] = True
    asked = []

    class Spy(DSeparationOracle):  # every test computed, memoised (PC, PMMS, MMPC) or not (cops)
        def _compute(self, x, y, S):
            asked.append((x, y))
            return super()._compute(x, y, S)

    _restrict(method, Spy(dag), 7, adjacent)
    assert asked and (0, 6) not in asked


def test_batched_pc_keeps_required_pairs_and_otherwise_equals_per_call_pc():
    ds = forward_sample(load_network("asia"), 2000, 1)
    adjacent = np.zeros((8, 8), dtype=bool)
    adjacent[0, 7] = adjacent[7, 0] = adjacent[2, 6] = adjacent[6, 2] = True
    runs = [pc_skeleton(CITest(ds.data, ds.arities), 8, max_order=2, batched=b, keep=adjacent) for b in (True, False)]
    assert np.array_equal(runs[0].allowed, runs[1].allowed) and runs[0].allowed[adjacent].all()
    assert runs[0].tests_by_order == runs[1].tests_by_order


# -------------------------------------------------------------------- exact solvers vs brute force

def _filtered(table: ScoreTable, m, required: np.ndarray) -> ScoreTable:
    """Brute force: the unpruned table minus every parent set that breaks the constraints."""
    families = []
    for c, fam in enumerate(table.families):
        need = set(np.flatnonzero(required[:, c]).tolist())
        families.append({ps: s for ps, s in fam.items()
                         if need <= set(ps) and all(m.allowed[p, c] for p in ps)})
    return ScoreTable.from_families(families, names=table.names)


def _random_knowledge(tmp_path: Path, seed: int, undirected: bool):
    rng = np.random.default_rng(seed)
    names = ASIA
    order = rng.permutation(len(names))
    arcs = [(names[order[i]], names[order[j]]) for i, j in [(0, 3), (1, 4)]]  # acyclic
    if undirected:
        arcs += [(names[order[6]], names[order[2]]), (names[order[2]], names[order[6]])]
    forbidden = [(names[a], names[b]) for a, b in rng.integers(0, len(names), size=(6, 2)) if a != b]
    forbidden = [f for f in forbidden if f not in arcs and f[::-1] not in arcs[2:]]
    tiers = {names[order[0]]: 0, names[order[3]]: 1, names[order[5]]: 1, names[order[7]]: 2}
    k = read_knowledge(
        write(tmp_path / "r.csv", "source,target\n" + "".join(f"{a},{b}\n" for a, b in arcs)),
        write(tmp_path / "f.csv", "source,target\n" + "".join(f"{a},{b}\n" for a, b in forbidden)),
        write(tmp_path / "t.csv", "variable,tier\n" + "".join(f"{v},{t}\n" for v, t in tiers.items())))
    return k.matrices(names)


def _knowledge_table(ds, m):
    """The BIC table (palim 3) under knowledge ``m``, built as the scores stage builds it."""
    def build(allowed, required):
        return build_score_table(ds.data, ds.arities, score="bic", palim=3, names=ds.names,
                                 allowed=allowed, required=required)

    return add_adjacency_families(build(m.restrict(None), m.required), m, m.restrict(None), build)


def _solve(table, m, start=None):
    """The solve stage's ILP on ``table`` with the knowledge ``m`` handed over as plain arcs."""
    return run_ilp(RunConfig(network="asia"), SolveInputs(names=m.names, table=table, start=start, **solver_arcs(m)))


@pytest.mark.parametrize("seed, undirected", [(0, False), (1, False), (2, True), (3, True)])
def test_ilp_under_knowledge_equals_the_brute_force_constrained_optimum(tmp_path, seed, undirected):
    ds = forward_sample(load_network("asia"), 400, seed)
    m = _random_knowledge(tmp_path, seed, undirected)
    full = build_score_table(ds.data, ds.arities, score="bic", palim=3, names=ds.names, prune=False)
    if undirected:  # u - v adjacent: the better of u -> v required and v -> u required
        (u, v), = m.undirected.tolist()
        best = -np.inf
        for p, c in ((u, v), (v, u)):
            req = m.required.copy()
            req[p, c] = True
            if m.allowed[p, c] and find_cycle(req) is None:
                best = max(best, exact_optimum(_filtered(full, m, req))[0])
    else:
        best = exact_optimum(_filtered(full, m, m.required))[0]
    table = _knowledge_table(ds, m)
    result = _solve(table, m)
    dag = dag_of_parents(result.parent_sets)
    assert result.summary["status"] == "optimal"
    assert result.summary["objective"] == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert not m.violations(dag) and find_cycle(dag) is None
    if not undirected:  # the pruned knowledge table loses no constrained optimum
        assert exact_optimum(table)[0] == pytest.approx(best, rel=1e-9, abs=1e-9)


def test_warm_start_and_an_undirected_requirement_extend_one_ilp(tmp_path):
    """A rerun warm-started from an incumbent keeps the knowledge's own row hook (both extend it)."""
    ds = forward_sample(load_network("asia"), 400, 2)
    m = _random_knowledge(tmp_path, 2, True)
    assert m.undirected.size
    table = _knowledge_table(ds, m)
    first = _solve(table, m)
    again = _solve(table, m, start=list(first.parent_sets))
    assert again.summary["status"] == "optimal"
    assert again.summary["objective"] == pytest.approx(first.summary["objective"], rel=1e-12)
    assert not m.violations(dag_of_parents(again.parent_sets))


# ---------------------------------------------------------------------------- pipeline and CLI

@pytest.fixture()
def asia_files(tmp_path):
    return {
        "required": write(tmp_path / "req.csv", "source,target\nsmoke,either\nasia,tub\n"),
        "forbidden": write(tmp_path / "forb.csv", "source,target,directed\nbronc,dysp,false\n"),
        "tiers": write(tmp_path / "tiers.csv",
                       "variable,tier\nasia,0\nsmoke,0\ntub,1\nlung,1\neither,2\nbronc,2\nxray,3\ndysp,3\n"),
    }


def _honours(dag: np.ndarray, names: list[str], files: dict[str, str]) -> None:
    m = read_knowledge(**files).matrices(names)
    assert find_cycle(dag) is None and m.violations(dag) == []


@pytest.mark.parametrize("options", [
    {"solver": "ilp"}, {"solver": "ilp", "method": "cops"}, {"solver": "ilp", "method": "mmpc"},
    {"solver": "ilp", "method": "candidates", "candidates": 2}, {"solver": "ilp", "treewidth": 1},
    {"solver": "kg", "treewidth": 2, "time_limit": 2.0}, {"solver": "kastar", "treewidth": 2, "time_limit": 2.0},
])
def test_every_table_solver_honours_the_knowledge(tmp_path, asia_files, options):
    cfg = RunConfig(network="asia", rows=500, **asia_files, **options).validated()
    arts = run_stages(StageCache(tmp_path / "cache"), cfg, upto="solve")
    _honours(dag_of(arts["solve"]), ASIA, asia_files)
    if "restrict" in arts and "restriction" in arts["restrict"].frames:
        rec = arts["restrict"].frames["restriction"]
        i = {v: j for j, v in enumerate(ASIA)}
        pairs = rec.set_index(["u", "v"])["allowed"]
        assert pairs[(i["asia"], i["tub"])] and pairs[(i["smoke"], i["either"])]


@pytest.mark.parametrize("solver", ["ges", "sges"])
def test_equivalence_search_honours_forbidden_pairs_and_refuses_directed_knowledge(tmp_path, asia_files, solver):
    pairs = write(tmp_path / "pairs.csv", "source,target,directed\nsmoke,bronc,false\neither,dysp,false\n")
    cfg = RunConfig(network="asia", rows=2000, solver=solver, forbidden=pairs).validated()
    dag = dag_of(run_stages(StageCache(tmp_path / "cache"), cfg, upto="solve")["solve"])
    _honours(dag, ASIA, {"forbidden": pairs})
    with pytest.raises(KnowledgeError, match=f"--solver {solver} searches equivalence classes"):
        RunConfig(network="asia", solver=solver, required=asia_files["required"]).validated()


def test_undirected_requirement_needs_the_plain_ilp(tmp_path):
    req = write(tmp_path / "r.csv", "source,target,directed\nasia,dysp,false\n")
    for options in ({"solver": "kg", "treewidth": 2}, {"solver": "ilp", "treewidth": 2}):
        with pytest.raises(KnowledgeError, match="asia - dysp .* is enforced by --solver ilp without --treewidth"):
            RunConfig(network="asia", required=req, **options).validated()
    cfg = RunConfig(network="asia", rows=500, required=req).validated()
    dag = dag_of(run_stages(StageCache(tmp_path / "cache"), cfg, upto="solve")["solve"])
    assert dag[0, 7] or dag[7, 0]


def test_knowledge_enters_the_cache_keys_by_content(tmp_path, asia_files):
    cache = StageCache(tmp_path / "cache")
    plain = run_stages(cache, RunConfig(network="asia", rows=300).validated(), upto="solve")
    forb = write(tmp_path / "f.csv", "source,target\nlung,either\n")
    with_f = run_stages(cache, RunConfig(network="asia", rows=300, forbidden=forb).validated(), upto="solve")
    assert with_f["restrict"].key == plain["restrict"].key  # CI tests depend on required pairs only
    assert with_f["scores"].key != plain["scores"].key and with_f["solve"].key != plain["solve"].key
    write(tmp_path / "f.csv", "source,target\nlung,either\nasia,tub\n")  # same path, new content
    again = run_stages(cache, RunConfig(network="asia", rows=300, forbidden=forb).validated(), upto="solve")
    assert again["scores"].key != with_f["scores"].key and not again["scores"].cached
    req = run_stages(cache, RunConfig(network="asia", rows=300, required=asia_files["required"]).validated(),
                     upto="restrict")
    assert req["restrict"].key != plain["restrict"].key


def test_cli_end_to_end_on_asia_with_files(tmp_path, asia_files, capsys):
    out = tmp_path / "out"
    argv = ["--network", "asia", "--rows", "1000", "--cache-dir", str(tmp_path / "c"), "--output-dir", str(out),
            "--required", asia_files["required"], "--forbidden", asia_files["forbidden"],
            "--tiers", asia_files["tiers"]]
    assert main(argv) == 0
    folder, = out.iterdir()
    edges = pd.read_csv(folder / "edges.csv")
    arcs = set(zip(edges["source"], edges["target"]))
    assert {("smoke", "either"), ("asia", "tub")} <= arcs
    assert not {("bronc", "dysp"), ("dysp", "bronc")} & arcs
    tier = pd.read_csv(asia_files["tiers"]).set_index("variable")["tier"]
    assert all(tier[s] <= tier[t] for s, t in arcs)
    assert json.loads((folder / "result.json").read_text())["config"]["tiers"] == asia_files["tiers"]
    capsys.readouterr()
    bad = write(tmp_path / "bad.csv", "source,target\nsmoke,either\neither,smoke\nxray,asia\nasia,xray\ntub,xray\n"
                                      "xray,tub\n")
    assert main([*argv[:8], "--required", asia_files["required"], "--forbidden", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "required arc smoke -> either is forbidden" in err


def test_grid_keys_are_files_relative_to_the_grid(tmp_path, asia_files):
    folder = tmp_path / "grids"
    folder.mkdir()
    write(folder / "req.csv", "source,target\nsmoke,either\n")
    grid = parse_grid('networks = ["asia"]\nrequired = "req.csv"\n', base_dir=folder)
    cfg, = grid.configs
    assert cfg.required == str((folder / "req.csv").resolve())
    key = job_key(cfg, True)
    write(folder / "req.csv", "source,target\nasia,tub\n")
    assert job_key(cfg, True) != key
    plain, = parse_grid('networks = ["asia"]\n').configs
    assert job_key(replace(plain), True) == job_key(plain, True) != key
    with pytest.raises(ValueError, match="--tiers: file not found"):
        parse_grid('networks = ["asia"]\ntiers = "missing.csv"\n', base_dir=folder)
    write(folder / "cycle.csv", "source,target\nasia,tub\ntub,asia\nsmoke,lung\nlung,either\neither,smoke\n")
    with pytest.raises(ValueError, match="directed cycle: .*smoke -> lung"):
        parse_grid('networks = ["asia"]\nrequired = "cycle.csv"\n', base_dir=folder)


def test_score_file_runs_apply_the_knowledge(tmp_path, asia_files, capsys):
    from scores.jkl import write_jkl

    ds = forward_sample(load_network("asia"), 500, 2)
    full = build_score_table(ds.data, ds.arities, score="bic", palim=2, names=ds.names, prune=False)
    write_jkl(full, tmp_path / "asia.jkl", use_names=True)
    m = read_knowledge(**asia_files).matrices(list(ds.names))
    best = exact_optimum(_filtered(full, m, m.required))[0]
    out = tmp_path / "out"
    argv = ["--scores", str(tmp_path / "asia.jkl"), "--cache-dir", str(tmp_path / "c"), "--output-dir", str(out)]
    files = [f"--{key}={path}" for key, path in asia_files.items()]
    assert main([*argv, *files]) == 0
    folder, = out.iterdir()
    result = json.loads((folder / "result.json").read_text())
    assert result["result"]["objective"] == pytest.approx(best, rel=1e-9)
    edges = pd.read_csv(folder / "edges.csv")
    dag = np.zeros((8, 8), dtype=bool)
    index = {v: i for i, v in enumerate(ds.names)}
    for s, t in zip(edges["source"], edges["target"]):
        dag[index[s], index[t]] = True
    assert m.violations(dag) == []
    unknown = write(tmp_path / "u.csv", "source,target\nasia,Smoke\n")
    capsys.readouterr()
    assert main([*argv, "--forbidden", unknown]) == 2
    assert "u.csv line 2: unknown variable 'Smoke'" in capsys.readouterr().err


def test_candidate_restriction_skips_excluded_parents():
    """Each child's candidates are its m parents of largest positive gain among the non-excluded ones."""
    from scores.identification import identify_candidates, pairwise_gains

    ds = forward_sample(load_network("asia"), 2000, 0)
    plain = identify_candidates(ds.data, ds.arities, m=2, conditional=0)
    excluded = plain & (np.cumsum(plain, axis=0) == 1)  # each child's first candidate
    chosen = identify_candidates(ds.data, ds.arities, m=2, conditional=0, excluded=excluded)
    gains = pairwise_gains(ds.data, ds.arities)
    assert excluded.any() and not (chosen & excluded).any()
    for c in range(8):
        pool = [p for p in np.argsort(-gains[:, c], kind="stable") if p != c and not excluded[p, c] and gains[p, c] > 0]
        assert set(np.flatnonzero(chosen[:, c])) == set(pool[:2])


# ------------------------------------------------------------------ knowledge as Python objects

def test_objects_give_the_same_knowledge_as_files(tmp_path):
    (tmp_path / "req.csv").write_text("source,target,directed\na,b,true\nc,d,false\n")
    (tmp_path / "forb.csv").write_text("source,target\nb,a\n")
    (tmp_path / "tiers.csv").write_text("variable,tier\na,0\nb,1\nc,1\n")
    from_files = read_knowledge(tmp_path / "req.csv", tmp_path / "forb.csv", tmp_path / "tiers.csv")
    for required, forbidden, tiers in [
        ([("a", "b"), ("c", "d", False)], [("b", "a")], {"a": 0, "b": 1, "c": 1}),
        (pd.DataFrame({"source": ["a", "c"], "target": ["b", "d"], "directed": [True, False]}),
         pd.DataFrame({"source": ["b"], "target": ["a"]}), [["a"], ["b", "c"]]),
        ([("a", "b", True), ("c", "d", "false")], (("b", "a"),), pd.DataFrame({"variable": list("abc"),
                                                                              "tier": [0, 1, 1]})),
    ]:
        rows = [knowledge_rows(v, k) for v, k in ((required, "required"), (forbidden, "forbidden"),
                                                  (tiers, "tiers"))]
        hash(tuple(rows))  # a run configuration holds them
        objects = read_knowledge(*rows)
        assert objects.digest() == from_files.digest()
        names = ["a", "b", "c", "d"]
        for mine, theirs in zip(vars(objects.matrices(names)).values(), vars(from_files.matrices(names)).values()):
            np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("option, value, message", [
    ("required", [("a", "a")], r"required\[0\]: a -> a is a self-loop"),
    ("required", [("a", "b"), ("b", "c"), ("c", "a")], "required arcs form a directed cycle"),
    ("required", [("a", "b", "maybe")], r"required\[0\]: directed must be true or false, got 'maybe'"),
    ("required", [("a", "b", True, 1)], r"each arc must be a \(source, target\) pair"),
    ("required", [("a", "")], r"required\[0\]: empty field"),
    ("forbidden", "ab", "no file"),
    ("forbidden", 7, "forbidden must be a file name, a list of .* got int"),
    ("tiers", {"a": 0, "b": "late"}, r"tiers\[1\]: tier must be an integer, got 'late'"),
    ("tiers", {"a": -1}, r"tiers\[0\]: tier must be a non-negative integer"),
    ("tiers", [["a"], ["a"]], r"tiers\[1\]: variable 'a' already has a tier \(tiers\[0\]\)"),
    ("tiers", "a", "no file"),
    ("tiers", 3.5, "tiers must be a dict"),
])
def test_objects_are_checked_like_files(option, value, message):
    if message == "no file":  # a string is a file name
        with pytest.raises(KnowledgeError, match="file not found"):
            read_knowledge(**{option: knowledge_rows(value, option)})
        return
    with pytest.raises(KnowledgeError, match=message):
        read_knowledge(**{option: knowledge_rows(value, option)})


def test_object_knowledge_meets_unknown_names_and_contradictions_like_files():
    know = read_knowledge(required=knowledge_rows([("rain", "wet")], "required"))
    with pytest.raises(KnowledgeError, match=r"required\[0\]: unknown variable 'wet'"):
        know.matrices(["rain", "season"])
    with pytest.raises(KnowledgeError, match=r"required\[0\]: required arc b -> a is against the tiers"):
        read_knowledge(required=knowledge_rows([("b", "a")], "required"),
                       tiers=knowledge_rows({"a": 0, "b": 1}, "tiers"))
