"""What ``hybridbn.learn`` and ``run.py`` take and say (issue 41): expert knowledge as Python
objects, the guards against columns that are no variables (``drop`` / ``keep``), messages in the
caller's spelling, the network's name, the equivalence class under the knowledge, and the
conversions to pgmpy and pyAgrum."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hybridbn
from bayesnet.catalog import load_network
from graphs.metrics import shd
from graphs.pdag import dag_to_cpdag, dag_to_pdag_with_knowledge
from hybridbn.options import keyword_spelling
from pipeline.apps.pictures import network_drawing
from pipeline.core.cache import stage_key
from pipeline.core.declarations import OPTIONS
from pipeline.core.knowledge import knowledge_of
from pipeline.core.stages import VERSIONS, equivalence_class

ASIA = {"rows": 1000, "seed": 3}


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def weather(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The chain season -> rain -> wet, each step copied with 10 % noise: no v-structure, so its
    CPDAG has no arc."""
    rng = np.random.default_rng(seed)
    season = rng.integers(0, 2, n)
    rain = season ^ (rng.random(n) < 0.1)
    wet = rain ^ (rng.random(n) < 0.1)
    return pd.DataFrame({"season": season, "rain": rain, "wet": wet}).astype(str)


def write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------- knowledge as objects

def test_knowledge_objects_learn_what_the_files_learn_under_the_same_keys(cache, tmp_path):
    files = {
        "required": write(tmp_path / "req.csv", "source,target\nsmoke,lung\n"),
        "forbidden": write(tmp_path / "no.csv", "source,target,directed\ndysp,xray,false\ntub,asia,true\n"),
        "tiers": write(tmp_path / "tiers.csv", "variable,tier\nasia,0\nsmoke,0\ntub,1\nlung,1\nbronc,1\n"),
    }
    objects = {
        "required": [("smoke", "lung")],
        "forbidden": pd.DataFrame({"source": ["dysp", "tub"], "target": ["xray", "asia"], "directed": [False, True]}),
        "tiers": [["asia", "smoke"], ["tub", "lung", "bronc"]],
    }
    from_files = hybridbn.learn("asia", **ASIA, **files, cache_dir=cache)
    from_objects = hybridbn.learn("asia", **ASIA, **objects, cache_dir=cache)
    assert from_objects.arcs == from_files.arcs and ("smoke", "lung") in from_objects.arcs
    assert {s: a.key for s, a in from_objects.artifacts.items()} == {s: a.key for s, a in from_files.artifacts.items()}
    assert all(from_objects.cached.values())
    assert knowledge_of(from_objects.config).digest() == knowledge_of(from_files.config).digest()
    unconstrained = hybridbn.learn("asia", **ASIA, cache_dir=cache)
    assert unconstrained.artifacts["scores"].key != from_files.artifacts["scores"].key
    assert hybridbn.learn("asia", **ASIA, tiers={"asia": 0, "smoke": 0, "tub": 1, "lung": 1, "bronc": 1},
                          required=files["required"], forbidden=objects["forbidden"], cache_dir=cache).cached["solve"]


@pytest.mark.parametrize("options,message", [
    ({"required": 5}, "required must be a file name, a list of (source, target) pairs or a DataFrame"),
    ({"required": [("smoke", "lung", "sure")]}, "required[0]: directed must be true or false, got 'sure'"),
    ({"forbidden": [("smoke",)]}, "forbidden: each arc must be a (source, target) pair"),
    ({"tiers": {"smoke": "early"}}, "tiers[0]: tier must be an integer, got 'early'"),
    ({"tiers": "smoke"}, "tiers: file not found: smoke"),
    ({"required": [("smoke", "smoke")]}, "required[0]: smoke -> smoke is a self-loop"),
    ({"required": [("asia", "nowhere")]}, "required[0]: unknown variable 'nowhere'"),
    ({"required": [("lung", "smoke")], "tiers": {"smoke": 0, "lung": 1}},
     "required[0]: required arc lung -> smoke is against the tiers"),
    ({"required": [("asia", "tub"), ("tub", "lung"), ("lung", "asia")]},
     "required: the required arcs form a directed cycle"),
])
def test_bad_knowledge_objects_get_the_messages_of_the_files(options, message, cache):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        hybridbn.learn("asia", **ASIA, **options, cache_dir=cache)
    assert "--" not in str(error.value)


# ------------------------------------------------------------------------ columns to drop

def frame_with(n: int = 200, seed: int = 0, **extra) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    frame = pd.DataFrame({"a": a, "b": a ^ (rng.random(n) < 0.1), "c": rng.integers(0, 3, n)})
    return frame.assign(**extra)


def test_csv_written_with_its_index_is_refused_in_one_line_until_the_index_is_dropped(cli, dirs, tmp_path):
    path = tmp_path / "survey.csv"
    frame_with().to_csv(path)  # with pandas' index column, whose header is empty
    status, out, err = cli("--data", str(path), *dirs)
    assert status == 2 and err.count("\n") == 1 and not out
    assert err.startswith("error: column '' has no header") and "--drop ''" in err
    assert not (tmp_path / "cache").exists()  # refused before any work
    status, out, _ = cli("--data", str(path), "--drop", "", *dirs)
    assert status == 0 and "200 rows x 3 variables" in out


def test_identifier_is_refused_unless_kept_and_one_column_is_no_network(cli, dirs, tmp_path):
    path = tmp_path / "ids.csv"
    frame_with(id=np.arange(200)).to_csv(path, index=False)
    status, _, err = cli("--data", str(path), "--palim", "1", *dirs)  # found when the data stage reads the values
    *_, last = err.splitlines()
    assert status == 2 and err.count("error:") == 1
    assert last.startswith("error: column 'id' has a different value in each of its 200 rows")
    assert "--drop 'id'" in last and "--keep 'id'" in last
    status, out, _ = cli("--data", str(path), "--palim", "1", "--keep", "id", *dirs)
    assert status == 0 and "200 rows x 4 variables" in out
    status, out, _ = cli("--data", str(path), "--drop", "id", "c", *dirs)
    assert status == 0 and "200 rows x 2 variables" in out
    frame_with()[["a"]].to_csv(tmp_path / "one.csv", index=False)
    status, _, err = cli("--data", str(tmp_path / "one.csv"), *dirs)
    assert status == 2 and "a network needs at least 2 variables, and the data has 1 column" in err
    status, _, err = cli("--network", "asia", "--drop", "asia", *dirs)
    assert status == 2 and "--drop and --keep select columns of --data" in err


def test_python_guards_speak_keywords_and_drop_leaves_the_column_out(cache):
    with pytest.raises(ValueError, match=r"^column 'id' has a different value .* drop=\['id'\]") as error:
        hybridbn.learn(frame_with(id=np.arange(200)), cache_dir=cache)
    assert "keep=['id']" in str(error.value) and "--" not in str(error.value)
    with pytest.raises(ValueError, match="at least 2 variables, and the data has 1 column"):
        hybridbn.learn(frame_with()[["a"]], cache_dir=cache)
    indexed = frame_with().reset_index().rename(columns={"index": "Unnamed: 0"})
    with pytest.raises(ValueError, match=r"column 'Unnamed: 0' has a generated header.*drop=\['Unnamed: 0'\]"):
        hybridbn.learn(indexed, cache_dir=cache)
    with pytest.raises(ValueError, match=r"^drop=\['x'\] is not a column of the data; columns are 'a', 'b', 'c'$"):
        hybridbn.learn(frame_with(), drop=["x"], cache_dir=cache)
    plain = hybridbn.learn(frame_with(), palim=2, cache_dir=cache)
    dropped = hybridbn.learn(frame_with(junk=np.arange(200) % 7), drop="junk", palim=2, cache_dir=cache)
    assert dropped.names == plain.names == ["a", "b", "c"] and dropped.arcs == plain.arcs
    assert dropped.objective == pytest.approx(plain.objective)
    kept = hybridbn.learn(frame_with(id=np.arange(200)), keep=["id"], palim=1, cache_dir=cache, stage="data")
    assert kept.names == ["a", "b", "c", "id"]


def test_data_key_is_unchanged_without_drop_and_changes_with_it(cache, tmp_path):
    from pipeline.core.cache import file_sha256

    path = tmp_path / "d.csv"
    frame_with(junk=np.arange(200) % 7).to_csv(path, index=False)
    plain = hybridbn.learn(str(path), cache_dir=cache, stage="data").artifacts["data"]
    assert plain.key == stage_key("data", VERSIONS["data"], {"file": str(path.resolve()), "sha256": file_sha256(path)},
                                  {})
    dropped = hybridbn.learn(str(path), drop=["junk"], cache_dir=cache, stage="data").artifacts["data"]
    assert dropped.key != plain.key and list(dropped.frames["data"].columns) == ["a", "b", "c"]
    named = hybridbn.learn(str(path), name="survey", cache_dir=cache, stage="data")
    assert named.artifacts["data"].key == plain.key and named.cached["data"]


# ------------------------------------------------------------------- messages and the name

@pytest.mark.parametrize("options,message", [
    ({"alpha": 2}, "alpha must lie strictly between 0 and 1, got 2"),
    ({"solver": "kg"}, "solver='kg' needs a treewidth bound: add treewidth=K"),
    ({"missing": "keep"}, "missing must be one of reject, drop, state, em; got 'keep'"),
    ({"alpah": 0.1}, "unknown option 'alpah'; did you mean 'alpha'?"),
    ({"palimm": 2}, "unknown option 'palimm'; did you mean 'palim'?"),
    ({"bootstrap": 2, "stage": "scores"}, "bootstrap learns whole networks: it needs stage='solve' or evaluate"),
    ({"stage": "fit"}, "stage must be one of data, restrict, scores, solve, evaluate; got 'fit'"),
    ({"name": "my net"}, "name must be letters, digits"),
])
def test_python_messages_name_keywords(options, message, cache):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        hybridbn.learn("asia", **options, cache_dir=cache)
    assert "--" not in str(error.value)


def test_an_unknown_keyword_far_from_all_lists_them():
    with pytest.raises(ValueError, match=r"unknown option 'zzz'; options are add_candidates, alpha, .*n_jobs$"):
        hybridbn.learn("asia", zzz=1)


def test_command_line_messages_keep_the_flags(cli, dirs):
    status, _, err = cli("--network", "asia", "--alpha", "2", *dirs)
    assert status == 2 and "error: --alpha must lie strictly between 0 and 1, got 2.0" in err
    status, _, err = cli("--network", "asia", "--solver", "kg", *dirs)
    assert status == 2 and "--solver kg needs a treewidth bound: add --treewidth K" in err


def test_keyword_spelling():
    def spelt(message):
        return keyword_spelling(message, OPTIONS)

    assert spelt("--folds 6 exceeds --rows 5") == "folds=6 exceeds rows=5"
    assert spelt("--memory-limit applies to --solver ilp only") == "memory_limit applies to solver='ilp' only"
    assert spelt("--scores FILE.jkl has none; give --network or --data") == (
        "scores=FILE.jkl has none; give network or data")
    assert spelt("rows; --missing drop (missing='drop' in Python) drops them") == "rows; missing='drop' drops them"
    assert spelt("drop it with --drop 'a b' (drop=['a b'] in Python)") == "drop it with drop=['a b']"
    assert spelt("--required /tmp/k.csv line 3: empty field") == "required /tmp/k.csv line 3: empty field"
    assert spelt("--no-such-flag 3, see --help") == "--no-such-flag 3, see --help"


def test_name_names_the_network_everywhere_and_a_frame_is_data(cache, tmp_path):
    frame = weather()
    default = hybridbn.learn(frame, cache_dir=cache)
    assert default.config.source_name == "data" and default.parameters().name == "data"
    named = hybridbn.learn(frame, name="weather", cache_dir=cache)
    assert all(named.cached.values())  # the name enters no stage key
    assert named.parameters().name == "weather" and named.to_bif().startswith("network weather")
    assert repr(named).startswith("LearnResult(weather:")
    folder = named.write(tmp_path / "out")
    assert folder.name.startswith("weather-") and (folder / "network.bif").read_text().startswith("network weather")
    assert "weather: learned network" in (folder / "network.svg").read_text()
    assert f"written to {folder}" in named.summary(output=folder)
    assert hybridbn.learn("asia", rows=300, name="lungs", cache_dir=cache).parameters().name == "lungs"


# ---------------------------------------------------------- the class under the knowledge

def test_tiers_orient_the_learned_class(cache, tmp_path):
    """The issue's case: with tiers season 0, rain 1, season -> rain is compelled, and rain -> wet
    with it (Meek's rule 1)."""
    frame = weather()
    plain = hybridbn.learn(frame, method="none", cache_dir=cache)
    assert sorted(map(frozenset, plain.arcs)) == sorted(map(frozenset, [("season", "rain"), ("rain", "wet")]))
    assert not plain.to_edge_frame(cpdag=True)["directed"].any()
    tiered = hybridbn.learn(frame, method="none", tiers={"season": 0, "rain": 1}, cache_dir=cache)
    edges = tiered.to_edge_frame(cpdag=True)
    assert sorted(zip(edges["source"], edges["target"], edges["directed"])) == [
        ("rain", "wet", True), ("season", "rain", True)]
    folder = tiered.write(tmp_path / "out")
    assert (folder / "network.dot").read_text() == tiered.to_dot() != plain.to_dot()
    assert "PDAG with the knowledge" in (folder / "network.svg").read_text()


def test_pictures_draw_the_class_they_are_given():
    dag = np.zeros((3, 3), dtype=bool)
    dag[0, 1] = dag[1, 2] = True
    tiers = np.zeros((3, 3), dtype=bool)
    tiers[1, 0] = True  # 1 -> 0 against the tiers
    plain = network_drawing(dag, ["season", "rain", "wet"], "t")
    oriented = network_drawing(dag, ["season", "rain", "wet"], "t",
                               lambda d: dag_to_pdag_with_knowledge(d, None, tiers))
    assert plain.legend == [("directed", 0), ("undirected", 2)]
    assert oriented.legend == [("directed", 2), ("undirected", 0)]


ASIA_TIERS = {"asia": 0, "smoke": 0, "tub": 1, "lung": 1, "bronc": 1, "either": 2, "xray": 3, "dysp": 3}


def test_evaluation_under_knowledge_compares_the_classes_under_it(cache):
    result = hybridbn.learn("asia", **ASIA, tiers=ASIA_TIERS, cache_dir=cache)
    know = knowledge_of(result.config).matrices(result.names)
    truth = load_network("asia").adjacency
    truth_class = dag_to_pdag_with_knowledge(truth, know.required, ~know.allowed)
    assert (truth_class & truth_class.T).sum() < (dag_to_cpdag(truth) & dag_to_cpdag(truth).T).sum()  # it orients
    learned_class = dag_to_pdag_with_knowledge(result.adjacency, know.required, ~know.allowed)
    assert np.array_equal(result.cpdag, learned_class)
    assert result.evaluation["shd"] == shd(learned_class, truth_class)
    assert result.evaluation["knowledge_conflicts_truth"] is False
    plain = hybridbn.learn("asia", **ASIA, cache_dir=cache)
    assert "knowledge_conflicts_truth" not in plain.evaluation
    # without knowledge the evaluation's key is what it was
    params, inputs = {"truth": "asia"}, {"data": plain.artifacts["data"].key, "solve": plain.artifacts["solve"].key}
    assert plain.artifacts["evaluate"].key == stage_key("evaluate", VERSIONS["evaluate"], params, inputs)
    assert result.artifacts["evaluate"].key != stage_key(
        "evaluate", VERSIONS["evaluate"], params,
        {"data": result.artifacts["data"].key, "solve": result.artifacts["solve"].key})


def test_a_truth_that_breaks_the_knowledge_is_compared_as_its_cpdag(cache):
    """asia has either -> dysp, compelled by the v-structure either -> dysp <- bronc: tiers that
    put dysp first exclude every DAG of its class."""
    result = hybridbn.learn("asia", **ASIA, tiers={"dysp": 0, "either": 1}, cache_dir=cache)
    know = knowledge_of(result.config).matrices(result.names)
    assert result.evaluation["knowledge_conflicts_truth"] is True
    expected = shd(equivalence_class(result.adjacency, know), dag_to_cpdag(load_network("asia").adjacency))
    assert result.evaluation["shd"] == expected


# ------------------------------------------------------------------------ pgmpy, pyAgrum

@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    return hybridbn.learn("asia", rows=800, seed=2, cache_dir=tmp_path_factory.mktemp("cache"))


def _a_family(result):
    """A child with parents, its fitted network, and one entry ``(parent states, state, probability)``."""
    network = result.parameters()
    v = next(v for v in range(network.n_vars) if network.parents[v])
    parents = network.parents[v]
    index = tuple(len(network.states[p]) - 1 for p in parents) + (0,)
    config = {network.variables[p]: network.states[p][k] for p, k in zip(parents, index)}
    return network, v, config, float(network.cpts[v][index])


def test_to_pgmpy(learned):
    pytest.importorskip("pgmpy")
    model = learned.to_pgmpy()
    assert type(model).__name__ == "DiscreteBayesianNetwork" and model.check_model()
    assert set(model.edges()) == set(learned.arcs) and set(model.nodes()) == set(learned.names)
    network, v, config, probability = _a_family(learned)
    var = network.variables[v]
    assert model.get_cpds(var).get_value(**config, **{var: network.states[v][0]}) == pytest.approx(probability)
    assert not np.allclose(learned.to_pgmpy("mle").get_cpds(var).values, model.get_cpds(var).values)


def test_to_pyagrum(learned):
    gum = pytest.importorskip("pyagrum")
    bn = learned.to_pyagrum()
    assert isinstance(bn, gum.BayesNet)
    assert {(bn.variable(a).name(), bn.variable(b).name()) for a, b in bn.arcs()} == set(learned.arcs)
    network, v, config, probability = _a_family(learned)
    assert bn.cpt(network.variables[v])[config][0] == pytest.approx(probability)


def test_documented_knowledge_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("pgmpy")
    text = (Path(__file__).resolve().parents[1] / "docs" / "user-guide.md").read_text()
    section = text[text.index("## Python API"):]
    block = next(b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "tiers=" in b)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYBRIDBN_CACHE_DIR", str(tmp_path / "cache"))
    scope: dict = {}
    exec(compile(block, "user-guide.md", "exec"), scope)
    result, edges = scope["result"], scope["edges"]
    assert result.names == ["season", "rain", "wet"] and result.config.source_name == "weather"
    assert ("season", "rain", True) in set(zip(edges["source"], edges["target"], edges["directed"]))
    assert ("rain", "wet") in result.arcs and set(scope["model"].edges()) == set(result.arcs)
