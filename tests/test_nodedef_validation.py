"""PL007 invalid-node-def and PL008 format-mismatch: the cases of issue 16, TF's wording
(checked against TensorFlow itself where it is installed), and the TypesCompatible,
default and minimum rules on small graphs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from checkrun import invoke

from placelint.model.nodedef_validation import validate_graph_def
from placelint.opdb import get_opdb
from placelint.proto import GraphDef

DATA = Path(__file__).resolve().parent / "data" / "import_validation"
CASES = {
    "while_less_resource.pbtxt": ("while/Less", "Input 0 of node while/Less was passed resource "
                                  "from while/Merge:0 incompatible with expected int32."),
    "concat_without_attrs.pbtxt": ("concat", "NodeDef missing attrs 'T', 'N' from "
                                   "Op<name=ConcatV2; signature=values:N*T, axis:Tidx -> output:T; "
                                   "attr=N:int,min=2; attr=T:type; attr=Tidx:type,default=DT_INT32,"
                                   "allowed=[DT_INT32, DT_INT64]>; NodeDef: node concat"),
    "placeholder_dim_minus7.pbtxt": ("images", "Shape [?,-7] has dimensions with values below -1 "
                                     "(where -1 means unknown) for 'node images = Placeholder["),
    "function_body_relu_string.pbtxt": ("call/relu", "input features[0] expected type string "
                                        "!= float, the type of a[0] In node relu"),
}


def _text_graph(text: str) -> GraphDef:
    from google.protobuf import text_format
    return text_format.Parse(text, GraphDef())


def _findings(text: str):
    return validate_graph_def(_text_graph(text), get_opdb()).findings


@pytest.mark.parametrize("name", sorted(CASES))
def test_issue_cases_get_tfs_diagnosis(name):
    node, message = CASES[name]
    run = invoke(["check", str(DATA / name), "--devices", "CPU=1,GPU=1", "--format", "json"])
    [model] = json.loads(run.stdout)["models"]
    diags = model["diagnostics"]
    assert not [d for d in diags if d["code"] == "PL009"]
    pl007 = [d for d in diags if d["code"] == "PL007"]
    assert pl007 and pl007[0]["node"] == node
    assert message in pl007[0]["message"]
    # the wrong cause is gone: no 'No OpKernel was registered ... with these attrs: []'
    refused = {n for f in pl007 for n in f["nodes"]}
    assert not [d for d in diags if d["code"] == "PL104" and refused & set(d["nodes"])]
    assert run.exit_code == 1


def test_concat_without_attrs_reports_every_node_and_first_as_tf():
    findings = _findings((DATA / "concat_without_attrs.pbtxt").read_text())
    assert [(f.node, f.kind) for f in findings] == [("concat", "missing-attr"),
                                                   ("concat_1", "missing-attr")]


def test_text_graph_saved_as_pb_is_noted(tmp_path):
    pb = tmp_path / "model.pb"
    shutil.copy(DATA / "placeholder_dim_minus7.pbtxt", pb)
    run = invoke(["check", str(pb), "--devices", "CPU=1", "--select", "PL008"])
    assert run.codes() == ["PL008"]
    assert "TensorFlow's binary loaders will fail on this file" in run.stdout
    assert run.exit_code == 0          # info: it does not fail the run
    binary = tmp_path / "model.pbtxt"
    binary.write_bytes(_text_graph(pb.read_text()).SerializeToString())
    run = invoke(["check", str(binary), "--devices", "CPU=1", "--select", "PL008"])
    assert "TensorFlow's text loaders will fail on this file" in run.stdout
    right = tmp_path / "right.pb"
    right.write_bytes(binary.read_bytes())
    assert invoke(["check", str(right), "--devices", "CPU=1", "--select", "PL008"]).codes() == []


CONST = ('node { name: "%s" op: "Const" attr { key: "dtype" value { type: %s } } attr { key: '
         '"value" value { tensor { dtype: %s tensor_shape { } } } } }\n')
REFVAR = ('node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } } '
          'attr { key: "shape" value { shape { } } } }\n')


def test_ref_output_feeds_non_ref_input_not_the_reverse():
    ok = REFVAR + 'node { name: "i" op: "Identity" input: "v" attr { key: "T" value { type: DT_FLOAT } } }'
    assert _findings(ok) == []
    bad = (CONST % ("c", "DT_FLOAT", "DT_FLOAT") + 'node { name: "a" op: "Assign" input: "c" input: "c" '
           'attr { key: "T" value { type: DT_FLOAT } } }')
    [f] = _findings(bad)
    assert (f.node, f.message) == ("a", "Input 0 of node a was passed float from c:0 incompatible "
                                   "with expected float_ref.")


def test_minimum_allowed_values_kinds_and_placeholders():
    addn = (CONST % ("c", "DT_FLOAT", "DT_FLOAT")
            + 'node { name: "s" op: "AddN" attr { key: "T" value { type: DT_FLOAT } } '
              'attr { key: "N" value { i: 0 } } }')
    [f] = _findings(addn)
    assert f.message.startswith("Value for attr 'N' of 0 must be at least minimum 1; NodeDef: node s;")
    kind = 'node { name: "p" op: "Placeholder" attr { key: "dtype" value { i: 3 } } }'
    [f] = _findings(kind)
    assert f.message.startswith("AttrValue had value with type 'int' when 'type' expected for "
                                "attr 'dtype'; NodeDef: node p; Op<name=Placeholder;")
    ref = 'node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT_REF } } }'
    assert "must not have reference type value of float_ref" in _findings(ref)[0].message
    # a placeholder value ($T) is not checked; an attr the OpDef lacks is ignored, as in TF;
    # a '_'-attr never counts; a defaulted attr may be absent
    ok = ('node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } '
          'attr { key: "bogus" value { i: 1 } } attr { key: "_x" value { i: 1 } } }\n'
          'node { name: "q" op: "Identity" input: "p" input: "^p" attr { key: "T" value { placeholder: "T" } } }')
    assert _findings(ok) == []


def test_first_finding_is_tfs_import_order():
    # TF imports in topological order, lowest GraphDef index first among ready nodes:
    # 'late' (index 0) waits for 'mid' (index 3), so 'early' (index 1) fails first
    assert [f.node for f in _findings(ORDER)] == ["early", "late"]


ORDER = ('node { name: "late" op: "Identity" input: "mid" }\n'
         'node { name: "early" op: "Placeholder" }\n'
         + CONST % ("src", "DT_FLOAT", "DT_FLOAT")
         + 'node { name: "mid" op: "Identity" input: "src" attr { key: "T" value { type: DT_FLOAT } } }')


@pytest.mark.tf
def test_tensorflow_names_the_first_node_in_its_import_order():
    tf = pytest.importorskip("tensorflow")
    from google.protobuf import text_format
    gd = text_format.Parse(ORDER, tf.compat.v1.GraphDef())
    with pytest.raises(ValueError, match=r"\{\{node early\}\}"):
        with tf.Graph().as_default():
            tf.compat.v1.import_graph_def(gd, name="")


def test_no_finding_on_the_samples():
    root = Path(__file__).resolve().parent.parent / "samples"
    run = invoke(["check", str(root), "--select", "PL007"])
    assert run.codes() == [], run.stdout


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(CASES))
def test_tensorflow_refuses_the_issue_cases_in_the_same_words(name):
    tf = pytest.importorskip("tensorflow")
    from google.protobuf import text_format
    gd = text_format.Parse((DATA / name).read_text(), tf.compat.v1.GraphDef())
    with pytest.raises(ValueError) as info:
        with tf.Graph().as_default():
            tf.compat.v1.import_graph_def(gd, name="")
    node, message = CASES[name]
    tf_text = " ".join(str(info.value).replace("{{node ", "node ").replace("}}", "").split())
    assert f"node {node.rsplit('/', 1)[-1] if name.startswith('function') else node}" in tf_text
    assert " ".join(message.split()) in tf_text


def test_colocation_lists_do_not_split_the_memo_and_other_attrs_do():
    """The verdict memo is keyed by a node's attrs without ``_class`` (no check reads it):
    nodes that differ only in their colocation list share one judgement, and a node whose
    other attrs differ is still judged on its own (its missing attr found)."""
    from placelint.model.nodedef_validation import _attrs_key
    gd = _text_graph("""
node { name: "a" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "b" op: "Identity" input: "y" device: "/cpu:0"
       attr { key: "_class" value { list { s: "loc:@y" s: "loc:@z" } } }
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "c" op: "Identity" input: "y" attr { key: "T" value { type: DT_INT32 } } }
""")
    info = get_opdb().op("Identity")
    keys = [_attrs_key(info, nd.attr, info.signature(nd.attr)) for nd in gd.node]
    assert keys[0] == keys[1] != keys[2]
    findings = _findings("""
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "ok" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "_class" value { list { s: "loc:@x" } } } }
node { name: "bad" op: "Identity" input: "x"
       attr { key: "_class" value { list { s: "loc:@x" } } } }
""")
    assert [(f.node, f.kind) for f in findings] == [("bad", "missing-attr")]


def test_the_builder_skips_passing_nodes_and_finds_what_the_one_pass_finds():
    """``build_graph`` hands the validation only the nodes that may fail (the others pass
    by their typing and edges): the findings are the standalone pass's, including an
    edge from a node that passed unchecked, a duplicate of one (not checked again), and
    an input from a node defined later."""
    from placelint.model.build import build_graph

    text = """
      node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
      node { name: "i1" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } }
             attr { key: "_class" value { list { s: "loc:@x" } } } }
      node { name: "i2" op: "Identity" input: "i1" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "bad" op: "Identity" input: "i2" attr { key: "T" value { type: DT_INT32 } } }
      node { name: "i1" op: "Identity" input: "x" attr { key: "T" value { type: DT_INT64 } } }
      node { name: "i2" op: "Identity" input: "x" attr { key: "T" value { type: DT_INT64 } } }
      node { name: "late" op: "Identity" input: "later" attr { key: "T" value { type: DT_INT32 } } }
      node { name: "later" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "two" op: "Identity" input: "x" input: "x"
             attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { } } } }
      node { name: "read" op: "Identity" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "rbad" op: "Identity" input: "v" attr { key: "T" value { type: DT_INT32 } } }
    """
    alone = [(f.node, f.kind, f.message) for f in _findings(text)]
    assert [(n, k) for n, k, _ in alone] == [("bad", "input-type"), ("late", "input-type"),
                                             ("two", "input-count"), ("rbad", "input-type")]
    result = build_graph(_text_graph(text))
    pl007 = [(d.node, d.message) for d in result.diagnostics if d.code == "PL007"]
    assert [n for n, _ in pl007] == ["bad", "late", "two", "rbad"]
    assert all(m in d for (_, _, m), (_, d) in zip(alone, pl007))
    assert result.graph.invalid_nodes == {"bad": "input-type", "late": "input-type",
                                          "two": "input-count", "rbad": "input-type"}


def test_function_body_nodes_share_a_judgement_per_set_of_attrs():
    """A called function's body nodes are judged once per (op, attrs as wire bytes):
    nodes with equal attrs under other names and inputs (non-ASCII, over 127 bytes)
    share it, a node whose attr is a placeholder is not checked, and each node's inputs
    are still matched on their own."""
    from google.protobuf import text_format

    from placelint.model.function_validation import check_function
    from placelint.proto import FunctionDef

    long = "n" * 200
    fdef = text_format.Parse(f"""
signature {{ name: "f" input_arg {{ name: "a" type: DT_FLOAT }}
             input_arg {{ name: "s" type: DT_STRING }} }}
node_def {{ name: "ok" op: "Relu" input: "a" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}
node_def {{ name: "\u00e9t\u00e9" op: "Relu" input: "s" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}
node_def {{ name: "{long}" op: "Relu" input: "s" attr {{ key: "T" value {{ type: DT_FLOAT }} }} }}
node_def {{ name: "free" op: "Relu" input: "s" attr {{ key: "T" value {{ placeholder: "T" }} }} }}
""", FunctionDef())
    typings: dict = {}
    found = check_function(fdef, get_opdb(), {}, typings)
    assert found == [(name, "input features[0] expected type float != string, the type of s[0]")
                     for name in ("\u00e9t\u00e9", long)]
    assert sum(isinstance(key[1], bytes) for key in typings) == 2   # T float; the placeholder


def test_a_node_after_a_functional_if_keeps_its_own_typing():
    """The typing ``add`` hands to the import-time validation is the node's own, not that
    of the last node of a branch it attached: an Identity after an ``If`` whose branch
    holds an Identity of the same attrs was judged with the If's verdict (a false
    'expected inputs bool, float do not match 1 inputs specified')."""
    from placelint.model.build import build_graph
    from placelint.proto import GraphDef
    from tests.test_build_early_alias import identity_function

    FLOAT, BOOL = 1, 10
    gd = GraphDef()
    identity_function(gd, "f", "a")
    for name, dtype in (("c", BOOL), ("x", FLOAT)):
        gd.node.add(name=name, op="Placeholder").attr["dtype"].type = dtype
    cond = gd.node.add(name="if", op="If", input=["c", "x"])
    cond.attr["Tcond"].type = BOOL
    cond.attr["Tin"].list.type.append(FLOAT)
    cond.attr["Tout"].list.type.append(FLOAT)
    cond.attr["then_branch"].func.name = "f"
    cond.attr["else_branch"].func.name = "f"
    after = gd.node.add(name="after", op="Identity", input=["x"])
    after.attr["T"].type = FLOAT
    result = build_graph(gd)
    assert result.diagnostics == [] and result.graph.invalid_nodes == {}
