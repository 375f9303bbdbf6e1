"""Per-op estimates for the parallelism analysis: Grappler op count, single-thread time,
intra-op threads, GIL, and whether the size rests on assumed (unknown) dims.

Time: an op's Eigen cost-model cycles (``intra_op.py``; for ops without one, one model
cycle per Grappler op) over ``MODEL_CYCLES_PER_US``. Python kernels (PyFunc,
EagerPyFunc) cost the measured fixed ``PYFUNC_US``, an assumed ``PYFUNC_BODY_US`` for
their Python body, plus that. Ops whose rank is unknown
cannot be sized: they get half the inline threshold (so they never count as worth a
thread) and are counted in the report. Unknown dims of a known rank are filled by
``cost.AssumedSizes`` (batch dim = ``--batch-size``, others 1) and marked *assumed*.
Equal ``cost_key``s share one estimate (layers repeat), so this is one pass over the
expensive nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .cost import AssumedSizes, OpCost, formula_attrs, has_unknown_dims, op_cost
from ..model.graph import Graph
from .dag import IndexedDag
from .intra_op import IntraOpUse, intra_op_use
from .numbering import first_indices
from .op_tables import IntraOpTable
from .shape_inference import ShapeInfo
from .threads import INLINE_THRESHOLD_US, MODEL_CYCLES_PER_US, PYFUNC_BODY_US, PYFUNC_US

__all__ = ["IntraOpRow", "OpEstimates", "estimate_ops"]


@dataclass
class IntraOpRow:
    op: str
    mode: str
    source: str | None
    gil: bool
    count: int
    splitting: int          #: how many of them split at their estimated size
    threads: int            #: most threads any of them would use (capped by cores)
    work: int               #: Grappler op count
    share: float            #: of the step's estimated time
    unknown_size: int       #: how many have a size of unknown rank

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "mode": self.mode, "splits_work": self.mode not in ("single", "unknown"),
                "single_threaded": self.mode == "single", "holds_gil": self.gil, "count": self.count,
                "splitting_at_size": self.splitting, "max_threads": self.threads, "work": self.work,
                "share": round(self.share, 4), "unknown_size": self.unknown_size, "source": self.source}


@dataclass
class OpEstimates:
    row_at: np.ndarray      #: per node, its estimate's row (-1 for a node not estimated)
    row_ops: list[int]      #: per row, the Grappler op count (exact Python ints)
    time_us: np.ndarray
    max_threads: np.ndarray
    gil: np.ndarray
    assumed: np.ndarray
    unknown: np.ndarray
    groups: dict[tuple[str, OpCost, IntraOpUse], int]   #: (op, cost, use) -> group id
    row_group: np.ndarray   #: per row, its group id

    def work(self, members: np.ndarray) -> int:
        """The Grappler op count of ``members`` (bool per node): exact, one product per row."""
        counts = np.bincount(self.row_at[members & (self.row_at >= 0)], minlength=len(self.row_ops))
        return sum(c * ops for c, ops in zip(counts.tolist(), self.row_ops) if c)

    def work_of(self, i: int) -> int:
        r = int(self.row_at[i])
        return self.row_ops[r] if r >= 0 else 0

    def rows(self, members: np.ndarray, timed: np.ndarray, total_t: float, cores: int) -> list[IntraOpRow]:
        rows: dict[str, IntraOpRow] = {}
        # each group's members in node order, grouped by one stable sort
        idx = np.flatnonzero(members & (self.row_at >= 0))
        group = self.row_group[self.row_at[idx]]
        by = np.argsort(group, kind="stable")
        idx, group = idx[by], group[by]
        bounds = np.searchsorted(group, np.arange(len(self.groups) + 1)).tolist()
        for g, (op, cost, use) in enumerate(self.groups):
            idx_g = idx[bounds[g]:bounds[g + 1]]
            if not idx_g.size:
                continue
            row = rows.get(op)
            if row is None:
                row = rows[op] = IntraOpRow(op, use.mode, use.source, use.gil, 0, 0, 1, 0, 0.0, 0)
            k = int(idx_g.size)
            row.count += k
            splits = int(self.max_threads[idx_g[0]]) > 1
            row.splitting += k * splits
            row.threads = max(row.threads, min(cores, int(self.max_threads[idx_g[0]])))
            row.work += k * cost.ops
            row.share += float(timed[idx_g].sum()) / total_t if total_t else 0.0
            row.unknown_size += k * bool(self.unknown[idx_g[0]])
        out = list(rows.values())
        out.sort(key=lambda r: (-r.share, r.op))
        return out


def _time_us(cost: OpCost, use: IntraOpUse) -> float:
    if use.cycles is not None:
        t = use.cycles / MODEL_CYCLES_PER_US
    else:
        t = cost.ops / MODEL_CYCLES_PER_US
    return t + PYFUNC_US + PYFUNC_BODY_US if use.gil else t


def estimate_ops(dag: IndexedDag, members: np.ndarray, sizes: AssumedSizes, shapes: ShapeInfo,
                 intra_table: IntraOpTable, cores: int, graph: Graph) -> OpEstimates:
    """``graph``: the graph ``dag`` indexes (its nodes in graph order)."""
    n = dag.n
    nodes = dag.nodes
    idx = np.flatnonzero(members)
    member_nodes = list(map(nodes.__getitem__, idx.tolist()))
    # one estimate per distinct cost key (a row), numbered in order of first appearance;
    # the key's io part by identity (``io_keys`` makes each distinct one once): the same
    # rows as by ``cost_key``, without hashing a tuple of every input's shape per node
    reuse: dict[tuple, int] = {}
    new_row = reuse.setdefault
    at = np.fromiter((new_row((node.op, len(node.output_dtypes or ()), id(io), *formula_attrs(node)),
                              len(reuse))
                      for node, io in zip(member_nodes, shapes.io_keys(graph, idx, member_nodes))),
                     dtype=np.int64, count=idx.size)
    first = first_indices(at, len(reuse)).tolist()     # each row's first member
    groups: dict[tuple[str, OpCost, IntraOpUse], int] = {}
    row_group: list[int] = []
    row_ops: list[int] = []
    rows: list[tuple[float, int, bool, bool, bool]] = []
    for j in first:
        node = member_nodes[j]
        cost = op_cost(node, sizes)
        use = intra_op_use(node, sizes, cost, intra_table)
        unk = not cost.known and not use.gil
        t = INLINE_THRESHOLD_US / 2 if unk else _time_us(cost, use)
        thr = min(cores, use.threads) if use.threads and use.can_split and not unk else 1
        asm = not unk and has_unknown_dims(shapes, node)
        rows.append((t, thr, use.gil, asm, unk))
        row_ops.append(cost.ops)
        row_group.append(groups.setdefault((node.op, cost, use), len(groups)))
    # every member's figures from its row, in array operations
    columns = list(zip(*rows)) or [()] * 5

    def spread(column, dtype, fill) -> np.ndarray:
        out = np.full(n, fill, dtype=dtype)
        out[idx] = np.asarray(column, dtype=dtype)[at]
        return out

    row_at = np.full(n, -1, dtype=np.int64)
    row_at[idx] = at
    return OpEstimates(row_at, row_ops, spread(columns[0], float, 0.0), spread(columns[1], np.int64, 1),
                       spread(columns[2], bool, False), spread(columns[3], bool, False),
                       spread(columns[4], bool, False), groups, np.asarray(row_group, dtype=np.int64))
