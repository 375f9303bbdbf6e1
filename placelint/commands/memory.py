"""``placelint memory``: resident and peak bytes per device, against the budget if given."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..checks.selector import RuleSelector
from ._common import (BatchSizeOpt, ClusterOpt, DevicesOpt, EXIT_CLEAN, EXIT_ERROR, FeedOpt,
                      FetchOpt, GpuFractionOpt, MemoryOpt, PathsArg, PrunedOpt, SigOpt, SoftOpt,
                      StepOpt, TagOpt, WholeOpt, command, finding_lines, run_models,
                      settings_from_flags, usage_error, write_one_analysis)

#: The memory rules (PL4xx): their findings end the report.
MEMORY_RULES = RuleSelector("PL4")




@command()
def memory(paths: List[Path] = PathsArg,
           devices: Optional[str] = DevicesOpt, cluster: Optional[Path] = ClusterOpt,
           allow_soft_placement: Optional[bool] = SoftOpt,
           tag: Optional[str] = TagOpt, signature: Optional[str] = SigOpt,
           whole_graph: bool = WholeOpt,
           fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
           step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
           memory: Optional[str] = MemoryOpt,
           gpu_memory_fraction: Optional[float] = GpuFractionOpt,
           batch_size: Optional[int] = BatchSizeOpt,
           format: str = typer.Option("text", "--format", "-f", help="text or json.")):
    """Memory per device on the predicted placement: resident bytes (variables, constants),
    the peak of the analysed step's tensors (--fetch/--feed/--step; default: the whole graph)
    and a lower bound, the largest owners, the ops of unknown
    size, and the budget check (--memory).

    Exit status: 0, or 2 when a model cannot be loaded or analysed.
    """
    if format not in ("text", "json"):
        usage_error(f"unknown --format {format!r} (expected text or json)")
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph,
                                   cluster=cluster, memory=memory,
                                   gpu_memory_fraction=gpu_memory_fraction, batch_size=batch_size)
    from ..analyses.memory_budget import device_objects
    from ..output.memory_text import memory_text

    def as_text(r, mem) -> str:
        text = (f"# {settings.describe_devices()}; analysed: {r.entry}\nmodel: {r.path}\n"
                + memory_text(mem, settings))
        findings = finding_lines(r, MEMORY_RULES)
        if findings:
            text += "findings:\n" + "\n".join(findings) + "\n"
        return text

    failed = write_one_analysis(
        run_models(paths, settings, fmt=format), "memory", "the memory analysis", format,
        lambda r, mem: {"model": r.path, "devices": device_objects(mem, settings)}, as_text)
    raise typer.Exit(EXIT_ERROR if failed else EXIT_CLEAN)
