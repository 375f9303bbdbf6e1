"""Every node's op type as a small integer over graph order, kept with the graph.

Placement (the ref-edge pick), transfers (constants, TF1 loops), the analyses' DAG (loop
back edges), TF's processing order and the parallelism phase each asked a question of
every node's op: at 10^5 nodes each such pass (the op strings, then a look-up per node)
cost 5-10 ms. A question about op types is asked here once per type (a training graph has
a few dozen) and spread over the nodes by indexing the per-node codes."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable

import numpy as np

from .graph import Graph

__all__ = ["OpIndex", "op_index"]


class OpIndex:
    """The nodes' ops in graph order, the distinct types, and each node's type as an
    index into them (int32). Read only: shared by every user of the graph."""

    __slots__ = ("ops", "types", "codes")

    def __init__(self, ops: list[str]):
        self.ops = ops                                      #: each node's op, graph order
        code = {op: k for k, op in enumerate(dict.fromkeys(ops))}
        self.types: list[str] = list(code)                  #: distinct ops, first seen first
        self.codes = np.fromiter(map(code.__getitem__, ops), dtype=np.int32, count=len(ops))

    def per_node(self, of_type: Callable[[str], Any], dtype=bool) -> np.ndarray:
        """``of_type(op)`` of every node's op, asked once per type (a new array)."""
        return np.fromiter(map(of_type, self.types), dtype=dtype,
                           count=len(self.types))[self.codes]

    def mask(self, predicate: Callable[[str], bool]) -> np.ndarray:
        """Bool per node: does its op satisfy ``predicate`` (a new array, free to change)."""
        return self.per_node(predicate, bool)

    def any_of(self, ops) -> bool:
        """Does some node have one of ``ops`` (a set of op names)?"""
        return not ops.isdisjoint(self.types)


def op_index(graph: Graph) -> OpIndex:
    """The graph's ``OpIndex``, kept with the graph until it changes (``Graph.derived``)."""
    return graph.derived("op_index", lambda: OpIndex(list(map(_OP, graph.nodes.values()))))


_OP = attrgetter("op")
