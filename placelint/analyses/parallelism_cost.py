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

from .cost import AssumedSizes, OpCost, cost_key, has_unknown_dims, op_cost
from .dag import IndexedDag
from .intra_op import IntraOpUse, intra_op_use
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
    work_int: list[int]
    time_us: np.ndarray
    max_threads: np.ndarray
    gil: np.ndarray
    assumed: np.ndarray
    unknown: np.ndarray
    groups: dict[tuple[str, OpCost, IntraOpUse], list[int]]

    def rows(self, members: np.ndarray, timed: np.ndarray, total_t: float, cores: int) -> list[IntraOpRow]:
        rows: dict[str, IntraOpRow] = {}
        for (op, cost, use), idx in self.groups.items():
            idx = np.asarray(idx, dtype=np.int64)
            idx = idx[members[idx]]
            if not idx.size:
                continue
            row = rows.get(op)
            if row is None:
                row = rows[op] = IntraOpRow(op, use.mode, use.source, use.gil, 0, 0, 1, 0, 0.0, 0)
            k = int(idx.size)
            row.count += k
            splits = int(self.max_threads[idx[0]]) > 1
            row.splitting += k * splits
            row.threads = max(row.threads, min(cores, int(self.max_threads[idx[0]])))
            row.work += k * cost.ops
            row.share += float(timed[idx].sum()) / total_t if total_t else 0.0
            row.unknown_size += k * bool(self.unknown[idx[0]])
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
                 intra_table: IntraOpTable, cores: int) -> OpEstimates:
    n = dag.n
    work_int = [0] * n
    groups: dict[tuple[str, OpCost, IntraOpUse], list[int]] = {}
    # one estimate per distinct cost key: its row in the tables below, and each member's row
    reuse: dict[tuple, int] = {}
    ops_of: list[int] = []
    rows: list[tuple[float, int, bool, bool, bool]] = []
    group_of: list[list[int]] = []
    row_of: list[int] = []
    nodes = dag.nodes
    idx = np.flatnonzero(members)
    for i in idx.tolist():
        node = nodes[i]
        key = cost_key(node, shapes)
        r = reuse.get(key)
        if r is None:
            cost = op_cost(node, sizes)
            use = intra_op_use(node, sizes, cost, intra_table)
            unk = not cost.known and not use.gil
            t = INLINE_THRESHOLD_US / 2 if unk else _time_us(cost, use)
            thr = min(cores, use.threads) if use.threads and use.can_split and not unk else 1
            asm = not unk and has_unknown_dims(shapes, node)
            r = reuse[key] = len(rows)
            rows.append((t, thr, use.gil, asm, unk))
            ops_of.append(cost.ops)
            group_of.append(groups.setdefault((node.op, cost, use), []))
        work_int[i] = ops_of[r]
        group_of[r].append(i)
        row_of.append(r)
    # every member's figures from its row, in array operations
    at = np.asarray(row_of, dtype=np.int64)
    columns = list(zip(*rows)) or [()] * 5

    def spread(column, dtype, fill) -> np.ndarray:
        out = np.full(n, fill, dtype=dtype)
        out[idx] = np.asarray(column, dtype=dtype)[at]
        return out

    return OpEstimates(work_int, spread(columns[0], float, 0.0), spread(columns[1], np.int64, 1),
                       spread(columns[2], bool, False), spread(columns[3], bool, False),
                       spread(columns[4], bool, False), groups)
