"""``placelint graph PATH -o out.svg``: draw the analysed graph, coloured by device."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from ._common import (BatchSizeOpt, ClusterOpt, DevicesOpt, EXIT_ERROR, GpuFractionOpt,
                      MemoryOpt, PathsArg, SigOpt, SoftOpt, TagOpt, WholeOpt, FetchOpt, FeedOpt,
                      StepOpt, PrunedOpt, command, load_error_lines, run_models,
                      settings_from_flags, usage_error)

#: Default --width of PNG output: readable when GitHub shows it in a pull request.
PNG_WIDTH = 1600
#: output suffix -> Graphviz format ('dot' = the DOT source itself)
SUFFIXES = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


@command()
def graph(paths: List[Path] = PathsArg,
          output: Path = typer.Option(..., "--output", "-o",
                                      help="Output file: .svg, .png, .pdf, or .dot/.gv "
                                           "(DOT source; needs no Graphviz)."),
          devices: Optional[str] = DevicesOpt,
          cluster: Optional[Path] = ClusterOpt,
          allow_soft_placement: Optional[bool] = SoftOpt, tag: Optional[str] = TagOpt,
          signature: Optional[str] = SigOpt, whole_graph: bool = WholeOpt,
          fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
          step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
          memory: Optional[str] = MemoryOpt,
          gpu_memory_fraction: Optional[float] = GpuFractionOpt,
          batch_size: Optional[int] = BatchSizeOpt,
          max_nodes: int = typer.Option(100, "--max-nodes", min=1,
                                        help="Most boxes to draw; name scopes above this are "
                                             "collapsed into one box each."),
          expand: Optional[List[str]] = typer.Option(None, "--expand",
                                                     help="Open this name scope whatever "
                                                          "--max-nodes says (repeatable)."),
          focus: Optional[str] = typer.Option(None, "--focus",
                                              help="Draw only the neighbourhood of this node."),
          radius: int = typer.Option(2, "--radius", min=0,
                                     help="Hops around --focus to draw."),
          show_cheap: bool = typer.Option(False, "--show-cheap",
                                          help="Also draw constants, shape ops and identities "
                                               "(hidden by default)."),
          hub_degree: int = typer.Option(40, "--hub-degree", min=0,
                                         help="Draw nodes with more neighbours than this apart, "
                                              "without their edges (0: never)."),
          timeout: float = typer.Option(30.0, "--timeout", min=1.0,
                                        help="Seconds Graphviz may take before a cheaper "
                                             "layout is used."),
          diff: Optional[str] = typer.Option(None, "--diff",
                                             help="Draw the changes since this older version "
                                                  "(a file, a SavedModel, or REV:PATH from git): "
                                                  "moved nodes, new and removed copies."),
          width: Optional[int] = typer.Option(None, "--width", min=100,
                                              help="Scale the drawing down to at most this many "
                                                   "pixels wide (PNG default: "
                                                   f"{PNG_WIDTH}, sized for a pull-request "
                                                   "comment).")):
    """Draw one model's graph: nodes filled by device, copies bold with bytes per step,
    findings outlined, each device's memory as a bar in the legend (against --memory's
    budget); large graphs collapse name scopes.

    Exit status: 0 drawn, 2 usage error, no Graphviz, or drawing failed.
    """
    from ..render.dot import to_dot
    from ..render.run_dot import DotFailed, DotNotFound, render
    from ..render.view import ViewError, ViewOptions, build_view, inputs_from_report

    fmt = SUFFIXES.get(output.suffix.lower())
    if fmt is None:
        usage_error(f"cannot tell the format of {output} (use .svg, .png, .pdf, .dot or .gv)")
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph, cluster=cluster,
                                   memory=memory, gpu_memory_fraction=gpu_memory_fraction,
                                   batch_size=batch_size)
    t0 = time.monotonic()
    reports = run_models(paths, settings)
    if len(reports) > 1:
        usage_error(f"graph draws one model; {len(reports)} found: "
                    + ", ".join(r.path for r in reports[:5]) + (" ..." if len(reports) > 5 else ""))
    report = reports[0]
    if report.context is None:
        for line in load_error_lines(report):      # as `check` prints them
            typer.echo(line, err=True)
        raise typer.Exit(EXIT_ERROR)
    if width is None and fmt == "png":
        width = PNG_WIDTH
    options = ViewOptions(max_nodes=max_nodes, expand=tuple(expand or ()),
                          focus=(focus,) if focus else (), radius=radius,
                          show_cheap=show_cheap, hub_degree=hub_degree, width_px=width)
    marks = _diff_marks(diff, report, settings) if diff is not None else None
    try:
        view = build_view(inputs_from_report(report, settings.describe_devices(), marks), options)
    except ViewError as exc:
        usage_error(str(exc))
    source = to_dot(view)
    t_view = time.monotonic() - t0
    try:                                           # a missing folder is made, as check -o does
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        usage_error(f"--output: cannot create {output.parent}: {exc.strerror or exc}")
    if fmt == "dot":
        _write(output, source.encode("utf-8"))
        layout = "DOT source"
    else:
        try:
            result = render(source, fmt, timeout=timeout)
        except DotNotFound as exc:
            typer.echo(f"placelint: error: {exc}", err=True)
            raise typer.Exit(EXIT_ERROR)
        except DotFailed as exc:
            typer.echo(f"placelint: error: {exc}", err=True)
            raise typer.Exit(EXIT_ERROR)
        _write(output, result.data)
        layout = f"{result.layout} {result.seconds:.1f} s"
        if result.fallback:
            typer.echo(f"placelint: warning: full dot layout timed out; used {result.layout}. "
                       "For a better drawing use a smaller --max-nodes or --focus.", err=True)
    units = sum(1 for u in view.units)
    typer.echo(f"wrote {output}: {units} boxes for {view.drawn_nodes} of {view.total_nodes} nodes, "
               f"{len(view.edges)} edges, {view.copies} copies "
               f"(analysis {t_view:.1f} s, {layout})")
    for note in view.notes:
        typer.echo(f"note: {note}", err=True)


def _diff_marks(old: str, report, settings):
    """The changes since ``old`` (a path or REV:PATH) as the diagram marks them."""
    import tempfile

    from ..render.inputs import diff_marks
    from ..report.diff import Side, compare
    from .diff import _analyse, _models, resolve
    with tempfile.TemporaryDirectory(prefix="placelint-diff-") as tmp:
        path, rev = resolve(old, Path(tmp) / "old")
        models = _models(path)
        if len(models) != 1:
            usage_error(f"--diff {old}: {len(models)} models there; name one model")
        (ref,) = models.values()
        side, error = _analyse(ref, settings, old, rev, Path(tmp) / "old")
    if error:
        usage_error(f"--diff: {error}")
    return diff_marks(compare(side, Side.of(report), settings.devices.names))


def _write(output: Path, data: bytes) -> None:
    try:
        output.write_bytes(data)
    except OSError as exc:
        usage_error(f"--output: cannot write {output}: {exc.strerror or exc}")
