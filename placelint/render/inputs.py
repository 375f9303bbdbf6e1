"""Phase 0 of a diagram: gather ``ViewInputs`` from an analysed model.

Reads the analyses' typed results directly: ``PlacementResult.device``, the transfers
analysis' ``Transfer`` list (the copies), ``ParallelismReport`` (intra-op op types, the
widest antichain), and the report's diagnostics (with a short visible cause per finding).
Each optional analysis may fail; that is noted on the diagram, not fatal.
"""

from __future__ import annotations

from collections import defaultdict, deque

from ..analyses.transfers import Transfer, loop_frames
from ..context import LOAD_PHASES
from ..model.devices import parse_device
from ..model.graph import Graph
from ..model.ops import EXIT
from .viewmodel import DiffMarks, Finding, ViewInputs


def inputs_from_report(report, devices_line: str = "", diff: DiffMarks | None = None) -> ViewInputs:
    """Collect placement, copies, findings and parallelism from a ``ModelReport``;
    ``devices_line`` says which device set the placement assumed (the caption)."""
    ctx = report.context
    graph = ctx.graph
    notes: list[str] = []
    try:
        device = dict(ctx.placement.device)
    except Exception as exc:  # noqa: BLE001 - draw what we can
        device = {}
        notes.append(f"placement unavailable ({type(exc).__name__}: {exc})")
    devices = list(ctx.devices.names) if ctx.devices is not None else []
    copies = _copies(ctx, notes)
    findings: dict[str, list[Finding]] = defaultdict(list)
    for d in report.diagnostics:
        text = f"{d.message}. {d.detail}" if d.detail else d.message
        for name in d.nodes or ([d.node] if d.node else []):
            if name in graph.nodes:     # every node of a grouped finding is outlined
                findings[name].append(Finding(d.severity.value, d.code, d.rule, text,
                                              short_cause(d.rule, graph.nodes[name])))
    intra_types, antichain, width = _parallelism(ctx, notes)
    model = report.model
    entry = model.entry if model is not None and model.entry else ""
    try:
        step = ctx.step
    except Exception as exc:  # noqa: BLE001 - check reports it; draw the rest
        step = None
        notes.append(f"step unavailable ({type(exc).__name__}: {exc})")
    if step is not None:
        # the outline is about the analysed step: not the ops that restore or initialise
        antichain = {n for n in antichain if step.phase_of_node(n) not in LOAD_PHASES}
        if len(antichain) < 2:
            antichain = set()
    caption = [f"step: {step.describe() if step is not None else entry_text(entry)}"]
    memory = _memory(ctx, notes)
    return ViewInputs(graph=graph, device=device, devices=devices, copies=copies,
                      findings=dict(findings), intra_op_types=intra_types,
                      antichain=antichain, width=width,
                      title=report.path + (f" ({entry})" if entry else ""), subtitle=devices_line,
                      caption=caption, notes=notes, diff=diff, memory=memory)


def _memory(ctx, notes: list[str]) -> dict[str, dict] | None:
    """Each device's memory for the legend's bars (none when TF would refuse the placement:
    there is no step to measure)."""
    from ..analyses.memory_budget import analysed_device_objects
    try:
        return analysed_device_objects(ctx)
    except Exception as exc:  # noqa: BLE001 - check reports it; draw the rest
        notes.append(f"memory unavailable ({type(exc).__name__}: {exc})")
        return None


def entry_text(entry: str) -> str:
    """The analysed part of the model, as the loader names it (``signature 'x'``,
    ``whole graph``)."""
    return entry or "whole graph"


def short_cause(rule: str, node) -> str:
    """A few words for a finding's visible label: what the node asked for or lacks."""
    req = node.device or ""
    spec = parse_device(req) if req else None
    local = spec is not None and spec.type and spec.id is not None and not spec.job
    short = f"{spec.type}:{spec.id}" if local else (req or "?")
    dtype = spec.type if spec is not None and spec.type else "?"
    causes = {
        "unknown-device": f"wants {short}",
        "malformed-device": f"bad device {req!r}",
        "no-kernel-for-device": f"no {dtype} kernel for {node.op}",
        "colocation-conflict": "colocation conflict",
        "unknown-op": f"unknown op {node.op}",
        "overridden-device-request": f"{short} request ignored",
        "cross-device-copy": "copied across devices",
        "variable-device-split": "variable on another device",
        "device-ping-pong": "device ping-pong",
        "copy-in-loop": "copy in a loop",
    }
    return causes.get(rule, rule.replace("-", " "))


def _copies(ctx, notes: list[str]) -> list[Transfer]:
    try:
        return list(ctx.transfers)
    except Exception as exc:  # noqa: BLE001 - check reports it as PL009; draw the rest
        notes.append(f"transfers analysis failed ({type(exc).__name__}: {exc}); no copies drawn")
        return []


def _parallelism(ctx, notes: list[str]) -> tuple[set[str], set[str], int | None]:
    """(intra-op op types that split at their size, the outlined antichain, width)."""
    try:
        par = ctx.parallelism
    except Exception as exc:  # noqa: BLE001
        notes.append(f"parallelism analysis failed ({type(exc).__name__}: {exc})")
        return set(), set(), None
    types = {r.op for r in par.intra_ops if r.mode not in ("single", "unknown") and r.splitting}
    return types, outlined_branches(ctx.graph, par.antichain), par.width


def outlined_branches(graph: Graph, antichain) -> set[str]:
    """The antichain nodes worth outlining as "can run at once": none when fewer than two
    remain, and not an op after a TF1 while loop's Exit beside that loop's body (the DAG
    without back edges calls them independent, but the op waits for the loop's end)."""
    members = [n for n in antichain if n in graph.nodes]
    frames = loop_frames(graph) if any(graph.nodes[n].op in EXIT for n in graph.nodes) else {}
    if frames:
        in_frame = {frames[n] for n in members if frames.get(n)}
        after = _after_exits(graph, frames, in_frame)
        members = [n for n in members if n not in after]
    return set(members) if len(members) >= 2 else set()


def _after_exits(graph: Graph, frames: dict[str, str], loops: set[str]) -> set[str]:
    """Nodes outside the frames ``loops`` that an Exit of one of them feeds (transitively)."""
    seen: set[str] = set()
    work = deque(n for n in graph.nodes if graph.nodes[n].op in EXIT
                 and frames.get(n) in loops)
    while work:
        n = work.popleft()
        for e in graph.nodes[n].out_edges:
            d = e.dst
            if d not in seen and frames.get(d, "") not in loops:
                seen.add(d)
                work.append(d)
    return seen


def diff_marks(d) -> DiffMarks:
    """``graph --diff`` marks from a ``report.diff.ModelDiff`` (old -> this version)."""
    from .viewmodel import copy_key
    return DiffMarks(old=d.old, moved={m.node: m.old for m in d.moved},
                     added={n for names in d.added_nodes.values() for n in names},
                     removed=sum(len(v) for v in d.removed_nodes.values()),
                     new_copies={copy_key(t) for t in d.transfers_added},
                     ghost_copies=list(d.transfers_removed))
