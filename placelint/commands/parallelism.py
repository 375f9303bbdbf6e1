"""``placelint parallelism``: what inter-op and intra-op threads can achieve on a graph."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..checks.selector import RuleSelector
from ._common import (ClusterOpt, DevicesOpt, EXIT_CLEAN, EXIT_ERROR, PathsArg, SigOpt, SoftOpt,
                      TagOpt, WholeOpt, FetchOpt, FeedOpt, StepOpt, PrunedOpt, command, run_models,
                      settings_from_flags, usage_error, finding_lines, write_one_analysis)

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
    from ..output.parallelism_text import render as render_parallelism

    def as_json(r, par) -> dict:
        return {**par.to_json(), "model": r.path, "analysed": r.entry}

    def as_text(r, par) -> str:
        par.model = r.path
        text = render_parallelism(par)
        findings = finding_lines(r, PARALLELISM_RULES)
        if findings:
            text += "\nfindings:\n" + "\n".join(findings) + "\n"
        return f"# {settings.describe_devices()}; analysed: {r.entry}\n" + text

    failed = write_one_analysis(run_models(paths, settings, fmt=format), "parallelism",
                                "the parallelism analysis", format, as_json, as_text)
    raise typer.Exit(EXIT_ERROR if failed else EXIT_CLEAN)
