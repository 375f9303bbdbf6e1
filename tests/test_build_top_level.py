"""The GraphDef's own nodes are added by ``_Builder.add_top_level``'s loop, which does for
the usual node and input what ``add`` and ``_add_inputs`` do; anything else goes through
them. Built both ways (``fast=False``: every node through ``add``), random graphs give the
same graph (nodes, attrs, typing, every edge in the order of its two nodes' lists), the
same diagnostics and the same import-time findings: plain and ``x:1`` inputs, control
inputs (a data input after one), forward references and self loops (edges that wait for
``finish``), missing sources, sources of unknown ops or without outputs, ref and
mismatched dtypes, duplicate names, empty and odd input strings, long and non-ASCII names,
and a function call among them (after which every node goes through ``add``)."""

from __future__ import annotations

import random

import pytest

from placelint.loaders.library import FunctionLibrary
from placelint.model import build
from placelint.model.build import _build
from placelint.model.expand import Reexpanded
from placelint.proto import GraphDef

FLOAT, INT32 = 1, 3


def _library(gd: GraphDef, name: str = "f") -> None:
    """``name(x) -> y`` (``f`` unless named): an Identity."""
    f = gd.library.function.add()
    f.signature.name = name
    f.signature.input_arg.add(name="x", type=FLOAT)
    f.signature.output_arg.add(name="y", type=FLOAT)
    f.node_def.add(name="id", op="Identity", input=["x"]).attr["T"].type = FLOAT
    f.ret["y"] = "id:output:0"


def _random_graph(rng: random.Random, with_call: bool) -> GraphDef:
    gd = GraphDef()
    if with_call:
        _library(gd)
    n = rng.randrange(4, 24)
    names = [rng.choice(("n{}", "scope/n{}", "\u00e9t\u00e9_{}", "x" * 130 + "{}", "k:{}"))
             .format(i)
             for i in range(n)]
    for i, name in enumerate(names):
        if rng.random() < 0.05 and i:
            name = names[rng.randrange(i)]      # a duplicate name
        op = rng.choice(("Placeholder", "VariableV2", "Identity", "Identity", "Add", "NoOp",
                         "Assign", "MyCustomOp", "Cast", "VarHandleOp", "ReadVariableOp",
                         "Switch", "Switch")
                        + (("f",) if with_call else ()))
        nd = gd.node.add(name=name, op=op)
        if rng.random() < 0.3:
            nd.device = rng.choice(("/device:CPU:0", "/job:w/task:1/device:CPU:1", "bad::"))
        dtype = FLOAT if rng.random() < 0.9 else INT32
        if op in ("Placeholder", "VariableV2", "VarHandleOp", "ReadVariableOp"):
            nd.attr["dtype"].type = dtype
            if op in ("VariableV2", "VarHandleOp"):
                nd.attr["shape"].shape.SetInParent()
        elif op in ("Identity", "Add", "Assign", "Switch"):
            nd.attr["T"].type = dtype
        elif op == "Cast":
            nd.attr["SrcT"].type = dtype
            nd.attr["DstT"].type = FLOAT
        if rng.random() < 0.4:
            nd.attr["_class"].list.s.append(f"loc:@{rng.choice(names)}".encode())
        data = {"Placeholder": 0, "VariableV2": 0, "VarHandleOp": 0, "NoOp": 0, "Identity": 1,
                "Cast": 1, "ReadVariableOp": 1, "Switch": 2,
                "Add": 2, "Assign": 2, "MyCustomOp": rng.randrange(3), "f": 1}[op]
        if rng.random() < 0.1:
            data += rng.choice((-1, 1))
        sources = names[:i] if i and rng.random() < 0.8 else names   # else forward references
        inputs = []
        for _ in range(max(data, 0)):
            src = rng.choice(sources)
            inputs.append(rng.choice((src, src, src, f"{src}:0", f"{src}:1", "missing")))
        controls = [f"^{rng.choice(sources)}" for _ in range(rng.choice((0, 0, 1, 2)))]
        if controls and inputs and rng.random() < 0.2:
            inputs.insert(rng.randrange(len(inputs)), controls.pop())  # data after control
        inputs += controls
        if rng.random() < 0.1:
            src = rng.choice(sources)
            inputs.append(rng.choice(("", "^", ":", "^missing", name, "a:b:c", f"^{src}:0",
                                      f"{src}:x", f"{src}:01", f"{src}:-1", f"{src}:\u0661",
                                      f"{src}:99999999999", f"{src}:0000000001")))
        nd.input.extend(inputs)
    return gd


def _shape(result):
    graph = result.graph
    nodes = [(n.name, n.op, n.device, n.spec, sorted((k, v.SerializeToString())
                                                    for k, v in n.attrs.items()),
              n.output_dtypes, n.output_shapes, n.op_signature, n.function, n.call_site,
              n.soft, [(e.src, e.src_slot, e.dst_slot, e.dtype, e.ref) for e in n.in_edges],
              [(e.dst, e.src_slot, e.dst_slot) for e in n.out_edges]) for n in graph]
    return (nodes, [(d.rule, d.node or "", d.message) for d in result.diagnostics],
            dict(graph.invalid_nodes), graph.edges_point_forward())


def _built(gd: GraphDef, fast: bool):
    library = FunctionLibrary.of(gd)
    try:
        return _shape(_build(gd, "t", library, True, fast))
    except Reexpanded:      # (as build_graph does)
        return _shape(_build(gd, "t", library, False, fast))


def count_adds(monkeypatch) -> list[str]:
    """The names of the nodes ``_Builder.add`` makes from now on (the list fills as the
    builder runs): the nodes a fast loop left to it."""
    made: list[str] = []
    real_add = build._Builder.add

    def counting_add(self, nd, name, *args):
        made.append(name)
        return real_add(self, nd, name, *args)

    monkeypatch.setattr(build._Builder, "add", counting_add)
    return made


@pytest.mark.parametrize("with_call", [False, True])
def test_the_loop_builds_what_add_builds(with_call, monkeypatch):
    made = count_adds(monkeypatch)
    rng = random.Random(5 + with_call)
    findings = by_loop = 0
    for _ in range(300):
        gd = _random_graph(rng, with_call)
        made.clear()
        fast = _built(gd, True)
        by_loop += len(gd.node) - len(made)
        assert fast == _built(gd, False)
        findings += len(fast[1]) > 0
    assert by_loop > (300 if with_call else 1000) and findings > 100    # (both ways are used)


def test_a_call_ends_the_loop_for_the_later_nodes():
    """Once a call is expanded, an input may name its outputs: ``add`` reads them through
    the aliases."""
    gd = GraphDef()
    _library(gd)
    gd.node.add(name="p", op="Placeholder").attr["dtype"].type = FLOAT
    gd.node.add(name="c", op="f", input=["p"])
    use = gd.node.add(name="use", op="Identity", input=["c"])
    use.attr["T"].type = FLOAT
    assert _built(gd, True) == _built(gd, False)
    built = _build(gd, "t", FunctionLibrary.of(gd), True)
    assert [e.src for e in built.graph["use"].in_edges] == ["c/y"]
