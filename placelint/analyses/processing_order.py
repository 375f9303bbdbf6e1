"""The order TF's GraphConstructor creates nodes in: the Placer visits them so."""

from __future__ import annotations

import heapq

from ..model.graph import Graph, Node
from ..model.ops import MERGE


def processing_order(graph: Graph) -> list[Node]:
    """The order TF's GraphConstructor creates nodes in (their ids): repeatedly the
    ready node that comes first in the GraphDef; a Merge with a loop back edge is ready
    after one non-back-edge input. Nodes left on a non-loop cycle follow in GraphDef order."""
    return list(ordered(graph)[0])


def ordered(graph: Graph) -> tuple[list[Node], dict[str, int]]:
    """``processing_order(graph)`` and each node's position in it, computed once per graph
    (the placement, the soft placement and the rules' node order share it): do not modify."""
    return graph.derived("processing_order", lambda: _ordered(graph))


def _ordered(graph: Graph) -> tuple[list[Node], dict[str, int]]:
    nodes = list(graph.nodes.values())
    index = graph.positions()
    if graph.edges_point_forward():
        # the first ready node is then always the first node not yet taken
        return nodes, index
    pending = [0] * len(nodes)
    for i, n in enumerate(nodes):
        if n.op in MERGE and any(graph.is_back_edge(e) for e in n.in_edges):
            pending[i] = sum(1 for e in n.in_edges if e.control) + 1
        else:
            pending[i] = len(n.in_edges)
    ready = [i for i, p in enumerate(pending) if p == 0]
    heapq.heapify(ready)
    pop, push = heapq.heappop, heapq.heappush
    order: list[Node] = []
    done = [False] * len(nodes)
    while ready:
        i = pop(ready)
        if done[i]:
            continue
        done[i] = True
        node = nodes[i]
        order.append(node)
        for e in node.out_edges:
            j = index[e.dst]
            if done[j]:
                continue
            left = pending[j] - 1
            pending[j] = left
            if left == 0:
                push(ready, j)
    if len(order) < len(nodes):
        order += [n for i, n in enumerate(nodes) if not done[i]]
    return order, {n.name: i for i, n in enumerate(order)}

