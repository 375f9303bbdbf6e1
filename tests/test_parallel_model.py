"""Issue 18: useful width, the simulated thread model, assumed batch sizes, the fixed
default target, If/Case exclusivity, init/restore left out of the step, PL301's scope."""

from __future__ import annotations

import json

import numpy as np
import pytest
from graphdefs import FLOAT, Shape, Type, graph, graph_def, op, placeholder, to_pbtxt

from placelint.analyses.parallelism import DEFAULT_CORES, analyze_parallelism
from placelint.analyses.threads import INLINE_THRESHOLD_US
from placelint.model.build import build_graph
from placelint.output.parallelism_text import render as render_parallelism
from placelint.proto import AttrValue, FunctionDef


def _mm_chain(k, size=256, batch=256):
    nodes = [placeholder("x", (batch, size)), placeholder("w", (size, size))]
    prev = "x"
    for i in range(k):
        nodes += [op(f"l{i}/mm", "MatMul", [prev, "w"]), op(f"l{i}/relu", "Relu", [f"l{i}/mm"])]
        prev = f"l{i}/relu"
    return nodes


def test_default_target_is_a_fixed_number_of_cores_not_this_machine():
    r = analyze_parallelism(graph(*_mm_chain(3)))
    assert r.cores == DEFAULT_CORES == 8 and r.recommendation.cores == 8
    assert "8 cores" in r.recommendation.reason


def test_useful_width_leaves_out_kernels_below_the_inline_threshold():
    # 12 per-channel ops on 64 floats next to two big independent MatMuls
    nodes = [placeholder("v", (64,)), placeholder("x", (256, 256))]
    for i in range(12):
        nodes.append(op(f"bn{i}/rsqrt", "Rsqrt", ["v"]))
    nodes += [op("a", "MatMul", ["x", "x"]), op("b", "MatMul", ["x", "x"])]
    r = analyze_parallelism(graph(*nodes), cores=4)
    assert r.width == 14 and r.useful_width == 2
    assert sorted(n for b in r.useful_branches for n in b.ops) == ["a", "b"]
    j = r.to_json()["inter_op"]
    assert j["useful_width"] == 2 and j["useful_threshold_us"] == INLINE_THRESHOLD_US
    assert [b["ops"] for b in j["useful_branches"]] == [["a", "b"]]


def test_unknown_batch_is_costed_at_the_assumed_batch_size():
    nodes = [placeholder("x", (-1, 512)), placeholder("w", (512, 512)), op("mm", "MatMul", ["x", "w"])]
    one = analyze_parallelism(graph(*nodes))
    big = analyze_parallelism(graph(*nodes), batch_size=64)
    assert one.work == 2 * 1 * 512 * 512 and big.work == 2 * 64 * 512 * 512
    assert one.batch_size == 1 and big.batch_size == 64
    assert big.assumed_ops == 1 and big.assumed_share == 1.0
    assert "batch size 64" in render_parallelism(big)
    known = analyze_parallelism(graph(placeholder("x", (64, 512)), *nodes[1:]))
    assert known.assumed_ops == 0 and known.work == big.work


def test_python_kernels_cost_their_measured_call_overhead_and_the_gil_is_modelled_both_ways():
    nodes = [placeholder("x", (4,))]
    for b in ("a", "b"):
        nodes += [op(f"{b}/sq", "Square", ["x"]),
                  op(f"{b}/py", "EagerPyFunc", [f"{b}/sq"], token=f"pyfunc_{b}", Tin=[Type(FLOAT)],
                     Tout=[Type(FLOAT)])]
    nodes.append(op("sum", "AddV2", ["a/py", "b/py"]))
    r = analyze_parallelism(graph(*nodes), cores=4)
    py = next(row for row in r.intra_ops if row.op == "EagerPyFunc")
    assert py.share > 0.9            # not one unit next to trivial element-wise ops
    assert r.gil_width == 2 and r.useful_width == 2
    rec = r.recommendation
    # bodies holding the GIL: a second inter-op thread gains nothing (and costs nothing);
    # bodies releasing it (numpy): the two kernels overlap. inter_op=2 is right either way.
    assert rec.table[(2, 1)] == pytest.approx(1.0, abs=0.05)
    assert rec.table_gil_released[(2, 1)] == pytest.approx(0.5, abs=0.05)
    assert (rec.inter_op, rec.intra_op) == (2, 1)
    assert "hold the GIL (pure Python)" in rec.reason and "release it (numpy, I/O)" in rec.reason
    row = r.to_json()["recommendation"]["relative_to_serial"][0]
    assert set(row) == {"inter_op", "intra_op", "time", "time_if_python_releases_gil"}


def test_one_python_kernel_has_no_gil_question():
    nodes = [placeholder("x", (4,)),
             op("py", "EagerPyFunc", ["x"], token="pyfunc_a", Tin=[Type(FLOAT)], Tout=[Type(FLOAT)])]
    r = analyze_parallelism(graph(*nodes), cores=4)
    assert r.gil_width == 1 and r.recommendation.table_gil_released == {}
    assert (r.recommendation.inter_op, r.recommendation.intra_op) == (1, 1)


def _if_graph():
    """An If whose branches each hold two independent MatMuls."""
    def branch(name):
        f = FunctionDef()
        f.signature.name = name
        f.signature.input_arg.add(name="x", type=FLOAT)
        f.signature.output_arg.add(name="y", type=FLOAT)
        for k in ("a", "b"):
            nd = f.node_def.add(name=k, op="MatMul", input=["x", "x"])
            nd.attr["T"].type = FLOAT
        nd = f.node_def.add(name="c", op="AddV2", input=["a:product:0", "b:product:0"])
        nd.attr["T"].type = FLOAT
        f.ret["y"] = "c:z:0"
        return f
    gd = graph_def(placeholder("x", (256, 256)), placeholder("p", (), dtype=10),
                   op("cond", "If", ["p", "x"], Tcond=Type(10), Tin=[Type(FLOAT)], Tout=[Type(FLOAT)],
                      then_branch=AttrValue(func={"name": "then_f"}),
                      else_branch=AttrValue(func={"name": "else_f"})))
    gd.library.function.extend([branch("then_f"), branch("else_f")])
    return build_graph(gd).graph


def test_if_branches_are_exclusive():
    r = analyze_parallelism(_if_graph(), cores=4)
    assert r.useful_width == 2 and r.width == 2     # one branch's two MatMuls, not four
    assert any("one branch runs per step" in n for n in r.notes)
    names = {n for b in r.useful_branches for n in b.ops}
    assert len({n.split("/")[1] for n in names}) == 1     # both from the same branch


def test_init_ops_are_not_part_of_the_step():
    nodes = [placeholder("x", (256, 256)),
             op("var", "VariableV2", [], shape=Shape((256, 256)), dtype=Type(FLOAT)),
             op("w", "Identity", ["var"])]
    for i in range(6):      # initializers: big random ops only the init target needs
        nodes += [op(f"init_{i}/rand", "TruncatedNormal", ["x"], dtype=Type(FLOAT), T=Type(FLOAT)),
                  op(f"init_{i}/assign", "Assign", ["var", f"init_{i}/rand"])]
    nodes.append(op("init", "NoOp", [f"^init_{i}/assign" for i in range(6)]))
    nodes += [op("mm", "MatMul", ["x", "w"]), op("out", "Relu", ["mm"])]
    r = analyze_parallelism(graph(*nodes), cores=4)
    assert r.width == 1 and "init_0/rand" not in r.critical_path
    assert r.step_left_out == 13 and any("init/restore/save" in n for n in r.notes)
    stepped = analyze_parallelism(graph(*nodes), cores=4, step_nodes={"x", "var", "w", "mm", "out"})
    assert stepped.width == 1 and stepped.step_left_out == len(nodes) - 5


def _check_codes(tmp_path, nodes, name):
    from placelint.loaders import ModelRef
    from placelint.loaders.read import GRAPHDEF
    from placelint.pipeline import analyze
    from placelint.settings import Settings

    path = tmp_path / name
    path.write_text(to_pbtxt(*nodes))
    report = analyze(ModelRef(path, GRAPHDEF), Settings())
    return report, [d.code for d in report.diagnostics]


def test_pl301_needs_enough_work_and_uses_the_one_splittable_share(tmp_path):
    two_ops = [placeholder("x", (64, 256)), placeholder("w", (256, 256)),
               op("mm", "MatMul", ["x", "w"]), op("relu", "Relu", ["mm"])]
    _, codes = _check_codes(tmp_path, two_ops, "two.pbtxt")
    assert "PL301" not in codes
    report, codes = _check_codes(tmp_path, _mm_chain(4, size=1024), "big.pbtxt")
    assert codes.count("PL301") == 1
    d = next(d for d in report.diagnostics if d.code == "PL301")
    p = report.context.parallelism
    assert f"{p.intra_share:.0%} of the estimated time" in d.message
    assert f"{p.intra_share:.0%} of the time is in kernels that split" in p.recommendation.reason
    assert "target of 8 cores" in d.fix


def test_findings_do_not_depend_on_the_checking_machine(tmp_path, monkeypatch):
    import os
    nodes = _mm_chain(4, size=1024)
    first = [d.message for d in _check_codes(tmp_path, nodes, "a.pbtxt")[0].diagnostics]
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    second = [d.message for d in _check_codes(tmp_path, nodes, "a.pbtxt")[0].diagnostics]
    assert first == second and first


def test_parallelism_command_batch_size_and_cores(tmp_path):
    from checkrun import invoke
    path = tmp_path / "g.pbtxt"
    path.write_text(to_pbtxt(placeholder("x", (-1, 512)), placeholder("w", (512, 512)),
                             op("mm", "MatMul", ["x", "w"])))
    out = invoke(["parallelism", str(path), "--format", "json", "--batch-size", "32",
                                   "--cores", "2"])
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)[0]
    assert data["inter_op"]["batch_size"] == 32 and data["inter_op"]["work"] == 2 * 32 * 512 * 512
    assert data["recommendation"]["cores"] == 2
    assert {(r["inter_op"], r["intra_op"]) for r in data["recommendation"]["relative_to_serial"]} >= {(1, 1)}


def test_simulation_matches_the_bounds_on_independent_equal_branches():
    nodes = [placeholder("x", (256, 256))]
    for i in range(4):
        nodes.append(op(f"b{i}/mm", "MatMul", ["x", "x"]))
    r = analyze_parallelism(graph(*nodes), cores=4)
    t = r.recommendation.table
    assert t[(1, 1)] == 1.0
    assert t[(4, 1)] == pytest.approx(0.25, abs=0.02)     # four at once, plus dispatch
    assert t[(2, 1)] == pytest.approx(0.5, abs=0.02)
    assert np.isclose(r.average_parallelism, 4.0)


def _while_graph(parallel_iterations: int, carried: bool, size: int = 512):
    """A While over (i, h, x): the body computes MatMul(x, x) (independent of the previous
    iteration) or MatMul(h, x) (an RNN-like state), then h + that."""
    def int_const(f, name: str, value: int):
        nd = f.node_def.add(name=name, op="Const")
        nd.attr["dtype"].type = 3
        nd.attr["value"].tensor.dtype = 3
        nd.attr["value"].tensor.int_val.append(value)

    def fn(name, body: bool):
        f = FunctionDef()
        f.signature.name = name
        for a, t in (("i", 3), ("h", FLOAT), ("x", FLOAT)):
            f.signature.input_arg.add(name=a, type=t)
        if not body:
            f.signature.output_arg.add(name="p", type=10)
            int_const(f, "lim", 10)
            nd = f.node_def.add(name="less", op="Less", input=["i", "lim:output:0"])
            nd.attr["T"].type = 3
            f.ret["p"] = "less:z:0"
            return f
        for a, t in (("i1", 3), ("h1", FLOAT), ("x1", FLOAT)):
            f.signature.output_arg.add(name=a, type=t)
        int_const(f, "one", 1)
        nd = f.node_def.add(name="next", op="AddV2", input=["i", "one:output:0"])
        nd.attr["T"].type = 3
        nd = f.node_def.add(name="mm", op="MatMul", input=["h" if carried else "x", "x"])
        nd.attr["T"].type = FLOAT
        nd = f.node_def.add(name="acc", op="AddV2", input=["h", "mm:product:0"])
        nd.attr["T"].type = FLOAT
        f.ret["i1"], f.ret["h1"], f.ret["x1"] = "next:z:0", "acc:z:0", "x"
        return f
    gd = graph_def(placeholder("i0", (), dtype=3), placeholder("h0", (size, size)), placeholder("x", (size, size)),
                   op("loop", "While", ["i0", "h0", "x"], T=[Type(3), Type(FLOAT), Type(FLOAT)],
                      cond=AttrValue(func={"name": "cond_f"}), body=AttrValue(func={"name": "body_f"}),
                      parallel_iterations=parallel_iterations),
                   op("out", "Identity", ["loop:1"]))
    gd.library.function.extend([fn("cond_f", False), fn("body_f", True)])
    return build_graph(gd).graph


def test_while_body_ops_independent_of_the_previous_iteration_overlap_parallel_iterations_times():
    r = analyze_parallelism(_while_graph(10, carried=False), cores=4)
    # MatMul(x, x) of ten live iterations at once; the accumulation h + mm waits for h
    assert r.useful_width == 10
    assert any("1 of its body's 2 op(s)" in n and "parallel_iterations=10" in n for n in r.notes)
    rec = r.recommendation
    assert rec.inter_op >= 2 and rec.table[(rec.inter_op, rec.intra_op)] < 0.3     # four cores used
    one = analyze_parallelism(_while_graph(1, carried=False), cores=4)
    assert one.useful_width == 1 and one.recommendation.inter_op == 1


def test_while_body_ops_waiting_for_the_loop_state_count_once():
    r = analyze_parallelism(_while_graph(10, carried=True), cores=4)
    assert r.useful_width == 1
    assert any("wait for the previous iteration's result" in n for n in r.notes)


def test_microsecond_kernels_behind_many_roots_gain_nothing_from_inter_op_threads():
    # 40 inputs, each through per-channel arithmetic below the inline threshold: TF hands
    # each root to the pool, but no op is worth a thread, so no setting is credited
    nodes = []
    for i in range(40):
        nodes += [placeholder(f"v{i}", (64,)), op(f"bn{i}/rsqrt", "Rsqrt", [f"v{i}"]),
                  op(f"bn{i}/mul", "Mul", [f"bn{i}/rsqrt", f"v{i}"])]
    nodes.append(op("sum", "AddN", [f"bn{i}/mul" for i in range(40)], N=40))
    r = analyze_parallelism(graph(*nodes), cores=8)
    assert r.width >= 40 and r.useful_width == 0
    rec = r.recommendation
    assert (rec.inter_op, rec.intra_op) == (1, 1) and rec.table[(8, 1)] == pytest.approx(1.0)


def test_a_kernel_handed_to_the_pool_at_time_zero_pays_the_dispatch_cost():
    # a free root (time 0) makes two 100 us kernels ready at t=0: one continues inline, the
    # other is handed to the pool and pays DISPATCH_US although it was handed out at t=0
    from placelint.analyses.dag import IndexedDag
    from placelint.analyses.threads import DISPATCH_US, ThreadModel

    dag = IndexedDag(nodes=[None] * 3, index={}, order=np.arange(3), position=np.arange(3),
                     src=np.array([0, 0]), dst=np.array([1, 2]), control=np.zeros(2, dtype=bool))
    model = ThreadModel(dag, np.array([0.0, 100.0, 100.0]), np.ones(3, dtype=np.int64),
                        np.zeros(3, dtype=bool), 2, dispatched=np.array([False, True, True]))
    assert model.simulate(2, 1) == pytest.approx(100.0 + DISPATCH_US)
    assert model.simulate(1, 1) == pytest.approx(200.0 + DISPATCH_US)


def test_a_loop_hands_out_one_iteration_per_pass_of_its_inline_control_ops():
    # the loop's control ops (3 per loop variable, LoopCond, the cond's and body's
    # inexpensive ops: 27 here) run inline at LOOP_INLINE_US each: one iteration's MatMul
    # is handed out every h = 27 * 0.13 = 3.51 us
    from placelint.analyses.parallelism_scope import LOOP_INLINE_US
    from placelint.analyses.threads import DISPATCH_US

    h = 27 * LOOP_INLINE_US
    big = analyze_parallelism(_while_graph(10, carried=False), cores=4)
    assert big.useful_width == 10            # a 512^3 MatMul lasts for all ten hand-outs
    small = analyze_parallelism(_while_graph(10, carried=False, size=64), cores=4)
    # a 64^3 MatMul (estimated 8.46 us) plus its dispatch ends after three more hand-outs
    assert small.useful_width == 4 and 3 * h <= 8.46 + DISPATCH_US < 4 * h
    assert any("at most 4 of one op's copies are in flight" in n for n in small.notes)
    assert not any("copies are in flight" in n for n in big.notes)
    tiny = analyze_parallelism(_while_graph(10, carried=False, size=32), cores=4)
    assert tiny.useful_width == 0            # below the inline threshold: nothing to hand out
    # the simulation paces the copies the same way: handed out all at once, four threads
    # would take 0.30x of 1/1; one per h, the last copy starts 9 h after the first: 0.40x
    rec = small.recommendation.table
    assert rec[(4, 1)] == pytest.approx(0.40, abs=0.02)


def test_control_hubs_most_first_ties_in_order_of_first_appearance():
    from placelint.analyses.parallelism import _control_hubs

    # ends in order: 0 3 1 3 2 0 1 0 -> 0 x3; 3, 1 x2 (3 seen first); 2 x1
    src = np.array([0, 1, 2, 1], dtype=np.int64)
    dst = np.array([3, 3, 0, 0], dtype=np.int64)
    assert _control_hubs(src, dst) == [(0, 3), (3, 2), (1, 2), (2, 1)]
    assert _control_hubs(src[:0], dst[:0]) == []
    many = np.arange(7, dtype=np.int64)
    assert _control_hubs(many, many[::-1].copy()) == [(0, 2), (6, 2), (1, 2), (5, 2), (2, 2)]
