"""Static shape inference (placelint.analyses.shape_inference).

The hand-built cases assert what TensorFlow's shape functions give (tensorflow/core/ops);
the `tf`-marked tests compare with TensorFlow's own `_output_shapes` on real graphs.
"""

from __future__ import annotations

import itertools

import time

import pytest
from graphdefs import (BOOL, FLOAT, INT32, INT64, RESOURCE, Shape, Type, const, graph, graph_def, op,
                       placeholder)

from placelint.analyses.shape_inference import ShapeInfo, broadcast, infer_shapes
from placelint.model.build import build_graph
from placelint.model.graph import Edge, Graph, Node


def shapes_of(*nodes):
    g = graph(*nodes)
    return g, infer_shapes(g)


# --------------------------------------------------------------------------- sources


def test_placeholder_const_and_recorded_shapes():
    g, s = shapes_of(placeholder("x", (2, -1)), placeholder("u", None), const("c", [[1, 2, 3]]))
    assert s.shape("x", 0) == (2, -1)
    assert s.shape("u", 0) is None
    assert s.shape("c", 0) == (1, 3) and s.value("c") == (1, 2, 3)
    assert s.dtype("x", 0) == FLOAT and s.dtype("c", 0) == INT32
    assert s.nbytes("c", 0) == 12 and s.nbytes("x", 0) is None and s.nbytes("u", 0) is None
    # Node objects and names both work; out-of-range slots are unknown
    assert s.shape(g["x"], 0) == (2, -1) and s.shape("x", 5) is None and s.shape("nope", 0) is None


def test_const_int_val_repeats_last_value_and_int64():
    _, s = shapes_of(const("a", [7, 7, 7, 7], content=False), const("b", [1, 2, 3], dtype=INT64))
    assert s.value("a") == (7, 7, 7, 7)
    assert s.value("b") == (1, 2, 3) and s.nbytes("b", 0) == 24


def test_variables_and_resource_handles():
    _, s = shapes_of(
        op("v", "VariableV2", dtype=Type(FLOAT), shape=Shape((3, 4))),
        op("vr", "Identity", ["v"]),
        op("h", "VarHandleOp", dtype=Type(FLOAT), shape=Shape((5, 6))),
        op("hid", "Identity", ["h"], T=Type(RESOURCE)),
        op("r", "ReadVariableOp", ["hid"], dtype=Type(FLOAT)),
    )
    assert s.shape("v", 0) == (3, 4) and s.dtype("v", 0) == FLOAT  # ref type reported as base
    assert s.nbytes("vr", 0) == 48
    assert s.shape("h", 0) == ()           # the handle itself is a scalar
    assert s.shape("r", 0) == (5, 6) and s.nbytes("r", 0) == 120


def test_huge_dims_do_not_overflow():
    _, s = shapes_of(placeholder("x", (2**31, 2**31)), op("y", "Relu", ["x"]))
    assert s.nbytes("y", 0) == 2**62 * 4


# --------------------------------------------------------------------------- op shape functions


@pytest.mark.parametrize("ta, tb, a, b, out", [
    (False, False, (2, 3), (3, 5), (2, 5)),
    (True, False, (3, 2), (3, 5), (2, 5)),
    (False, True, (2, 3), (5, 3), (2, 5)),
    (True, True, (3, -1), (5, 3), (-1, 5)),
])
def test_matmul(ta, tb, a, b, out):
    _, s = shapes_of(placeholder("a", a), placeholder("b", b),
                     op("m", "MatMul", ["a", "b"], transpose_a=ta, transpose_b=tb))
    assert s.shape("m", 0) == out


@pytest.mark.parametrize("op_type, a, b, adj_x, adj_y, out", [
    ("BatchMatMulV2", (4, 1, 2, 3), (5, 3, 7), False, False, (4, 5, 2, 7)),
    ("BatchMatMulV2", (6, 3, 2), (6, 7, 3), True, True, (6, 2, 7)),
    ("BatchMatMul", (6, 2, 3), (6, 3, 7), False, False, (6, 2, 7)),
    ("BatchMatMulV3", (-1, 2, 3), (1, 3, 4), False, False, (-1, 2, 4)),
])
def test_batch_matmul(op_type, a, b, adj_x, adj_y, out):
    extra = {"Ta": Type(FLOAT), "Tb": Type(FLOAT), "Tout": Type(FLOAT)} if op_type == "BatchMatMulV3" else {}
    _, s = shapes_of(placeholder("a", a), placeholder("b", b),
                     op("m", op_type, ["a", "b"], adj_x=adj_x, adj_y=adj_y, **extra))
    assert s.shape("m", 0) == out


@pytest.mark.parametrize("x, f, kw, out", [
    ((1, 224, 224, 3), (7, 7, 3, 64), dict(strides=[1, 2, 2, 1], padding="SAME"), (1, 112, 112, 64)),
    ((1, 224, 224, 3), (7, 7, 3, 64), dict(strides=[1, 2, 2, 1], padding="VALID"), (1, 109, 109, 64)),
    ((2, 3, 32, 32), (3, 3, 3, 8), dict(strides=[1, 1, 1, 1], padding="VALID", data_format="NCHW",
                                        dilations=[1, 1, 2, 2]), (2, 8, 28, 28)),
    ((1, 10, 10, 4), (3, 3, 4, 6), dict(strides=[1, 1, 1, 1], padding="EXPLICIT",
                                        explicit_paddings=[0, 0, 1, 2, 0, 0, 0, 0]), (1, 11, 8, 6)),
    ((-1, 28, 28, 1), (5, 5, 1, 32), dict(strides=[1, 1, 1, 1], padding="SAME"), (-1, 28, 28, 32)),
])
def test_conv2d(x, f, kw, out):
    _, s = shapes_of(placeholder("x", x), placeholder("f", f), op("c", "Conv2D", ["x", "f"], **kw))
    assert s.shape("c", 0) == out


def test_depthwise_conv_and_pools_and_bias():
    _, s = shapes_of(
        placeholder("x", (2, 17, 17, 8)), placeholder("f", (3, 3, 8, 2)), placeholder("b", (16,)),
        op("d", "DepthwiseConv2dNative", ["x", "f"], strides=[1, 2, 2, 1], padding="SAME"),
        op("ba", "BiasAdd", ["d", "b"]),
        op("r", "Relu6", ["ba"]),
        op("mp", "MaxPool", ["r"], ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="VALID"),
        op("ap", "AvgPool", ["r"], ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME"),
    )
    assert s.shape("d", 0) == (2, 9, 9, 16)
    assert s.shape("ba", 0) == (2, 9, 9, 16) and s.shape("r", 0) == (2, 9, 9, 16)
    assert s.shape("mp", 0) == (2, 4, 4, 16)
    assert s.shape("ap", 0) == (2, 5, 5, 16)


@pytest.mark.parametrize("a, b, out", [
    ((2, 3), (3,), (2, 3)), ((4, 1, 5), (3, 1), (4, 3, 5)), ((-1, 3), (1, 3), (-1, 3)),
    ((-1, 3), (7, 1), (7, 3)), ((2, 3), (4,), None), ((), (5, 5), (5, 5)),
])
def test_broadcasting(a, b, out):
    assert broadcast(a, b) == out
    _, s = shapes_of(placeholder("a", a), placeholder("b", b), op("y", "AddV2", ["a", "b"]),
                     op("m", "Maximum", ["a", "b"]))
    assert s.shape("y", 0) == out and s.shape("m", 0) == out


def test_unary_cast_addn_and_comparison_dtype():
    _, s = shapes_of(placeholder("a", (4, 5)), placeholder("b", (4, -1)),
                     op("t", "Tanh", ["a"]), op("c", "Cast", ["a"], SrcT=Type(FLOAT), DstT=Type(INT64)),
                     op("n", "AddN", ["a", "b", "t"], N=3), op("g", "Greater", ["a", "b"]))
    assert s.shape("t", 0) == (4, 5)
    assert s.shape("c", 0) == (4, 5) and s.dtype("c", 0) == INT64 and s.nbytes("c", 0) == 160
    assert s.shape("n", 0) == (4, 5)
    assert s.shape("g", 0) == (4, 5) and s.dtype("g", 0) == BOOL


def test_reshape_with_minus_one_and_unknown_input():
    _, s = shapes_of(placeholder("x", (2, 3, 4)), placeholder("u", (-1, 3, 4)),
                     const("sh", [-1, 6]), const("sh2", [4, -1, 3]),
                     op("r", "Reshape", ["x", "sh"]), op("r2", "Reshape", ["x", "sh2"]),
                     op("ru", "Reshape", ["u", "sh"]))
    assert s.shape("r", 0) == (4, 6)
    assert s.shape("r2", 0) == (4, 2, 3)
    assert s.shape("ru", 0) == (-1, 6)


def test_reshape_from_computed_shape_tensor():
    # tf.reshape(x, [tf.shape(x)[0], -1]) with an unknown batch: Shape -> StridedSlice -> Pack
    _, s = shapes_of(
        placeholder("x", (-1, 4, 5)), const("b", [0]), const("e", [1]), const("st", [1]),
        const("m1", -1, shape=()),
        op("sh", "Shape", ["x"], out_type=Type(INT32)),
        op("ss", "StridedSlice", ["sh", "b", "e", "st"], Index=Type(INT32), T=Type(INT32),
           shrink_axis_mask=1),
        op("pk", "Pack", ["ss", "m1"], N=2, T=Type(INT32)),
        op("r", "Reshape", ["x", "pk"]),
    )
    assert s.value("sh") == (None, 4, 5)
    assert s.value("pk") == (None, -1)
    assert s.shape("r", 0) == (-1, -1)   # batch unknown, so the -1 cannot be resolved either


def test_concat_transpose_reductions_squeeze_expand():
    _, s = shapes_of(
        placeholder("a", (2, 3, 5)), placeholder("b", (2, 4, 5)), const("ax", 1, shape=()),
        const("perm", [2, 0, 1]), const("red", [0, -1]), const("e0", -1, shape=()),
        op("c", "ConcatV2", ["a", "b", "ax"], N=2),
        op("t", "Transpose", ["c", "perm"]),
        op("s1", "Sum", ["c", "red"], keep_dims=False),
        op("s2", "Mean", ["c", "red"], keep_dims=True),
        op("am", "ArgMax", ["c", "ax"], output_type=Type(INT64)),
        op("ed", "ExpandDims", ["s1", "e0"]),
        op("sq", "Squeeze", ["ed"]),
        op("sq2", "Squeeze", ["s2"], squeeze_dims=[0]),
    )
    assert s.shape("c", 0) == (2, 7, 5)
    assert s.shape("t", 0) == (5, 2, 7)
    assert s.shape("s1", 0) == (7,) and s.shape("s2", 0) == (1, 7, 1)
    assert s.shape("am", 0) == (2, 5)
    assert s.shape("ed", 0) == (7, 1) and s.shape("sq", 0) == (7,)
    assert s.shape("sq2", 0) == (7, 1)


def test_shape_size_rank_values():
    _, s = shapes_of(placeholder("x", (3, 4)), op("sh", "Shape", ["x"], out_type=Type(INT32)),
                     op("sz", "Size", ["x"], out_type=Type(INT32)), op("rk", "Rank", ["x"]))
    assert s.shape("sh", 0) == (2,) and s.value("sh") == (3, 4)
    assert s.shape("sz", 0) == () and s.value("sz") == (12,)
    assert s.shape("rk", 0) == () and s.value("rk") == (2,)


def test_gather_slice_pad_tile_split_onehot():
    _, s = shapes_of(
        placeholder("p", (10, 8, 3)), placeholder("i", (4, 2), dtype=INT32), const("ax", 1, shape=()),
        const("pads", [[1, 1], [0, 2], [0, 0]]), const("mult", [2, 1, 3]),
        const("beg", [0, 2, 0]), const("size", [5, -1, 2]), const("depth", 6, shape=()),
        const("sa", 0, shape=()), const("on", 1.0, dtype=FLOAT, shape=()), const("off", 0.0, dtype=FLOAT, shape=()),
        op("g", "GatherV2", ["p", "i", "ax"], Tparams=Type(FLOAT), Tindices=Type(INT32), Taxis=Type(INT32)),
        op("pd", "Pad", ["p", "pads"]),
        op("tl", "Tile", ["p", "mult"]),
        op("sl", "Slice", ["p", "beg", "size"], Index=Type(INT32)),
        op("sp", "Split", ["sa", "p"], num_split=2),
        op("oh", "OneHot", ["i", "depth", "on", "off"], TI=Type(INT32)),
    )
    assert s.shape("g", 0) == (10, 4, 2, 3)
    assert s.shape("pd", 0) == (12, 10, 3)
    assert s.shape("tl", 0) == (20, 8, 9)
    assert s.shape("sl", 0) == (5, 6, 2)
    assert s.shape("sp", 0) == (5, 8, 3) and s.shape("sp", 1) == (5, 8, 3)
    assert s.shape("oh", 0) == (4, 2, 6)


def test_unknown_stays_unknown():
    _, s = shapes_of(placeholder("x", (2, 3)), placeholder("sh", (2,), dtype=INT32),
                     op("r", "Reshape", ["x", "sh"]),
                     op("py", "PyFunc", ["x"], Tin=[Type(FLOAT)], Tout=[Type(FLOAT)], token="f"),
                     op("y", "Relu", ["py"]))
    assert s.shape("r", 0) == (-1, -1)     # rank from the shape tensor's length only
    assert s.shape("py", 0) is None and s.shape("y", 0) is None and s.nbytes("y", 0) is None


def test_recorded_shape_wins_and_inference_fills_its_unknown_dims():
    x = placeholder("x", (2, 3))
    y = op("y", "Relu", ["x"])
    y.attr["_output_shapes"].list.shape.add().dim.add(size=-1)
    y.attr["_output_shapes"].list.shape[0].dim.add(size=3)
    _, s = shapes_of(x, y)
    assert s.shape("y", 0) == (2, 3)


def test_function_call_args_and_retvals_pass_shapes():
    from placelint.proto import FunctionDef
    gd = graph_def(placeholder("x", (3, 7)), op("call", "StatefulPartitionedCall", ["x"],
                                                 Tin=[Type(FLOAT)], Tout=[Type(FLOAT)]),
                   op("out", "Neg", ["call"]))
    f = FunctionDef()
    f.signature.name = "body"
    f.signature.input_arg.add(name="a", type=FLOAT)
    f.signature.output_arg.add(name="r", type=FLOAT)
    f.node_def.add().CopyFrom(op("sq", "Square", ["a"]))
    f.ret["r"] = "sq:y:0"
    gd.library.function.add().CopyFrom(f)
    gd.node[1].attr["f"].func.name = "body"
    g = build_graph(gd).graph
    s = infer_shapes(g)
    assert s.shape("call/sq", 0) == (3, 7)
    assert s.shape("out", 0) == (3, 7)


def _concat_loop(*extra):
    """A TF1 while loop whose body is x = concat(x, x) (its first dim varies), with
    ``extra`` nodes before it."""
    return [
        placeholder("x", (2, 3)), const("ax", 0, shape=()), *extra,
        op("enter", "Enter", ["x"], frame_name="w"),
        op("merge", "Merge", ["enter", "next"], N=2),
        op("cond", "Placeholder", dtype=Type(BOOL), shape=Shape(())),
        op("switch", "Switch", ["merge", "cond"]),
        op("body", "ConcatV2", ["switch:1", "switch:1", "ax"], N=2),
        op("next", "NextIteration", ["body"]),
        op("exit", "Exit", ["switch"]),
    ]


def test_tf1_while_loop_relaxes_loop_variant_dims():
    """x = concat(x, x) inside a loop: the Merge (and everything after) loses that dim."""
    _, s = shapes_of(*_concat_loop())
    assert s.shape("enter", 0) == (2, 3)
    assert s.shape("merge", 0) == (-1, 3)
    assert s.shape("exit", 0) == (-1, 3)
    assert s.shape("body", 0) == (-1, 3)


def test_loop_invariant_shape_is_kept():
    nodes = [
        placeholder("x", (2, 3)), op("enter", "Enter", ["x"], frame_name="w"),
        op("merge", "Merge", ["enter", "next"], N=2),
        op("cond", "Placeholder", dtype=Type(BOOL), shape=Shape(())),
        op("switch", "Switch", ["merge", "cond"]), op("body", "Tanh", ["switch:1"]),
        op("next", "NextIteration", ["body"]), op("exit", "Exit", ["switch"]),
    ]
    _, s = shapes_of(*nodes)
    assert s.shape("merge", 0) == (2, 3) and s.shape("exit", 0) == (2, 3)
    assert s.shape("merge", 1) == ()


def _chain(n: int) -> Graph:
    g = Graph("chain")
    g.add_node(Node("x", "Placeholder", output_dtypes=[FLOAT], output_shapes=[(8, 8)]))
    prev = "x"
    for i in range(n):
        name = f"n{i}"
        g.add_node(Node(name, "Relu" if i % 2 else "Tanh", output_dtypes=[FLOAT]))
        g.add_edge(Edge(prev, 0, name, 0, FLOAT))
        prev = name
    return g


def test_linear_time_on_a_long_chain():
    # CPU time of this process, not wall time: other work on a shared machine must not
    # decide a complexity check (4x the nodes must cost well under 16x).
    small, big = _chain(20_000), _chain(80_000)
    t0 = time.process_time()
    infer_shapes(small)
    t1 = time.process_time()
    s = infer_shapes(big)
    t2 = time.process_time()
    assert s.shape("n79999", 0) == (8, 8)
    assert (t2 - t1) < 8 * (t1 - t0) + 0.5   # 4x the nodes, well under quadratic


# --------------------------------------------------------------------------- against TensorFlow


def _compare_with_tf(graph_def_with_shapes) -> tuple[int, list]:
    """Infer on the graph with its recorded shapes removed; compare with TF's."""
    from placelint.proto import GraphDef
    g = build_graph(GraphDef.FromString(graph_def_with_shapes.SerializeToString())).graph
    recorded = {n.name: n.output_shapes for n in g}
    for n in g:
        if n.op not in ("Const", "Placeholder", "PlaceholderWithDefault"):
            n.output_shapes = None
    info: ShapeInfo = infer_shapes(g)
    compared, wrong = 0, []
    for name, shapes in recorded.items():
        for slot, tf_shape in enumerate(shapes or []):
            compared += 1
            if info.shape(name, slot) != tf_shape:
                wrong.append((name, g[name].op, slot, tf_shape, info.shape(name, slot)))
    return compared, wrong


@pytest.mark.tf
def test_matches_tensorflow_on_a_tf1_graph_with_many_ops():
    import tensorflow as tf
    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 32, 32, 3], name="x")
        w = tf1.get_variable("w", [3, 3, 3, 16], use_resource=True)
        y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
        y = tf.nn.relu(tf.nn.bias_add(y, tf.zeros([16])))
        y = tf.nn.max_pool2d(y, 3, 2, "VALID")
        dw = tf1.get_variable("dw", [3, 3, 16, 2], use_resource=True)
        y = tf.nn.depthwise_conv2d(y, dw, [1, 1, 1, 1], "SAME", dilations=[2, 2])
        flat = tf.reshape(y, [-1, 7 * 7 * 32])
        a = tf.matmul(flat, tf.ones([7 * 7 * 32, 10]))
        b = tf.matmul(tf.ones([10, 4]), a, transpose_a=True, transpose_b=True)
        c = tf.concat([a, a * 2.0], axis=1)
        d = tf.transpose(tf.reshape(c, [-1, 4, 5]), [2, 0, 1])
        e = tf.reduce_sum(d, axis=[0], keepdims=True) + tf.reduce_max(d, axis=-1, keepdims=False)[None]
        bm = tf.matmul(tf.ones([3, 1, 4, 5]), tf.ones([6, 5, 2]))
        f = tf.gather(tf.ones([10, 8]), tf.constant([[1, 2], [3, 4]]), axis=1)
        s = tf.squeeze(tf.expand_dims(tf.reduce_mean(a, 1), -1), [1])
        p = tf.pad(tf.ones([2, 3]), [[1, 0], [2, 2]])
        t = tf.tile(tf.ones([2, 3]), [3, 1])
        sl = tf.slice(tf.ones([6, 7]), [1, 2], [3, -1])
        parts = tf.split(tf.ones([6, 4]), 3, axis=0)
        oh = tf.one_hot(tf.constant([1, 2, 3]), 5)
        n = tf.add_n([tf.ones([2, 2]), tf.zeros([2, 2])])
        i = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.concat([v, v], 0)),
                          [tf.constant(0), tf.ones([1, 2])],
                          shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 2])])
        for v in [b, e, bm, f, s, p, t, sl, oh, n, *parts, *i]:
            tf.identity(v)
    compared, wrong = _compare_with_tf(g.as_graph_def(add_shapes=True))
    assert compared > 100
    assert wrong == []


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("app", ["InceptionV3", "ResNet50", "MobileNetV2"])
def test_matches_tensorflow_on_keras_applications(app):
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    from tfmodels import build_keras_app
    model, shape = build_keras_app(app)
    fn = tf.function(lambda x: model(x, training=False), autograph=False)
    frozen = convert_variables_to_constants_v2(fn.get_concrete_function(tf.TensorSpec([1, *shape], tf.float32)))
    compared, wrong = _compare_with_tf(frozen.graph.as_graph_def(add_shapes=True))
    assert compared > 1000
    assert wrong == []


def test_matrix_diag_v3_main_diagonal_and_linalg_pass_through():
    _, s = shapes_of(
        placeholder("d", (3, 5)), const("k", 0, shape=()), const("r", -1, shape=()), const("c", -1, shape=()),
        const("pad", 0.0, dtype=FLOAT, shape=()),
        op("m", "MatrixDiagV3", ["d", "k", "r", "c", "pad"], align="RIGHT_LEFT"),
        op("inv", "MatrixInverse", ["m"]))
    assert s.shape("m", 0) == (3, 5, 5) and s.shape("inv", 0) == (3, 5, 5)


# --------------------------------------------------------------------------- graph positions


def _facts(g, s):
    """Every answer ShapeInfo gives about ``g``'s nodes, by name."""
    return {n.name: (s.output_shapes(n.name), [s.tensor(n.name, k) for k in range(3)],
                     [s.value(n.name, k) for k in range(2)], s.io_key(n), s.input_shapes(n),
                     [s.dtype_nbytes(n.name, k) for k in range(2)])
            for n in g}


def test_answers_do_not_depend_on_where_nodes_sit_in_the_graph():
    # The inference indexes lists by graph position and walks TF's processing order: a
    # GraphDef listing consumers before their inputs (processing order is then not graph
    # order) must give the same answers as the same graph in topological order.
    nodes = [
        placeholder("x", (4, -1)), const("s", [2, -1]), op("r", "Reshape", ["x", "s"]),
        op("h", "VarHandleOp", dtype=Type(FLOAT), shape=Shape((5, 6))),
        op("hid", "Identity", ["h"], T=Type(RESOURCE)),
        op("v", "ReadVariableOp", ["hid"], dtype=Type(FLOAT)),
        op("m", "MatMul", ["v", "v"], transpose_b=True),
        op("sh", "Shape", ["m"]), op("i", "Identity", ["sh"], T=Type(INT32)),
        op("y", "Relu", ["m"]), op("z", "Identity", ["y", "^i"]),
    ]
    forward = graph(*nodes)
    backward = graph(*reversed(nodes))
    assert not backward.edges_point_forward()
    want = _facts(forward, infer_shapes(forward))
    assert want["v"][1][0] == ((5, 6), FLOAT) and want["i"][2][0] == (5, 5)
    assert _facts(backward, infer_shapes(backward)) == want


def test_names_the_graph_lacks_are_unknown():
    g = Graph("missing")
    g.add_node(Node("x", "Placeholder", output_dtypes=[FLOAT], output_shapes=[(3,)]))
    g.add_node(Node("y", "Relu", output_dtypes=[FLOAT]))
    g.add_edge(Edge("x", 0, "y", 0, FLOAT))
    s = infer_shapes(g)
    assert s.shape("y") == (3,) and s.io_key(g["y"]) == (((0, (3,), FLOAT),), ((3,),), (FLOAT,))
    # a node of another graph (a step's _Arg) reading a name this one lacks
    other = Node("z", "AddV2", in_edges=[Edge("gone", 0, "z", 0, FLOAT), Edge("y", 0, "z", 1, FLOAT)])
    assert s.input_shapes(other) == [None, (3,)]
    assert s.io_key(other) == (((0, None, None), (1, (3,), FLOAT)), None, None)
    assert s.shape("gone") is None and s.dtype("gone") is None and s.output_shapes("gone") == []
    assert s.tensor("gone") == (None, None) and s.dtype_nbytes("gone") == (None, None)


def test_io_keys_by_edge_index_equal_io_key_by_name():
    # io_keys reads the inputs' positions from the graph's edge index when the shapes are
    # of that graph, and asks io_key node by node otherwise: the same keys either way,
    # control inputs listed before data inputs included.
    import numpy as np

    nodes = [
        placeholder("x", (4, -1)), const("s", [2, -1]), op("r", "Reshape", ["^x", "x", "s"]),
        op("h", "VarHandleOp", dtype=Type(FLOAT), shape=Shape((5, 6))),
        op("v", "ReadVariableOp", ["h"], dtype=Type(FLOAT)),
        op("m", "MatMul", ["v", "v", "^s"], transpose_b=True), op("y", "AddN", ["m", "m", "m"], N=3),
    ]
    for g in (graph(*nodes), graph(*reversed(nodes))):
        s = infer_shapes(g)
        everything = list(g.nodes.values())
        at = np.array([5, 2, 6, 0, 2], dtype=np.int64) % len(everything)
        picked = [everything[i] for i in at.tolist()]
        want = [s.io_key(n) for n in picked]
        assert s.io_keys(g, at, picked) == want
        other = infer_shapes(graph(*nodes))     # the shapes of another graph: by name
        assert other.positions is not g.positions() and other.io_keys(g, at, picked) == want
        assert s.io_keys(g, at[:0], []) == []
        # either way each distinct key is one object (callers group the nodes by identity)
        for keys in (s.io_keys(g, at, picked), other.io_keys(g, at, picked)):
            assert keys[1] is keys[4] and len({id(k) for k in keys}) == len(set(keys)) == 4
    assert any(key[0] for key in want)


def test_variable_shapes_memoized_by_attr_object_and_by_bytes():
    """Variables sharing their ``shape`` attr object, others with an equal one of their
    own, and another shape: each gets its own (``_variable``'s two memos)."""
    _, s = shapes_of(
        op("a", "VariableV2", dtype=Type(FLOAT), shape=Shape((3, 4))),
        op("b", "VariableV2", dtype=Type(FLOAT), shape=Shape((3, 4))),
        op("c", "VariableV2", dtype=Type(FLOAT), shape=Shape((5,))),
        op("d", "VariableV2", dtype=Type(FLOAT), shape=Shape((3, 4)), container="x"),
        op("e", "VariableV2", dtype=Type(INT32), shape=Shape((5,))),
        op("f", "VariableV2", dtype=Type(FLOAT), shape=Shape(None)),
    )
    assert [s.shape(n, 0) for n in "abcdef"] == [(3, 4), (3, 4), (5,), (3, 4), (5,), None]
    assert s.dtype("e", 0) == INT32


def test_constants_keep_their_values_over_the_loop_passes():
    """A relaxed loop takes a second pass: an integer Const keeps its value there, a float
    Const has none in any pass (its first pass skips dropping what it cannot have)."""
    _, s = shapes_of(*_concat_loop(const("half", 0.5, dtype=FLOAT, shape=())))
    assert s.shape("merge", 0) == (-1, 3)       # (relaxed: a second pass ran)
    assert s.value("ax") == (0,) and s.value("half") is None
    assert s.shape("half", 0) == () and s.dtype("half", 0) == FLOAT


def test_io_keys_tell_apart_what_io_key_does():
    """``io_keys`` numbers each input's (slot, shape, dtype) and each output signature
    before making keys: nodes that differ only in an input's slot, an input's shape, an
    input's dtype, an output or an input from a missing node still get distinct keys, and
    equal nodes one shared key."""
    import numpy as np

    nodes = [
        placeholder("a", (2, 3)), placeholder("b", (2, 3)), placeholder("c", (3, 3)),
        placeholder("i", (2, 3), dtype=INT32),
        op("ab", "AddV2", ["a", "b"]), op("ba", "AddV2", ["b", "a"]), op("ac", "AddV2", ["a", "c"]),
        op("ai", "AddV2", ["a", "i"]), op("aa", "AddV2", ["a", "^b", "a"]),
        op("am", "AddV2", ["a", "missing"]), op("ma", "AddV2", ["missing", "a"]),
        op("id", "Identity", ["a"]), op("sq", "Square", ["a"]), op("sc", "Square", ["c"]),
    ]
    g = graph(*nodes)
    s = infer_shapes(g)
    everything = list(g.nodes.values())
    at = np.arange(4, len(everything), dtype=np.int64)
    picked = [everything[i] for i in at.tolist()]
    keys = s.io_keys(g, at, picked)
    assert keys == [s.io_key(n) for n in picked]
    for x, y in itertools.combinations(range(len(keys)), 2):
        assert (keys[x] is keys[y]) == (keys[x] == keys[y])
    assert keys[0] is keys[1] and keys[0] is keys[4]    # ab, ba, aa: equal shapes and dtypes
    assert len(set(keys)) == len({id(k) for k in keys}) >= 6


@pytest.mark.parametrize("others", [0, 2000])
def test_io_keys_read_each_tensor_once_by_a_table_or_numbered_anew(others):
    """A tensor read by many inputs (both outputs of an Unpack, read by several ops, some
    twice) is read once; with 2000 more nodes than the inputs warrant, the tensors are
    numbered anew instead of by a table over every (node, slot): equal keys either way."""
    import numpy as np

    nodes = [placeholder(f"p{i}", (1,)) for i in range(others)] + [
        placeholder("x", (2, 3)), op("u", "Unpack", ["x"], num=2, axis=0, T=Type(FLOAT)),
        placeholder("z", (5,)), op("a", "AddV2", ["u:1", "u:1"]), op("b", "AddV2", ["u", "u:1"]),
        op("c", "AddV2", ["u:1", "z"]), op("d", "AddV2", ["z", "u:1"]), op("e", "AddV2", ["z", "z"])]
    g = graph(*nodes)
    s = infer_shapes(g)
    everything = list(g.nodes.values())
    at = np.arange(others + 3, len(everything), dtype=np.int64)
    picked = [everything[i] for i in at.tolist()]
    assert [n.name for n in picked] == list("abcde")
    keys = s.io_keys(g, at, picked)
    assert keys == [s.io_key(n) for n in picked] and keys[0][0][0][1] == (3,)
    assert keys[0] is keys[1]       # both outputs of the Unpack are of shape (3,)
    assert len({id(k) for k in keys}) == len(set(keys)) == 4
