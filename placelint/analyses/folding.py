"""Which nodes Grappler's constant folding turns into constants, for the parallelism
analysis: a folded op never runs in the step (``parallelism.py``)."""

from __future__ import annotations

import numpy as np

from ..dtypes import DT_STRING, DT_VARIANT
from ..opdb import get_opdb
from ..model.edge_index import graph_edges
from ..model.graph import Graph
from .dag import IndexedDag
from .op_tables import ExecutorTable
from .waves import Grouped
from .shape_inference import ShapeInfo, num_elements

__all__ = ["fold_constants"]


def fold_constants(graph: Graph, dag: IndexedDag, op_types: set[str], per_op,
                   shapes: ShapeInfo, table: ExecutorTable) -> np.ndarray:
    """Nodes Grappler's constant folding turns into constants (Const nodes included).
    ``dag``: ``graph``'s indexed DAG; ``op_types``: the nodes' op types; ``per_op``: a bool
    mask over the nodes from a predicate on op types (``model.op_index.OpIndex.mask``)."""
    n = dag.n
    constant_ops, materialized = table.constant_ops, table.materialized_shape_ops
    if not any(op in constant_ops or op in materialized for op in op_types):
        return np.zeros(n, dtype=bool)      # no constant to start from: nothing folds
    nodes = dag.nodes
    opdb = get_opdb()
    has_consumers = np.zeros(n, dtype=bool)
    has_consumers[dag.src] = True
    has_consumers = has_consumers.tolist()
    # Grappler's name checks and statefulness, per op type.
    foldable = {op: table.may_fold(op) and (info := opdb.op(op)) is not None and not info.is_stateful
                for op in op_types}
    # A node folds once all its data inputs are constant: each node's data inputs not known
    # constant yet are counted down over the edge arrays as constants are found, a wave of
    # nodes at a time, and only the nodes whose count reaches zero are looked at in Python.
    # Only edges from a node earlier in the topological order pass a constant on (what a
    # pass in that order sees: over a loop back edge the input is not decided yet), and an
    # input from an unknown node never counts down.
    ge = graph_edges(graph)
    data = ge.src_slot >= 0
    src, dst = ge.src[data], ge.dst[data]
    waiting = np.bincount(dst, minlength=n)
    position = dag.position
    forward = src >= 0
    forward[forward] = position[src[forward]] < position[dst[forward]]
    src, dst = src[forward], dst[forward]
    consumers = Grouped(n, src, dst)
    can_fold = per_op(foldable.__getitem__)
    const = per_op(constant_ops.__contains__).copy()
    # a materialized shape op (Shape, Size, Rank, ShapeN) of inputs of known shape folds
    for i in np.flatnonzero(per_op(materialized.__contains__) & (waiting > 0)).tolist():
        node = nodes[i]
        rank = node.op == "Rank"
        if all(num_elements(s := shapes.shape(e.src, e.src_slot)) is not None
               or (rank and s is not None) for e in node.in_edges if e.src_slot >= 0):
            const[i] = True

    # a node's own output by its position when the shapes are of this graph (no look-up
    # of its name)
    by_position = shapes.positions is graph.positions()

    def folds(i: int) -> bool:
        """The checks on a node whose data inputs are all constant."""
        if not has_consumers[i]:
            return False
        node = nodes[i]
        data = []
        for e in node.in_edges:
            if e.src_slot >= 0:
                if e.ref or shapes.dtype(e.src, e.src_slot) == DT_STRING:
                    return False
                data.append(e)
        if DT_VARIANT in (node.output_dtypes or ()):
            return False
        out_bytes = shapes.dtype_nbytes_at(i, 0)[1] if by_position else shapes.nbytes(node, 0)
        # (the inputs' bytes matter only for an output over the size limit)
        return not (out_bytes is not None and out_bytes > table.max_constant_bytes
                    and out_bytes > sum(shapes.nbytes(e.src, e.src_slot) or 0 for e in data))

    def accept(ready: np.ndarray) -> np.ndarray:
        ok = can_fold[ready]
        ok[ok] = [folds(i) for i in ready[ok].tolist()]
        return ok

    return consumers.spread(const, waiting, accept)
