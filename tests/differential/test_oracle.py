"""The oracle's own results are sane: small graphs with a known answer (from placer.cc and
graph_partition.cc rules) give the known devices, errors and transfers; the generated corpus has
the promised mix. These tests need TensorFlow but not placelint."""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import pytest

from .oracle import (
    OraclePool,
    Request,
    TFResult,
    analyse_partitions,
    full_cpu,
    parse_error_nodes,
    parse_placer_log,
    tf_place,
)

CPU0, CPU1, CPU2 = full_cpu(0), full_cpu(1), full_cpu(2)


# ---------------------------------------------------------------------------------------------
# Pure parsing (no TF)


def test_parse_error_nodes_cpp_form() -> None:
    msg = (
        "Cannot assign a device for operation x: {{node x}} was explicitly assigned to "
        "/device:CPU:7 but available devices are [ /job:localhost/replica:0/task:0/device:CPU:0 "
        "]. Make sure the device specification refers to a valid device.\n\t [[x]]"
    )
    nodes, coloc = parse_error_nodes(msg)
    assert nodes == ["x"]
    assert coloc == []


def test_parse_error_nodes_python_form_and_colocation_members() -> None:
    msg = (
        "Graph execution error:\n\nDetected at node 'scope/v' defined at (most recent call "
        "last):\nNode: 'scope/v'\nCannot assign a device for operation scope/v: Could not "
        "satisfy explicit device specification '' because the node node scope/v (defined at "
        "model.py:12)  was colocated with a group of nodes that required incompatible device "
        "'/job:foo'.\nColocation members, user-requested devices, and framework assigned "
        "devices, if any:\n  scope/v (VariableV2) \n  scope/v/Assign (Assign) \n  w (Identity) "
        "/job:foo\n\n\t [[{{node scope/v}}]]"
    )
    nodes, coloc = parse_error_nodes(msg)
    assert nodes[0] == "scope/v"
    assert set(nodes) == {"scope/v"}
    assert coloc == ["scope/v", "scope/v/Assign", "w"]


def test_parse_error_nodes_colocation_pair() -> None:
    msg = (
        "Cannot colocate nodes {{colocation_node w}} and {{colocation_node v}}: Cannot merge "
        "devices with incompatible ids: '/device:CPU:2' and '/device:CPU:1'\n\t [[{{node w}}]]"
    )
    nodes, coloc = parse_error_nodes(msg)
    assert nodes == ["w"]
    assert coloc == ["w", "v"]


def test_parse_placer_log_keeps_first_line_per_node() -> None:
    text = (
        "Device mapping: no known devices.\n"
        f"a/b: (Const): {CPU2}\nc: (Identity): {CPU0}\na/b: (Const): {CPU1}\ngarbage line\n"
    )
    assert parse_placer_log(text) == {"a/b": CPU2, "c": CPU0}


# ---------------------------------------------------------------------------------------------
# Graphs built with TF


@pytest.fixture(scope="module")
def tf() -> Any:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow

    return tensorflow


def graph_bytes(tf: Any, build: Callable[[Any, Any], None], devices: dict[str, str] | None = None,
                classes: dict[str, list[str]] | None = None) -> bytes:
    """Build with tf.compat.v1 ops, then overwrite NodeDef devices / `_class` lists verbatim."""
    g = tf.Graph()
    with g.as_default():
        build(tf, tf.compat.v1)
    gd = g.as_graph_def()
    for n in gd.node:
        if devices and n.name in devices:
            n.device = devices[n.name]
        if classes and n.name in classes:
            del n.attr["_class"].list.s[:]
            n.attr["_class"].list.s.extend(s.encode() for s in classes[n.name])
    names = {n.name for n in gd.node}
    assert not devices or set(devices) <= names, set(devices) - names
    return gd.SerializeToString()


def rnd(tf: Any, name: str, n: int = 4) -> Any:
    """A RandomUniform op called `name` (not a generator: it has a shape input)."""
    return tf.raw_ops.RandomUniform(shape=tf.constant([n], name=f"{name}_shape"),
                                    dtype=tf.float32, seed=1, name=name)


def transfers_by_src(r: TFResult) -> dict[tuple[str, str, str], Any]:
    return {t.key(): t for t in r.model_transfers()}


@pytest.mark.tf
def test_device_count_differs_between_sessions_of_one_process(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/device:CPU:2"):
            a = tf.constant(1.0, name="a")
        tf.identity(a, name="b")

    data = graph_bytes(tf, build)
    first = tf_place(data, n_cpus=3)
    one = tf_place(data, n_cpus=1)
    two = tf_place(data, n_cpus=2)
    again = tf_place(data, n_cpus=3)
    assert first.status == again.status == "placed"
    assert first.placement == again.placement == {"a": CPU2, "b": CPU0}
    assert first.notes == [] and again.notes == []  # session devices == CPU:0..n-1
    for r in (one, two):
        assert r.status == "refused"
        assert r.error is not None and r.error.nodes[0] == "a"
        assert "was explicitly assigned to /device:CPU:2 but available devices are" in (
            r.error.message
        )


@pytest.mark.tf
def test_requests_defaults_and_generator_heuristic(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        big = tf.constant([1.0] * 32, name="big")  # generator, consumers on CPU:1 and CPU:2
        one = tf.constant([2.0] * 32, name="one")  # generator, single consumer on CPU:2
        with tf.device("/device:CPU:1"):
            x = tf.negative(big, name="x")
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:2"):
            y = tf.add(big, one, name="y")
        tf.add(x, y, name="z")  # unconstrained: first device, CPU:0

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    assert r.status == "placed", r
    assert r.placement == {"big": CPU0, "one": CPU2, "x": CPU1, "y": CPU2, "z": CPU0}
    keys = transfers_by_src(r)
    assert set(keys) == {
        ("big:0", CPU0, CPU1),
        ("big:0", CPU0, CPU2),
        ("x:0", CPU1, CPU0),
        ("y:0", CPU2, CPU0),
    }
    assert keys[("big:0", CPU0, CPU2)].consumers == ("y",)
    assert keys[("x:0", CPU1, CPU0)].dtype == "DT_FLOAT"
    assert r.transfers_complete and not r.unobserved


@pytest.mark.tf
def test_small_constant_with_consumers_on_two_devices_is_replicated(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        c = tf.constant([1.0] * 16, name="c")  # 16 elements: ReplicateConstantsPass kMaxSize
        with tf.device("/cpu:1"):
            tf.negative(c, name="n1")
        with tf.device("/cpu:2"):
            tf.negative(c, name="n2")

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    assert r.status == "placed"
    assert r.placement["c"] == CPU0  # what the Placer decided
    assert r.replicated_constants == {"c": [CPU1, CPU2]}  # copies made after placement
    assert r.model_transfers() == []
    assert "c" not in r.partition_placement and not r.unobserved


@pytest.mark.tf
def test_one_transfer_per_destination_device_with_all_its_consumers(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            t = rnd(tf, "t")
        with tf.device("/cpu:2"):
            tf.negative(t, name="a")
            tf.square(t, name="b")
        tf.abs(t, name="c")

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    keys = transfers_by_src(r)
    assert set(keys) == {("t:0", CPU1, CPU2), ("t:0", CPU1, CPU0)}
    assert keys[("t:0", CPU1, CPU2)].consumers == ("a", "b")
    assert keys[("t:0", CPU1, CPU0)].consumers == ("c",)


@pytest.mark.tf
def test_cross_device_control_edge_is_a_dummy_const_transfer(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            a = rnd(tf, "a")
        with tf.device("/cpu:2"), tf.control_dependencies([a]):
            rnd(tf, "b")

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    ctrl = [t for t in r.model_transfers() if t.control]
    assert len(ctrl) == 1
    t = ctrl[0]
    assert (t.src, t.send_device, t.recv_device, t.kind, t.dtype) == (
        "a", CPU1, CPU2, "control", "DT_FLOAT")
    # Python attaches the control input to the first op of the scope (b_shape) only
    assert t.consumers == ("b_shape",)


@pytest.mark.tf
def test_identity_heuristic_follows_input(tf: Any) -> None:
    # placer.cc MatchIdentityOperation: an Identity with no request, exactly one in-edge and one
    # out-edge (control edges count), whose input and output *request* the same device string,
    # is placed with its input (like Shape/Size/Rank), not on the first candidate.
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:2"):
            a = rnd(tf, "a")
        i_same = tf.identity(a, name="i_same")
        i_diff = tf.identity(a, name="i_diff")
        i_two = tf.identity(a, name="i_two")
        with tf.device("/cpu:2"):
            tf.negative(i_same, name="out_same")
            tf.negative(i_two, name="out_two_a")
            tf.negative(i_two, name="out_two_b")
        with tf.device("/cpu:1"):
            tf.negative(i_diff, name="out_diff")
        x = rnd(tf, "x")  # requests nothing, placed on CPU:1 through its colocation group
        i_free = tf.identity(x, name="i_free")
        tf.negative(i_free, name="out_free")  # requests nothing either: '' == ''

    data = graph_bytes(tf, build, devices={"x": ""}, classes={"x": ["loc:@out_diff"]})
    r = tf_place(data, n_cpus=3)
    assert r.status == "placed"
    assert r.placement["i_same"] == CPU2  # neighbours request '/device:CPU:2' both
    assert r.placement["i_diff"] == CPU0  # '/device:CPU:2' vs '/device:CPU:1': first candidate
    assert r.placement["i_two"] == CPU0  # two out-edges
    assert r.placement["x"] == CPU1
    assert r.placement["i_free"] == CPU1 and r.placement["out_free"] == CPU0


@pytest.mark.tf
def test_assign_pinned_elsewhere_follows_its_variable_value_stays(tf: Any) -> None:
    # The conv1_2/Assign_3/value pattern: the Assign is created under another device scope.
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            v = tf1.Variable(tf.zeros([4]), use_resource=False, name="v")
        with tf.device("/cpu:2"):
            tf1.assign(v, [1.0, 2.0, 3.0, 4.0], name="Assign_3")

    data = graph_bytes(tf, build)
    r = tf_place(data, n_cpus=3)
    assert r.status == "placed"
    assert r.placement["v"] == r.placement["Assign_3"] == CPU1
    assert r.placement["Assign_3/value"] == CPU2
    t = transfers_by_src(r)[("Assign_3/value:0", CPU2, CPU1)]
    assert t.consumers == ("Assign_3",)


@pytest.mark.tf
def test_ref_edge_silently_overrides_consumer_request(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            v = tf1.Variable(tf.zeros([4]), use_resource=False, name="v")
        tf1.assign_add(v, [1.0] * 4, name="inc")

    # no `_class` and an explicit request elsewhere: no error, the Assign joins the variable
    data = graph_bytes(tf, build, devices={"inc": "/device:CPU:2"}, classes={"inc": []})
    r = tf_place(data, n_cpus=3)
    assert r.status == "placed"
    assert r.placement["inc"] == CPU1


@pytest.mark.tf
def test_resource_consumer_request_is_overridden_by_resource_device(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:2"):
            h = tf.raw_ops.VarHandleOp(dtype=tf.float32, shape=[4], shared_name="h", name="h")
        tf.raw_ops.AssignVariableOp(resource=h, value=tf.constant([1.0] * 4, name="val"),
                                    name="init")
        with tf.device("/cpu:1"):
            rd = tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32, name="read")
        with tf.device("/cpu:1"):
            tf.negative(rd, name="neg")

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    assert r.status == "placed"
    assert r.placement["h"] == r.placement["init"] == r.placement["read"] == CPU2
    assert r.placement["val"] == CPU2  # generator following its only consumer
    assert set(transfers_by_src(r)) == {("read:0", CPU2, CPU1)}


@pytest.mark.tf
def test_metadata_op_follows_its_input(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:2"):
            x = rnd(tf, "x")
        s = tf.raw_ops.Shape(input=x, name="shape")
        tf.strings.as_string(s, name="str")

    r = tf_place(graph_bytes(tf, build), n_cpus=3)
    assert r.placement["shape"] == CPU2 and r.placement["str"] == CPU0
    t = transfers_by_src(r)[("shape:0", CPU2, CPU0)]
    assert t.dtype == "DT_INT32" and t.consumers == ("str",)


@pytest.mark.tf
@pytest.mark.parametrize("device", ["/device:CPU:7", "/device:GPU:0", "/gpu:1", "/cpu:3"])
def test_unknown_device_refused_strict_moved_to_cpu0_soft(tf: Any, device: str) -> None:
    def build(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            tf.negative(tf.constant([1.0] * 20, name="c"), name="n")

    data = graph_bytes(tf, build, devices={"c": device})
    strict = tf_place(data, n_cpus=3)
    assert strict.status == "refused"
    assert strict.error is not None
    assert strict.error.stage == "placement"
    assert strict.error.nodes[0] == "c"
    assert f"{{{{node c}}}} was explicitly assigned to {device} but available devices" in (
        strict.error.message)
    soft = tf_place(data, n_cpus=3, allow_soft_placement=True)
    assert soft.status == "placed"
    # soft placement drops type and id: any CPU; then the generator heuristic still applies
    assert soft.placement == {"c": CPU1, "n": CPU1}
    # ... unless its consumers sit on several devices: first candidate
    def build2(tf: Any, tf1: Any) -> None:
        c = tf.constant([1.0] * 20, name="c")
        with tf.device("/cpu:1"):
            tf.negative(c, name="n")
        with tf.device("/cpu:2"):
            tf.negative(c, name="m")

    soft2 = tf_place(graph_bytes(tf, build2, devices={"c": device}), 3, True)
    assert soft2.placement == {"c": CPU0, "n": CPU1, "m": CPU2}


@pytest.mark.tf
def test_foreign_job_refused_even_with_soft_placement(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        tf.negative(tf.constant([1.0] * 4, name="c"), name="n")

    r = tf_place(graph_bytes(tf, build, devices={"n": "/job:worker"}), 3, True)
    assert r.status == "refused" and r.error is not None and r.error.nodes[0] == "n"


@pytest.mark.tf
def test_malformed_device_raw_and_python_import(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        tf.negative(tf.constant([1.0] * 4, name="c"), name="n")

    # 'CPU:2' is what tf.device("CPU:2") accepts, but the C++ parser wants a leading '/'
    data = graph_bytes(tf, build, devices={"n": "CPU:2"})
    raw = tf_place(data, 3)
    assert raw.status == "refused" and raw.error is not None
    assert raw.error.message.startswith("Malformed device specification 'CPU:2' in node:")
    assert raw.error.nodes[0] == "n"
    py = tf_place(data, 3, import_mode="python")  # Python canonicalises it first
    assert py.status == "placed" and py.placement["n"] == CPU2
    garbage = tf_place(graph_bytes(tf, build, devices={"n": "garbage"}), 3, import_mode="python")
    assert garbage.status == "refused" and garbage.error is not None
    assert (garbage.error.stage, garbage.error.cls, garbage.error.nodes) == (
        "import", "ValueError", ["n"])


@pytest.mark.tf
def test_colocation_conflict_raw_refused_python_import_resolves_it(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        v = tf1.Variable(1.0, use_resource=False, name="v")
        k = tf.constant(2.0, name="k")
        with tf1.colocate_with(v.op):
            tf.identity(k, name="w")

    data = graph_bytes(tf, build, devices={"v": "/device:CPU:2", "w": "/device:CPU:1"})
    raw = tf_place(data, 3)
    assert raw.status == "refused" and raw.error is not None
    assert raw.error.message.startswith("Cannot colocate nodes {{colocation_node w}} and "
                                        "{{colocation_node v}}")
    assert raw.error.nodes[0] == "w"
    assert set(raw.error.colocation_nodes) == {"w", "v"}
    assert {"v", "w", "v/Assign", "v/read"} <= set(raw.error.colocation_group)
    assert "k" not in raw.error.colocation_group
    soft = tf_place(data, 3, allow_soft_placement=True)
    assert soft.status == "placed" and soft.placement["w"] == soft.placement["v"]
    py = tf_place(data, 3, import_mode="python")  # copies v's device onto w before placing
    assert py.status == "placed" and py.placement["w"] == py.placement["v"] == CPU2


@pytest.mark.tf
def test_v1_while_loop_with_cross_device_body(tf: Any) -> None:
    from tensorflow.python.ops import control_flow_util

    def build(tf: Any, tf1: Any) -> None:
        def body(i: Any, x: Any) -> Any:
            with tf.device("/cpu:1"):
                y = tf.multiply(x, 0.5, name="half")
            return i + 1, y

        saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = False
        try:
            tf1.while_loop(lambda i, x: i < 3, body,
                           [tf.constant(0, name="i0"), tf.constant([1.0] * 4, name="x0")],
                           name="loop")
        finally:
            control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved

    data = graph_bytes(tf, build)
    r = tf_place(data, 3)
    assert r.status == "placed" and r.transfers_complete
    ops = {n.op for n in __import__("tensorflow").compat.v1.GraphDef.FromString(data).node}
    assert {"Enter", "Merge", "Switch", "Exit", "NextIteration", "LoopCond"} <= ops
    assert r.placement["loop/half"] == CPU1 and r.placement["loop/Merge_1"] == CPU0
    keys = transfers_by_src(r)
    assert ("loop/Identity_1:0", CPU0, CPU1) in keys
    assert ("loop/half:0", CPU1, CPU0) in keys
    loop = [t for t in r.transfers if t.kind == "loop"]
    assert loop and all(t.src_node == "loop/LoopCond" or t.src_node not in r.placement
                        for t in loop)


@pytest.mark.tf
def test_transfers_to_the_client_are_marked_retval(tf: Any) -> None:
    from tensorflow.core.protobuf import rewriter_config_pb2

    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        with tf.device("/cpu:2"):
            a = rnd(tf, "a")
        with tf.device("/cpu:1"):
            b = tf.negative(a, name="b")
    config = tf1.ConfigProto(device_count={"CPU": 3})
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.rewrite_options.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    md = tf1.RunMetadata()
    with tf1.Session(graph=g, config=config) as s:
        s.run([a, b], options=tf1.RunOptions(output_partition_graphs=True), run_metadata=md)
    _, transfers, _, _ = analyse_partitions(md.partition_graphs, {"a", "a_shape", "b"})
    kinds = {(t.src, t.recv_device, t.kind) for t in transfers}
    assert kinds == {
        ("a:0", CPU0, "retval"),  # a on CPU:2 handed to the client on CPU:0
        ("b:0", CPU0, "retval"),
        ("a:0", CPU1, "data"),  # the model's own edge a -> b
    }


@pytest.mark.tf
def test_graph_that_cannot_run_is_unrunnable_with_placement(tf: Any) -> None:
    def build(tf: Any, tf1: Any) -> None:
        q = tf1.FIFOQueue(2, tf.float32, name="q")
        with tf.device("/cpu:1"):
            tf.negative(q.dequeue(name="deq"), name="n")

    r = tf_place(graph_bytes(tf, build), 3, timeout_ms=500)
    assert r.status == "unrunnable"
    assert "DeadlineExceeded" in r.unrunnable_reason
    # the Placer still answered; the queue follows its consumer through the resource edge
    assert r.placement["n"] == r.placement["deq"] == r.placement["q"] == CPU1


@pytest.mark.tf
def test_pool_survives_garbage_and_hangs(tf: Any) -> None:
    def hang(tf: Any, tf1: Any) -> None:
        tf1.FIFOQueue(2, tf.float32, name="q").dequeue(name="deq")

    def fine(tf: Any, tf1: Any) -> None:
        with tf.device("/cpu:1"):
            tf.negative(tf.constant([1.0] * 4, name="c"), name="n")

    reqs = [Request(b"\xff\xff\xff\xff"), Request(graph_bytes(tf, hang)),
            Request(graph_bytes(tf, fine), n_cpus=2)]
    res = OraclePool(workers=2, timeout_s=12).run(reqs)
    assert [r.status for r in res] == ["unrunnable", "unrunnable", "placed"]
    assert "parse" in res[0].unrunnable_reason or "does not parse" in res[0].unrunnable_reason
    assert "timeout" in res[1].unrunnable_reason
    assert res[2].placement == {"c": CPU1, "n": CPU1}


# ---------------------------------------------------------------------------------------------
# The generated corpus


@pytest.mark.tf
def test_generator_is_deterministic() -> None:
    from .generate import generate_cases

    a = generate_cases(seed=7, count=6)
    b = generate_cases(seed=7, count=6)
    c = generate_cases(seed=8, count=6)
    digest = [hashlib.sha256(x.graph_def_bytes).hexdigest() for x in a]
    assert digest == [hashlib.sha256(x.graph_def_bytes).hexdigest() for x in b]
    assert digest != [hashlib.sha256(x.graph_def_bytes).hexdigest() for x in c]
    assert [x.name for x in a] == [x.name for x in b]


@pytest.mark.tf
def test_corpus_mix(corpus: Any) -> None:
    from tensorflow.core.framework import graph_pb2

    summary = corpus.summary()
    assert summary["cases"] >= 300
    assert summary.get("unrunnable", 0) == 0, [
        (c.name, r.unrunnable_reason) for c, r in corpus.pairs() if r.status == "unrunnable"]
    refused = summary.get("refused", 0)
    assert 0.15 * len(corpus) <= refused <= 0.4 * len(corpus), summary
    families = {c.family for c in corpus.cases}
    assert {"clean", "unknown", "soft_unknown", "malformed", "class_conflict", "while",
            "ref_request_clash"} <= families
    assert {c.n_cpus for c in corpus.cases} == {1, 3}
    assert {c.allow_soft_placement for c in corpus.cases} == {False, True}
    ops: set[str] = set()
    for case, res in corpus.pairs():
        gd = graph_pb2.GraphDef.FromString(case.graph_def_bytes)
        names = {n.name for n in gd.node}
        ops |= {n.op for n in gd.node}
        if res.status == "placed":
            assert set(res.placement) == names, case.name
            assert res.transfers_complete, case.name
            assert not [n for n in res.notes if "Placer log says" in n], case.name
        else:
            assert res.error is not None and res.error.nodes, case.name
            assert res.error.nodes[0] in names, case.name
    assert {"VariableV2", "Assign", "AssignAdd", "ScatterAdd", "VarHandleOp", "ReadVariableOp",
            "AssignVariableOp", "AssignAddVariableOp", "Shape", "Size", "Rank", "AsString",
            "StringJoin", "RandomUniform", "Const", "NoOp", "Enter", "Exit", "LoopCond",
            "PlaceholderWithDefault", "Split"} <= ops
    placed = [r for r in corpus.results if r.status == "placed"]
    assert sum(1 for r in placed if r.replicated_constants) >= 10
    assert sum(1 for r in placed if any(t.control for t in r.model_transfers())) >= 20
    assert sum(1 for r in placed if any(t.kind == "loop" for t in r.transfers)) >= 3
    assert sum(1 for r in placed if r.allow_soft_placement and r.n_cpus == 3) >= 30
    messages = " ".join(r.error.message for r in corpus.results if r.error is not None)
    for form in ("was explicitly assigned to", "Malformed device specification",
                 "Cannot colocate nodes"):
        assert form in messages, form
