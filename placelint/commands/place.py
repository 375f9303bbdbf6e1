"""``placelint place``: where TensorFlow's Placer would put every node."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ._common import (ClusterOpt, DevicesOpt, PathsArg, SigOpt, SoftOpt, TagOpt, WholeOpt,
                      FetchOpt, FeedOpt, StepOpt, PrunedOpt, command, exit_code, run_models,
                      settings_from_flags, usage_error)


def _transfers_json(ctx) -> list:
    try:
        transfers = ctx.transfers
    except ImportError:
        return []
    return [t.to_json() for t in transfers]


def model_json(report, settings) -> dict:
    ctx = report.context
    placement = ctx.placement.device if ctx is not None else {}
    return {
        "model": report.path,
        "analysed": report.entry,
        "devices": settings.devices.names,
        "allow_soft_placement": settings.allow_soft_placement,
        "placement": dict(placement),
        "transfers": _transfers_json(ctx) if ctx is not None else [],
        "diagnostics": [d.to_json() for d in report.diagnostics],
    }


def model_text(report) -> list[str]:
    """TF's ``log_device_placement`` lines: ``name: (Op): device``."""
    ctx = report.context
    if ctx is None:
        return []
    graph = ctx.placement_graph     # the step's own graph under --place-pruned-graph
    return [f"{name}: ({graph.nodes[name].op}): {device or '<unplaced>'}"
            for name, device in ctx.placement.device.items()]


@command()
def place(paths: List[Path] = PathsArg, devices: Optional[str] = DevicesOpt,
          cluster: Optional[Path] = ClusterOpt,
          allow_soft_placement: Optional[bool] = SoftOpt, tag: Optional[str] = TagOpt,
          signature: Optional[str] = SigOpt, whole_graph: bool = WholeOpt,
    fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
    step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
          format: str = typer.Option("text", "--format", "-f", help="text or json.")):
    """Predict where TensorFlow would place every node (TF's log_device_placement form)."""
    if format not in ("text", "json"):
        usage_error(f"unknown --format {format!r} (expected text or json)")
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph, cluster=cluster)
    reports = run_models(paths, settings, fmt=format)
    if format == "json":
        sys.stdout.write(json.dumps([model_json(r, settings) for r in reports], indent=2) + "\n")
    else:
        from ..output.text import format_diagnostic
        out = []
        for r in reports:
            out.append(f"# {r.path} ({settings.describe_devices()}; analysed: {r.entry})")
            out.extend(model_text(r))
            if r.context is not None:
                from ..output.transfer_text import summary_lines
                out.extend(summary_lines(r.context.transfers))
            out.extend(format_diagnostic(d) for d in r.diagnostics if d.severity.rank >= 2)
        sys.stdout.write("\n".join(out) + "\n")
    raise typer.Exit(exit_code(reports, settings))
