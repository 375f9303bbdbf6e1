"""Every edge of a graph as integer arrays over the positions of its nodes in graph order:
the one integer index of the edges that the step's pruning, placement, transfers and the
analyses' DAG share (``analyses.dag`` re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter

import numpy as np

from .graph import Edge, Graph


@dataclass
class GraphEdges:
    """Every edge of a graph (back edges too), node by node in graph order and, within a
    node, in ``in_edges`` order, with its two ends as positions in graph order."""
    edges: list[Edge]            #: the ``Edge`` objects
    src: np.ndarray              #: source's position (int64), -1 for a node not in the graph
    dst: np.ndarray              #: destination's position (int64)
    src_slot: np.ndarray         #: output slot (int64), -1 for a control edge


def graph_edges(graph: Graph) -> GraphEdges:
    """The graph's ``GraphEdges``, kept with the graph until it changes (``Graph.derived``)."""
    return graph.derived("graph_edges", lambda: _graph_edges(graph))


def keep_graph_edges(graph: Graph, known: GraphEdges) -> None:
    """Keep ``known`` as ``graph``'s ``GraphEdges``, for code that made the graph and knows
    them without the pass ``_graph_edges`` makes (the step's subgraph, from its graph's)."""
    graph.derived("graph_edges", lambda: known)


def _graph_edges(graph: Graph) -> GraphEdges:
    index = graph.positions()
    in_edges = [node.in_edges for node in graph.nodes.values()]
    counts = np.fromiter(map(len, in_edges), dtype=np.int64, count=len(in_edges))
    m = int(counts.sum())
    edges = list(chain.from_iterable(in_edges))
    src = np.fromiter(map(index.get, map(attrgetter("src"), edges), repeat(-1)), dtype=np.int64,
                      count=m)
    dst = np.repeat(np.arange(len(in_edges), dtype=np.int64), counts)
    slot = np.fromiter(map(attrgetter("src_slot"), edges), dtype=np.int64, count=m)
    return GraphEdges(edges, src, dst, slot)
