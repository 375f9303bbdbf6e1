"""The op knowledge the parallelism analyses need, read from ``placelint/data``.

* ``executor.json``: which kernels TF's executor runs inline (``IsExpensive()`` false, or
  cheap enough that its measured-cost estimate inlines them), call/control-flow nodes
  whose bodies are expanded, GPU kernels, and Grappler's constant-folding exclusions;
* ``op_costs.json``: per-element costs of element-wise ops and reductions (Grappler's
  ``OpLevelCostEstimator`` table with Eigen's functor costs);
* ``intra_op.json``: which CPU kernels split work over the intra-op pool, how, the TF
  source file showing it, and which hold the Python GIL.

Each file cites the TensorFlow sources it summarises; this module only loads and indexes
them (once per process).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..data import load_json as _load


@dataclass(frozen=True)
class ExecutorTable:
    inexpensive: dict[str, str]        #: op -> TF source showing IsExpensive() is false
    cheap_at_runtime: dict[str, str]   #: op -> why the measured cost inlines it
    structural: frozenset[str]         #: call / functional control-flow ops (bodies expanded)
    inline_device_types: frozenset[str]  #: device types whose kernels are never expensive
    constant_ops: frozenset[str]
    never_fold: frozenset[str]
    never_fold_substrings: tuple[str, ...]
    never_fold_prefixes: tuple[str, ...]
    materialized_shape_ops: frozenset[str]
    max_constant_bytes: int

    def runs_inline(self, op: str) -> bool:
        """The executor runs ``op`` inline on the current thread (never an inter-op task)."""
        return op in self.inexpensive or op in self.cheap_at_runtime or op in self.structural

    def inline_source(self, op: str) -> str | None:
        return self.inexpensive.get(op) or self.cheap_at_runtime.get(op)

    def may_fold(self, op: str) -> bool:
        """Grappler's ``MaybeFoldable`` name checks (the graph-dependent ones are elsewhere)."""
        if op in self.constant_ops or op in self.never_fold or op in self.structural:
            return False
        if any(s in op for s in self.never_fold_substrings):
            return False
        return not op.startswith(self.never_fold_prefixes)


@dataclass(frozen=True)
class CostTable:
    packet_size: int
    functor_costs: dict[str, int]
    elementwise: dict[str, tuple[int, int]]   #: op -> (arity, per-element cost)
    reductions: dict[str, int]                #: op -> per-element cost
    formulas: dict[str, str]


@dataclass(frozen=True)
class IntraOpEntry:
    op: str
    mode: str              #: contraction, cwise, reduction, copy, shard, concat, batch, single
    source: str
    gil: bool = False
    unit: str | None = None            #: shard mode: output_bytes, output_elements, input_elements
    cycles_per_unit: float = 1.0


@dataclass(frozen=True)
class IntraOpTable:
    entries: dict[str, IntraOpEntry]
    modes: dict[str, dict[str, str]]
    startup_cycles: float
    per_thread_cycles: float
    load_store_cycles_per_byte: float
    concat_bytes_per_thread: int
    concat_max_threads: int
    contraction_cycles_per_flop: float
    elementwise_default: IntraOpEntry
    #: ops TF runs as oneDNN GEMMs, single-threaded below this many operand+result bytes
    onednn_gemm_ops: frozenset[str] = frozenset()
    onednn_single_thread_bytes: float = 0.0

    def lookup(self, op: str, elementwise: bool) -> IntraOpEntry | None:
        entry = self.entries.get(op)
        if entry is None and elementwise:
            return IntraOpEntry(op, self.elementwise_default.mode, self.elementwise_default.source)
        return entry

    def eigen_threads(self, cycles: float) -> int:
        """Eigen's ``TensorCostModel<ThreadPoolDevice>::numThreads`` before the pool cap."""
        threads = (cycles - self.startup_cycles) / self.per_thread_cycles + 0.9
        return max(1, int(min(threads, 2**31 - 1)))


@functools.lru_cache(maxsize=1)
def executor_table() -> ExecutorTable:
    doc = _load("executor.json")
    cf = doc["constant_folding"]
    return ExecutorTable(
        inexpensive=dict(doc["inexpensive"]["ops"]),
        cheap_at_runtime=dict(doc["cheap_at_runtime"]["ops"]),
        structural=frozenset(doc["structural"]["ops"]),
        inline_device_types=frozenset(doc["gpu_kernels_inexpensive"]["device_types"]),
        constant_ops=frozenset(cf["constant_ops"]),
        never_fold=frozenset(cf["never_fold"]),
        never_fold_substrings=tuple(cf["never_fold_substrings"]),
        never_fold_prefixes=tuple(cf["never_fold_prefixes"]),
        materialized_shape_ops=frozenset(cf["materialized_shape_ops"]),
        max_constant_bytes=int(cf["max_constant_bytes"]),
    )


@functools.lru_cache(maxsize=1)
def cost_table() -> CostTable:
    doc = _load("op_costs.json")
    functors = {k: int(v) for k, v in doc["functor_costs"].items()}

    def per_element(terms) -> int:
        return sum(functors[t] if isinstance(t, str) else int(t) for t in terms)

    return CostTable(
        packet_size=int(doc["packet_size_float"]),
        functor_costs=functors,
        elementwise={op: (int(e["arity"]), per_element(e["cost"])) for op, e in doc["elementwise"].items()},
        reductions={op: per_element(e["cost"]) for op, e in doc["reductions"].items()},
        formulas=dict(doc["formulas"]),
    )


@functools.lru_cache(maxsize=1)
def intra_op_table() -> IntraOpTable:
    doc = _load("intra_op.json")
    entries = {}
    default = None
    for op, e in doc["ops"].items():
        entry = IntraOpEntry(op, e["mode"], e["source"], bool(e.get("gil", False)), e.get("unit"),
                             float(e.get("cycles_per_unit", 1.0)))
        if op == "*elementwise":
            default = entry
        else:
            entries[op] = entry
    unknown = {e.mode for e in entries.values()} - set(doc["modes"])
    if unknown or default is None:
        raise RuntimeError(f"placelint/data/intra_op.json: bad modes {sorted(unknown)} or no '*elementwise'")
    model = doc["eigen_cost_model"]
    gemm = doc["onednn_gemm"]
    return IntraOpTable(
        entries=entries, modes=doc["modes"],
        startup_cycles=float(model["startup_cycles"]), per_thread_cycles=float(model["per_thread_cycles"]),
        load_store_cycles_per_byte=float(model["load_store_cycles_per_byte"]),
        concat_bytes_per_thread=int(doc["concat_bytes_per_thread"]),
        concat_max_threads=int(doc["concat_max_threads"]),
        contraction_cycles_per_flop=float(doc["contraction_cycles_per_flop"]),
        elementwise_default=default,
        onednn_gemm_ops=frozenset(gemm["ops"]),
        onednn_single_thread_bytes=float(gemm["l2_bytes"]) * float(gemm["multiplier"]),
    )
