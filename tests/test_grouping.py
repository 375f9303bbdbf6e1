"""One cause, one finding: each rule's grouping key, its message and its advice, on small
graphs (no TensorFlow; the TF-judged cases are in test_report_tf.py and tests/differential)."""

from __future__ import annotations

from google.protobuf import text_format
from graphdefs import FLOAT, graph_def, op, placeholder
from test_transfers import F32, const, unary
from test_transfers import placeholder as text_placeholder

from placelint.api import place_graphdef
from placelint.checks.common import registered_kernels, tf_text
from placelint.diagnostics import Diagnostic, Severity
from placelint.proto import GraphDef

GPU0 = "/device:GPU:0"


def findings(result, code):
    return [d for d in result.diagnostics if d.code == code]


def test_tf_node_markers_read_as_python_shows_them():
    assert tf_text("Could not satisfy ... because the node {{colocation_node a/b}} was colocated") \
        == "Could not satisfy ... because the node a/b was colocated"
    assert tf_text("Cannot colocate nodes {{colocation_node x}} and {{colocation_node y}}: z") \
        == "Cannot colocate nodes x and y: z"
    assert tf_text("{{node n}} was explicitly assigned") == "node n was explicitly assigned"


def _rnn(name: str, device: str):
    return op(name, "CudnnRNN", ["x", "h", "c", "p"], device=device)


def test_gpu_only_kernel_on_the_cpu_lists_the_registered_kernels():
    g = graph_def(*(placeholder(n, (2, 2)) for n in "xhcp"),
                  _rnn("rnn_0/cell", "/device:CPU:0"), _rnn("rnn_1/cell", "/device:CPU:0"),
                  _rnn("rnn_2/cell", "/device:CPU:0"))
    r = place_graphdef(g, devices="CPU:0,GPU:0")
    [d] = findings(r, "PL104")              # one op type, device type and dtype: one finding
    assert d.nodes == ["rnn_0/cell", "rnn_1/cell", "rnn_2/cell"]
    assert d.message == ("no CPU kernel for CudnnRNN with T=float32; TensorFlow has kernels for "
                         "GPU (float32, float64, bfloat16, float16)")
    assert "int32" not in d.fix and "string" not in d.fix
    assert d.fix.startswith("pin it to GPU (the target's device types with a kernel for it)")
    assert d.detail.endswith("Registered kernels:\n" + registered_kernels("CudnnRNN").rstrip("\n"))
    assert "device='GPU'; T in [DT_FLOAT]" in d.detail
    # on a CPU-only target no device type has a kernel: the advice says so
    [d] = findings(place_graphdef(g, devices="CPU=1"), "PL104")
    assert d.fix.startswith("no device of the target has a kernel for CudnnRNN")


def test_unknown_device_groups_per_device_and_says_what_soft_placement_does():
    g = graph_def(placeholder("x", (2, 2)),
                  op("a/m", "MatMul", ["x", "x"], device="/device:GPU:1"),
                  op("a/n", "Relu", ["a/m"], device="/device:GPU:1"),
                  op("b/m", "MatMul", ["x", "x"], device="/gpu:1"),
                  op("c/m", "MatMul", ["x", "x"], device="/job:worker/task:1/device:CPU:0"))
    r = place_graphdef(g, devices="CPU:0,GPU:0")
    got = [(d.message, d.nodes) for d in findings(r, "PL101")]
    assert got == [
        ("explicit device GPU:1 is not on the target; soft placement would put it on GPU:0",
         ["a/m", "a/n", "b/m"]),
        ("explicit device's job /job:worker is not on the target; soft placement cannot place "
         "it either (it keeps the job, replica and task)", ["c/m"])]
    job = findings(r, "PL101")[1]
    assert "Soft placement cannot help" in job.fix and "clear_devices=True" in job.fix
    # under soft placement: the GPU:1 requests are warnings, grouped the same way; the
    # missing job is still an error
    soft = place_graphdef(g, devices="CPU:0,GPU:0", allow_soft_placement=True)
    got = [(d.severity, d.nodes) for d in findings(soft, "PL101")]
    assert got == [(Severity.ERROR, ["c/m"]), (Severity.WARNING, ["a/m", "a/n", "b/m"])]


def test_copies_group_per_device_pair_and_scope_with_plurals():
    nodes = [placeholder("x", (64, 64))]
    for t in range(2):
        for k in range(3):
            nodes.append(op(f"tower_{t}/h{k}", "Relu", ["x"], device="/device:CPU:0"))
            nodes.append(op(f"tower_{t}/g{k}", "Relu", [f"tower_{t}/h{k}"], device="/device:CPU:1"))
    r = place_graphdef(graph_def(*nodes), devices="CPU=2")
    got = [(d.message, d.nodes) for d in findings(r, "PL201")]
    assert got == [
        ("3 tensors copied from CPU:0 to CPU:1 from scope tower_0 every step (48.0 KiB)",
         ["tower_0/h0", "tower_0/h1", "tower_0/h2"]),
        ("3 tensors copied from CPU:0 to CPU:1 from scope tower_1 every step (48.0 KiB)",
         ["tower_1/h0", "tower_1/h1", "tower_1/h2"])]
    assert findings(r, "PL201")[0].related_nodes == ["tower_0/g0", "tower_0/g1", "tower_0/g2"]


def test_host_memory_arguments_are_described_as_host_memory():
    text = (text_placeholder("x", [2, 200], device=GPU0)
            + const("shape", [200], list(range(200)), "DT_INT64", device=GPU0)
            + f'''node {{ name: "rs" op: "Reshape" device: "{GPU0}" input: "x" input: "shape"
                  {F32} attr {{ key: "Tshape" value {{ type: DT_INT64 }} }} }}\n''')
    r = place_graphdef(text_format.Parse(text, GraphDef()), devices="CPU=1,GPU=1")
    [d] = findings(r, "PL201")
    assert d.message.startswith("1 tensor moved to host memory on GPU:0 every step (1.6 KiB)")
    assert "GPU:0 to GPU:0" not in d.message and "device->device" not in d.message


def test_one_variable_copy_is_singular():
    text = ('node { name: "v" op: "VariableV2" device: "/device:CPU:0" attr { key: "dtype" '
            'value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 32 } '
            'dim { size: 32 } } } } }\n'
            + unary("r", "Identity", "v", "/device:CPU:0")
            + unary("u", "Neg", "r", "/device:CPU:1"))
    r = place_graphdef(text_format.Parse(text, GraphDef()), devices="CPU=2")
    [d] = findings(r, "PL202")
    assert "(1 copy, 4.0 KiB per step)" in d.message


def _variable_read_on(var: str, device: str) -> str:
    return ('node { name: "%s" op: "VariableV2" device: "/device:CPU:0" attr { key: "dtype" '
            'value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 32 } '
            '} } } }\n' % var
            + unary(f"{var}/read", "Identity", var, "/device:CPU:0")
            + unary(f"use_{var}", "Neg", f"{var}/read", device))


def test_variables_of_one_device_read_on_the_same_devices_are_one_finding():
    # eleven variables on CPU:0 read on CPU:1, one read on CPU:2: two causes, two findings
    names = [f"v{i}" for i in range(12)]
    text = "".join(_variable_read_on(v, "/device:CPU:2" if v == "v5" else "/device:CPU:1")
                   for v in names)
    r = place_graphdef(text_format.Parse(text, GraphDef()), devices="CPU=3")
    many, one = sorted(findings(r, "PL202"), key=lambda d: -len(d.nodes))
    assert many.message == ("11 variables live on CPU:0 but are read every step on CPU:1 "
                            "(11 copies, 1.4 KiB per step)")
    assert many.nodes == [v for v in names if v != "v5"]
    assert many.related_nodes == sorted(f"use_{v}" for v in names if v != "v5")
    # the detail names each variable's readers, the first ten
    assert "'v0' by use_v0; 'v1' by use_v1;" in many.detail
    assert many.detail.endswith("; and 1 more.")
    assert one.message == ("variable 'v5' lives on CPU:0 but is read every step on CPU:2 "
                           "(1 copy, 128 B per step)")
    assert one.nodes == ["v5"]


def test_nodes_text_names_the_count_the_scopes_and_the_first_nodes():
    d = Diagnostic("PL101", "unknown-device", Severity.ERROR, "m",
                   nodes=["t0/a", "t0/b", "t1/a", "top"])
    assert d.node == "t0/a"
    assert d.nodes_text(2) == "4 nodes in t0, t1: t0/a, t0/b and 2 more"
    assert Diagnostic("PL101", "x", Severity.ERROR, "m", node="n").nodes == ["n"]
    assert Diagnostic("PL101", "x", Severity.ERROR, "m", fix="f").full_message == "m. Fix: f"
    assert FLOAT == 1


def test_loader_findings_that_differ_only_in_the_node_are_one_finding(tmp_path):
    from checkrun import invoke
    calls = "".join(
        f'node {{ name: "call_{i}" op: "PartitionedCall" attr {{ key: "f" value {{ func {{ '
        f'name: "missing_fn" }} }} }} attr {{ key: "Tin" value {{ list {{ }} }} }} '
        f'attr {{ key: "Tout" value {{ list {{ }} }} }} }}\n' for i in range(3))
    (tmp_path / "g.pbtxt").write_text(calls + "versions { producer: 1994 }\n")
    r = invoke(["check", "--isolated", "--no-cache", "--select", "PL004", "--format", "json",
                "g.pbtxt"], cwd=tmp_path)
    import json
    [d] = json.loads(r.stdout)["models"][0]["diagnostics"]
    assert (d["code"], d["nodes"]) == ("PL004", ["call_0", "call_1", "call_2"])
    assert "missing_fn" in d["message"]


def test_invalid_node_defs_of_one_cause_are_one_finding_from_the_first_node(tmp_path):
    """PL007: three ConcatV2 without their attrs are one finding whose first node is where
    TensorFlow's importer stops; the fix is the fix field, not a sentence of the message."""
    import placelint
    text = ('node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } '
            'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }\n'
            + "".join(f'node {{ name: "c{i}" op: "ConcatV2" input: "a" input: "a" input: "a" }}\n'
                      for i in (1, 2, 3)))
    (tmp_path / "g.pbtxt").write_text(text)
    [d] = [d for d in placelint.analyze(tmp_path / "g.pbtxt", devices="CPU=1").findings
           if d.code == "PL007"]
    assert d.nodes == ["c1", "c2", "c3"] and d.node == "c1"
    assert d.message.startswith("NodeDef missing attrs 'T', 'N' from Op<name=ConcatV2;")
    assert d.message.endswith("NodeDef: node c1 (TensorFlow refuses to import the graph)")
    assert d.fix.startswith("add the missing attr(s)")


def test_soft_placed_function_ops_group_per_function_request_and_device(tmp_path):
    """PL108: the ops of one function body that request one missing device and land on one
    device are one finding."""
    import placelint
    const = ('node_def {{ name: "{}" op: "Const" device: "/device:GPU:0" attr {{ key: "dtype" '
             'value {{ type: DT_FLOAT }} }} attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT '
             'tensor_shape {{ }} float_val: 1.0 }} }} }} }} ')
    text = ('node { name: "call" op: "StatefulPartitionedCall" attr { key: "Tin" value { list { } } } '
            'attr { key: "Tout" value { list { type: DT_FLOAT } } } attr { key: "f" value { func { '
            'name: "body" } } } attr { key: "config_proto" value { s: "8\\001" } } }\n'
            'library { function { signature { name: "body" output_arg { name: "out" type: DT_FLOAT } } '
            + const.format("c") + const.format("d")
            + 'ret { key: "out" value: "c:output:0" } } }\n')
    (tmp_path / "g.pbtxt").write_text(text)
    [d] = [d for d in placelint.analyze(tmp_path / "g.pbtxt", devices="CPU:0").findings
           if d.code == "PL108"]
    assert d.nodes == ["call/c", "call/d"]
    assert d.message == ("2 ops in function 'body' request /device:GPU:0, which the target does "
                         "not have; the call's config_proto sets allow_soft_placement, so "
                         "TensorFlow runs them on CPU:0 instead of failing.")


def test_colocation_conflicts_group_per_colocation_group():
    from placelint.proto import AttrValue

    def member(name, device):
        node = op(name, "Relu", ["x"], device=device)
        node.attr["_class"].CopyFrom(AttrValue(list=AttrValue.ListValue(s=[b"loc:@a"])))
        return node
    g = graph_def(placeholder("x", (2, 2)), op("a", "Relu", ["x"], device="/device:CPU:0"),
                  member("b", GPU0), member("c", GPU0))
    [d] = findings(place_graphdef(g, devices="CPU:0,GPU:0"), "PL103")
    assert (d.nodes, d.related_nodes) == (["b", "c"], ["a"])
    assert d.message.startswith("colocation group of a cannot be placed: Cannot colocate nodes "
                                "b and a: Cannot merge devices with incompatible types")
    assert "node node" not in d.message + d.detail and "{{" not in d.detail
