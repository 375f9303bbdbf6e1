"""Synthetic large graphs for the benchmarks (no TensorFlow needed).

``inception_like(n_nodes)`` chains blocks of four towers (MatMul -> BiasAdd-like Add -> Relu,
of different lengths) joined by AddN, with Identity/Const/Reshape nodes sprinkled in as real
graphs have them, until about ``n_nodes`` nodes. Shapes are static: [batch, width].
"""

from __future__ import annotations

import numpy as np

from placelint.model.graph import Edge, Graph, Node

FLOAT = 1


def inception_like(n_nodes: int, *, batch: int = 32, width: int = 64, seed: int = 0) -> Graph:
    rng = np.random.default_rng(seed)
    g = Graph(f"synthetic-{n_nodes}")
    add, edge = g.add_node, g.add_edge

    def node(name, op, shape=None, dtypes=(FLOAT,)):
        return add(Node(name, op, output_dtypes=list(dtypes),
                        output_shapes=[shape] if shape is not None else None))

    node("input", "Placeholder", (batch, width))
    node("w", "Const", (width, width))
    prev = "input"
    b = 0
    while len(g) < n_nodes:
        outs = []
        for t in range(4):
            x = prev
            for k in range(1 + int(rng.integers(0, 4))):
                p = f"b{b}/t{t}/l{k}"
                node(f"{p}/read", "Identity")
                edge(Edge("w", 0, f"{p}/read", 0, FLOAT))
                node(f"{p}/mm", "MatMul")
                edge(Edge(x, 0, f"{p}/mm", 0, FLOAT))
                edge(Edge(f"{p}/read", 0, f"{p}/mm", 1, FLOAT))
                node(f"{p}/bias", "Const", (width,))
                node(f"{p}/add", "AddV2")
                edge(Edge(f"{p}/mm", 0, f"{p}/add", 0, FLOAT))
                edge(Edge(f"{p}/bias", 0, f"{p}/add", 1, FLOAT))
                node(f"{p}/relu", "Relu")
                edge(Edge(f"{p}/add", 0, f"{p}/relu", 0, FLOAT))
                x = f"{p}/relu"
            outs.append(x)
        node(f"b{b}/sum", "AddN")
        for i, o in enumerate(outs):
            edge(Edge(o, 0, f"b{b}/sum", i, FLOAT))
        if rng.random() < 0.2:  # an occasional control dependency between blocks
            edge(Edge(prev, -1, f"b{b}/sum", -1))
        prev = f"b{b}/sum"
        b += 1
    return g
