"""A step's graph gets its ``GraphEdges`` from its graph's (``step.subgraph``) rather than
from ``_graph_edges``' look-up of every edge's source by name: both ways give the same
arrays, whatever the step keeps (feeds of data and of control edges, duplicate nodes,
inputs naming no node, expanded function calls), and ``IndexedDag.index`` answers as the
positions do without building them."""

from __future__ import annotations

import numpy as np

from placelint.analyses.dag import index_graph
from placelint.loaders.steps import StepSpec
from placelint.model.build import build_graph
from placelint.model.edge_index import _graph_edges, graph_edges
from placelint.model.graph import Graph
from placelint.model.step import Resolver, build_step
from placelint.proto import GraphDef

from graphdefs import FLOAT, const, graph_def, op, placeholder


def _kept_edges_right(g: Graph) -> bool:
    """Whether the step kept ``g``'s GraphEdges; assert they are what ``_graph_edges``
    finds by names (or, when not kept, that it finds them right)."""
    kept = g._derived is not None and "graph_edges" in g._derived
    given, fresh = graph_edges(g), _graph_edges(g)
    assert given.edges == fresh.edges
    for a, b in ((given.src, fresh.src), (given.dst, fresh.dst),
                 (given.src_slot, fresh.src_slot)):
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b)
    counted = {name: i for i, name in enumerate(g.nodes)}
    assert fresh.src.tolist() == [counted.get(e.src, -1) for e in fresh.edges]
    assert fresh.dst.tolist() == [counted[e.dst] for e in fresh.edges]
    assert fresh.src_slot.tolist() == [e.src_slot for e in fresh.edges]
    return kept


def _model():
    return graph_def(
        placeholder("x", (4,)),
        const("c", [1.0, 2.0, 3.0, 4.0], dtype=FLOAT, shape=(4,)),
        op("a", "Mul", ["x", "c"]),
        op("a", "Relu", ["x"]),                   # a duplicate: the first is kept
        op("out_a", "Relu", ["a", "^x"]),         # a control edge from a fed Placeholder
        op("late", "Relu", ["later"]),            # an input listed before its node
        op("later", "Relu", ["x"]),
        op("ghost_user", "Relu", ["ghost"]),      # an input naming no node
        op("b", "Mul", ["x", "c"]),
        op("out_b", "Relu", ["b"]),
        op("side", "NoOp", ["^out_b", "^c", "^late"]),
    )


def _step(gd, **spec):
    result = build_graph(gd)
    graph = result.graph
    resolver = Resolver(graph, result.alias, result.control_alias)
    return graph, build_step(graph, resolver, StepSpec("t", **spec))


def test_a_pruned_step_with_feeds_keeps_its_edges_from_the_graphs():
    graph, step = _step(_model(), fetches=("out_a:0", "out_b:0"), feeds=("x:0", "c:0"),
                        targets=("side",))
    g = step.graph
    assert list(g.nodes)[:2] == ["_arg_x_0_0", "_arg_c_0_1"] and "later" in g.nodes
    assert "ghost_user" not in g.nodes and g.nodes["a"].op == "Mul"
    assert [e.src for e in g.nodes["out_a"].in_edges] == ["a", "_arg_x_0_0"]
    assert _kept_edges_right(g)
    _kept_edges_right(graph)


def test_a_step_without_feeds_and_one_keeping_every_node():
    graph, step = _step(_model(), fetches=("out_b:0",))
    assert sorted(step.graph.nodes) == ["b", "c", "out_b", "x"]
    assert _kept_edges_right(step.graph)
    graph, step = _step(_model(), targets=("side", "out_a", "ghost_user"))
    assert list(step.graph.nodes) == list(graph.nodes)
    assert _kept_edges_right(step.graph)


def test_a_step_through_expanded_function_calls():
    gd = GraphDef()
    f = gd.library.function.add()
    f.signature.name = "f"
    for name, inputs in {"a": ["^b"], "b": [], "c": ["^a"]}.items():
        f.node_def.add(name=name, op="NoOp").input.extend(inputs)
    gd.node.add(name="first", op="NoOp")
    gd.node.add(name="unused", op="NoOp")
    for i in range(2):
        gd.node.add(name=f"call{i}", op="f").input.append("^first")
    gd.node.add(name="last", op="NoOp").input.extend(["^call0", "^call1"])
    graph, step = _step(gd, targets=("last", "call0/c", "call1/c"))
    g = step.graph
    assert "call1/a" in g.nodes and "unused" not in g.nodes
    assert _kept_edges_right(g)


def test_a_kept_node_named_as_an_arg_takes_its_place():
    # (a node named as TF names a feed's _Arg replaces the _Arg in the step's nodes, as
    # before: its GraphEdges are then found by names)
    gd = graph_def(placeholder("x", (4,)), op("_arg_x_0_0", "Relu", ["x"]),
                   op("y", "Relu", ["_arg_x_0_0"]))
    graph, step = _step(gd, fetches=("y:0",), feeds=("x:0",))
    g = step.graph
    assert list(g.nodes) == ["_arg_x_0_0", "y"] and g.nodes["_arg_x_0_0"].op == "Relu"
    assert not _kept_edges_right(g)


def test_the_dag_index_answers_as_the_positions_without_building_them():
    graph, step = _step(_model(), fetches=("out_a:0",), feeds=("x:0",))
    g = step.graph
    dag = index_graph(g)
    assert g._positions is None
    assert list(dag.index) == list(g.nodes) and len(dag.index) == len(g.nodes)
    assert "a" in dag.index and "later" not in dag.index
    assert g._positions is None         # (iterating, sizing, membership: no dict)
    assert dict(dag.index) == g.positions() == {n: i for i, n in enumerate(g.nodes)}
    assert dag.index["a"] == g.positions()["a"] and dag.index.get("later", -1) == -1
