"""What every command shares: options, exit codes, settings from flags, running models.

The command modules import this module, never ``placelint.cli``; ``cli`` builds the Typer
app and adds the commands that the modules declare with ``@command()``. Importing this
module stays cheap (no analysis, no TensorFlow): heavy imports happen in the functions.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn

import typer

from ..checks.pl009_internal_error import InternalError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

PathsArg = typer.Argument(..., metavar="PATH",
                          help="Model files (.pb, .pbtxt, .meta) or directories "
                               "(SavedModels, or trees searched recursively).")
DevicesOpt = typer.Option(None, "--devices", "-d",
                          help="Target devices: names (CPU:0,GPU:0,GPU:1), counts as in "
                               "ConfigProto.device_count (CPU=1,GPU=2), or full names with job "
                               "and task (/job:ps/task:0/device:CPU:0,...). With --cluster, names "
                               "and counts apply to each task. Default: CPU:0,GPU:0.")
ClusterOpt = typer.Option(None, "--cluster", metavar="FILE",
                          help="A ClusterSpec as JSON (the \"cluster\" dict of TF_CONFIG, or a "
                               "whole TF_CONFIG whose \"task\" is the session's): --devices "
                               "apply to each of its tasks.")
SoftOpt = typer.Option(None, "--allow-soft-placement/--no-allow-soft-placement",
                       help="Predict with TF's allow_soft_placement (default: off, as in TF1 "
                            "sessions and TF2 graph mode).")
TagOpt = typer.Option(None, "--tag", help="SavedModel MetaGraph tag(s), comma separated "
                                          "(default: serve, or the only MetaGraph).")
SigOpt = typer.Option(None, "--signature", help="SavedModel signature to analyse "
                                                "(default: serving_default).")
WholeOpt = typer.Option(False, "--whole-graph", help="Analyse the whole graph as one graph, "
                                                     "without a SavedModel loader's phases "
                                                     "(restore, init, the serving step).")
FetchOpt = typer.Option(None, "--fetch", help="Analyse the step Session.run(fetches) runs: "
                                              "tensors name:k (a name without :k is an op "
                                              "run as a target), comma separated.")
FeedOpt = typer.Option(None, "--feed", help="Tensors the step is fed (name or name:k), "
                                            "comma separated: TF cuts the graph there and the "
                                            "values come from the client's CPU:0.")
StepOpt = typer.Option(None, "--step", help="A named step the MetaGraph declares (a "
                                            "signature, restore, init, train_op, ...; see "
                                            "placelint steps).")
PrunedOpt = typer.Option(None, "--place-pruned-graph/--no-place-pruned-graph",
                         help="Place the step's pruned graph alone, as "
                              "GraphOptions.place_pruned_graph (default: the whole graph, as "
                              "DirectSession).")
MemoryOpt = typer.Option(None, "--memory", metavar="DEVICE=SIZE,...",
                         help="Memory budget per device type or device (GPU=16GiB,CPU=64GiB or "
                              "GPU:1=8GiB): device-memory-exceeded/-high compare each device's "
                              "need with it.")
GpuFractionOpt = typer.Option(None, "--gpu-memory-fraction", metavar="F",
                              help="gpu_options.per_process_gpu_memory_fraction: a GPU's budget "
                                   "is F times its --memory.")
BatchSizeOpt = typer.Option(None, "--batch-size", min=1,
                            help="Batch size standing in for an unknown first dimension in "
                                 "the memory analysis.")
FormatOpt = typer.Option("text", "--format", "-f", help="Output format.")

#: (command name or None for the function's name, function), in declaration order;
#: ``placelint.cli`` adds them to its app.
COMMANDS: list[tuple[str | None, Callable[..., Any]]] = []


def command(name: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a CLI command (``@command()`` or ``@command("name")``), as ``app.command``."""
    def declare(func: Callable[..., Any]) -> Callable[..., Any]:
        COMMANDS.append((name, func))
        return func
    return declare


def usage_error(message: str) -> NoReturn:
    """``placelint: error: MESSAGE`` on stderr and exit 2."""
    typer.echo(f"placelint: error: {message}", err=True)
    raise typer.Exit(EXIT_ERROR)


def settings_from_flags(devices, soft, tag, signature, whole_graph, *, config=None, cluster=None,
                        fetch=None, feed=None, step=None, place_pruned_graph=None,
                        memory=None, gpu_memory_fraction=None, batch_size=None):
    """Settings from defaults, then the config file, then flags (flags win).

    ``config`` is a loaded ``placelint.config.Config``; when None the file is found upwards
    from the current directory. A bad file is a usage error (exit 2).
    """
    from ..config import ConfigError, load_config
    from ..model.devices import DeviceSet, DeviceSetError
    from ..settings import Settings

    s = Settings()
    try:
        (config if config is not None else load_config()).apply(s)
    except ConfigError as exc:
        usage_error(str(exc))
    if devices:
        try:
            s.devices = DeviceSet.parse(devices)
        except DeviceSetError as exc:
            usage_error(f"--devices: {exc}")
    if soft is not None:
        s.allow_soft_placement = soft
    if tag is not None:
        s.load.tag = tag
    if signature is not None:
        s.load.signature = signature
    if whole_graph:
        s.load.whole_graph = True
    if cluster is not None:
        from ..model.cluster import Cluster, ClusterError
        try:
            s.cluster = Cluster.read(cluster)
        except ClusterError as exc:
            usage_error(f"--cluster: {exc}")
    if memory is not None or gpu_memory_fraction is not None:
        from ..analyses.memory_budget import BudgetError, check_fraction, parse_budget
        try:
            if memory is not None:
                s.memory = parse_budget(memory)
        except BudgetError as exc:
            usage_error(f"--memory: {exc}")
        try:
            if gpu_memory_fraction is not None:
                s.gpu_memory_fraction = check_fraction(gpu_memory_fraction)
        except BudgetError as exc:
            usage_error(f"--gpu-memory-fraction {exc}")
    if batch_size is not None:
        s.batch_size = batch_size
    try:
        s.apply_cluster()
    except DeviceSetError as exc:
        usage_error(f"--devices with the cluster: {exc}")
    if fetch:
        s.load.fetch = [fetch]
    if feed:
        s.load.feed = [feed]
    if step is not None:
        s.load.step = step
    if place_pruned_graph is not None:
        s.load.place_pruned_graph = place_pruned_graph
    if s.load.step is not None and (s.load.fetch or s.load.feed):
        usage_error("--step names a declared step; --fetch/--feed describe one: use one or "
                    "the other")
    return s


def find_models(paths, config=None, *, pre_commit: bool = False, exclude=None,
                extend_exclude=None, force_exclude: bool = False):
    """The models under ``paths`` (``loaders.discover``), with the config's and the flags'
    excludes. A path that does not exist is a usage error (exit 2) before anything is
    read, so no selection, ``--exit-zero`` or baseline can hide it; so is finding no
    model, except in a pre-commit run (its files may all be excluded)."""
    from ..config import ConfigError, load_config
    from ..loaders import PathError, discover

    if config is None:
        try:
            config = load_config()
        except ConfigError as exc:
            usage_error(str(exc))
    walk = config.walk_options(exclude=exclude, extend_exclude=extend_exclude,
                               pre_commit=pre_commit, force_exclude=force_exclude)
    try:
        refs = discover(paths, walk)
    except PathError as exc:
        for path, why in exc.problems:
            typer.echo(f"placelint: error: {shorten(str(path))}: {why}", err=True)
        raise typer.Exit(EXIT_ERROR)
    if not refs and not pre_commit:
        usage_error("no models found in " + ", ".join(shorten(str(p)) for p in paths))
    return refs


def shorten(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (a path of 5000 a's)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def skip_not_models(items, refs) -> list:
    """``items`` (reports or results, one per ref) without the files that are no models and
    that a walk or pre-commit found, each skipped with a one-line note on stderr. A file
    the user named stays: its PL001 says why it is not a model."""
    kept = []
    for item, ref in zip(items, refs):
        reason = getattr(item, "not_a_model", None)
        if reason and not ref.named:
            typer.echo(f"placelint: note: skipped {ref.display}: {reason.split(';')[0]}",
                       err=True)
        else:
            kept.append(item)
    return kept


def make_progress(fmt: str | None):
    """A progress display for this run when a person watches it (``_progress.wanted``)."""
    from ._progress import Progress, wanted
    return Progress() if wanted(fmt) else None


def run_models(paths, settings, *, fmt: str | None = "text", config=None):
    """Every model found under ``paths``, analysed (``pipeline.analyze``) in this process,
    with a progress display on a terminal; files that are no models are skipped (noted)."""
    from ..pipeline import analyze

    refs = find_models(paths, config)
    progress = make_progress(fmt)
    reports = []
    if progress is not None:
        progress.start(len(refs))
    try:
        for i, ref in enumerate(refs):
            if progress is None:
                reports.append(analyze(ref, settings))
                continue
            progress.model_started(i, ref.display)
            reports.append(analyze(ref, settings, on_phase=lambda p, i=i: progress.phase(i, p)))
            progress.model_done(i)
    finally:
        if progress is not None:
            progress.stop()
    kept = skip_not_models(reports, refs)
    if not kept:
        usage_error("no models found in " + ", ".join(shorten(str(p)) for p in paths)
                    + f" ({len(reports)} file(s) skipped: not TensorFlow models)")
    return kept


def load_error_lines(report) -> list[str]:
    """A model's load errors, formatted as ``check`` formats findings (one format for
    every command)."""
    from ..output.text import format_diagnostic
    return [format_diagnostic(d) for d in report.diagnostics if d.severity.rank >= 3]


def analysis_of(report, attr: str, what: str):
    """(the model's analysis ``report.context.<attr>``, None), or (None, its error
    diagnostics): the load errors, or an internal error of the analysis (``what`` names it
    in the message). For the commands that show one analysis (memory, parallelism)."""
    ctx = report.context
    if ctx is None:
        return None, [d for d in report.diagnostics if d.severity.rank >= 3]
    try:
        return getattr(ctx, attr), None
    except (RecursionError, Exception) as exc:  # noqa: BLE001 - never a traceback
        from ..pipeline import internal_error
        d = internal_error(what, exc)
        d.model, d.file = report.path, str(report.ref.path)
        return None, [d]


def error_json(report, errors) -> dict:
    """A model that could not be analysed, as the one-analysis commands' JSON lists it."""
    return {"model": report.path,
            "error": "; ".join(d.message for d in errors) or "the model could not be loaded",
            "diagnostics": [d.to_json() for d in errors]}


def error_text(report, errors) -> str:
    """A model that could not be analysed: its errors as ``check`` prints them."""
    from ..output.text import format_diagnostic
    return ("".join(format_diagnostic(d) + "\n" for d in errors)
            or f"{report.path}: the model could not be loaded\n")


def write_one_analysis(reports, attr: str, what: str, format: str,
                       json_of: Callable, text_of: Callable) -> bool:
    """Write the commands that show one analysis per model (memory, parallelism): a JSON
    list (``json_of(report, analysis)`` per model, ``error_json`` for one that failed) or
    the text chunks (``text_of(report, analysis)``, ``error_text``). True when a model
    could not be analysed (see ``analysis_of``)."""
    import json
    import sys
    items = [(r, *analysis_of(r, attr, what)) for r in reports]
    if format == "json":
        out = [error_json(r, err) if a is None else json_of(r, a) for r, a, err in items]
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(error_text(r, err) if a is None else text_of(r, a)
                                   for r, a, err in items))
    return any(a is None for _, a, _ in items)


def finding_lines(report, selector) -> list[str]:
    """The model's findings of the rules ``selector`` covers, as ``check`` prints them."""
    from ..output.text import format_diagnostic
    return [format_diagnostic(d) for d in report.diagnostics
            if selector.matches(d.code, d.rule)]


def exit_code(reports, settings) -> int:
    """2 on an internal error, 1 when a finding reaches ``fail-on``, else 0."""
    diags = [d for r in reports for d in r.diagnostics]
    if any(d.code == InternalError.code for d in diags):
        return EXIT_ERROR
    if any(d.severity.rank >= settings.fail_on.rank for d in diags):
        return EXIT_FINDINGS
    return EXIT_CLEAN
