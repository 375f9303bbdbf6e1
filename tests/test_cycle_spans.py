"""Looking for a cycle only where the edges that point backward are (``no_cycle_within``)
answers as Kahn's pass over the whole graph does, and a cycle inside an expanded function
body is still refused."""

from __future__ import annotations

import random

from placelint.model.build import build_graph
from placelint.model.graph import Edge, Graph, Node
from placelint.model.validate import no_cycle_within, unprocessed_nodes
from placelint.proto import GraphDef


def _random_graph(rng: random.Random, n: int, n_edges: int, n_back: int) -> Graph:
    g = Graph("t")
    for i in range(n):
        g.add_node(Node(f"n{i}", "Identity"))
    for _ in range(n_edges):
        a, b = sorted(rng.sample(range(n), 2))
        g.add_edge(Edge(f"n{a}", -1, f"n{b}", -1))
    for _ in range(n_back):
        a = rng.randrange(n)
        b = rng.randrange(a, min(n, a + rng.randrange(1, 6)))     # (b == a: a self-loop)
        g.add_edge(Edge(f"n{b}", -1, f"n{a}", -1))
    return g


def test_spans_agree_with_kahn_on_random_graphs():
    rng = random.Random(7)
    answers = {True: 0, False: 0}
    for _ in range(600):
        g = _random_graph(rng, rng.randrange(2, 25), rng.randrange(0, 40), rng.randrange(0, 4))
        index = g.positions()
        backward = [(index[e.dst], index[e.src]) for e in g.edges()
                    if index[e.src] >= index[e.dst]]
        acyclic = not unprocessed_nodes(g)[0]
        assert no_cycle_within(g, backward) == acyclic
        answers[acyclic] += 1
    assert answers[True] > 100 and answers[False] > 100


def test_touching_spans_close_one_cycle():
    """a -> d forward, d -> b and b -> a backward: the spans [1, 3] and [0, 1] touch."""
    g = Graph("t")
    for name in "abcd":
        g.add_node(Node(name, "NoOp"))
    for src, dst in (("a", "d"), ("d", "b"), ("b", "a")):
        g.add_edge(Edge(src, -1, dst, -1))
    assert not no_cycle_within(g, [(1, 3), (0, 1)])
    assert no_cycle_within(g, [])


def _library_graph(body_inputs: dict[str, list[str]]) -> GraphDef:
    gd = GraphDef()
    f = gd.library.function.add()
    f.signature.name = "f"
    for name, inputs in body_inputs.items():
        nd = f.node_def.add(name=name, op="NoOp")
        nd.input.extend(inputs)
    for i in range(2):
        gd.node.add(name=f"call{i}", op="f")
    return gd


def test_a_body_listing_a_noop_after_its_consumer_is_no_cycle():
    result = build_graph(_library_graph({"a": ["^b"], "b": []}))
    assert [d.code for d in result.diagnostics] == []
    g = result.graph
    assert [e.src for e in g.nodes["call1/a"].in_edges] == ["call1/b"]


def test_a_cycle_in_a_body_is_refused_in_each_call():
    result = build_graph(_library_graph({"a": ["^b"], "b": ["^a"]}))
    [diag] = result.diagnostics
    assert diag.code == "PL005"
    assert "4 nodes are in or after a cycle" in diag.message
    assert "(call0/b -> call0/a -> call0/b)" in diag.message
    assert "ignores the edge(s) call0/b -> call0/a, call1/b -> call1/a" in diag.message
