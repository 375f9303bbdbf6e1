"""Does an op's CPU kernel split its work over the intra-op pool, at this op's size?

The table (``placelint/data/intra_op.json``) says how each kernel splits (Eigen
contraction, Eigen expression, ``Shard``, ConcatCPU, per-matrix sharding, not at all) and
cites the TF source. This module applies it to one node: it estimates the kernel's
single-thread cycles the way Eigen's ``TensorCostModel`` does (bytes moved at 11/64 cycle
per byte plus compute per SIMD packet; contractions at a quarter cycle per flop) and
returns how many threads Eigen would use (``numThreads``: one below ~2.1e5 cycles).
Those are estimates for ranking, not timings.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..model.graph import Node
from .cost import OpCost
from .op_tables import IntraOpTable, cost_table, intra_op_table
from .shape_inference import ShapeInfo

__all__ = ["IntraOpUse", "intra_op_use"]


@dataclass(frozen=True, slots=True)
class IntraOpUse:
    mode: str               #: table mode, or "unknown" for ops missing from the table
    source: str | None      #: TF file showing how the kernel splits
    gil: bool               #: holds the Python GIL while it runs
    cycles: float | None    #: estimated single-thread cycles (None: size unknown)
    threads: int | None     #: threads Eigen's cost model would use (None: size unknown)

    @property
    def can_split(self) -> bool:
        return self.mode not in ("single", "unknown")

    @property
    def splits(self) -> bool:
        """Splits at its estimated size (False when the size is unknown)."""
        return self.can_split and self.threads is not None and self.threads > 1


def _io_bytes(node: Node, shapes: ShapeInfo) -> int | None:
    total = 0
    for e in node.in_edges:
        if e.src_slot >= 0:
            b = shapes.nbytes(e.src, e.src_slot)
            if b is None:
                return None
            total += b
    n_out = len(node.output_dtypes) if node.output_dtypes else 1
    for slot in range(n_out):
        b = shapes.nbytes(node, slot)
        if b is None:
            return None
        total += b
    return total


def _units(node: Node, shapes: ShapeInfo, unit: str | None) -> int | None:
    if unit == "output_bytes":
        return shapes.nbytes(node, 0)
    if unit == "output_elements":
        return shapes.num_elements(node, 0)
    data = [e for e in node.in_edges if e.src_slot >= 0]
    return shapes.num_elements(data[0].src, data[0].src_slot) if data else None


def intra_op_use(node: Node, shapes: ShapeInfo, cost: OpCost, table: IntraOpTable | None = None) -> IntraOpUse:
    table = table or intra_op_table()
    entry = table.lookup(node.op, node.op in cost_table().elementwise)
    if entry is None:
        return IntraOpUse("unknown", None, False, None, None)
    mode = entry.mode
    if mode == "single":
        return IntraOpUse(mode, entry.source, entry.gil, None, 1)
    cycles: float | None = None
    threads: int | None = None
    per_byte = table.load_store_cycles_per_byte
    if mode == "contraction":
        if cost.known:
            cycles = cost.ops * table.contraction_cycles_per_flop
    elif mode in ("cwise", "reduction", "copy"):
        io = _io_bytes(node, shapes)
        if io is not None and cost.known:
            compute = 0 if mode == "copy" else cost.ops / cost_table().packet_size
            cycles = io * per_byte + compute
    elif mode == "shard":
        units = _units(node, shapes, entry.unit)
        if units is not None:
            cycles = units * entry.cycles_per_unit
    elif mode == "concat":
        out = shapes.nbytes(node, 0)
        if out is not None:
            cycles = float(out)
            threads = max(1, min(table.concat_max_threads, out // table.concat_bytes_per_thread))
    elif mode == "batch":
        x = next((shapes.shape(e.src, e.src_slot) for e in node.in_edges if e.src_slot >= 0), None)
        if x is not None and len(x) >= 2 and all(d >= 0 for d in x):
            batch, n = prod(x[:-2]), max(x[-2:])
            cycles = float(batch * n ** 3)
            threads = max(1, min(batch, table.eigen_threads(cycles)))
    if cycles is not None and threads is None:
        threads = table.eigen_threads(cycles)
    if threads is not None and threads > 1 and node.op in table.onednn_gemm_ops \
            and _fits_onednn_single_thread(node, shapes, table.onednn_single_thread_bytes):
        threads = 1
    return IntraOpUse(mode, entry.source, entry.gil, cycles, threads)


def _fits_onednn_single_thread(node: Node, shapes: ShapeInfo, limit: float) -> bool:
    """oneDNN's ``ExecuteSingleThreadedGemm``: a GEMM whose operands and result fit in L2
    runs on one thread (``intra_op.json`` "onednn_gemm")."""
    data = [e for e in node.in_edges if e.src_slot >= 0][:2]
    if len(data) < 2:
        return False
    a, b = (shapes.shape(e.src, e.src_slot) for e in data)
    if a is None or b is None or len(a) != 2 or len(b) != 2 or min(*a, *b) < 0:
        return False
    attrs = node.attrs
    ta, tb = attrs.get("transpose_a"), attrs.get("transpose_b")
    m, k = (a[1], a[0]) if ta is not None and ta.b else (a[0], a[1])
    n = b[0] if tb is not None and tb.b else b[1]
    nbytes, count = shapes.nbytes(data[0].src, data[0].src_slot), a[0] * a[1]
    if not nbytes or not count:
        return False
    return nbytes // count * (m * n + k * (m + n)) < limit
