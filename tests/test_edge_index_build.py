"""The integer edge index and the positions the graph builder writes as it connects the nodes
are those derived from the built graph's ``Edge`` objects (``edge_index._graph_edges``), also
when edges are made out of graph order (forward references, expanded function bodies) or
removed by validation (an illegal cycle)."""

from __future__ import annotations

from placelint.model.build import build_graph
from placelint.model.edge_index import _graph_edges, graph_edges
from placelint.proto import GraphDef

from graphdefs import const, graph_def, op


def _edges(ge) -> list[tuple[str, int, str, int, int, int]]:
    return [(e.src, e.src_slot, e.dst, e.dst_slot, s, d)
            for e, s, d in zip(ge.edges, ge.src.tolist(), ge.dst.tolist())]


def _assert_as_derived(graph) -> None:
    built, derived = graph_edges(graph), _graph_edges(graph)
    assert _edges(built) == _edges(derived)
    assert [a is b for a, b in zip(built.edges, derived.edges)] == [True] * len(derived.edges)
    assert built.src_slot.tolist() == derived.src_slot.tolist()
    assert graph.positions() == {name: i for i, name in enumerate(graph.nodes)}


def test_a_forward_reference_is_indexed_in_its_destination_s_place():
    gd = graph_def(const("a", [1.0]), op("b", "Identity", ["c"]), op("c", "Identity", ["a"]),
                   op("d", "AddN", ["b", "c:0", "^a"], N=2))
    graph = build_graph(gd).graph
    ge = graph_edges(graph)
    assert _edges(ge) == [("c", 0, "b", 0, 2, 1), ("a", 0, "c", 0, 0, 2),
                          ("b", 0, "d", 0, 1, 3), ("c", 0, "d", 1, 2, 3),
                          ("a", -1, "d", -1, 0, 3)]
    _assert_as_derived(graph)


def _library_graph(body_inputs: dict[str, list[str]]) -> GraphDef:
    gd = GraphDef()
    f = gd.library.function.add()
    f.signature.name = "f"
    for name, inputs in body_inputs.items():
        nd = f.node_def.add(name=name, op="NoOp")
        nd.input.extend(inputs)
    gd.node.add(name="start", op="NoOp")
    for i in range(2):
        gd.node.add(name=f"call{i}", op="f", input=["^start"])
    return gd


def test_expanded_bodies_are_indexed_as_their_edge_lists_read():
    graph = build_graph(_library_graph({"a": ["^b"], "b": []})).graph
    ge = graph_edges(graph)
    assert ("call1/b", -1, "call1/a", -1) in [e[:4] for e in _edges(ge)]
    assert ge.dst.tolist() == sorted(ge.dst.tolist())
    _assert_as_derived(graph)


def test_the_index_follows_the_edges_validation_removes():
    result = build_graph(_library_graph({"a": ["^b"], "b": ["^a"]}))
    assert [d.code for d in result.diagnostics] == ["PL005"]
    graph = result.graph
    assert graph.nodes["call0/a"].in_edges == []    # (call0/b -> call0/a closed the cycle)
    assert [e.src for e in graph.nodes["call0/b"].in_edges] == ["call0/a"]
    _assert_as_derived(graph)
