"""The order TF's GraphConstructor creates nodes in: the Placer visits them so."""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
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


def ordered(graph: Graph) -> tuple[list[Node], Mapping[str, int]]:
    """``processing_order(graph)`` and each node's position in it (the graph's own
    ``positions()`` when that is graph order, else a ``ProcessingIndex``), computed once
    per graph (the placement, the soft placement and the rules' node order share it): do
    not modify."""
    return _processing(graph)[:2]


def processing_positions(graph: Graph) -> np.ndarray | None:
    """Each node's position in processing order, by graph position (int64), worked out
    once per graph; None when processing order is graph order."""
    return _processing(graph)[2]


def _processing(graph: Graph) -> tuple[list[Node], Mapping[str, int], np.ndarray | None]:
    # (the positions come from the graph positions Kahn's pass took, not from a look-up of
    # every name in the order's dict: at 10^6 nodes those look-ups cost 0.4 s, 30 times
    # what they cost at 10^5)
    return graph.derived("processing_order", lambda: _ordered(graph))


def _ordered(graph: Graph) -> tuple[list[Node], Mapping[str, int], np.ndarray | None]:
    nodes = list(graph.nodes.values())
    index = graph.positions()
    if graph.edges_point_forward():
        # the first ready node is then always the first node not yet taken
        return nodes, index, None
    n = len(nodes)
    ge = graph_edges(graph)
    src, dst = ge.src, ge.dst
    ops = op_index(graph)
    taken = None if ops.any_of(MERGE) else sweep_order(n, src, dst)
    if taken is None:
        taken = kahn_order(n, src, dst, _pending(n, ge, ops))
    order = list(map(nodes.__getitem__, taken.tolist()))
    at = np.empty(n, dtype=np.int64)
    at[taken] = np.arange(n, dtype=np.int64)
    return order, ProcessingIndex(order, index, at), at


def _pending(n: int, ge, ops) -> np.ndarray:
    """How many in-edges each node waits for: every one, from the graph or not, but for a
    Merge with a loop back edge, which waits for its control edges and one more."""
    src, dst = ge.src, ge.dst
    pending = np.bincount(dst, minlength=n)
    merges = np.flatnonzero(ops.mask(MERGE.__contains__)).tolist() if ops.any_of(MERGE) else []
    if merges:
        back = np.zeros(src.size, dtype=bool)
        known = src >= 0
        back[known] = ops.mask(NEXT_ITERATION.__contains__)[src[known]]
        control = ge.src_slot < 0
        for i in merges:
            rows = np.flatnonzero(dst == i)
            if back[rows].any():
                pending[i] = int(np.count_nonzero(control[rows])) + 1
    return pending


def kahn_order(n: int, src: np.ndarray, dst: np.ndarray, pending: np.ndarray) -> np.ndarray:
    """The positions in processing order: Kahn's algorithm, the smallest ready position
    first, node by node over the edge arrays (``pending``: the in-edges each node waits
    for). A sweep over the positions takes each node that is ready when the sweep reaches
    it; a node made ready behind the sweep is the smallest ready one, taken at once (a heap
    holds those: the few edges that point backwards in graph order). Nodes left on a
    non-loop cycle, or waiting for an edge from outside the graph, follow in graph order."""
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
    if len(taken) < n:      # nodes left on a non-loop cycle: in graph order
        taken += [k for k in range(n) if not done[k]]
    return np.array(taken, dtype=np.int64)


#: rounds of ``sweep_order``'s raising (one per edge of the longest chain of late nodes,
#: and one to see nothing change: the benchmark graphs need two), after which
#: ``kahn_order`` is cheaper
_MAX_RAISES = 8


def sweep_order(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """``kahn_order``'s order worked out over the edge arrays, for a graph without Merge nodes;
    None when it does not apply (an edge from outside the graph, a cycle). ``kahn_order``'s sweep
    takes node ``k`` at the step ``T(k) = max(k, T(p) for p its predecessors)``: at step
    ``k`` itself when it is ready then (most nodes: ``T`` starts as the positions and rises
    only below edges that point backwards, raised along the edges until nothing changes),
    else, *late*, in the cascade of the step its last predecessor was taken at, after that
    step's own node, by a heap over the late nodes of that step (few: those below a
    backward edge). The result is checked to be a topological order; a cycle fails the
    check."""
    if (src < 0).any() or (src == dst).any():     # (a self-loop: a cycle)
        return None
    steps = np.arange(n, dtype=np.int64)
    for _ in range(_MAX_RAISES):    # raise the steps along the edges until nothing changes
        src_steps = steps[src]
        up = src_steps > steps[dst]
        if not up.any():
            break
        np.maximum.at(steps, dst[up], src_steps[up])
    else:
        return None     # long chains below backward edges: node by node is cheaper
    late = steps != np.arange(n)
    late_at = np.flatnonzero(late)
    if not late_at.size:
        return steps
    # the late nodes, step by step, by a heap keyed (step, position): a late node waits
    # for its late predecessors of the same step (the others are taken before); over the
    # late nodes only, numbered 0.. in graph order
    inner = np.flatnonzero(late[src] & late[dst] & (steps[src] == steps[dst]))
    number = np.cumsum(late) - 1
    a, b = number[src[inner]], number[dst[inner]]
    by_a = np.argsort(a, kind="stable")
    succ = b[by_a].tolist()
    starts = np.searchsorted(a[by_a], np.arange(late_at.size + 1)).tolist()
    waiting = np.bincount(b, minlength=late_at.size).tolist()
    late_steps = steps[late_at]
    size = late_at.size
    key = (late_steps * size + np.arange(size)).tolist()
    heap = [key[k] for k in range(late_at.size) if waiting[k] == 0]
    heapq.heapify(heap)
    push, pop = heapq.heappush, heapq.heappop
    cascade: list[int] = []
    while heap:
        k = pop(heap) % size
        cascade.append(k)
        for j in succ[starts[k]:starts[k + 1]]:
            left = waiting[j] - 1
            waiting[j] = left
            if left == 0:
                push(heap, key[j])
    if len(cascade) < late_at.size:
        return None
    on_time = np.flatnonzero(~late)
    cascade = np.array(cascade, dtype=np.int64)
    taken = np.insert(on_time, np.searchsorted(on_time, late_steps[cascade], side="right"),
                      late_at[cascade])
    at = np.empty(n, dtype=np.int64)
    at[taken] = np.arange(n, dtype=np.int64)
    if not (at[src] < at[dst]).all():       # a cycle
        return None
    return taken


class ProcessingIndex(Mapping):
    """node -> its position in processing order, when that is not graph order: a view over
    the graph's name -> position dict and the positions Kahn's pass took. Its users look up
    a few names (the placer's generators and errors, the rules' findings); a dict of every
    name cost 0.4 s at 10^6 nodes (27 times its cost at 10^5: the table outgrows the caches).
    Iterates in processing order."""

    __slots__ = ("_order", "_index", "_at", "_list")

    def __init__(self, order: list[Node], index: dict[str, int], at: np.ndarray):
        self._order, self._index, self._at = order, index, at
        self._list: list[int] | None = None     # ``at`` as ints, at the first look-up

    def _positions(self) -> list[int]:
        if self._list is None:
            self._list = self._at.tolist()
        return self._list

    def __getitem__(self, name: str) -> int:
        return self._positions()[self._index[name]]

    def get(self, name, default=None):
        i = self._index.get(name)
        return default if i is None else self._positions()[i]

    def __contains__(self, name) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return map(_NAME, self._order)

    def __len__(self) -> int:
        return len(self._order)
