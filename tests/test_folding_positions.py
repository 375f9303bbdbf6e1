"""Constant folding checks a wave of ready nodes over arrays, each input's dtype read by its
source's position, when the shapes are of the folded graph (``folding._by_position``), and
node by node, by name, otherwise: both give the same folded nodes on random graphs (string
and ref inputs, outputs over the size limit, missing inputs, nodes out of order)."""

from __future__ import annotations

import numpy as np
import pytest
from graphdefs import FLOAT, INT32, Shape, Type, const, graph, op, placeholder

from placelint.analyses import folding
from placelint.analyses.dag import index_graph
from placelint.analyses.folding import fold_constants
from placelint.analyses.op_tables import executor_table
from placelint.analyses.shape_inference import infer_shapes
from placelint.model.op_index import op_index


def random_nodes(seed: int) -> list:
    rng = np.random.default_rng(seed)
    nodes = [const("d0", [2, 3]), const("big_dims", [4096, 1024]),
             const("f0", np.ones((2, 3), np.float32), dtype=FLOAT),
             const("one", np.ones((), np.float32), dtype=FLOAT), placeholder("x", (2, 3)),
             op("v", "VariableV2", dtype=Type(FLOAT), shape=Shape((2, 3)))]
    floats, ints = ["f0", "one", "x", "v"], ["d0"]
    strings: list[str] = []
    for k in range(int(rng.integers(5, 60))):
        name = f"n{k}"
        kind = int(rng.integers(0, 13))
        pick = lambda pool: pool[int(rng.integers(0, len(pool)))]
        if kind == 0:
            nodes.append(const(name, rng.integers(0, 5, size=3).tolist()))
            ints.append(name)
        elif kind == 1:
            nodes.append(const(name, rng.random((2, 3)).astype(np.float32), dtype=FLOAT))
            floats.append(name)
        elif kind in (2, 3):
            nodes.append(op(name, ("AddV2", "Mul")[kind - 2], [pick(floats), pick(floats)]))
            floats.append(name)
        elif kind == 4:
            nodes.append(op(name, "Relu", [pick(floats)]))
            floats.append(name)
        elif kind == 5:       # over the size limit when its dims are big_dims
            dims = "big_dims" if rng.random() < 0.5 else pick(ints)
            nodes.append(op(name, "Fill", [dims, "one"], T=Type(FLOAT), index_type=Type(INT32)))
            floats.append(name)
        elif kind == 6:
            nodes.append(op(name, "Shape", [pick(floats)], out_type=Type(INT32)))
            ints.append(name)
        elif kind == 7:       # a string output, and a node reading it
            nodes.append(op(name, "AsString", [pick(floats)]))
            strings.append(name)
        elif kind == 8 and strings:
            nodes.append(op(name, "StringLength", [pick(strings)]))
            ints.append(name)
        elif kind == 9:       # a stateful op: never folds
            nodes.append(op(name, "RandomUniform", [pick(ints)], dtype=Type(FLOAT), T=Type(INT32)))
            floats.append(name)
        elif kind == 10:      # a control input, or a missing one
            extra = pick(["^" + pick(floats), "missing", "v"])
            nodes.append(op(name, "AddV2", [pick(floats), extra]))
            floats.append(name)
        elif kind == 11:      # a ref input (of a constant too: an invalid graph)
            nodes.append(op(name, "RefIdentity", [pick(floats)]))
            floats.append(name)
        else:
            nodes.append(op(name, "Identity", [pick(floats + ints)]))
            floats.append(name)
        if rng.random() < 0.5:
            nodes.append(op(f"use{k}", "Identity", [name]))     # a consumer
    if seed % 3 == 0:
        nodes.reverse()       # graph order is not the topological order
    return nodes


@pytest.mark.parametrize("few", [0, folding.FEW, 10**9], ids=["arrays", "default", "by-node"])
@pytest.mark.parametrize("seed", range(40))
def test_by_position_equals_by_name(seed, few, monkeypatch):
    monkeypatch.setattr(folding, "FEW", few)
    nodes = random_nodes(seed)
    g = graph(*nodes)
    dag = index_graph(g)
    ops = op_index(g)
    mine, other = infer_shapes(g), infer_shapes(graph(*nodes))
    assert mine.positions is g.positions() and other.positions is not g.positions()
    table = executor_table()
    by_position = fold_constants(g, dag, set(ops.types), ops.mask, mine, table)
    by_name = fold_constants(g, dag, set(ops.types), ops.mask, other, table)
    assert by_position.tolist() == by_name.tolist()
