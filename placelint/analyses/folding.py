"""Which nodes Grappler's constant folding turns into constants, for the parallelism
analysis: a folded op never runs in the step (``parallelism.py``)."""

from __future__ import annotations

import numpy as np

from ..dtypes import DT_STRING, DT_VARIANT
from ..opdb import get_opdb
from .dag import IndexedDag
from .op_tables import ExecutorTable
from .shape_inference import ShapeInfo, num_elements

__all__ = ["fold_constants"]


def fold_constants(dag: IndexedDag, ops: list[str], op_types: set[str], per_op,
                   shapes: ShapeInfo, table: ExecutorTable) -> np.ndarray:
    """Nodes Grappler's constant folding turns into constants (Const nodes included).
    ``ops``: each node's op; ``op_types``: their set; ``per_op``: a bool mask over the nodes
    from a predicate on op types (``parallelism.OpMask``)."""
    n = dag.n
    constant_ops, materialized = table.constant_ops, table.materialized_shape_ops
    if not any(op in constant_ops or op in materialized for op in op_types):
        return np.zeros(n, dtype=bool)      # no constant to start from: nothing folds
    const = [False] * n
    nodes = dag.nodes
    get = dag.index.get
    opdb = get_opdb()
    has_consumers = np.zeros(n, dtype=bool)
    has_consumers[dag.src] = True
    # Grappler's name checks and statefulness, per op type.
    foldable = {op: table.may_fold(op) and (info := opdb.op(op)) is not None and not info.is_stateful
                for op in op_types}
    # Only a node with a constant data input can be folded (or a materialized shape op):
    # each node found constant marks its consumers, and the other nodes, most of a
    # graph, are passed over without looking at their inputs.
    # The constant ops' consumers are marked at once, from the edge arrays (loop back edges
    # and edges from unknown nodes are not there; neither can make a node foldable).
    is_const_op = per_op(constant_ops.__contains__)
    marked = np.zeros(n, dtype=bool)
    marked[dag.dst[~dag.control & is_const_op[dag.src]]] = True
    has_const_input = marked.tolist()

    def found(i: int) -> None:
        const[i] = True
        for e in nodes[i].out_edges:
            if e.src_slot >= 0:
                j = get(e.dst)
                if j is not None:
                    has_const_input[j] = True

    for i in dag.order.tolist():
        op = ops[i]
        if op in constant_ops:
            const[i] = True     # (its consumers are marked)
            continue
        shape_op = op in materialized
        if not shape_op and not (has_const_input[i] and foldable[op]):
            continue
        node = nodes[i]
        data = [e for e in node.in_edges if e.src_slot >= 0]
        if not data:
            continue
        if shape_op and all(num_elements(shapes.shape(e.src, e.src_slot)) is not None
                            or (op == "Rank" and shapes.shape(e.src, e.src_slot) is not None)
                            for e in data):
            found(i)
            continue
        inputs_const = True
        for e in data:      # a loop, not all(...): most nodes stop at their first input
            s = get(e.src)
            if s is None or not const[s]:
                inputs_const = False
                break
        if not inputs_const or not foldable[op]:
            continue
        if not has_consumers[i]:
            continue
        if any(e.ref for e in data) or any(t == DT_VARIANT for t in node.output_dtypes or ()):
            continue
        if any(shapes.dtype(e.src, e.src_slot) == DT_STRING for e in data):
            continue
        out_bytes = shapes.nbytes(node, 0)
        # (the inputs' bytes matter only for an output over the size limit)
        if (out_bytes is not None and out_bytes > table.max_constant_bytes
                and out_bytes > sum(shapes.nbytes(e.src, e.src_slot) or 0 for e in data)):
            continue
        found(i)
    return np.asarray(const, dtype=bool)
