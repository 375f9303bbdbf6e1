"""The expansion budget caps what function bodies add, never the GraphDef's own nodes.

A plain TF1 GraphDef of more than a million nodes (a large training graph) was cut at the
millionth node with "function expansion stopped", though it has no function to expand.
"""

from __future__ import annotations

import pytest

from placelint.model import build
from placelint.model.build import build_graph
from placelint.proto import GraphDef


@pytest.fixture
def budget(monkeypatch):
    monkeypatch.setattr(build, "MAX_EXPANDED_NODES", 50)
    return 50


def _placeholders(gd: GraphDef, n: int) -> None:
    for i in range(n):
        nd = gd.node.add(name=f"p{i}", op="Placeholder")
        nd.attr["dtype"].type = 1


def test_a_graph_larger_than_the_budget_without_functions_is_analysed_whole(budget):
    gd = GraphDef()
    _placeholders(gd, 3 * budget)
    result = build_graph(gd)
    assert len(result.graph) == 3 * budget
    assert [d.code for d in result.diagnostics if d.code == "PL002"] == []


def test_function_bodies_may_add_the_budget_beyond_the_graph_s_own_nodes(budget):
    gd = GraphDef()
    _placeholders(gd, 2 * budget)
    # f0 calls f1 twice, ..., f9 holds two NoOps: 2^10 body nodes once expanded
    for d in range(10):
        f = gd.library.function.add()
        f.signature.name = f"f{d}"
        for k in range(2):
            f.node_def.add(name=f"c{k}", op=f"f{d + 1}" if d + 1 < 10 else "NoOp")
    gd.node.add(name="top", op="f0")
    result = build_graph(gd)
    stopped = [d.message for d in result.diagnostics if d.code == "PL002"]
    own = 2 * budget + 1
    assert stopped == [f"function expansion stopped at {own + budget} nodes (the graph's "
                       f"{own} and {budget} from function bodies); the rest of the model is "
                       "not analysed"]
    # every top-level placeholder is in the graph, and the bodies stopped at the budget
    assert all(f"p{i}" in result.graph.nodes for i in range(2 * budget))
    # (+ one NoOp per open call, which its control consumers wait on)
    assert own + budget <= len(result.graph) <= own + budget + 10
