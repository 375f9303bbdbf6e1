"""Inputs read through the aliases of the calls expanded so far (a call's output -> its
``_Retval``, ``^call`` -> its exit NoOp) become edges as they are read instead of waiting
for ``finish``: the graph, the edges' order in every node's lists and the findings are the
same as when each such edge waits (``early_alias=False``), including a graph that expands
two calls of one name (whose second expansion redirects the first one's aliases)."""

from __future__ import annotations

import random

import pytest

from placelint.model.build import _build, build_graph
from placelint.model.expand import Reexpanded
from placelint.loaders.library import FunctionLibrary
from placelint.proto import AttrValue, GraphDef

FLOAT = 1


def identity_function(gd: GraphDef, name: str = "f", arg: str = "x") -> None:
    """Add ``name(arg) -> y``, an Identity of a float, to ``gd``'s library."""
    f = gd.library.function.add()
    f.signature.name = name
    f.signature.input_arg.add(name=arg, type=FLOAT)
    f.signature.output_arg.add(name="y", type=FLOAT)
    nd = f.node_def.add(name="id", op="Identity", input=[arg])
    nd.attr["T"].type = FLOAT
    f.ret["y"] = "id:output:0"


def _library(gd: GraphDef) -> None:
    """``f(x) -> y`` (an Identity), ``g(x) -> y`` calling ``f`` and reading its output."""
    identity_function(gd)
    g = gd.library.function.add()
    g.signature.name = "g"
    g.signature.input_arg.add(name="x", type=FLOAT)
    g.signature.output_arg.add(name="y", type=FLOAT)
    call = g.node_def.add(name="inner", op="StatefulPartitionedCall", input=["x"])
    call.attr["f"].func.name = "f"
    call.attr["Tin"].list.type.append(FLOAT)
    call.attr["Tout"].list.type.append(FLOAT)
    use = g.node_def.add(name="after", op="Identity", input=["inner:output:0", "^inner"])
    use.attr["T"].type = FLOAT
    g.ret["y"] = "after:output:0"


def _node(gd: GraphDef, name: str, op: str, inputs) -> None:
    nd = gd.node.add(name=name, op=op, input=inputs)
    if op == "Identity":
        nd.attr["T"].type = FLOAT
    elif op == "Placeholder":
        nd.attr["dtype"].type = FLOAT
    elif op == "StatefulPartitionedCall":
        nd.attr["f"].func.name = "f" if len(gd.node) % 2 else "g"
        nd.attr["Tin"].list.type.append(FLOAT)
        nd.attr["Tout"].list.type.append(FLOAT)


def _random_graph(rng: random.Random, duplicate_call: bool = False) -> GraphDef:
    gd = GraphDef()
    _library(gd)
    n = rng.randrange(3, 14)
    names = [f"n{i}" for i in range(n)]
    calls = set()
    _node(gd, "p", "Placeholder", [])
    for i, name in enumerate(names):
        op = rng.choice(("Identity", "StatefulPartitionedCall", "NoOp"))
        if op == "StatefulPartitionedCall":
            calls.add(name)
        # a data input from anywhere (forward references too), maybe control inputs
        src = rng.choice(["p"] + names)
        inputs = [] if op == "NoOp" else [src if rng.random() < 0.5 else f"{src}:0"]
        inputs += [f"^{rng.choice(['p'] + names)}" for _ in range(rng.randrange(3))]
        if op != "NoOp" and src != "p" and src not in calls and rng.random() < 0.3:
            inputs[0] = "p"
        _node(gd, name, op, inputs)
    if duplicate_call and calls:
        _node(gd, rng.choice(sorted(calls)), "StatefulPartitionedCall", ["p"])
    return gd


def _shape(result):
    graph = result.graph
    return ([(n.name, [(e.src, e.src_slot, e.dst_slot, e.dtype, e.ref) for e in n.in_edges],
              [(e.dst, e.src_slot, e.dst_slot) for e in n.out_edges]) for n in graph],
            sorted((d.rule, d.node or "", d.message) for d in result.diagnostics),
            dict(graph.invalid_nodes), graph.edges_point_forward())


def _late(gd: GraphDef):
    return _build(gd, "t", FunctionLibrary.of(gd), False)


@pytest.mark.parametrize("duplicate_call", [False, True])
def test_early_edges_match_waiting_ones(duplicate_call):
    rng = random.Random(11 + duplicate_call)
    made_early = 0
    for _ in range(150):
        gd = _random_graph(rng, duplicate_call)
        early = build_graph(gd, name="t")
        assert _shape(early) == _shape(_late(gd))
        made_early += any(e.src.endswith("/y") or e.src.endswith("output_control_node")
                          for n in early.graph for e in n.in_edges)
    assert made_early > 50


def test_a_second_call_of_one_name_starts_again_without_early_edges():
    gd = GraphDef()
    _library(gd)
    _node(gd, "p", "Placeholder", [])
    _node(gd, "c", "StatefulPartitionedCall", ["p"])       # (f)
    _node(gd, "use", "Identity", ["c:0", "^c"])
    _node(gd, "c", "StatefulPartitionedCall", ["p"])       # (g): redirects c:0 and ^c
    with pytest.raises(Reexpanded):
        _build(gd, "t", FunctionLibrary.of(gd), True)
    built = build_graph(gd, name="t")
    assert _shape(built) == _shape(_late(gd))
    assert [e.src for e in built.graph["use"].in_edges] == [built.alias[("c", 0)][0],
                                                            built.control_alias["c"]]
