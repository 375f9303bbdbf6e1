"""The graph as integer arrays in topological order, for linear-time analyses.

TF1 while loops make cycles (``NextIteration -> Merge``); their back edges are dropped
(``Graph.is_back_edge``). Should a malformed graph still have a cycle, its remaining
nodes are appended in graph order and every edge that points backwards in the final
order is dropped too (``IndexedDag.dropped_cycle_edges`` counts them), so the arrays always
describe a DAG.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
import numpy as np

from ..model.edge_index import graph_edges
from ..model.graph import Graph, Node
from ..model.op_index import op_index
from ..model.ops import NEXT_ITERATION


@dataclass
class IndexedDag:
    nodes: list[Node]            #: by index
    index: Mapping[str, int]     #: node name -> index (iterated: the names in node order)
    order: np.ndarray            #: node indices in topological order
    position: np.ndarray         #: index -> position in ``order``
    src: np.ndarray              #: DAG edges (int64), data and control
    dst: np.ndarray
    control: np.ndarray          #: bool per edge
    dropped_cycle_edges: int = 0

    @property
    def n(self) -> int:
        return len(self.nodes)

    @cached_property
    def unique_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) of the DAG's edges without duplicates (a data and a control edge, or
        two outputs, between the same two nodes), sorted by destination then source."""
        n = max(1, self.n)
        # (timsort: the edges come grouped by destination, nearly sorted, ~3x quicker)
        key = np.sort(self.dst * n + self.src, kind="stable")
        if key.size:
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        return key % n, key // n


class _Positions(Mapping):
    """``graph.positions()``, built on the first look-up: the analyses mostly iterate
    ``IndexedDag.index`` or take its length, which the graph's nodes answer (a step's graph,
    whose ``GraphEdges`` the step made, then never builds the dict: ~0.2 s at 10^6 nodes)."""

    def __init__(self, graph: Graph):
        self._graph = graph

    def __getitem__(self, name: str) -> int:
        return self._graph.positions()[name]

    def get(self, name, default=None):
        return self._graph.positions().get(name, default)

    def __contains__(self, name) -> bool:
        return name in self._graph.nodes

    def __iter__(self) -> Iterator[str]:
        return iter(self._graph.nodes)

    def __len__(self) -> int:
        return len(self._graph.nodes)


def index_graph(graph: Graph) -> IndexedDag:
    """The indexed DAG of ``graph``, kept with the graph until it changes (``Graph.derived``)."""
    return graph.derived("indexed_dag", lambda: _index_graph(graph))


def _index_graph(graph: Graph) -> IndexedDag:
    nodes = list(graph.nodes.values())
    n = len(nodes)
    index = _Positions(graph)
    ge = graph_edges(graph)
    src, dst, control = ge.src, ge.dst, ge.src_slot < 0
    is_back = op_index(graph).mask(NEXT_ITERATION.__contains__)
    keep = src >= 0
    keep[keep] = ~is_back[src[keep]]
    src, dst, control = src[keep], dst[keep], control[keep]
    if src.size == 0 or bool(np.all(src < dst)):
        order = np.arange(n, dtype=np.int64)   # the usual case: nodes already in topological order
    else:
        order = topological_order(n, src, dst)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n, dtype=np.int64)
    forward = position[src] < position[dst]
    dropped = int(forward.size - np.count_nonzero(forward))
    if dropped:
        src, dst, control = src[forward], dst[forward], control[forward]
    return IndexedDag(nodes, index, order, position, src, dst, control, dropped)


def topological_order(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Kahn's algorithm; nodes on a cycle come last, in index order."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    indeg = np.bincount(dst, minlength=n).astype(np.int64)
    by_src = np.argsort(src, kind="stable")
    succ = dst[by_src].tolist()
    starts = np.searchsorted(src[by_src], np.arange(n + 1)).tolist()
    deg = indeg.tolist()
    stack = np.flatnonzero(indeg == 0)[::-1].tolist()
    out: list[int] = []
    append = out.append
    pop = stack.pop
    push = stack.append
    while stack:
        v = pop()
        append(v)
        for j in range(starts[v], starts[v + 1]):
            w = succ[j]
            d = deg[w] - 1
            deg[w] = d
            if d == 0:
                push(w)
    if len(out) < n:
        seen = np.zeros(n, dtype=bool)
        seen[out] = True
        out.extend(np.flatnonzero(~seen).tolist())
    return np.asarray(out, dtype=np.int64)


def longest_path(dag: IndexedDag, weight: np.ndarray, *, edges: np.ndarray | None = None
                 ) -> tuple[float, list[int]]:
    """Heaviest path (sum of node weights) in the DAG, and its nodes (indices, in order).

    ``edges`` optionally selects a subset of the DAG's edges (bool mask).
    """
    src, dst = dag.src, dag.dst
    if edges is not None:
        src, dst = src[edges], dst[edges]
    span, path, _ = _longest_path(dag, src, dst, weight, None)
    return span, path


def longest_path_and_span(dag: IndexedDag, weight: np.ndarray, other: np.ndarray
                          ) -> tuple[float, list[int], float]:
    """``longest_path(dag, weight)`` and ``longest_path(dag, other)[0]`` in one pass (the
    pass over the graph, not the arithmetic, is most of the cost)."""
    return _longest_path(dag, dag.src, dag.dst, weight, other)


#: edges per slice of ``_longest_path``'s pass
_SLICE = 1 << 16


def _longest_path(dag: IndexedDag, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
                  other: np.ndarray | None) -> tuple[float, list[int], float | None]:
    n = dag.n
    if n == 0:
        return 0.0, [], None if other is None else 0.0
    # Process edges grouped by their destination's position: relaxing in that order is a
    # single pass in topological order.
    at = dag.position[dst]
    by_dst = np.argsort(at, kind="stable")
    src, dst, at = src[by_dst], dst[by_dst], at[by_dst]
    total = int(dst.size)

    def edges_from(a: int) -> tuple[list[int], list[int], int]:
        """The sorted edges from ``a`` on as lists, a slice ending between two destinations
        (Python lists of every edge's ends cost ~150 MiB at 10^6 nodes, at check's peak)."""
        b = min(total, a + _SLICE)
        if b < total:
            b = int(np.searchsorted(at, at[b - 1], side="right"))
        return src[a:b].tolist(), dst[a:b].tolist(), b

    src_s, dst_s, taken = edges_from(0)
    w = weight.tolist()
    best = list(w)          # heaviest path ending at v, including v
    pred = [-1] * n
    ow = other.tolist() if other is not None else None
    obest = list(ow) if ow is not None else None     # the same for ``other`` (no path)
    k = 0
    m = len(dst_s)
    for v in dag.order.tolist():
        if k == m:
            if taken == total:
                break       # no edge left: no later node has a predecessor
            src_s, dst_s, taken = edges_from(taken)
            k, m = 0, len(dst_s)
        if dst_s[k] != v:
            continue        # no predecessor
        arg = src_s[k]      # the first heaviest predecessor
        top = best[arg]
        if obest is not None:
            otop = obest[arg]
        k += 1
        while k < m and dst_s[k] == v:
            u = src_s[k]
            if best[u] > top:
                top, arg = best[u], u
            if obest is not None and obest[u] > otop:
                otop = obest[u]
            k += 1
        best[v] = w[v] + top
        pred[v] = arg
        if obest is not None:
            obest[v] = ow[v] + otop
    end = int(np.argmax(np.asarray(best)))      # the first heaviest, as max() picks it
    path = []
    v = end
    while v >= 0:
        path.append(v)
        v = pred[v]
    path.reverse()
    return float(best[end]), path, None if obest is None else float(max(obest))
