"""Transfers (issue 4): which _Send/_Recv pairs TF's partitioner inserts, and their bytes.

Done-when: "Bytes equal prod(shape) * dtype size wherever shapes are static". Every graph here
is hand-written in text format with known shapes; the expected bytes are computed in the test
from the shapes written down here (numpy's itemsize), not by placelint. The rules followed
(tensorflow/core/graph/graph_partition.cc, common_runtime/replicate_constants_pass.cc):
one transfer per (tensor, destination device, recv-on-host), except ref-typed outputs, which
are never deduplicated; a control edge becomes a dummy DT_FLOAT tensor of shape {0}; small
CPU constants (<= 16 elements, several consumers on several devices, no control successors)
are copied to each consumer's CPU. The `tf` test checks the CPU graphs against TensorFlow.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format

from placelint.api import place_graphdef
from placelint.proto import GraphDef

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "/job:localhost/replica:0/task:0/device:"
CPU0, CPU1, CPU2, GPU0 = (PREFIX + d for d in ("CPU:0", "CPU:1", "CPU:2", "GPU:0"))
ALL_KEYS = {"tensor", "from", "to", "consumers", "dtype", "bytes", "control", "in_loop"}


def nbytes(shape: tuple[int, ...], dtype: str) -> int:
    """prod(shape) * itemsize, independently of placelint."""
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def parse(text: str) -> GraphDef:
    return text_format.Parse(text, GraphDef())


def place(text: str, devices: str = "CPU=3"):
    r = place_graphdef(parse(text), devices=devices)
    assert r.errors == [], [str(e) for e in r.errors]
    return r


def by_tensor(r) -> dict[str, list]:
    out: dict[str, list] = {}
    for t in r.transfers:
        out.setdefault(t.tensor, []).append(t)
    return out


def only(r, tensor: str):
    ts = by_tensor(r)[tensor]
    assert len(ts) == 1, [t.to_json() for t in ts]
    return ts[0]


# --------------------------------------------------------------------------- text-format pieces

F32 = 'attr { key: "T" value { type: DT_FLOAT } }'


def placeholder(name: str, dims: list[int] | None, dtype: str = "DT_FLOAT", device: str = "") -> str:
    shape = "unknown_rank: true" if dims is None else " ".join(f"dim {{ size: {d} }}" for d in dims)
    return (f'node {{ name: "{name}" op: "Placeholder" device: "{device}" '
            f'attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "shape" value {{ shape {{ {shape} }} }} }} }}\n')


def const(name: str, dims: list[int], values: list, dtype: str = "DT_FLOAT", device: str = "",
          inputs: list[str] = ()) -> str:
    field = {"DT_FLOAT": "float_val", "DT_INT32": "int_val", "DT_INT64": "int64_val"}[dtype]
    shape = " ".join(f"dim {{ size: {d} }}" for d in dims)
    vals = " ".join(f"{field}: {v}" for v in values)
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return (f'node {{ name: "{name}" op: "Const" device: "{device}" {ins} '
            f'attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ dtype: {dtype} tensor_shape {{ {shape} }} '
            f'{vals} }} }} }} }}\n')


def unary(name: str, op: str, inp: str, device: str, dtype: str = "DT_FLOAT",
          extra: list[str] = ()) -> str:
    ins = " ".join(f'input: "{i}"' for i in [inp, *extra])
    return (f'node {{ name: "{name}" op: "{op}" device: "{device}" {ins} '
            f'attr {{ key: "T" value {{ type: {dtype} }} }} }}\n')


# --------------------------------------------------------------------------- the main graph

D0, D1, D2 = "/device:CPU:0", "/device:CPU:1", "/device:CPU:2"

MAIN = (
    placeholder("x", [2, 3], device=D0)
    + placeholder("img", [1, 8, 8, 3], device=D0)
    + placeholder("ids", [3, 5], "DT_INT64", device=D0)
    + const("w", [3, 4], [0.5], device=D1)
    + f'node {{ name: "mm" op: "MatMul" device: "{D1}" input: "x" input: "w" {F32} }}\n'
    + const("filt", [3, 3, 3, 5], [0.1], device=D1)
    + f'''node {{ name: "conv" op: "Conv2D" device: "{D1}" input: "img" input: "filt" {F32}
          attr {{ key: "strides" value {{ list {{ i: 1 i: 2 i: 2 i: 1 }} }} }}
          attr {{ key: "padding" value {{ s: "SAME" }} }} }}\n'''
    + const("bias", [5], [1.0], device=D1)
    + f'node {{ name: "ba" op: "BiasAdd" device: "{D1}" input: "conv" input: "bias" {F32} }}\n'
    + const("shape", [2], [-1, 20], "DT_INT32", device=D1)
    + f'''node {{ name: "rs" op: "Reshape" device: "{D1}" input: "ba" input: "shape" {F32}
          attr {{ key: "Tshape" value {{ type: DT_INT32 }} }} }}\n'''
    + const("axis0", [], [0], "DT_INT32", device=D1)
    + f'''node {{ name: "cat" op: "ConcatV2" device: "{D1}" input: "mm" input: "mm" input: "axis0"
          {F32} attr {{ key: "N" value {{ i: 2 }} }}
          attr {{ key: "Tidx" value {{ type: DT_INT32 }} }} }}\n'''
    + const("perm", [2], [1, 0], "DT_INT32", device=D1)
    + f'''node {{ name: "tr" op: "Transpose" device: "{D1}" input: "rs" input: "perm" {F32}
          attr {{ key: "Tperm" value {{ type: DT_INT32 }} }} }}\n'''
    + const("axes12", [2], [1, 2], "DT_INT32", device=D1)
    + f'''node {{ name: "sum" op: "Sum" device: "{D1}" input: "ba" input: "axes12" {F32}
          attr {{ key: "Tidx" value {{ type: DT_INT32 }} }}
          attr {{ key: "keep_dims" value {{ b: false }} }} }}\n'''
    + const("axis3", [1], [3], "DT_INT32", device=D1)
    + f'''node {{ name: "mean" op: "Mean" device: "{D1}" input: "ba" input: "axis3" {F32}
          attr {{ key: "Tidx" value {{ type: DT_INT32 }} }}
          attr {{ key: "keep_dims" value {{ b: true }} }} }}\n'''
    + f'''node {{ name: "max" op: "Max" device: "{D1}" input: "mm" input: "axis0" {F32}
          attr {{ key: "Tidx" value {{ type: DT_INT32 }} }}
          attr {{ key: "keep_dims" value {{ b: false }} }} }}\n'''
    + f'''node {{ name: "half" op: "Cast" device: "{D1}" input: "mm"
          attr {{ key: "SrcT" value {{ type: DT_FLOAT }} }}
          attr {{ key: "DstT" value {{ type: DT_HALF }} }}
          attr {{ key: "Truncate" value {{ b: false }} }} }}\n'''
    + f'''node {{ name: "shp" op: "Shape" device: "{D1}" input: "ba" {F32}
          attr {{ key: "out_type" value {{ type: DT_INT64 }} }} }}\n'''
    + unary("ids_neg", "Neg", "ids", D1, "DT_INT64")
    + unary("use_mm", "Identity", "mm", D2)
    + unary("use_conv", "Identity", "conv", D0)
    + unary("use_ba", "Identity", "ba", D2)
    + unary("use_rs", "Identity", "rs", D0)
    + unary("use_cat", "Identity", "cat", D2)
    + unary("use_tr", "Identity", "tr", D2)
    + unary("use_sum", "Identity", "sum", D0)
    + unary("use_mean", "Identity", "mean", D0)
    + unary("use_max", "Identity", "max", D2)
    + unary("use_half", "Identity", "half", D2, "DT_HALF")
    + unary("use_shp", "Identity", "shp", D0, "DT_INT64")
)

# tensor -> (from, to, consumers, numpy dtype, shape): written down by hand
MAIN_EXPECTED = {
    "x:0": (CPU0, CPU1, ["mm"], "float32", (2, 3)),
    "img:0": (CPU0, CPU1, ["conv"], "float32", (1, 8, 8, 3)),
    "ids:0": (CPU0, CPU1, ["ids_neg"], "int64", (3, 5)),
    "mm:0": (CPU1, CPU2, ["use_mm"], "float32", (2, 4)),
    "conv:0": (CPU1, CPU0, ["use_conv"], "float32", (1, 4, 4, 5)),      # stride 2, SAME
    "ba:0": (CPU1, CPU2, ["use_ba"], "float32", (1, 4, 4, 5)),
    "rs:0": (CPU1, CPU0, ["use_rs"], "float32", (4, 20)),               # 80 / 20
    "cat:0": (CPU1, CPU2, ["use_cat"], "float32", (4, 4)),
    "tr:0": (CPU1, CPU2, ["use_tr"], "float32", (20, 4)),
    "sum:0": (CPU1, CPU0, ["use_sum"], "float32", (1, 5)),
    "mean:0": (CPU1, CPU0, ["use_mean"], "float32", (1, 4, 4, 1)),
    "max:0": (CPU1, CPU2, ["use_max"], "float32", (4,)),
    "half:0": (CPU1, CPU2, ["use_half"], "float16", (2, 4)),
    "shp:0": (CPU1, CPU0, ["use_shp"], "int64", (4,)),
}


def test_bytes_are_prod_shape_times_itemsize_for_static_shapes() -> None:
    r = place(MAIN)
    got = {t.tensor: t for t in r.transfers}
    assert len(got) == len(r.transfers), "one transfer per tensor and destination here"
    assert set(got) == set(MAIN_EXPECTED)
    for tensor, (src, dst, consumers, dtype, shape) in MAIN_EXPECTED.items():
        t = got[tensor]
        assert (t.src_device, t.dst_device, t.consumers) == (src, dst, consumers), tensor
        assert t.bytes == nbytes(shape, dtype), (tensor, t.bytes, shape, dtype)
        assert t.to_json()["dtype"] == np.dtype(dtype).name     # float32, float16, int64
        assert t.control is False and t.in_loop is False
    # a few spelled out, so the arithmetic is visible
    assert got["img:0"].bytes == 1 * 8 * 8 * 3 * 4 == 768
    assert got["half:0"].bytes == 2 * 4 * 2 == 16
    assert got["shp:0"].bytes == 4 * 8 == 32
    assert got["ids:0"].bytes == 3 * 5 * 8 == 120


def test_unknown_dims_give_unknown_bytes_but_a_dtype() -> None:
    text = (
        placeholder("batch", [-1, 3], device=D0)
        + placeholder("anything", None, device=D0)
        + placeholder("known", [2, 3], device=D0)
        + const("w", [3, 4], [1.0], device=D0)
        + f'node {{ name: "mm" op: "MatMul" device: "{D0}" input: "batch" input: "w" {F32} }}\n'
        + unary("a", "Neg", "batch", D1)
        + unary("b", "Neg", "anything", D1)
        + unary("c", "Neg", "mm", D2)              # [-1, 4]
        + unary("d", "Neg", "known", D2)
    )
    r = place(text)
    for tensor in ("batch:0", "anything:0", "mm:0"):
        t = only(r, tensor)
        assert t.bytes is None, tensor
        assert t.to_json()["dtype"] == "float32"
        assert t.to_json()["bytes"] is None
    assert only(r, "known:0").bytes == nbytes((2, 3), "float32")
    assert len(r.transfers) == 4


def test_control_edge_is_a_zero_byte_control_transfer() -> None:
    text = (
        placeholder("x", [5], device=D0)
        + unary("a", "Neg", "x", D0)
        + unary("b", "Neg", "x", D0, extra=["^a"])       # same device: no transfer
        + unary("c", "Neg", "x", D1, extra=["^a"])
        + unary("d", "Neg", "x", D1, extra=["^a"])       # same source, same device: shared
        + unary("e", "Neg", "x", D2, extra=["^a"])
    )
    r = place(text)
    controls = [t for t in r.transfers if t.control]
    assert sorted((t.tensor, t.dst_device) for t in controls) == [("^a", CPU1), ("^a", CPU2)]
    for t in controls:
        assert t.bytes == 0 and t.src_slot == -1 and t.src_device == CPU0
        assert t.to_json()["dtype"] == "float32"          # the partitioner's dummy DT_FLOAT {0}
    assert {t.dst_device: t.consumers for t in controls} == {CPU1: ["c", "d"], CPU2: ["e"]}
    data = {(t.tensor, t.dst_device): t for t in r.transfers if not t.control}
    assert set(data) == {("x:0", CPU1), ("x:0", CPU2)}
    assert data["x:0", CPU1].bytes == nbytes((5,), "float32")


DEDUP = (
    placeholder("x", [4, 5], device=D0)       # 20 elements: not a replicable constant for TF
    + unary("a", "Neg", "x", D1)
    + unary("b", "Relu", "x", D1)
    + f'node {{ name: "c" op: "AddV2" device: "{D1}" input: "x" input: "x" {F32} }}\n'
    + unary("d", "Neg", "x", D2)
    + unary("e", "Neg", "x", D0)
)


def test_one_tensor_one_transfer_per_destination_device() -> None:
    r = place(DEDUP)
    ts = sorted(r.transfers, key=lambda t: t.dst_device)
    assert [(t.tensor, t.dst_device, t.consumers) for t in ts] == [
        ("x:0", CPU1, ["a", "b", "c"]),        # three consumers (one of them twice): one copy
        ("x:0", CPU2, ["d"]),
    ]
    assert all(t.bytes == nbytes((4, 5), "float32") == 80 for t in ts)


REF = (
    f'''node {{ name: "v" op: "VariableV2" device: "{D0}"
          attr {{ key: "dtype" value {{ type: DT_FLOAT }} }}
          attr {{ key: "shape" value {{ shape {{ dim {{ size: 2 }} dim {{ size: 3 }} }} }} }}
          attr {{ key: "container" value {{ s: "" }} }}
          attr {{ key: "shared_name" value {{ s: "" }} }} }}\n'''
    + const("init", [2, 3], [1.0], device=D0)
    + f'''node {{ name: "assign" op: "Assign" device: "{D0}" input: "v" input: "init" {F32}
          attr {{ key: "use_locking" value {{ b: true }} }}
          attr {{ key: "validate_shape" value {{ b: true }} }} }}\n'''
    + unary("r1", "Neg", "v", D1)
    + unary("r2", "Relu", "v", D1)
    + unary("read", "Identity", "v", D0)
    + unary("s1", "Neg", "read", D1)
    + unary("s2", "Relu", "read", D1)
)


def test_ref_typed_edges_are_not_deduplicated() -> None:
    r = place(REF)
    refs = [t for t in r.transfers if t.src == "v"]
    reads = [t for t in r.transfers if t.src == "read"]
    # graph_partition.cc: "Collapsing ref edges requires extreme care so for now we don't do it"
    assert sorted(t.consumers[0] for t in refs) == ["r1", "r2"]
    assert all(len(t.consumers) == 1 for t in refs)
    assert all((t.src_device, t.dst_device) == (CPU0, CPU1) for t in refs)
    # the value read through an Identity is an ordinary tensor: one copy for both readers
    assert [(t.dst_device, t.consumers) for t in reads] == [(CPU1, ["s1", "s2"])]
    for t in refs + reads:
        assert t.bytes == nbytes((2, 3), "float32") == 24
        assert t.to_json()["dtype"] == "float32"     # the value sent, not float32_ref
    assert len(r.transfers) == 3


REPLICATE = (
    const("small", [2], [1.0, 2.0], device=D0)          # 2 elements, consumers on CPU:1, CPU:2
    + unary("a1", "Neg", "small", D1)
    + unary("a2", "Neg", "small", D2)
    + const("big", [17], [1.0], device=D0)               # 17 elements: too big to replicate
    + unary("b1", "Neg", "big", D1)
    + unary("b2", "Neg", "big", D2)
    + const("ctl", [2], [1.0], device=D0)                # has a control successor: kept
    + unary("c1", "Neg", "ctl", D1)
    + unary("c2", "Neg", "ctl", D2)
    + unary("c3", "Neg", "small", D0, extra=["^ctl"])
    + const("one", [2], [1.0], device=D0)                # one successor device: kept
    + unary("o1", "Neg", "one", D1)
    + unary("o2", "Relu", "one", D1)
    + const("home", [2], [1.0], device=D0)               # consumers on CPU:0 and CPU:1
    + unary("h1", "Neg", "home", D0)
    + unary("h2", "Neg", "home", D1)
)


def test_small_constants_are_replicated_instead_of_sent() -> None:
    r = place(REPLICATE)
    got = sorted((t.tensor, t.dst_device, tuple(t.consumers), t.bytes) for t in r.transfers)
    assert got == sorted([
        ("big:0", CPU1, ("b1",), nbytes((17,), "float32")),
        ("big:0", CPU2, ("b2",), 68),
        ("ctl:0", CPU1, ("c1",), nbytes((2,), "float32")),
        ("ctl:0", CPU2, ("c2",), 8),
        ("one:0", CPU1, ("o1", "o2"), 8),
    ])
    # "small" (a1, a2, c3 on three devices) and "home" are copied to each consumer's CPU


GPU = (
    placeholder("x", [2, 3], device=D0)
    + const("w", [3, 4], [1.0], device="/device:GPU:0")
    + f'node {{ name: "mm" op: "MatMul" device: "/device:GPU:0" input: "x" input: "w" {F32} }}\n'
    + const("shape", [2], [4, 2], "DT_INT32", device=D0)
    + f'''node {{ name: "rs" op: "Reshape" device: "/device:GPU:0" input: "mm" input: "shape"
          {F32} attr {{ key: "Tshape" value {{ type: DT_INT32 }} }} }}\n'''
    + unary("out", "Neg", "rs", D0)
    + unary("out2", "Neg", "mm", D0)
)


def test_cpu_gpu_transfers_directions_and_host_memory_inputs() -> None:
    r = place(GPU, devices="CPU=1,GPU=1")
    got = {t.tensor: t for t in r.transfers}
    assert set(got) == {"x:0", "shape:0", "rs:0", "mm:0"}
    assert (got["x:0"].src_device, got["x:0"].dst_device) == (CPU0, GPU0)
    assert got["x:0"].direction == "host->device"
    assert got["x:0"].bytes == nbytes((2, 3), "float32") and not got["x:0"].recv_on_host
    # Reshape's shape input is HostMemory on GPU: a _Recv into host memory (_HostRecv side)
    assert (got["shape:0"].dst_device, got["shape:0"].recv_on_host) == (GPU0, True)
    assert got["shape:0"].bytes == nbytes((2,), "int32") == 8
    assert got["shape:0"].to_json()["dtype"] == "int32"
    assert got["rs:0"].direction == "device->host"
    assert got["rs:0"].bytes == nbytes((4, 2), "float32")
    assert got["mm:0"].bytes == nbytes((2, 4), "float32") and got["mm:0"].consumers == ["out2"]


def tf1_loop(p: str, init: str, frame: str, add_device: str, inside: str = "") -> str:
    """``i = init; while i < 5: i = i + 1`` as tf.compat.v1.while_loop (v1 control flow)
    writes it, in scope ``p``; everything on CPU:0 but the body's add (and its constant) on
    ``add_device``. ``inside``: the enclosing loop's pivot, when the loop is nested."""
    i32 = 'attr { key: "T" value { type: DT_INT32 } }'
    enter = (f'attr {{ key: "frame_name" value {{ s: "{frame}" }} }} '
             'attr { key: "parallel_iterations" value { i: 10 } }')
    return (
        const(f"{p}/limit", [], [5], "DT_INT32", device=D0, inputs=[f"^{inside}"] if inside else [])
        + f'''node {{ name: "{p}/Enter" op: "Enter" input: "{init}" device: "{D0}" {i32} {enter}
              attr {{ key: "is_constant" value {{ b: false }} }} }}
        node {{ name: "{p}/Merge" op: "Merge" input: "{p}/Enter" input: "{p}/NextIteration"
              device: "{D0}" {i32} attr {{ key: "N" value {{ i: 2 }} }} }}
        node {{ name: "{p}/Less/Enter" op: "Enter" input: "{p}/limit" device: "{D0}" {i32} {enter}
              attr {{ key: "is_constant" value {{ b: true }} }} }}
        node {{ name: "{p}/Less" op: "Less" input: "{p}/Merge" input: "{p}/Less/Enter"
              device: "{D0}" {i32} }}
        node {{ name: "{p}/LoopCond" op: "LoopCond" input: "{p}/Less" device: "{D0}" }}
        node {{ name: "{p}/Switch" op: "Switch" input: "{p}/Merge" input: "{p}/LoopCond"
              device: "{D0}" {i32} }}
        node {{ name: "{p}/Identity" op: "Identity" input: "{p}/Switch:1" device: "{D0}" {i32} }}
        '''
        + const(f"{p}/add/y", [], [1], "DT_INT32", device=add_device, inputs=[f"^{p}/Identity"])
        + unary(f"{p}/add", "AddV2", f"{p}/Identity", add_device, "DT_INT32",
                extra=[f"{p}/add/y"])
        + f'''node {{ name: "{p}/NextIteration" op: "NextIteration" input: "{p}/add"
              device: "{D0}" {i32} }}
        node {{ name: "{p}/Exit" op: "Exit" input: "{p}/Switch" device: "{D0}" {i32} }}\n'''
    )


LOOP = (
    const("i0", [], [0], "DT_INT32", device=D0)
    + tf1_loop("while", "i0", "while/while_context", D1)
    + unary("result", "Identity", "while/Exit", D2, "DT_INT32")
)

# An inner loop in the body of an outer one; the inner loop's result is used on CPU:1, still
# inside the outer loop; the outer result on CPU:2, after it.
NESTED = (
    const("i0", [], [0], "DT_INT32", device=D0)
    + tf1_loop("outer", "i0", "outer/ctx", D0)
    + tf1_loop("outer/inner", "outer/Identity", "outer/inner/ctx", D0, inside="outer/Identity")
    + unary("outer/use", "Identity", "outer/inner/Exit", D1, "DT_INT32")
    + unary("result", "Identity", "outer/Exit", D2, "DT_INT32")
)


def test_tf1_while_loop_transfers_are_marked_in_loop() -> None:
    r = place(LOOP)
    got = {(t.tensor, t.dst_device): t for t in r.transfers}
    assert set(got) == {
        ("while/Identity:0", CPU1),     # into the body on CPU:1, every iteration
        ("^while/Identity", CPU1),      # the control edge keeping while/add/y in the frame
        ("while/add:0", CPU0),          # back to NextIteration
        ("while/Exit:0", CPU2),         # once, after the loop
    }
    for key in (("while/Identity:0", CPU1), ("^while/Identity", CPU1), ("while/add:0", CPU0)):
        assert got[key].in_loop is True and got[key].loop == "while/while_context", key
    assert got["while/Exit:0", CPU2].in_loop is False
    assert got["while/Identity:0", CPU1].bytes == nbytes((), "int32") == 4
    assert got["while/add:0", CPU0].bytes == 4
    assert got["^while/Identity", CPU1].bytes == 0
    assert got["while/Exit:0", CPU2].bytes == 4


def test_an_exit_of_a_nested_loop_is_still_inside_the_outer_loop() -> None:
    r = place(NESTED)
    got = {(t.tensor, t.dst_device): t for t in r.transfers}
    assert set(got) == {("outer/inner/Exit:0", CPU1), ("outer/Exit:0", CPU2)}
    inner_exit = got["outer/inner/Exit:0", CPU1]
    assert (inner_exit.in_loop, inner_exit.loop) == (True, "outer/ctx")   # every outer step
    assert got["outer/Exit:0", CPU2].in_loop is False                     # once
    assert inner_exit.bytes == got["outer/Exit:0", CPU2].bytes == nbytes((), "int32")


def test_loop_frames_follow_build_control_flow_info() -> None:
    """graph/control_flow.cc: an Enter opens its frame, an Exit belongs to the loop but its
    successors are in the parent frame; constants gated on a pivot are in the pivot's frame."""
    from placelint.analyses.transfers import loop_frames, output_frames
    from placelint.model.build import build_graph

    g = build_graph(parse(NESTED)).graph
    frames, outputs = loop_frames(g), output_frames(g)
    assert frames["outer/Merge"] == frames["outer/add"] == frames["outer/Exit"] == "outer/ctx"
    assert frames["outer/inner/limit"] == frames["outer/use"] == "outer/ctx"
    assert frames["outer/inner/Merge"] == frames["outer/inner/Exit"] == "outer/inner/ctx"
    assert "i0" not in frames and "outer/limit" not in frames and "result" not in frames
    assert outputs["outer/inner/Exit"] == "outer/ctx" and "outer/Exit" not in outputs
    assert {k: v for k, v in outputs.items() if "Exit" not in k} == {
        k: v for k, v in frames.items() if "Exit" not in k}


# --------------------------------------------------------------------------- the CLI's JSON


def test_place_json_transfer_objects(tmp_path: Path) -> None:
    path = tmp_path / "dedup.pbtxt"
    path.write_text(DEDUP + unary("f", "Neg", "x", D2, extra=["^e"]))
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "placelint"), "place", str(path), "--devices",
         "CPU=3", "--format", "json"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    [model] = json.loads(proc.stdout)
    transfers = model["transfers"]
    for t in transfers:
        assert ALL_KEYS <= set(t), t
    key = lambda t: (t["tensor"], t["to"])  # noqa: E731
    assert sorted(transfers, key=key) == [
        {"tensor": "^e", "from": CPU0, "to": CPU2, "consumers": ["f"], "dtype": "float32",
         "bytes": 0, "control": True, "in_loop": False, "direction": "host->host", "network": False, "phase": "graph", "fed": False},
        {"tensor": "x:0", "from": CPU0, "to": CPU1, "consumers": ["a", "b", "c"],
         "dtype": "float32", "bytes": 4 * 5 * 4, "control": False, "in_loop": False,
         "direction": "host->host", "network": False, "phase": "graph", "fed": False},
        {"tensor": "x:0", "from": CPU0, "to": CPU2, "consumers": ["d", "f"],
         "dtype": "float32", "bytes": 80, "control": False, "in_loop": False,
         "direction": "host->host", "network": False, "phase": "graph", "fed": False},
    ]
    assert model["placement"]["f"] == CPU2


# --------------------------------------------------------------------------- against TensorFlow


@pytest.mark.tf
@pytest.mark.parametrize("name", ["MAIN", "DEDUP", "REF", "REPLICATE", "LOOP", "NESTED"])
def test_cpu_graphs_match_tensorflow(name: str) -> None:
    """TF (3-CPU session, partition graphs) inserts exactly these transfers, and the bytes are
    the size of the tensor TF's own shape inference gives."""
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from differential.keras_report import inputs_as_constants
        from differential.oracle import tf_place
        from differential.report import pl_transfer_key
    finally:
        sys.path.remove(str(ROOT / "tests"))
    import tensorflow as tf

    text = globals()[name]
    # the oracle runs every node: Placeholders become zero Consts of the same shape (all have
    # more than 16 elements or one consumer: ReplicateConstantsPass leaves them alone)
    gd = inputs_as_constants(parse(text))
    data = gd.SerializeToString()
    tf_result = tf_place(data, 3, False)
    assert tf_result.status == "placed" and tf_result.transfers_complete, tf_result.notes
    pl = place_graphdef(data, devices="CPU=3")
    assert pl.errors == []
    assert {n: pl.placement[n] for n in tf_result.placement} == tf_result.placement
    pl_keys = {pl_transfer_key(t): t for t in pl.transfers}
    tf_keys = {t.key(): t for t in tf_result.model_transfers()}
    assert set(pl_keys) == set(tf_keys)
    assert len(pl.transfers) == len(tf_result.model_transfers())   # incl. undeduplicated refs
    for k, t in tf_keys.items():
        assert sorted(set(pl_keys[k].consumers)) == sorted(t.consumers), k

    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(text_format.Parse(text, tf.compat.v1.GraphDef()), name="")
    compared = 0
    for t in pl.transfers:
        if t.control:
            continue
        out = g.get_operation_by_name(t.src).outputs[t.src_slot]
        # TF's import-time shapes do not go round a TF1 loop's back edge (Merge is unknown)
        assert out.shape.is_fully_defined() or name in ("LOOP", "NESTED"), t.tensor
        if out.shape.is_fully_defined():
            assert t.bytes == out.shape.num_elements() * out.dtype.base_dtype.size, t.tensor
            compared += 1
    assert compared >= {"MAIN": 14, "DEDUP": 2, "REF": 3, "REPLICATE": 5, "LOOP": 0,
                        "NESTED": 0}[name]


def test_sizes_by_position_equal_sizes_by_name() -> None:
    # find_transfers reads a tensor's size by its source's position when the shapes are of
    # the graph it partitions, by name otherwise (a step's graph, the shapes the whole
    # graph's): both give the same transfers.
    from placelint.analyses.placer import place as place_graph
    from placelint.analyses.shape_inference import infer_shapes
    from placelint.analyses.transfers import find_transfers
    from placelint.model.build import build_graph
    from placelint.model.devices import DeviceSet

    for text in (MAIN, REF, REPLICATE):
        g = build_graph(parse(text)).graph
        placement = place_graph(g, DeviceSet.parse("CPU=3"))
        own, other = infer_shapes(g), infer_shapes(build_graph(parse(text)).graph)
        assert own.positions is g.positions() and other.positions is not g.positions()
        by_position = [t.to_json() for t in find_transfers(g, placement, own)]
        by_name = [t.to_json() for t in find_transfers(g, placement, other)]
        assert by_position == by_name and any(t["bytes"] for t in by_name)
