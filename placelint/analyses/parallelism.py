"""Inter-op and intra-op parallelism of a graph, and thread settings for N cores.

``analyze_parallelism(graph, shapes=..., placement=..., cores=...)`` answers what
``inter_op_parallelism_threads`` and ``intra_op_parallelism_threads`` can achieve:

Inter-op. TF's executor runs inexpensive kernels inline (``IsExpensive()`` false, see
``data/executor.json``) and Grappler folds constant subgraphs before the graph runs, so
only *expensive, non-foldable* ops compete for inter-op threads. ``width`` is the exact
maximum antichain among them (paths may run through any node; ``antichain.py``), with one
maximum antichain returned grouped by name scope (``branches``). ``width_all_ops`` is the
same over every node; ``width_without_control_edges`` drops the model's control edges.
Work ``T1``, span ``Tinf`` (critical path) and average parallelism ``T1/Tinf`` use
Grappler-style op counts (``cost.py``). The figures are device independent (every op
counted as a CPU kernel); when the placer's devices are known, per-device figures are
added (GPU kernels always run inline, so there inter-op threads do not matter).

Intra-op. For every expensive op type: how its CPU kernel splits work (``intra_op.json``,
with the TF source), whether it does at its estimated size, and its share of the work;
GIL-holding Python ops and single-threaded kernels are marked.

Useful width. TF's executor also runs a kernel inline once its measured cost falls
below 8000 cycles (``KernelStats::kOpIsExpensiveThresholdCycles``, executor.cc), and
handing an op to another thread costs ~2 us (measured): ``useful_width`` is the maximum
antichain among the expensive ops whose estimated time is at least ``INLINE_THRESHOLD_US``
(``parallelism_cost.py``); a loop body op that does not wait for the previous
iteration counts ``parallel_iterations`` times, or as many copies as are still in flight
when the loop's inline control ops have handed out the next iterations, if fewer
(``parallelism_scope.loop_copies``).
Per-channel arithmetic on variables does not count, so a SavedModel and
its frozen graph with the same heavy ops have the same useful width.

Step. Widths and times cover the step only: init/restore/save work is left out and only
the heaviest branch of an ``If``/``Case`` runs (``parallelism_scope.py``). Unknown dims
are costed at an assumed batch size (``--batch-size``, default 1).

Recommendation. ``threads.py`` simulates the step's schedule at each (inter, intra)
setting for ``cores`` cores (default ``DEFAULT_CORES``, never the checking machine's).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import numpy as np

from ..model.devices import display, parse_device
from ..model.graph import Graph
from ..model.op_index import op_index
from .cost import AssumedSizes
from .folding import fold_constants
from .dag import IndexedDag, index_graph
from .op_tables import ExecutorTable, executor_table, intra_op_table
from .parallelism_cost import IntraOpRow, estimate_ops
from .placed import placed_codes
from .parallelism_scope import exclusive_branches, loop_copies, step_mask
from .shape_inference import ShapeInfo, infer_shapes
from .xla_calls import compiled_calls
from .member_network import Between, Found, MemberNetwork
from .threads import (INLINE_THRESHOLD_US, PYFUNC_BODY_US, PYFUNC_US, SIMULATE_MAX_NODES,
                      Recommendation, ThreadModel, recommend)

__all__ = ["ParallelismReport", "analyze_parallelism", "DEFAULT_CORES", "DEFAULT_BATCH"]

TOP_LEVEL = "(top level)"
#: How many nodes with the most control edges a report names.
CONTROL_HUBS = 5


#: Cores the findings and the recommendation are for unless ``--cores`` / config ``cores``
#: says otherwise: a fixed number, so findings do not depend on the machine that checks.
DEFAULT_CORES = 8
#: Batch size for unknown batch dims (``--batch-size`` / config ``batch-size``).
DEFAULT_BATCH = 1


@dataclass
class Branch:
    scope: str
    ops: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "ops": list(self.ops)}


@dataclass
class DeviceFigures:
    device: str
    ops: int
    expensive_ops: int
    width_of: Callable[[], int] = field(repr=False, compare=False)   #: computes ``width``
    work: int
    inline_kernels: bool    #: GPU: kernels never run on inter-op threads

    @cached_property
    def width(self) -> int:
        """The width among the device's expensive ops: a max-flow of its own, computed when
        a report shows it (``placelint check`` does not)."""
        return self.width_of()

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "ops": self.ops, "expensive_ops": self.expensive_ops,
                "width": self.width, "work": self.work, "kernels_run_inline": self.inline_kernels}


@dataclass
class ParallelismReport:
    model: str
    cores: int
    nodes: int
    expensive_ops: int
    folded_ops: int
    width: int
    width_without_control_edges: int
    critical_path: list[str]
    work: int
    span: int
    average_parallelism: float | None
    unknown_cost_ops: int
    control_edges: int
    control_hubs: list[tuple[str, int]]
    gil_width: int
    intra_ops: list[IntraOpRow]
    intra_share: float
    recommendation: Recommendation
    per_device: list[DeviceFigures] | None = None
    notes: list[str] = field(default_factory=list)
    useful_width: int = 0
    useful_ops: int = 0
    batch_size: int = DEFAULT_BATCH
    assumed_ops: int = 0
    assumed_share: float = 0.0
    work_us: float = 0.0
    span_us: float = 0.0
    step_left_out: int = 0
    threshold_us: float = INLINE_THRESHOLD_US
    #: figures computed on first use (each is a max-flow or a search of one), which
    #: ``placelint check`` does not ask for (``gil_branches`` only with a GIL width of 2 or
    #: more): ``width_all_ops``, ``antichain``, ``branches``, ``useful_branches``, ``gil_branches``
    later: dict[str, Callable[[], Any]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def width_all_ops(self) -> int:
        return self.later["width_all_ops"]()

    @cached_property
    def antichain(self) -> list[str]:
        return self.later["antichain"]()

    @cached_property
    def branches(self) -> list[Branch]:
        return self.later["branches"]()

    @cached_property
    def useful_branches(self) -> list[Branch]:
        return self.later["useful_branches"]()

    @cached_property
    def gil_branches(self) -> list[Branch]:
        return self.later["gil_branches"]()

    def to_json(self) -> dict[str, Any]:
        rec = self.recommendation
        return {
            "model": self.model,
            "inter_op": {
                "width": self.width,
                "width_all_ops": self.width_all_ops,
                "width_without_control_edges": self.width_without_control_edges,
                "branches": [b.to_json() for b in self.branches],
                "useful_width": self.useful_width,
                "useful_branches": [b.to_json() for b in self.useful_branches],
                "useful_ops": self.useful_ops,
                "useful_threshold_us": INLINE_THRESHOLD_US,
                "estimated_work_us": round(self.work_us, 3),
                "estimated_span_us": round(self.span_us, 3),
                "critical_path": list(self.critical_path),
                "work": self.work,
                "span": self.span,
                "average_parallelism": None if self.average_parallelism is None
                else round(self.average_parallelism, 4),
                "expensive_ops": self.expensive_ops,
                "constant_folded_ops": self.folded_ops,
                "unknown_cost_ops": self.unknown_cost_ops,
                "batch_size": self.batch_size,
                "assumed_size_ops": self.assumed_ops,
                "assumed_size_share": round(self.assumed_share, 4),
                "left_out_of_step": self.step_left_out,
                "control_edges": self.control_edges,
                "gil_width": self.gil_width,
                "gil_branches": [b.to_json() for b in self.gil_branches],
                "per_device": None if self.per_device is None else [d.to_json() for d in self.per_device],
            },
            "intra_op": {
                "ops": [r.to_json() for r in self.intra_ops],
                "share": round(self.intra_share, 4),
            },
            "recommendation": {
                "inter_op_parallelism_threads": rec.inter_op,
                "intra_op_parallelism_threads": rec.intra_op,
                "cores": rec.cores,
                "reason": rec.reason,
                "predicted_relative_time": {k: round(v, 4) for k, v in rec.predicted.items()},
                "relative_to_serial": [{"inter_op": a, "intra_op": b, "time": round(v, 4),
                                        **({"time_if_python_releases_gil":
                                            round(rec.table_gil_released[(a, b)], 4)}
                                           if rec.table_gil_released else {})}
                                       for (a, b), v in rec.table.items()],
                "simulated": rec.simulated,
                "code": rec.code(),
            },
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- classification


def _device_codes(graph: Graph, placement) -> tuple[np.ndarray, list[str]] | None:
    """Each node's placed device as a small integer, and the devices' names by it (sorted;
    ``(unplaced)`` for a node without one), or None without a usable placement."""
    devices = getattr(placement, "device", None) if placement is not None else None
    if not devices:
        return None
    placed, table = placed_codes(graph, devices)    # (by graph position: the DAG's order)
    used = np.flatnonzero(np.bincount(placed, minlength=len(table)))
    label = {table[k]: table[k] or "(unplaced)" for k in used.tolist()}
    if not any(label):
        return None
    labels = sorted(set(label.values()))
    remap = np.zeros(len(table), dtype=np.int64)
    for k in used.tolist():
        remap[k] = labels.index(label[table[k]])
    return remap[placed], labels


def _branches(dag: IndexedDag, members: np.ndarray) -> list[Branch]:
    by_scope: dict[str, list[str]] = defaultdict(list)
    nodes = dag.nodes
    for i in members.tolist():
        name = nodes[i].name
        by_scope[name.rpartition("/")[0] or TOP_LEVEL].append(name)     # (Node.scope)
    return [Branch(scope, sorted(names)) for scope, names in sorted(by_scope.items())]


def _control_hubs(src: np.ndarray, dst: np.ndarray) -> list[tuple[int, int]]:
    """The ``CONTROL_HUBS`` nodes at the most of these edges, with their counts: most first,
    a tie in order of first appearance among ``src[0], dst[0], src[1], ...`` (what a Counter
    fed in that order gives)."""
    ends = np.column_stack((src, dst)).ravel()
    nodes, first, counts = np.unique(ends, return_index=True, return_counts=True)
    top = np.lexsort((first, -counts))[:CONTROL_HUBS]
    return list(zip(nodes[top].tolist(), counts[top].tolist()))


def _structural_control(dag: IndexedDag, table: ExecutorTable) -> np.ndarray:
    """Control edges placelint's function expansion adds, not the model's own: bodies
    finishing into their functional op, and a call's outputs into its
    ``output_control_node`` (model/build.py)."""
    def structural_dst(node) -> bool:
        return node.op in table.structural or (
            node.op == "NoOp" and bool(node.call_site)
            and node.name.rsplit("/", 1)[-1].startswith("output_control_node"))
    # only control edges can be; asked once per node that control edges end at
    by_node = np.zeros(dag.n, dtype=bool)
    by_node[dag.dst[dag.control]] = True
    ends = np.flatnonzero(by_node)
    nodes = dag.nodes
    by_node[ends] = np.fromiter((structural_dst(nodes[i]) for i in ends.tolist()), dtype=bool,
                                count=ends.size)
    return dag.control & by_node[dag.dst]


# --------------------------------------------------------------------------- analysis


def analyze_parallelism(graph: Graph, *, shapes: ShapeInfo | None = None, placement=None,
                        cores: int | None = None, batch_size: int | None = None,
                        step_nodes=None) -> ParallelismReport:
    cores = int(cores) if cores else DEFAULT_CORES
    batch = int(batch_size) if batch_size else DEFAULT_BATCH
    shapes = shapes if shapes is not None else infer_shapes(graph)
    sizes = AssumedSizes(shapes, batch)
    table = executor_table()
    intra_table = intra_op_table()
    dag = index_graph(graph)
    n = dag.n
    notes: list[str] = []
    if dag.dropped_cycle_edges:
        notes.append(f"{dag.dropped_cycle_edges} edge(s) closing cycles other than TF1 loop back "
                     "edges were ignored")

    ops = op_index(graph)     # (the DAG's nodes are the graph's, in graph order)
    op_types, per_op = set(ops.types), ops.mask
    folded = fold_constants(graph, dag, op_types, per_op, shapes, table)
    inline = per_op(table.runs_inline)
    between = Between(dag)
    in_step, left_out = step_mask(dag, step_nodes, per_op, between.pred)
    if left_out and step_nodes is None:
        notes.append(f"{left_out} node(s) only feed init/restore/save targets and are not part of "
                     "the step")
    expensive = ~inline & ~folded & in_step
    folded_ops = int(np.count_nonzero(folded & ~inline))

    est = estimate_ops(dag, expensive, sizes, shapes, intra_table, cores, graph)
    time_us = est.time_us
    # If/Case: one branch runs
    skipped = exclusive_branches(dag, time_us, op_types) & expensive
    if skipped.any():
        notes.append(f"{int(np.count_nonzero(skipped))} expensive op(s) in If/Case branches other "
                     "than the heaviest are left out: one branch runs per step")
        expensive &= ~skipped
        time_us = np.where(skipped, 0.0, time_us)
    useful = expensive & (time_us >= INLINE_THRESHOLD_US)
    scope = loop_copies(dag, useful, op_types, time_us)
    copies, loops = scope.copies, scope.loops
    for name, p_it, k, over, most in loops:
        if over:
            notes.append(f"loop {name}: {over} of its body's {k} op(s) worth a thread do not wait for the "
                         f"previous iteration, so parallel_iterations={p_it} of them can run at once; "
                         "the trip count is not known statically (at least that many iterations "
                         "assumed)" + ("" if most >= p_it else
                                       f"; the loop's inline control ops hand out one iteration at a "
                                       f"time, so at most {most} of one op's copies are in flight"))
        elif k and p_it > 1:
            notes.append(f"loop {name}: its body's {k} op(s) worth a thread wait for the previous "
                         f"iteration's result, so parallel_iterations={p_it} does not overlap them")

    # -- widths
    step_all = in_step & ~skipped
    own_control = dag.control & ~_structural_control(dag, table)
    net = MemberNetwork(between, expensive, own_control)
    all_edges_width = net.solve(expensive)
    useful_chain = net.solve(useful, scope.at_once)

    def width_all() -> int:
        return (all_edges_width.width if expensive.all()
                else MemberNetwork(between, step_all, own_control).solve(step_all).width)

    if not own_control.any():
        no_control = all_edges_width.width   # no control edges of the model's own
    else:
        no_control = net.solve_without_dropped(expensive).width
    gil_chain = net.solve(expensive & est.gil)

    # -- the thread model: work and span in estimated microseconds
    model = ThreadModel(dag, time_us, est.max_threads, est.gil & expensive, cores,
                        dispatched=useful, copies=copies, handout_us=scope.handout_us, run=expensive,
                        paths=net.paths())
    model.gil_width = gil_chain.width
    span_us, path = model.critical_path()
    total_us = model.total
    total_work = est.work(expensive)
    path_idx = np.asarray(path, dtype=np.int64)
    on_path = path_idx[expensive[path_idx]].tolist()
    span_int = sum(map(est.work_of, on_path))
    critical = [dag.nodes[i].name for i in on_path]
    avg = total_us / span_us if span_us > 0 else None

    # -- the model's control edges
    control_edges = int(np.count_nonzero(own_control))
    hubs = [(dag.nodes[i].name, c) for i, c in _control_hubs(dag.src[own_control], dag.dst[own_control])]

    # -- intra-op table and the one splittable share (of the step's estimated time)
    timed = time_us * copies
    total_t = float(timed[expensive].sum())
    intra_rows = est.rows(expensive, timed, total_t, cores)
    split_t = float(timed[expensive & (est.max_threads > 1)].sum())
    share = split_t / total_t if total_t else 0.0
    assumed_t = float(timed[expensive & est.assumed].sum())
    assumed_share = assumed_t / total_t if total_t else 0.0
    unknown_cost = int(np.count_nonzero(expensive & est.unknown))
    if unknown_cost:
        notes.append(f"{unknown_cost} expensive op(s) have shapes of unknown rank and are costed "
                     "at the inline threshold")
    python_ops = int(np.count_nonzero(expensive & est.gil))
    if python_ops:
        notes.append(f"{python_ops} Python kernel(s) (PyFunc/EagerPyFunc): their Python body is not "
                     f"in the graph; each is costed at the measured {PYFUNC_US:g} us call overhead plus "
                     f"an assumed {PYFUNC_BODY_US:g} us body")
    compiled = sum(1 for i, _ in compiled_calls(graph) if in_step[i])
    if compiled:
        notes.append(f"{compiled} call(s) of functions compiled by XLA (jit_compile=True): each "
                     "runs its function as one kernel, whose work is not estimated here (the "
                     "figures leave it out)")
    assumed_ops = int(np.count_nonzero(expensive & est.assumed))
    if assumed_ops:
        notes.append(f"{assumed_ops} expensive op(s) have unknown dims, costed at batch size {batch} "
                     f"(other unknown dims 1): {assumed_share:.0%} of the estimated time rests on "
                     "assumed sizes")

    # -- per device
    per_device = _per_device(graph, net, placement, expensive, est, table, notes, total_work,
                             all_edges_width.width)

    def names(chain: Found) -> Callable[[], list[Branch]]:
        return lambda: _branches(dag, chain.antichain().nodes)

    rec = recommend(model, width=all_edges_width.width, useful_width=useful_chain.width,
                    intra_share=share, average_parallelism=avg, assumed_share=assumed_share)
    if not rec.simulated:
        notes.append(f"graph over {SIMULATE_MAX_NODES:,} nodes: step times are bounds, not a simulated "
                     "schedule")
    return ParallelismReport(
        model=graph.name, cores=cores, nodes=n, expensive_ops=int(np.count_nonzero(expensive)),
        folded_ops=folded_ops, width=all_edges_width.width,
        width_without_control_edges=no_control, critical_path=critical,
        work=total_work, span=span_int, average_parallelism=avg, unknown_cost_ops=unknown_cost,
        control_edges=control_edges, control_hubs=hubs, gil_width=gil_chain.width,
        intra_ops=intra_rows, intra_share=share,
        recommendation=rec, per_device=per_device, notes=notes,
        useful_width=useful_chain.width,
        useful_ops=int(np.count_nonzero(useful)), batch_size=batch, assumed_ops=assumed_ops,
        assumed_share=assumed_share, work_us=total_t, span_us=span_us, step_left_out=left_out,
        later={"width_all_ops": width_all,
               "antichain": lambda: [dag.nodes[i].name for i in all_edges_width.antichain().nodes.tolist()],
               "branches": names(all_edges_width), "useful_branches": names(useful_chain),
               "gil_branches": names(gil_chain)})


def _per_device(graph, net, placement, expensive, est, table, notes, total_work, overall_width):
    """Width, work and op counts per placed device (None without a placement)."""
    found = _device_codes(graph, placement)
    n_expensive = int(np.count_nonzero(expensive))
    if found is None:
        notes.append("no device placement available: per-device figures are omitted")
        return None
    # each node's device as a small integer, so that a device's nodes are one comparison
    codes, names = found
    out = []
    inline_work = 0
    for c, name in enumerate(names):
        spec = parse_device(name) if name != "(unplaced)" else None
        inline = spec is not None and spec.type in table.inline_device_types
        on_device = codes == c
        members = on_device & expensive
        count = int(np.count_nonzero(members))
        w = est.work(members)
        if inline:
            inline_work += w
        # a device holding every expensive op has the graph's width: no second flow needed
        if count == n_expensive:
            width = (lambda: overall_width)
        else:
            width = (lambda members=members: net.solve(members).width)
        out.append(DeviceFigures(
            device=display(name) if spec is not None else name, ops=int(np.count_nonzero(on_device)),
            expensive_ops=count, width_of=width, work=w, inline_kernels=inline))
    if total_work and inline_work / total_work > 0.5:
        notes.append(f"{inline_work / total_work:.0%} of the work is placed on GPU devices, whose kernels "
                     "run inline on one thread and queue on the GPU: the thread settings mainly affect "
                     "the CPU part")
    return out
