"""Inter-op width, costs, intra-op splitting, recommendations, rules PL301-PL303 and the
``placelint parallelism`` command."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest
from checkrun import SAMPLES
from graphdefs import FLOAT, INT32, Shape, Type, const, graph, op, placeholder
from hypothesis import given, settings
from hypothesis import strategies as st

from placelint.analyses.antichain import antichain_width, max_antichain
from placelint.analyses import cost as cost_mod
from placelint.analyses.cost import op_cost
from placelint.analyses.intra_op import intra_op_use
from placelint.analyses.op_tables import cost_table, executor_table, intra_op_table
from placelint.analyses.parallelism import analyze_parallelism
from placelint.analyses.shape_inference import infer_shapes
from placelint.loaders import ModelRef
from placelint.loaders.read import GRAPHDEF
from placelint.model.graph import Edge, Graph, Node
from placelint.pipeline import analyze
from placelint.settings import Settings

# --------------------------------------------------------------------------- width: exactness


def _reach(n, edges):
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return {v: nx.descendants(g, v) for v in range(n)}


def _brute_width(n, edges, members):
    reach = _reach(n, edges)
    mem = [v for v in range(n) if members[v]]
    for r in range(len(mem), 0, -1):
        for combo in itertools.combinations(mem, r):
            if all(b not in reach[a] and a not in reach[b] for a, b in itertools.combinations(combo, 2)):
                return r
    return 0


def _is_antichain(n, edges, nodes):
    reach = _reach(n, edges)
    return all(b not in reach[a] and a not in reach[b] for a, b in itertools.combinations(nodes, 2))


@st.composite
def dags(draw, max_nodes=9):
    n = draw(st.integers(1, max_nodes))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    edges = [p for p in pairs if draw(st.booleans())] if pairs else []
    perm = draw(st.permutations(range(n)))      # node indices not in topological order
    edges = [(perm[u], perm[v]) for u, v in edges]
    members = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return n, edges, members


@settings(max_examples=400, deadline=None)
@given(dags())
def test_width_equals_brute_force_and_the_antichain_is_one(case):
    n, edges, members = case
    src = np.array([u for u, _ in edges], dtype=np.int64)
    dst = np.array([v for _, v in edges], dtype=np.int64)
    result = max_antichain(n, src, dst, np.array(members))
    assert result.width == _brute_width(n, edges, members)
    chosen = result.nodes.tolist()
    assert len(chosen) == result.width and len(set(chosen)) == len(chosen)
    assert all(members[v] for v in chosen)
    assert _is_antichain(n, edges, chosen)


def _dilworth_by_matching(n, edges, members):
    """Independent check: width = |members| - maximum matching in the transitive closure
    restricted to the members (Dilworth + König), via networkx."""
    reach = _reach(n, edges)
    mem = [v for v in range(n) if members[v]]
    b = nx.Graph()
    b.add_nodes_from((("l", v) for v in mem), bipartite=0)
    b.add_nodes_from((("r", v) for v in mem), bipartite=1)
    b.add_edges_from((("l", u), ("r", v)) for u in mem for v in mem if v in reach[u])
    matching = nx.bipartite.maximum_matching(b, top_nodes=[("l", v) for v in mem])
    return len(mem) - len(matching) // 2


@settings(max_examples=40, deadline=None)
@given(st.integers(20, 120), st.floats(0.01, 0.2), st.floats(0.2, 1.0), st.integers(0, 10**6))
def test_width_matches_dilworth_by_matching_on_bigger_dags(n, p, q, seed):
    rng = np.random.default_rng(seed)
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p * 3 / (v - u + 2)]
    members = rng.random(n) < q
    src = np.array([u for u, _ in edges], dtype=np.int64)
    dst = np.array([v for _, v in edges], dtype=np.int64)
    result = max_antichain(n, src, dst, members)
    assert result.width == _dilworth_by_matching(n, edges, members)
    assert _is_antichain(n, edges, result.nodes.tolist())


@settings(max_examples=60, deadline=None)
@given(dags(max_nodes=8), st.lists(st.sampled_from(["MatMul", "Identity", "NoOp", "Relu"]),
                                  min_size=8, max_size=8))
def test_graph_width_counts_expensive_ops_with_paths_through_cheap_ones(case, ops):
    """Identity and NoOp run inline: they do not count, but paths through them do.
    (No Consts here: their consumers would be constant-folded, tested separately.)"""
    n, edges, _ = case
    g = Graph("random")
    for v in range(n):
        g.add_node(Node(f"n{v}", ops[v], output_dtypes=[FLOAT]))
    for k, (u, v) in enumerate(edges):
        g.add_edge(Edge(f"n{u}", 0, f"n{v}", k, FLOAT))
    report = analyze_parallelism(g, cores=2)
    expensive = [g[f"n{v}"].op in ("MatMul", "Relu") for v in range(n)]
    assert report.width == _brute_width(n, edges, expensive)
    assert report.width_all_ops == _brute_width(n, edges, [True] * n)
    index = {f"n{v}": v for v in range(n)}
    chosen = [index[name] for name in report.antichain]
    assert len(chosen) == report.width and _is_antichain(n, edges, chosen)


# --------------------------------------------------------------------------- known shapes

def _w(name, shape):
    return const(name, np.zeros(shape, dtype=np.float32), dtype=FLOAT)


def conv(name, x, kh, kw, cin, cout, stride=1, padding="SAME"):
    return [_w(f"{name}/w", (kh, kw, cin, cout)),
            op(f"{name}/conv", "Conv2D", [x, f"{name}/w"], strides=[1, stride, stride, 1], padding=padding),
            op(f"{name}/relu", "Relu", [f"{name}/conv"])]


def inception_block():
    """Four towers on one input, concatenated: 1x1 | 1x1-3x3 | 1x1-5x5 | maxpool-1x1."""
    nodes = [placeholder("x", (8, 35, 35, 192)), const("mixed/axis", 3, shape=())]
    nodes += conv("mixed/branch_0/1x1", "x", 1, 1, 192, 64)
    nodes += conv("mixed/branch_1/1x1", "x", 1, 1, 192, 48)
    nodes += conv("mixed/branch_1/5x5", "mixed/branch_1/1x1/relu", 5, 5, 48, 64)
    nodes += conv("mixed/branch_2/1x1", "x", 1, 1, 192, 64)
    nodes += conv("mixed/branch_2/3x3a", "mixed/branch_2/1x1/relu", 3, 3, 64, 96)
    nodes += conv("mixed/branch_2/3x3b", "mixed/branch_2/3x3a/relu", 3, 3, 96, 96)
    nodes.append(op("mixed/branch_3/pool", "AvgPool", ["x"], ksize=[1, 3, 3, 1], strides=[1, 1, 1, 1],
                    padding="SAME"))
    nodes += conv("mixed/branch_3/1x1", "mixed/branch_3/pool", 1, 1, 192, 32)
    nodes.append(op("mixed/concat", "ConcatV2", ["mixed/branch_0/1x1/relu", "mixed/branch_1/5x5/relu",
                                                  "mixed/branch_2/3x3b/relu", "mixed/branch_3/1x1/relu",
                                                  "mixed/axis"], N=4))
    return graph(*nodes)


def test_inception_block_has_four_towers_side_by_side():
    r = analyze_parallelism(inception_block(), cores=4)
    assert r.width == 4
    assert len(r.branches) == 4
    assert sorted({b.scope.split("/")[1] for b in r.branches}) == [f"branch_{i}" for i in range(4)]
    # every conv is 2*N*Ho*Wo*Kh*Kw*Cin*Cout
    assert r.critical_path[:2] == ["mixed/branch_2/1x1/conv", "mixed/branch_2/1x1/relu"]
    assert r.critical_path[-1] == "mixed/concat"
    n_hw = 8 * 35 * 35
    convs = 2 * n_hw * (192 * 64 + 192 * 48 + 25 * 48 * 64 + 192 * 64 + 9 * 64 * 96 + 9 * 96 * 96 + 192 * 32)
    conv_rows = {row.op: row for row in r.intra_ops}
    assert conv_rows["Conv2D"].work == convs and conv_rows["Conv2D"].count == 7
    assert conv_rows["Conv2D"].splitting == 7 and conv_rows["Conv2D"].mode == "contraction"
    assert r.work > r.span > 0 and 1 < r.average_parallelism < 4
    assert r.folded_ops == 0 and r.expensive_ops == 7 + 7 + 1 + 1   # convs, relus, pool, concat


def resnet_block():
    """ResNet v1 bottleneck with a projection shortcut, inference batch norm."""
    nodes = [placeholder("x", (4, 56, 56, 256))]

    def bn(name, x, c):
        return [_w(f"{name}/{k}", (c,)) for k in ("gamma", "beta", "mean", "var")] + [
            op(f"{name}/bn", "FusedBatchNormV3", [x] + [f"{name}/{k}" for k in ("gamma", "beta", "mean", "var")],
               U=Type(FLOAT), is_training=False, epsilon=AttrEps())]

    nodes += [_w("block/branch2a/w", (1, 1, 256, 128)),
              op("block/branch2a/conv", "Conv2D", ["x", "block/branch2a/w"], strides=[1, 2, 2, 1], padding="VALID")]
    nodes += bn("block/branch2a", "block/branch2a/conv", 128)
    nodes.append(op("block/branch2a/relu", "Relu", ["block/branch2a/bn"]))
    nodes += [_w("block/branch2b/w", (3, 3, 128, 128)),
              op("block/branch2b/conv", "Conv2D", ["block/branch2a/relu", "block/branch2b/w"],
                 strides=[1, 1, 1, 1], padding="SAME")]
    nodes += bn("block/branch2b", "block/branch2b/conv", 128)
    nodes.append(op("block/branch2b/relu", "Relu", ["block/branch2b/bn"]))
    nodes += [_w("block/branch2c/w", (1, 1, 128, 512)),
              op("block/branch2c/conv", "Conv2D", ["block/branch2b/relu", "block/branch2c/w"],
                 strides=[1, 1, 1, 1], padding="SAME")]
    nodes += bn("block/branch2c", "block/branch2c/conv", 512)
    nodes += [_w("block/shortcut/w", (1, 1, 256, 512)),
              op("block/shortcut/conv", "Conv2D", ["x", "block/shortcut/w"], strides=[1, 2, 2, 1], padding="VALID")]
    nodes += bn("block/shortcut", "block/shortcut/conv", 512)
    nodes += [op("block/add", "AddV2", ["block/branch2c/bn", "block/shortcut/bn"]),
              op("block/out", "Relu", ["block/add"])]
    return graph(*nodes)


def AttrEps():
    from placelint.proto import AttrValue
    return AttrValue(f=1e-3)


def test_resnet_block_with_projection_shortcut():
    g = resnet_block()
    r = analyze_parallelism(g, cores=8)
    assert r.width == 2
    assert sorted(b.scope for b in r.branches)[0].startswith("block/branch2")
    assert any(b.scope == "block/shortcut" for b in r.branches)
    s = infer_shapes(g)
    assert s.shape("block/add", 0) == (4, 28, 28, 512)
    # the critical path is the main branch: it does more work than the shortcut
    assert r.critical_path[0] == "block/branch2a/conv" and r.critical_path[-1] == "block/out"
    main = sum(op_cost(g[n], s).ops for n in r.critical_path)
    assert r.span == main
    shortcut = op_cost(g["block/shortcut/conv"], s).ops + op_cost(g["block/shortcut/bn"], s).ops
    assert r.work == main + shortcut
    assert op_cost(g["block/shortcut/conv"], s).ops == 2 * 4 * 28 * 28 * 256 * 512
    assert op_cost(g["block/shortcut/bn"], s).ops == 2 * 4 * 28 * 28 * 512   # inference batch norm
    # average parallelism is over estimated times: the shortcut adds ~half the main branch
    assert r.average_parallelism == pytest.approx(r.work_us / r.span_us)
    assert 1.4 < r.average_parallelism < 1.6
    assert r.useful_width == 2


def chain(layers=4, size=256, batch=64):
    nodes = [placeholder("x", (batch, size)), placeholder("w", (size, size))]
    prev = "x"
    for i in range(layers):
        nodes += [op(f"layer{i}/matmul", "MatMul", [prev, "w"]), op(f"layer{i}/relu", "Relu", [f"layer{i}/matmul"])]
        prev = f"layer{i}/relu"
    return graph(*nodes)


def test_chain_is_serial_with_exact_work():
    r = analyze_parallelism(chain(), cores=8)
    assert r.width == 1 and r.width_all_ops == 2   # the two placeholders
    assert r.average_parallelism == 1.0
    assert r.work == r.span == 4 * (2 * 64 * 256 * 256 + 64 * 256)
    assert r.critical_path == [f"layer{i}/{k}" for i in range(4) for k in ("matmul", "relu")]
    rec = r.recommendation
    # 64x256x256 float MatMuls fit in L2 (384 KiB): TF's oneDNN kernel runs them on one
    # thread, so nothing gains from threads
    assert (rec.inter_op, rec.intra_op, rec.cores) == (1, 1, 8)
    assert "useful width 1" in rec.reason and "intra-op threads would sit idle" in rec.reason
    big = analyze_parallelism(chain(size=1024, batch=256), cores=8).recommendation
    assert (big.inter_op, big.intra_op) == (1, 8)
    assert big.table[(1, 8)] < 0.5 * big.table[(1, 1)]


@pytest.mark.parametrize("m,k,n,splits", [
    (256, 256, 256, False),     # 4 * (256*256 + 256*512) = 768 KiB < 1 MiB * 1.01
    (256, 512, 512, True),      # 2 MiB: the chain of tests/parallel_corpus.py
    (64, 1024, 256, True),      # 4 * (64*256 + 1024*320) = 1.3 MiB
])
def test_onednn_matmul_runs_single_threaded_when_it_fits_in_l2(m, k, n, splits):
    g = graph(placeholder("a", (m, k)), placeholder("b", (k, n)), op("mm", "MatMul", ["a", "b"]))
    row = next(r for r in analyze_parallelism(g, cores=8).intra_ops if r.op == "MatMul")
    assert (row.splitting == 1) is splits and (row.threads > 1) is splits


# --------------------------------------------------------------------------- classification


def test_inline_kernels_and_constant_folding_are_not_expensive():
    g = graph(
        placeholder("x", (4, 4)), const("a", np.ones((4, 4), np.float32), dtype=FLOAT),
        const("b", np.ones((4, 4), np.float32), dtype=FLOAT),
        op("folded", "Mul", ["a", "b"]),                 # constant inputs: Grappler folds it
        op("folded2", "Relu", ["folded"]),               # and its consumer
        op("live", "MatMul", ["x", "folded2"]),          # depends on a placeholder
        op("ident", "Identity", ["live"]), op("shape", "Shape", ["x"], out_type=Type(INT32)),
        op("resh", "Reshape", ["ident", "shape"]),
        op("rnd", "RandomUniform", ["shape"], dtype=Type(FLOAT), T=Type(INT32)),  # stateful: not folded
        op("out", "AddV2", ["resh", "rnd"]),
    )
    r = analyze_parallelism(g, cores=2)
    assert r.folded_ops == 2           # folded, folded2 (Shape is folded too, but runs inline anyway)
    assert r.expensive_ops == 3        # live, rnd, out
    assert r.width == 2                # live and rnd are independent


def test_constant_folding_keeps_outputs_over_the_size_limit():
    """Grappler does not fold an op whose output is over ``max_constant_bytes`` (10 MiB) and
    larger than its inputs: a Fill of 4096 x 1024 floats (16 MiB) stays, one of 4 x 4 folds.
    The output's size is read by position when the shapes are of the folded graph, by name
    otherwise: the same either way."""
    from placelint.analyses.dag import index_graph
    from placelint.analyses.folding import fold_constants
    from placelint.model.op_index import op_index

    nodes = [const("big_dims", [4096, 1024]), const("small_dims", [4, 4]),
             const("one", np.ones((), np.float32), dtype=FLOAT),
             op("big", "Fill", ["big_dims", "one"], T=Type(FLOAT), index_type=Type(INT32)),
             op("small", "Fill", ["small_dims", "one"], T=Type(FLOAT), index_type=Type(INT32)),
             op("use_big", "Relu", ["big"]), op("use_small", "Relu", ["small"]),
             placeholder("x", (4, 4)), op("out_big", "AddV2", ["use_big", "x"]),
             op("out_small", "AddV2", ["use_small", "x"])]
    g = graph(*nodes)
    dag = index_graph(g)
    ops = op_index(g)
    mine, other = infer_shapes(g), infer_shapes(graph(*nodes))
    assert mine.positions is g.positions() and other.positions is not g.positions()
    for shapes in (mine, other):
        folded = fold_constants(g, dag, set(ops.types), ops.mask, shapes, executor_table())
        by_name = dict(zip(dag.index, folded.tolist()))
        assert shapes.nbytes("big") == 4096 * 1024 * 4
        assert not by_name["big"] and by_name["small"] and by_name["use_small"]
        assert not by_name["use_big"]


def test_executor_table_cites_sources_and_matches_the_issue():
    t = executor_table()
    for op_name in ("Const", "Identity", "IdentityN", "NoOp", "Shape", "ShapeN", "Rank", "Size",
                    "ExpandDims", "Squeeze", "Reshape", "Switch", "Merge", "Enter", "Exit",
                    "NextIteration", "_Arg", "_Retval", "ReadVariableOp"):
        assert t.runs_inline(op_name), op_name
        assert t.inline_source(op_name).startswith("tensorflow/"), op_name
    for op_name in ("MatMul", "Conv2D", "AddV2", "EagerPyFunc", "ConcatV2"):
        assert not t.runs_inline(op_name)


def test_intra_op_table_entries_cite_tf_sources():
    t = intra_op_table()
    assert all(e.source.startswith(("tensorflow/", "Eigen")) for e in t.entries.values())
    assert {e.mode for e in t.entries.values()} <= set(t.modes)
    for gil_op in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
        assert t.entries[gil_op].gil and t.entries[gil_op].mode == "single"
    for op_name, mode in (("MatMul", "contraction"), ("Conv2D", "contraction"), ("Sum", "reduction"),
                          ("ConcatV2", "concat"), ("GatherV2", "shard"), ("Transpose", "copy"),
                          ("Tile", "copy"), ("Unique", "single")):
        assert t.entries[op_name].mode == mode
    assert t.lookup("Tanh", elementwise=True).mode == "cwise"
    assert "Tanh" in cost_table().elementwise


def _use(nodes, name):
    g = graph(*nodes)
    s = infer_shapes(g)
    return intra_op_use(g[name], s, op_cost(g[name], s))


@pytest.mark.parametrize("n, splits", [(10_000, False), (90_000, False), (100_000, True), (1_000_000, True)])
def test_element_wise_ops_split_above_eigens_threshold(n, splits):
    """A float Add moves 12 bytes per element (~2.2 cycles): ~1e5 elements before a second thread."""
    use = _use([placeholder("a", (n,)), placeholder("b", (n,)), op("y", "AddV2", ["a", "b"])], "y")
    assert use.mode == "cwise" and use.splits == splits
    assert use.cycles == pytest.approx(n * (12 * 11 / 64 + 1 / 8))


def test_concat_splits_above_32k_and_python_ops_never():
    small = _use([placeholder("a", (1024,)), const("ax", 0, shape=()),
                  op("c", "ConcatV2", ["a", "a", "ax"], N=2)], "c")
    big = _use([placeholder("a", (1 << 20,)), const("ax", 0, shape=()),
                op("c", "ConcatV2", ["a", "a", "ax"], N=2)], "c")
    assert (small.threads, big.threads) == (1, 4)
    py = _use([placeholder("a", (1 << 20,)), op("p", "EagerPyFunc", ["a"], Tin=[Type(FLOAT)],
                                                 Tout=[Type(FLOAT)], token="t")], "p")
    assert py.gil and not py.splits and py.threads == 1


# --------------------------------------------------------------------------- rules and recommendations


def _codes(path, devices="CPU:0"):
    from placelint.model.devices import DeviceSet
    s = Settings()
    s.devices = DeviceSet.parse(devices)
    report = analyze(ModelRef(path, GRAPHDEF), s)
    return report, [d.code for d in report.diagnostics]


def test_py_function_sample_triggers_gil_bound_branches():
    report, codes = _codes(SAMPLES / "py_function_branches.pbtxt")
    assert "PL302" in codes and "PL301" not in codes and "PL303" not in codes
    d = next(d for d in report.diagnostics if d.code == "PL302")
    assert set(d.nodes) == {"branch_a/py_tanh", "branch_b/py_sort"} and d.node == d.nodes[0]
    p = report.context.parallelism
    assert p.gil_width == 2 and p.width == 2
    assert sorted(b.scope for b in p.gil_branches) == ["branch_a", "branch_b"]


def _write(tmp_path, g_nodes, name="g.pbtxt"):
    from graphdefs import to_pbtxt
    path = tmp_path / name
    path.write_text(to_pbtxt(*g_nodes))
    return path


def test_control_edges_that_chain_independent_ops_trigger_pl303(tmp_path):
    base = [placeholder("x", (64, 256)), placeholder("w", (256, 256))]
    chained = base + [op("a", "MatMul", ["x", "w"]), op("b", "MatMul", ["x", "w", "^a"]),
                      op("c", "MatMul", ["x", "w", "^b"]), op("d", "MatMul", ["x", "w", "^c"]),
                      op("out", "AddN", ["a", "b", "c", "d"], N=4)]
    report, codes = _codes(_write(tmp_path, chained))
    p = report.context.parallelism
    assert (p.width, p.width_without_control_edges, p.control_edges) == (1, 4, 3)
    # PL301 stays quiet: four 8-MFLOP MatMuls are ~0.4 ms of work, too little for threads to matter
    assert "PL303" in codes and "PL301" not in codes
    one_edge = base + [op("a", "MatMul", ["x", "w"]), op("b", "MatMul", ["x", "w", "^a"]),
                       op("c", "MatMul", ["x", "w"]), op("d", "MatMul", ["x", "w"]),
                       op("out", "AddN", ["a", "b", "c", "d"], N=4)]
    report, codes = _codes(_write(tmp_path, one_edge, "h.pbtxt"))
    assert report.context.parallelism.width == 3 and "PL303" not in codes


def _element_wise_branches(size, k=6):
    nodes = [placeholder("x", (size, size))]
    for i in range(k):
        nodes += [op(f"b{i}/t", "Tanh", ["x"]), op(f"b{i}/s", "Sigmoid", [f"b{i}/t"])]
    nodes.append(op("out", "AddN", [f"b{i}/s" for i in range(k)], N=k))
    return graph(*nodes)


def test_recommendation_for_many_branches_uses_inter_op_threads():
    # 128x128 Tanh/Sigmoid: a few microseconds each, above the executor's inline threshold
    r = analyze_parallelism(_element_wise_branches(128), cores=4)
    assert r.width == 6 and r.useful_width == 6 and r.intra_share == 0.0
    assert (r.recommendation.inter_op, r.recommendation.intra_op) == (4, 1)
    assert r.recommendation.table[(4, 1)] < 0.5


def test_tiny_branches_have_no_useful_width_and_keep_one_thread():
    # 16x16: TF's executor runs such kernels inline; handing them out would cost more
    r = analyze_parallelism(_element_wise_branches(16), cores=4)
    assert r.width == 6 and r.useful_width == 0
    assert (r.recommendation.inter_op, r.recommendation.intra_op) == (1, 1)
    assert "useful width 1" in r.recommendation.reason


def test_recommendation_when_nothing_is_expensive_keeps_tf_defaults():
    r = analyze_parallelism(graph(placeholder("x", (2,)), op("y", "Identity", ["x"])), cores=6)
    assert r.width == 0 and r.work == 0 and r.average_parallelism is None
    assert (r.recommendation.inter_op, r.recommendation.intra_op) == (6, 6)


def test_per_device_figures_use_the_placement_and_mark_gpu_kernels_inline():
    g = inception_block()
    gpu = "/job:localhost/replica:0/task:0/device:GPU:0"
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    device = {n.name: (gpu if "branch_2" in n.name or "branch_3" in n.name else cpu) for n in g}
    r = analyze_parallelism(g, cores=2, placement=SimpleNamespace(device=device))
    by = {d.device: d for d in r.per_device}
    assert by["GPU:0"].inline_kernels and not by["CPU:0"].inline_kernels
    assert by["GPU:0"].width == 2 and by["CPU:0"].width == 2   # branches 2+3 | 0+1 (+ concat)
    assert r.width == 4                                       # the overall figure is device independent
    r2 = analyze_parallelism(g, cores=2, placement=SimpleNamespace(device={}))
    assert r2.per_device is None and any("placement" in n for n in r2.notes)


def test_loops_and_function_bodies_are_analysed():
    from checkrun import SAMPLES
    for path in (SAMPLES / "while_loop_v1.meta", SAMPLES / "keras_cnn"):
        from placelint.loaders import discover
        report = analyze(discover([path])[0], Settings())
        p = report.context.parallelism
        assert p.width >= 1 and p.work > 0 and p.span > 0


# --------------------------------------------------------------------------- the command


def test_parallelism_command_json_contract(tmp_path):
    from checkrun import invoke
    run = invoke(["parallelism", str(SAMPLES / "py_function_branches.pbtxt"), str(SAMPLES / "towers_gpu.pb"),
                  "--cores", "3", "--format", "json", "-d", "CPU:0"])
    assert run.exit_code == 0, run.stderr
    data = json.loads(run.stdout)
    assert [m["model"] for m in data] == [str(SAMPLES / "py_function_branches.pbtxt"),
                                          str(SAMPLES / "towers_gpu.pb")]
    for m in data:
        assert {"width", "width_all_ops", "branches", "critical_path", "work", "span",
                "average_parallelism"} <= set(m["inter_op"])
        assert {"ops", "share"} <= set(m["intra_op"])
        assert {"inter_op_parallelism_threads", "intra_op_parallelism_threads", "cores",
                "reason"} <= set(m["recommendation"])
        assert m["recommendation"]["cores"] == 3
    towers = data[1]
    assert towers["inter_op"]["width"] == 2 and towers["inter_op"]["average_parallelism"] == pytest.approx(1.93, abs=0.01)
    assert [b["scope"] for b in towers["inter_op"]["branches"]] == ["tower_0", "tower_1"]
    assert "set_inter_op_parallelism_threads" in towers["recommendation"]["code"]["tf2"]


def test_parallelism_command_text_and_errors(tmp_path):
    from checkrun import invoke
    run = invoke(["parallelism", str(SAMPLES / "py_function_branches.pbtxt"), "--cores", "2", "-d", "CPU:0"])
    assert run.exit_code == 0
    assert "width 2 among 5 expensive ops" in run.stdout
    assert "tf.config.threading.set_intra_op_parallelism_threads(" in run.stdout
    assert "ConfigProto(inter_op_parallelism_threads=" in run.stdout
    assert "PL302" in run.stdout
    bad = tmp_path / "bad.pb"
    bad.write_bytes(b"\xff\xff not a graph")
    run = invoke(["parallelism", str(bad), "--format", "json"])
    assert run.exit_code == 2
    assert "error" in json.loads(run.stdout)[0]
    assert invoke(["parallelism", str(bad), "--format", "xml"]).exit_code == 2


def test_independent_single_threaded_kernels_want_inter_op_threads():
    """Eight 320x320 inversions: batch*n^3 work each, one matrix never splits."""
    nodes = [placeholder("x", (320, 320))]
    for i in range(8):
        nodes.append(op(f"b{i}/inv", "MatrixInverse", ["x"]))
    nodes.append(op("out", "AddN", [f"b{i}/inv" for i in range(8)], N=8))
    g = graph(*nodes)
    s = infer_shapes(g)
    assert op_cost(g["b0/inv"], s).ops == 320 ** 3
    r = analyze_parallelism(g, cores=4)
    inv = next(row for row in r.intra_ops if row.op == "MatrixInverse")
    assert inv.mode == "batch" and inv.splitting == 0 and inv.threads == 1
    assert (r.recommendation.inter_op, r.recommendation.intra_op) == (4, 1)


def test_dispatch_overhead_is_in_the_simulation():
    # four branches of one ~6 us Tanh: each handed-out kernel pays ~2.2 us, so two threads
    # gain less than half
    r = analyze_parallelism(_element_wise_branches(128, 4), cores=2)
    t = r.recommendation.table
    assert r.recommendation.inter_op == 2 and 0.5 < t[(2, 1)] < 0.8


class _RecordingAttrs(dict):
    """An attr map that records which attrs are read."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.read: set[str] = set()

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


@pytest.mark.parametrize("op", sorted(cost_mod._FORMULAS))
def test_cost_formulas_read_only_the_attrs_listed_for_cost_key(op):
    """``cost_key`` shares one cost among nodes with equal keys, and the key holds only
    the attrs listed beside each formula: a formula reading another attr would share a
    cost it should not."""
    from placelint.proto import AttrValue

    attrs = _RecordingAttrs(
        transpose_a=AttrValue(b=True), transpose_b=AttrValue(b=True), adj_x=AttrValue(b=True),
        adj_y=AttrValue(b=True), data_format=AttrValue(s=b"NCHW"), is_training=AttrValue(b=False),
        ksize=AttrValue(list=AttrValue.ListValue(i=[1, 1, 2, 2])), strides=AttrValue(
            list=AttrValue.ListValue(i=[1, 1, 1, 1])), equation=AttrValue(s=b"ab,bc->ac"),
        T=AttrValue(type=1), N=AttrValue(i=2))
    node = Node(name="n", op=op, attrs=attrs, output_dtypes=[1])
    shape = (2, 2, 2, 2) if op != "Einsum" and "MatMul" not in op else (2, 2)
    inputs = [shape] * (2 if op == "Einsum" else 3)
    shapes = SimpleNamespace(input_shapes=lambda n: inputs, shape=lambda n, slot=0: shape)
    assert cost_mod.op_cost(node, shapes).known     # the formula ran to the end on these shapes
    assert attrs.read <= set(cost_mod._FORMULAS[op][1])


def test_estimate_rows_are_the_cost_keys_in_order_of_first_appearance():
    """``estimate_ops`` groups the members by op, outputs, io key (by identity: ``io_keys``
    makes each distinct key once) and formula attrs: the same rows, numbered the same way,
    as grouping by ``cost_key`` itself; MatMuls differing only in ``transpose_b`` apart."""
    from placelint.analyses.cost import AssumedSizes, cost_key
    from placelint.analyses.dag import index_graph
    from placelint.analyses.parallelism_cost import estimate_ops

    g = graph(placeholder("x", (4, 4)), placeholder("y", (4, 4)), placeholder("z", (8, 4)),
              op("m1", "MatMul", ["x", "y"]), op("m2", "MatMul", ["y", "x"]),
              op("m3", "MatMul", ["x", "y"], transpose_b=True), op("m4", "MatMul", ["z", "x"]),
              op("r1", "Relu", ["m1"]), op("r2", "Relu", ["m4"]), op("r3", "Relu", ["m2"]),
              op("a1", "AddN", ["r1", "r3"], N=2), op("m5", "MatMul", ["y", "y"], transpose_b=True))
    shapes = infer_shapes(g)
    dag = index_graph(g)
    members = np.ones(dag.n, dtype=bool)
    members[:3] = False
    est = estimate_ops(dag, members, AssumedSizes(shapes, 1), shapes, intra_op_table(), 8, g)
    rows: dict[tuple, int] = {}
    want = [rows.setdefault(cost_key(dag.nodes[i], shapes), len(rows)) for i in range(3, dag.n)]
    assert est.row_at[3:].tolist() == want and est.row_at[:3].tolist() == [-1] * 3
    assert len(rows) == 6 and want[:4] == [0, 0, 1, 2]


@settings(max_examples=100, deadline=None)
@given(dags(), st.lists(st.integers(1, 4), min_size=9, max_size=9))
def test_weighted_width_equals_brute_force(case, weights):
    n, edges, members = case
    w = np.array(weights[:n], dtype=np.int64)
    src = np.array([u for u, _ in edges], dtype=np.int64)
    dst = np.array([v for _, v in edges], dtype=np.int64)
    reach = _reach(n, edges)
    mem = [v for v in range(n) if members[v]]
    best = 0
    for r in range(len(mem) + 1):
        for combo in itertools.combinations(mem, r):
            if all(b not in reach[a] and a not in reach[b] for a, b in itertools.combinations(combo, 2)):
                best = max(best, int(sum(w[list(combo)])) if combo else 0)
    result = max_antichain(n, src, dst, np.array(members), w)
    assert result.width == best
    assert int(w[result.nodes].sum()) == best and _is_antichain(n, edges, result.nodes.tolist())
    assert antichain_width(n, src, dst, np.array(members), w) == best
