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
                      settings_from_flags, usage_error, analysis_of, error_json, error_text,
                      finding_lines)

#: The parallelism rules (PL3xx): their findings end the report.
PARALLELISM_RULES = RuleSelector("PL3")


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
        par, error = analysis_of(r, "parallelism", "the parallelism analysis")
        failed |= par is None
        items.append((r, par, error))
    if format == "json":
        out = []
        for r, par, error in items:
            if par is None:
                out.append(error_json(r, error))
            else:
                obj = par.to_json()
                obj["model"] = r.path
                obj["analysed"] = r.entry
                out.append(obj)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        from ..output.parallelism_text import render as render_parallelism
        chunks = []
        for r, par, error in items:
            if par is None:
                chunks.append(error_text(r, error))
                continue
            par.model = r.path
            text = render_parallelism(par)
            findings = finding_lines(r, PARALLELISM_RULES)
            if findings:
                text += "\nfindings:\n" + "\n".join(findings) + "\n"
            chunks.append(f"# {settings.describe_devices()}; analysed: {r.entry}\n" + text)
        sys.stdout.write("\n".join(chunks))
    raise typer.Exit(EXIT_ERROR if failed else EXIT_CLEAN)
