"""Steps and phases without TensorFlow: subgraph.cc's pruning and feed cut, ReplicateConstantsPass
on the pruned step, --place-pruned-graph, a SavedModel's load phases, TF2 function bodies
soft-placed under their call's config_proto. (TF judges the same things in
tests/differential/test_steps.py and test_savedmodels.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from placelint.api import place_graphdef
from placelint.loaders import LoadError, LoadOptions, ModelRef, load_raw
from placelint.loaders.read import SAVEDMODEL
from placelint.model.devices import DeviceSet
from placelint.pipeline import analyze
from placelint.settings import Settings

from graphdefs import FLOAT, const, graph_def, op, placeholder

ROOT = Path(__file__).resolve().parent.parent
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
CPU2 = "/job:localhost/replica:0/task:0/device:CPU:2"


def _two_branches():
    """x -> a (CPU:1) -> out_a ; x -> b (CPU:2) -> out_b ; c (small const) read by both."""
    return graph_def(
        placeholder("x", (4,)),
        const("c", [1.0, 2.0, 3.0, 4.0], dtype=FLOAT, shape=(4,)),
        op("a", "Mul", ["x", "c"], device="/device:CPU:1"),
        op("out_a", "Relu", ["a"], device="/device:CPU:1"),
        op("b", "Mul", ["x", "c"], device="/device:CPU:2"),
        op("out_b", "Relu", ["b"], device="/device:CPU:2"),
        op("side", "NoOp", ["^out_b"]),
    ).SerializeToString()


def test_whole_graph_without_step_options_is_unchanged():
    r = place_graphdef(_two_branches(), devices="CPU=3")
    assert set(r.step_nodes) == {"x", "c", "a", "out_a", "b", "out_b", "side"}
    assert all(t.phase == "graph" and not t.fed for t in r.transfers)


def test_fetch_prunes_to_what_the_fetch_needs_and_feeds_cut():
    r = place_graphdef(_two_branches(), devices="CPU=3", fetch=["out_a:0"], feed=["x:0"])
    # the fed placeholder is cut: an _Arg from the client stands for it
    assert sorted(r.step_nodes) == ["a", "c", "out_a"]
    keys = {(t.tensor, t.src_device, t.dst_device, t.fed) for t in r.transfers}
    # the feed arrives from the client's CPU:0; the constant has one consumer device in this
    # step, so ReplicateConstantsPass leaves it and it is sent (in the whole graph it is
    # replicated to CPU:1 and CPU:2)
    assert keys == {("x:0", CPU0, CPU1, True), ("c:0", CPU0, CPU1, False)}
    assert all(t.phase == "step" for t in r.transfers)
    whole = place_graphdef(_two_branches(), devices="CPU=3")
    assert not any(t.src == "c" for t in whole.transfers)
    # placement stays whole-graph, as DirectSession places it
    assert r.placement["out_b"] == CPU2


def test_an_op_target_and_a_control_edge_are_followed():
    r = place_graphdef(_two_branches(), devices="CPU=3", fetch=["side"], feed=["x:0"])
    assert sorted(r.step_nodes) == ["b", "c", "out_b", "side"]


def test_feeding_an_intermediate_tensor_drops_its_producers():
    r = place_graphdef(_two_branches(), devices="CPU=3", fetch=["out_a:0"], feed=["a:0"])
    assert sorted(r.step_nodes) == ["out_a"]
    assert [(t.tensor, t.src_device, t.dst_device) for t in r.transfers] == [("a:0", CPU0, CPU1)]


def test_unknown_fetch_is_a_diagnostic():
    r = place_graphdef(_two_branches(), devices="CPU=3", fetch=["nope:0"])
    assert any(d.code == "PL006" and "nope:0" in d.message for d in r.diagnostics)


def test_place_pruned_graph_places_the_step_alone():
    gd = graph_def(
        placeholder("x", (4,)),
        op("bad", "Relu", ["x"], device="/device:GPU:3"),
        op("good", "Relu", ["x"]),
    ).SerializeToString()
    whole = place_graphdef(gd, devices="CPU=1", fetch=["good:0"], feed=["x:0"])
    assert any(d.code == "PL101" and d.node == "bad" for d in whole.errors)
    pruned = place_graphdef(gd, devices="CPU=1", fetch=["good:0"], feed=["x:0"],
                            place_pruned_graph=True)
    assert not pruned.errors and "bad" not in pruned.placement


SAVED = """
saved_model_schema_version: 1
meta_graphs {
  meta_info_def { tags: "serve" }
  graph_def {
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { } } } }
    node { name: "read" op: "ReadVariableOp" input: "v"
           attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "y" op: "Mul" input: "x" input: "read" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "save/Const" op: "Const" device: "/device:GPU:0"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "m" } } } }
    node { name: "save/restore_all" op: "NoOp" input: "^save/Const" device: "/device:GPU:0" }
    node { name: "init_v" op: "NoOp" input: "^v" }
  }
  saver_def { filename_tensor_name: "save/Const:0" restore_op_name: "save/restore_all" }
  collection_def { key: "saved_model_main_op" value { node_list { value: "init_v" } } }
  collection_def { key: "train_op" value { node_list { value: "y" } } }
  signature_def { key: "serving_default" value {
    inputs { key: "x" value { name: "x:0" dtype: DT_FLOAT } }
    outputs { key: "y" value { name: "y:0" dtype: DT_FLOAT } } } }
}
"""


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    d = tmp_path / "sm"
    d.mkdir()
    (d / "saved_model.pbtxt").write_text(SAVED)
    return d


def test_savedmodel_declares_restore_init_signature_and_collections(saved):
    raw = load_raw(ModelRef(saved, SAVEDMODEL))
    assert list(raw.steps) == ["restore", "init", "serving_default", "train_op"]
    assert raw.steps["restore"].feeds == ("save/Const:0",)
    assert raw.steps["init"].targets == ("init_v",)
    assert raw.step == "serving_default" and raw.loader


def test_a_gpu_pinned_saver_fails_the_load_in_the_restore_phase(saved):
    report = analyze(ModelRef(saved, SAVEDMODEL), Settings(devices=DeviceSet.parse("CPU=1")))
    errors = [d for d in report.diagnostics if d.severity.value == "error"]
    assert {(d.code, d.node, d.phase) for d in errors} >= {
        ("PL101", "save/restore_all", "restore")}
    # the served step's transfers exclude restore/init, and bytes are the step's
    assert report.context.step.phase == "step"
    assert set(report.context.step.graph.nodes) == {"_arg_x_0_0", "v", "read", "y"}
    phases = report.context.step.phase_of
    assert phases["v"] == "init" and phases["y"] == "step"
    # fed, but its control edge to restore_all stays (only a fed Placeholder's move)
    assert phases["save/Const"] == "restore"
    assert "after the loader's restore and init phases" in report.entry


def test_whole_graph_keeps_the_old_view_and_step_picks_one(saved):
    s = Settings(devices=DeviceSet.parse("CPU=1"))
    s.load = LoadOptions(whole_graph=True)
    report = analyze(ModelRef(saved, SAVEDMODEL), s)
    assert report.context.step.whole
    assert {d.phase for d in report.diagnostics if d.node} == {"graph"}
    s.load = LoadOptions(step="train_op")
    report = analyze(ModelRef(saved, SAVEDMODEL), s)
    assert report.entry.startswith("collection 'train_op'")
    with pytest.raises(LoadError) as exc:
        load_raw(ModelRef(saved, SAVEDMODEL), LoadOptions(step="nope"))
    assert exc.value.code == "PL006" and "train_op" in exc.value.message


TF2_CALL = """
node { name: "call" op: "StatefulPartitionedCall"
  attr { key: "Tin" value { list { } } } attr { key: "Tout" value { list { type: DT_FLOAT } } }
  attr { key: "f" value { func { name: "body" } } } CONFIG }
library { function { signature { name: "body" output_arg { name: "out" type: DT_FLOAT } }
  node_def { name: "c" op: "Const" device: "/device:GPU:0"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1.0 } } } }
  ret { key: "out" value: "c:output:0" } } }
"""


def test_tf2_function_body_device_is_soft_placed_with_a_note(tmp_path: Path):
    from placelint.proto import GraphDef
    from google.protobuf import text_format

    soft = text_format.Parse(TF2_CALL.replace("CONFIG", 'attr { key: "config_proto" value { s: "8\\001" } }'), GraphDef())
    r = place_graphdef(soft.SerializeToString(), devices="CPU=1")
    assert not r.errors
    assert r.placement["call/c"] == CPU0
    assert [(d.code, d.node) for d in r.diagnostics] == [("PL108", "call/c")]
    # a hand-written call without config_proto: the strict session's placer fails
    strict = text_format.Parse(TF2_CALL.replace("CONFIG", ""), GraphDef())
    r = place_graphdef(strict.SerializeToString(), devices="CPU=1")
    assert [(d.code, d.node) for d in r.errors] == [("PL101", "call/c")]


# -- the command line ---------------------------------------------------------------------

def test_cli_fetch_feed_and_phases_in_every_format(saved, tmp_path: Path):
    import json

    from checkrun import invoke

    sample = ROOT / "samples" / "cpu_vars_gpu_ops.pbtxt"
    run = invoke(["place", sample, "--devices", "CPU:0,GPU:0", "--fetch", "matmul2:0",
                  "--feed", "x:0", "--format", "json"], cwd=tmp_path)
    [model] = json.loads(run.stdout)
    assert model["analysed"].startswith("the step of --fetch/--feed (8 nodes")
    fed = [t for t in model["transfers"] if t["fed"]]
    assert [(t["tensor"], t["phase"]) for t in fed] == [("x:0", "step")]
    # check: text names the phase and the analysed graph; SARIF carries it as a property
    run = invoke(["check", saved, "--devices", "CPU=1", "--no-cache", "--isolated"], cwd=tmp_path)
    assert "PL101 [unknown-device] error (restore):" in run.stdout
    assert "analysed: signature 'serving_default'" in run.stdout
    run = invoke(["check", saved, "--devices", "CPU=1", "--no-cache", "--isolated", "--format",
                  "sarif"], cwd=tmp_path)
    results = json.loads(run.stdout)["runs"][0]["results"]
    assert {r["properties"]["phase"] for r in results} >= {"restore"}
    # --step picks a declared one; both --step and --fetch is a usage error
    run = invoke(["check", saved, "--devices", "CPU=1", "--no-cache", "--isolated", "--step",
                  "train_op", "--format", "json"], cwd=tmp_path)
    assert json.loads(run.stdout)["models"][0]["entry"].startswith("collection 'train_op'")
    run = invoke(["check", saved, "--step", "train_op", "--fetch", "y:0", "--isolated"],
                 cwd=tmp_path)
    assert run.exit_code == 2 and "--step" in run.stderr


def test_cli_steps_lists_what_the_model_declares(saved, tmp_path: Path):
    import json

    from checkrun import invoke

    run = invoke(["steps", saved, ROOT / "samples" / "towers_gpu.pb"], cwd=tmp_path)
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[1].split()[:2] == ["restore", "restore"] and "(runs on load)" in lines[1]
    assert lines[3].split()[:3] == ["*", "serving_default", "step"]
    assert "train_op" in lines[4] and "no named steps" in run.stdout
    data = json.loads(invoke(["steps", saved, "--format", "json"], cwd=tmp_path).stdout)
    assert data[0]["default"] == "serving_default"
    assert [s["name"] for s in data[0]["steps"]] == ["restore", "init", "serving_default",
                                                    "train_op"]


def test_config_keys_for_steps(tmp_path: Path):
    from placelint.config import load_config

    (tmp_path / "placelint.toml").write_text(
        'fetch = ["a:0", "b:0"]\nfeed = "x:0"\nplace-pruned-graph = true\n')
    s = Settings()
    load_config(tmp_path / "placelint.toml").apply(s)
    assert (s.load.fetch, s.load.feed, s.load.place_pruned_graph) == (["a:0", "b:0"], ["x:0"],
                                                                     True)


def test_place_pruned_graph_on_the_command_line_and_bad_slots(tmp_path: Path):
    from checkrun import invoke

    run = invoke(["place", ROOT / "samples" / "keras_cnn", "--step", "restore", "--devices",
                  "CPU=1", "--place-pruned-graph"], cwd=tmp_path)
    assert run.exit_code in (0, 1), run.stderr
    assert "run once when the model is loaded (restore phase), placed alone" in run.stdout
    assert "_arg_saver_filename_0_0: (_Arg): /job:localhost/replica:0/task:0/device:CPU:0" \
        in run.stdout
    r = place_graphdef(_two_branches(), devices="CPU=3", fetch=["out_a:0"], feed=["x:7"])
    assert any(d.code == "PL006" and "x:7" in d.message for d in r.diagnostics)


@pytest.mark.parametrize("command", [
    "$ placelint place samples/cpu_vars_gpu_ops.pbtxt --devices CPU:0,GPU:0 --fetch matmul2:0 "
    "--feed x:0",
    "$ placelint steps samples/keras_cnn",
])
def test_readme_step_examples_are_what_placelint_prints(command):
    from checkrun import invoke

    readme = (ROOT / "README.md").read_text()
    block = readme.split(command + "\n", 1)[1].split("```", 1)[0].splitlines()
    out = invoke(command.split()[2:], cwd=ROOT).stdout.splitlines()
    i = 0
    for shown in (b for b in block if b != "..."):       # shown lines, in order
        want = shown.removesuffix(" ...")
        while i < len(out) and not out[i].startswith(want):
            i += 1
        assert i < len(out), f"README line not printed: {shown}"
        i += 1


def test_the_step_graph_copies_every_node_field_but_the_edges():
    """``step.subgraph`` copies each kept node with every field (attrs shared), and new edge
    lists: the copy is built from the dataclass's fields, so a field added to ``Node`` is
    carried over too."""
    from dataclasses import fields

    from placelint.location import SourceLocation
    from placelint.model.devices import parse_device
    from placelint.model.graph import Edge, Graph, Node
    from placelint.model.step import subgraph

    g = Graph("g")
    a = Node("a", "Const", "/cpu:0", parse_device("/cpu:0"), {"k": 1}, output_dtypes=[1],
             output_shapes=[(2,)], function="f", call_site="c", loop="w",
             location=SourceLocation("m.py", 3), file_line=7, op_signature=(1,), soft=True)
    b = Node("b", "Identity")
    g.add_node(a)
    g.add_node(b)
    g.add_edge(Edge("a", 0, "b", 0), a, b)
    copy = subgraph(g, np.array([True, False]), []).nodes["a"]     # a kept, b not
    assert copy is not a and copy.attrs is a.attrs
    assert (copy.in_edges, copy.out_edges) == ([], []) and len(a.out_edges) == 1
    for f in fields(Node):
        if f.name not in ("in_edges", "out_edges"):
            assert getattr(copy, f.name) == getattr(a, f.name), f.name


def test_phase_of_holds_any_number_of_specs():
    # a SavedModel may declare hundreds of signatures: each node's phase is its first
    # spec's, whatever that spec's index (one byte per node codes the phase, not the spec)
    from placelint.model.build import build_graph
    from placelint.model.step import PhaseOf
    g = build_graph(graph_def(*(const(f"c{i}", [i]) for i in range(4)))).graph
    phases = ["restore", "init", *["step"] * 298, "other"]
    first = np.array([-1, 1, 299, 300])
    phase_of = PhaseOf(g, first, phases)
    assert dict(phase_of) == {"c1": "init", "c2": "step", "c3": "other"}
    assert len(phase_of) == 3 and "c0" not in phase_of and phase_of.get("c0", "x") == "x"


def test_step_graph_shares_the_nodes_whose_edges_it_keeps():
    from graphdefs import graph
    from placelint.model.step import Resolver, StepSpec, build_step

    g = graph(placeholder("x", (4,)), const("c", [1.0, 2.0, 3.0, 4.0], dtype=FLOAT, shape=(4,)),
              op("a", "Mul", ["x", "c"]), op("out_a", "Relu", ["a"]),
              op("b", "Mul", ["x", "c"]), op("out_b", "Relu", ["b"]))
    before = {n: (list(node.in_edges), list(node.out_edges)) for n, node in g.nodes.items()}
    step = build_step(g, Resolver(g), StepSpec("s", fetches=("out_a:0",), feeds=("x:0",)))
    s = step.graph
    assert list(s.nodes) == ["_arg_x_0_0", "c", "a", "out_a"]
    assert step.kept.tolist() == [1, 2, 3]          # their graph positions, after the _Arg
    # out_a keeps its one in-edge and has no out-edge: the graph's own node
    assert s.nodes["out_a"] is g.nodes["out_a"]
    # a reads the fed x through the _Arg, c lost its edge to b: copies with the step's edges
    assert s.nodes["a"] is not g.nodes["a"] and s.nodes["c"] is not g.nodes["c"]
    assert [e.src for e in s.nodes["a"].in_edges] == ["_arg_x_0_0", "c"]
    assert [e.dst for e in s.nodes["c"].out_edges] == ["a"]
    assert s.nodes["a"].attrs is g.nodes["a"].attrs
    # the graph's nodes are as they were
    assert {n: (node.in_edges, node.out_edges) for n, node in g.nodes.items()} == before
