"""A function call marked for XLA or TPU compilation is one node of the graph: TensorFlow
neither inlines nor lowers it (lower_functional_ops.cc ``MarkedForXlaCompilation``,
``MarkedForTpuCompilation``), and XLA compiles its body for the call's device. The
differential suite checks the same against TensorFlow's own partition graphs
(``tests/differential/savedmodels_tf.py``, ``JIT_SPECS``)."""

from __future__ import annotations

import pytest

from placelint.model.build import build_graph
from placelint.model.expand import compilation_mark
from placelint.proto import AttrValue, GraphDef

FLOAT = 1


def _graph(**marks: AttrValue) -> GraphDef:
    """x -> call of f (Relu of its input, then Neg) -> out, the call with attrs ``marks``."""
    gd = GraphDef()
    x = gd.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = FLOAT
    call = gd.node.add(name="call", op="StatefulPartitionedCall", input=["x"])
    call.attr["f"].func.name = "f"
    call.attr["Tin"].list.type.append(FLOAT)
    call.attr["Tout"].list.type.append(FLOAT)
    for key, value in marks.items():
        call.attr[key].CopyFrom(value)
    gd.node.add(name="out", op="Identity", input=["call"]).attr["T"].type = FLOAT
    f = gd.library.function.add()
    f.signature.name = "f"
    f.signature.input_arg.add(name="a", type=FLOAT)
    f.signature.output_arg.add(name="b", type=FLOAT)
    relu = f.node_def.add(name="relu", op="Relu", input=["a"])
    relu.attr["T"].type = FLOAT
    f.node_def.add(name="neg", op="Neg", input=["relu:features:0"]).attr["T"].type = FLOAT
    f.ret["b"] = "neg:y:0"
    return gd


@pytest.mark.parametrize("marks, mark", [
    ({"_XlaMustCompile": AttrValue(b=True)}, "_XlaMustCompile"),
    ({"_xla_compile_id": AttrValue(s=b"cluster_0")}, "_xla_compile_id"),
    ({"_tpu_replicate": AttrValue(s=b"cluster")}, "_tpu_replicate"),
    ({"_XlaMustCompile": AttrValue(b=False), "_xla_compile_id": AttrValue(s=b"c")},
     "_xla_compile_id"),
])
def test_a_compiled_call_stays_one_node(marks, mark):
    gd = _graph(**marks)
    assert compilation_mark(gd.node[1].attr) == mark
    built = build_graph(gd)
    g = built.graph
    assert list(g.nodes) == ["x", "call", "out"]
    call = g["call"]
    assert call.op == "StatefulPartitionedCall" and call.output_dtypes == [FLOAT]
    assert [(e.src, e.src_slot) for e in call.in_edges] == [("x", 0)]
    assert [(e.src, e.src_slot) for e in g["out"].in_edges] == [("call", 0)]
    assert built.diagnostics == []


@pytest.mark.parametrize("marks", [
    {},
    {"_XlaMustCompile": AttrValue(b=False)},
    {"_xla_compile_id": AttrValue(s=b"")},
    # (the wrong kind of value: TensorFlow's attr look-up fails, so the call is inlined)
    {"_XlaMustCompile": AttrValue(s=b"true")},
    {"_tpu_replicate": AttrValue(b=True)},
])
def test_an_unmarked_call_is_expanded(marks):
    gd = _graph(**marks)
    assert compilation_mark(gd.node[1].attr) is None
    g = build_graph(gd).graph
    assert "call" not in g.nodes
    assert {"call/relu", "call/neg"} <= set(g.nodes)
    assert [(e.src, e.src_slot) for e in g["call/relu"].in_edges] == [("call/a", 0)]


def test_the_parallelism_report_says_it_leaves_compiled_work_out():
    from placelint.analyses.parallelism import analyze_parallelism

    def xla_notes(gd):
        report = analyze_parallelism(build_graph(gd).graph)
        return [n for n in report.notes if "compiled by XLA" in n]

    assert xla_notes(_graph(_XlaMustCompile=AttrValue(b=True))) == [
        "1 call(s) of functions compiled by XLA (jit_compile=True): each runs its function as "
        "one kernel, whose work is not estimated here (the figures leave it out)"]
    assert xla_notes(_graph()) == []
    # (a TPU cluster is not XLA's launch: no note)
    assert xla_notes(_graph(_tpu_replicate=AttrValue(s=b"cluster"))) == []
