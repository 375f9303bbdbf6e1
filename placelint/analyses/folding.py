"""Which nodes Grappler's constant folding turns into constants, for the parallelism
analysis: a folded op never runs in the step (``parallelism.py``)."""

from __future__ import annotations

import numpy as np

from ..dtypes import DT_STRING, DT_VARIANT
from ..opdb import get_opdb
from ..model.edge_index import GraphEdges, graph_edges
from ..model.graph import Graph
from .dag import IndexedDag
from .op_tables import ExecutorTable
from .waves import Grouped
from .shape_inference import ShapeInfo, num_elements

__all__ = ["fold_constants"]

#: waves of fewer ready nodes are checked node by node (``_by_position``)
FEW = 8


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
    has_consumer_mask = np.zeros(n, dtype=bool)
    has_consumer_mask[dag.src] = True
    has_consumers = has_consumer_mask.tolist()
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

    if by_position:
        accept = _by_position(ge, nodes, shapes, can_fold & has_consumer_mask, folds,
                              table.max_constant_bytes, accept)
    return consumers.spread(const, waiting, accept)


def _by_position(ge: GraphEdges, nodes, shapes: ShapeInfo, candidate: np.ndarray, folds,
                 max_bytes: int, by_node):
    """``fold_constants``' check of a wave of ready nodes when ``shapes`` are of the graph:
    ``folds`` over a wave's arrays. Each data input's source dtype is read by the source's
    position in the edge index (``folds`` looks its name up: at 10^6 nodes each look-up
    misses the cache), the checks of all the wave's inputs in one list each; ``folds`` itself
    only for an output over the size limit, whose inputs' sizes decide. A few nodes (the
    one-node steps of ``Grouped.spread``'s narrow walk) go to ``by_node``, cheaper than a
    round of numpy calls."""
    edges, src_slot = ge.edges, ge.src_slot
    starts = np.zeros(candidate.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(ge.dst, minlength=candidate.size), out=starts[1:])

    def accept(ready: np.ndarray) -> np.ndarray:
        if ready.size < FEW:
            return by_node(ready)
        ok = candidate[ready]
        at = ready[ok]
        if not at.size:
            return ok
        lo = starts[at]
        count = starts[at + 1] - lo
        rows = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
        owner = np.repeat(np.arange(at.size), count)
        slot = src_slot[rows]
        data = slot >= 0
        rows, owner, slot = rows[data], owner[data], slot[data]
        # a ref input, or a string one, stops the node
        stop = np.fromiter([edges[r].ref for r in rows.tolist()], dtype=bool, count=rows.size)
        stop |= np.fromiter([d == DT_STRING for d in shapes.dtypes_at(ge.src[rows].tolist(),
                                                                       slot.tolist())],
                            dtype=bool, count=rows.size)
        keep = np.bincount(owner[stop], minlength=at.size) == 0
        result = []
        for i, go in zip(at.tolist(), keep.tolist()):
            if go and DT_VARIANT not in (nodes[i].output_dtypes or ()):
                out_bytes = shapes.dtype_nbytes_at(i, 0)[1]
                go = out_bytes is None or out_bytes <= max_bytes or folds(i)
            else:
                go = False
            result.append(go)
        ok[ok] = result
        return ok

    return accept
