"""What is derived from a Graph (the analyses' indexed DAG) follows the graph's changes."""

from __future__ import annotations

from placelint.analyses.dag import index_graph
from placelint.model.graph import Edge, Graph, Node


def _chain() -> Graph:
    g = Graph("t")
    for name in "abc":
        g.add_node(Node(name, "Identity"))
    g.add_edge(Edge("a", 0, "b", 0))
    g.add_edge(Edge("b", 0, "c", 0))
    return g


def test_index_is_kept_while_the_graph_stays():
    g = _chain()
    assert index_graph(g) is index_graph(g)


def test_same_counts_other_edges_give_a_new_index():
    """Node and edge counts are no identity: a removed and an added edge keep both."""
    g = _chain()
    before = index_graph(g)
    assert list(zip(before.src.tolist(), before.dst.tolist())) == [(0, 1), (1, 2)]
    g.remove_edge(g.nodes["b"].in_edges[0])
    g.add_edge(Edge("a", 0, "c", 1))
    after = index_graph(g)
    assert after is not before
    assert list(zip(after.src.tolist(), after.dst.tolist())) == [(1, 2), (0, 2)]


def test_an_added_node_gives_a_new_index():
    g = _chain()
    before = index_graph(g)
    g.add_node(Node("d", "NoOp"))
    assert index_graph(g).n == before.n + 1


def test_op_index_asks_each_op_type_once_and_follows_added_nodes():
    from placelint.model.op_index import op_index
    g = _chain()
    g.add_node(Node("d", "NoOp"))
    g.add_node(Node("e", "Identity"))
    index = op_index(g)
    assert op_index(g) is index
    assert index.ops == ["Identity", "Identity", "Identity", "NoOp", "Identity"]
    asked = []
    mask = index.mask(lambda op: asked.append(op) or op == "NoOp")
    assert mask.tolist() == [False, False, False, True, False]
    assert sorted(asked) == ["Identity", "NoOp"]
    assert index.per_node(len, int).tolist() == [8, 8, 8, 4, 8]
    assert index.any_of({"NoOp", "Const"}) and not index.any_of({"Const"})
    mask[:] = True      # a mask is the caller's own
    assert index.mask("NoOp".__eq__).tolist() == [False, False, False, True, False]
    g.add_node(Node("f", "Const"))
    assert op_index(g) is not index and op_index(g).any_of({"Const"})
