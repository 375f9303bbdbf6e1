"""The order TF's GraphConstructor creates nodes in: the Placer visits them so."""

from __future__ import annotations

import heapq
from operator import attrgetter

import numpy as np

from ..model.edge_index import graph_edges
from ..model.graph import Graph, Node
from ..model.op_index import op_index
from ..model.ops import MERGE, NEXT_ITERATION

_NAME = attrgetter("name")


def processing_order(graph: Graph) -> list[Node]:
    """The order TF's GraphConstructor creates nodes in (their ids): repeatedly the
    ready node that comes first in the GraphDef; a Merge with a loop back edge is ready
    after one non-back-edge input. Nodes left on a non-loop cycle follow in GraphDef order."""
    return list(ordered(graph)[0])


def ordered(graph: Graph) -> tuple[list[Node], dict[str, int]]:
    """``processing_order(graph)`` and each node's position in it, computed once per graph
    (the placement, the soft placement and the rules' node order share it): do not modify."""
    return graph.derived("processing_order", lambda: _ordered(graph))


def processing_positions(graph: Graph) -> np.ndarray | None:
    """Each node's position in processing order, by graph position (int64), worked out
    once per graph; None when processing order is graph order."""
    def build():
        idx = ordered(graph)[1]
        if idx is graph.positions():
            return None
        return np.fromiter(map(idx.__getitem__, graph.nodes), dtype=np.int64,
                           count=len(graph.nodes))
    return graph.derived("processing_positions", build)


def _ordered(graph: Graph) -> tuple[list[Node], dict[str, int]]:
    nodes = list(graph.nodes.values())
    index = graph.positions()
    if graph.edges_point_forward():
        # the first ready node is then always the first node not yet taken
        return nodes, index
    # Kahn's algorithm, the smallest ready position first, over the shared integer edge
    # index. A sweep over the positions takes each node that is ready when the sweep
    # reaches it; a node made ready behind the sweep is the smallest ready one, taken at
    # once (a heap holds those: the few edges that point backwards in graph order).
    n = len(nodes)
    ge = graph_edges(graph)
    src, dst = ge.src, ge.dst
    pending = np.bincount(dst, minlength=n)     # every in-edge, from the graph or not
    ops = op_index(graph)
    merges = np.flatnonzero(ops.mask(MERGE.__contains__)).tolist() if ops.any_of(MERGE) else []
    if merges:      # a Merge with a loop back edge waits for its control edges and one more
        back = np.zeros(src.size, dtype=bool)
        known = src >= 0
        back[known] = ops.mask(NEXT_ITERATION.__contains__)[src[known]]
        control = ge.src_slot < 0
        for i in merges:
            rows = np.flatnonzero(dst == i)
            if back[rows].any():
                pending[i] = int(np.count_nonzero(control[rows])) + 1
    known = np.flatnonzero(src >= 0)
    by_src = known[np.argsort(src[known], kind="stable")]
    succ = dst[by_src].tolist()
    starts = np.searchsorted(src[by_src], np.arange(n + 1)).tolist()
    pending = pending.tolist()
    ready = [p == 0 for p in pending]
    done = [False] * n
    taken: list[int] = []
    take = taken.append
    behind: list[int] = []
    push, pop = heapq.heappush, heapq.heappop
    for i in range(n):
        if not ready[i] or done[i]:
            continue
        k = i
        while True:
            done[k] = True
            take(k)
            for j in succ[starts[k]:starts[k + 1]]:
                if done[j]:
                    continue
                left = pending[j] - 1
                pending[j] = left
                if left == 0:
                    if j < i:
                        push(behind, j)
                    else:
                        ready[j] = True
            if not behind:
                break
            k = pop(behind)
    order = list(map(nodes.__getitem__, taken))
    if len(order) < n:      # nodes left on a non-loop cycle: in graph order
        order += [node for k, node in enumerate(nodes) if not done[k]]
    return order, dict(zip(map(_NAME, order), range(n)))
