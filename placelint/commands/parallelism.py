"""``placelint parallelism``: what inter-op and intra-op threads can achieve on a graph."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..checks.selector import RuleSelector
from ._common import (ClusterOpt, DevicesOpt, EXIT_CLEAN, EXIT_ERROR, PathsArg, SigOpt, SoftOpt,
                      TagOpt, WholeOpt, FetchOpt, FeedOpt, StepOpt, PrunedOpt, command, run_models,
                      settings_from_flags, usage_error)

#: The parallelism rules (PL3xx): their findings end the report.
PARALLELISM_RULES = RuleSelector("PL3")


def _report(model_report):
    """(the model's ParallelismReport, None), or (None, its error diagnostics): the load
    errors, or an internal error of the analysis."""
    ctx = model_report.context
    if ctx is None:
        errors = [d for d in model_report.diagnostics if d.severity.rank >= 3]
        return None, errors
    try:
        return ctx.parallelism, None
    except (RecursionError, Exception) as exc:  # noqa: BLE001 - never a traceback
        from ..pipeline import internal_error
        d = internal_error("the parallelism analysis", exc)
        d.model, d.file = model_report.path, str(model_report.ref.path)
        return None, [d]


@command()
def parallelism(paths: List[Path] = PathsArg,
                cores: Optional[int] = typer.Option(None, "--cores", "-n", min=1,
                                                    help="Cores to recommend thread counts for "
                                                         "(default 8; config 'cores')."),
                batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1,
                                                         help="Batch size for unknown batch dims "
                                                              "(default 1; config 'batch-size')."),
                devices: Optional[str] = DevicesOpt, cluster: Optional[Path] = ClusterOpt,
                allow_soft_placement: Optional[bool] = SoftOpt,
                tag: Optional[str] = TagOpt, signature: Optional[str] = SigOpt,
                whole_graph: bool = WholeOpt,
    fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
    step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
                format: str = typer.Option("text", "--format", "-f", help="text or json.")):
    """Inter-op width, critical path and work, intra-op splitting, and recommended
    inter_op/intra_op thread counts with the code to set them.

    Exit status: 0, or 2 when a model cannot be loaded or analysed.
    """
    if format not in ("text", "json"):
        usage_error(f"unknown --format {format!r} (expected text or json)")
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph, cluster=cluster)
    if cores is not None:
        settings.cores = cores
    if batch_size is not None:
        settings.batch_size = batch_size
    reports = run_models(paths, settings, fmt=format)
    failed = False
    items = []
    for r in reports:
        par, error = _report(r)
        failed |= par is None
        items.append((r, par, error))
    if format == "json":
        out = []
        for r, par, error in items:
            if par is None:
                out.append({"model": r.path,
                            "error": "; ".join(d.message for d in error)
                            or "the model could not be loaded",
                            "diagnostics": [d.to_json() for d in error]})
            else:
                obj = par.to_json()
                obj["model"] = r.path
                obj["analysed"] = r.entry
                out.append(obj)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        from ..output.parallelism_text import render as render_parallelism
        from ..output.text import format_diagnostic
        chunks = []
        for r, par, error in items:
            if par is None:    # the load errors as `check` prints them
                chunks.append("".join(format_diagnostic(d) + "\n" for d in error)
                              or f"{r.path}: the model could not be loaded\n")
                continue
            par.model = r.path
            text = render_parallelism(par)
            findings = [format_diagnostic(d) for d in r.diagnostics
                        if PARALLELISM_RULES.matches(d.code, d.rule)]
            if findings:
                text += "\nfindings:\n" + "\n".join(findings) + "\n"
            chunks.append(f"# {settings.describe_devices()}; analysed: {r.entry}\n" + text)
        sys.stdout.write("\n".join(chunks))
    raise typer.Exit(EXIT_ERROR if failed else EXIT_CLEAN)
