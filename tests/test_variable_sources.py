"""PL202's ``variable_sources`` (every walk at once over the graph's arrays) against
``variable_source`` (one walk by name), on random graphs of variables, reads and other ops,
with control edges listed before data edges and chains longer than the walk's limit."""

import random

import pytest

from placelint.checks.pl202_variable_device_split import variable_source, variable_sources
from placelint.model.graph import Edge, Graph, Node

OPS = ["VariableV2", "VarHandleOp", "Identity", "Identity", "ReadVariableOp", "_Arg", "Relu",
       "NoOp", "IdentityN"]


def _random_graph(rng: random.Random, n: int) -> Graph:
    g = Graph("random")
    for i in range(n):
        g.add_node(Node(f"n{i}", rng.choice(OPS)))
        if i == 0:
            continue
        edges = [Edge(f"n{rng.randrange(i)}", rng.randrange(2), f"n{i}", k)
                 for k in range(rng.choice([0, 1, 1, 1, 2]))]
        controls = [Edge(f"n{rng.randrange(i)}", -1, f"n{i}", -1)
                    for _ in range(rng.choice([0, 0, 1]))]
        for e in (controls + edges if rng.random() < 0.3 else edges + controls):
            g.add_edge(e)
    return g


@pytest.mark.parametrize("seed", range(40))
def test_equals_the_walk_by_name(seed):
    rng = random.Random(seed)
    g = _random_graph(rng, rng.randrange(1, 300))
    names = list(g.nodes)
    rng.shuffle(names)
    names += names[: len(names) // 3]       # asked twice
    for limit in (1, 3, 8):
        assert variable_sources(g, names, limit) == [variable_source(g, n, limit) for n in names]
        # a few names: walked by name (fewer than the edges / WALKS_PER_EDGE_PASS)
        few = names[:2]
        assert variable_sources(g, few, limit) == [variable_source(g, n, limit) for n in few]


def test_many_names_take_the_array_pass_few_the_walk(monkeypatch):
    import placelint.checks.pl202_variable_device_split as pl202
    g = _random_graph(random.Random(7), 200)
    walked = []
    monkeypatch.setattr(pl202, "variable_source",
                        lambda graph, name, limit=8: walked.append(name) or None)
    edges = sum(len(n.in_edges) for n in g)
    pl202.variable_sources(g, ["n1"] * (edges // pl202.WALKS_PER_EDGE_PASS + 1))
    assert walked == []
    pl202.variable_sources(g, ["n1"])
    assert walked == ["n1"]


def test_long_read_chains_stop_at_the_limit():
    g = Graph("chain")
    g.add_node(Node("v", "VariableV2"))
    prev = "v"
    for i in range(12):
        g.add_node(Node(f"r{i}", "Identity"))
        g.add_edge(Edge(prev, 0, f"r{i}", 0))
        prev = f"r{i}"
    names = [f"r{i}" for i in range(12)]
    got = variable_sources(g, names)
    assert got == [variable_source(g, n) for n in names]
    assert got[:7] == ["v"] * 7 and got[7:] == [None] * 5
    assert variable_sources(g, []) == []


def test_per_step_consumers_the_same_by_set_and_by_op():
    # more not-per-step nodes than consumers asked about: each consumer's op is read;
    # fewer: the not-per-step nodes become a set of names first. Same answers.
    from types import SimpleNamespace

    from placelint.checks.pl202_variable_device_split import _per_step_consumers
    g = Graph("consumers")
    for i in range(6):
        g.add_node(Node(f"a{i}", "Assign" if i % 2 else "Relu"))
    few = [SimpleNamespace(consumers=["a0", "a1"])]                  # 2 < 3 Assign nodes
    many = [SimpleNamespace(consumers=[f"a{i}" for i in range(6)])] * 2    # 12 > 3
    assert _per_step_consumers(g, few) == [["a0"]]
    assert _per_step_consumers(g, many) == [["a0", "a2", "a4"]] * 2
