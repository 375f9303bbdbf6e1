"""``placelint check``: run every rule over models and report findings.

Order of work: config file (found upwards, or ``--config``) -> settings, with flags on
top -> models found (pre-commit's file names mapped to their SavedModel directories) ->
each model from the content-hash cache or analysed (``--jobs`` processes) -> per-node
ignores -> baseline -> the chosen format -> exit status 0 clean, 1 findings at or above
``fail-on``, 2 usage or internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..formats import DETAILS, FORMATS
from ._common import (BatchSizeOpt, ClusterOpt, DevicesOpt, EXIT_CLEAN, EXIT_FINDINGS, FetchOpt,
                      FeedOpt, GpuFractionOpt, MemoryOpt, PathsArg, PrunedOpt, SigOpt, SoftOpt,
                      StepOpt, TagOpt, WholeOpt, command, exit_code, find_models, make_progress,
                      settings_from_flags, shorten, skip_not_models,
                      usage_error)


@command()
def check(
    paths: List[Path] = PathsArg,
    devices: Optional[str] = DevicesOpt,
    cluster: Optional[Path] = ClusterOpt,
    allow_soft_placement: Optional[bool] = SoftOpt,
    tag: Optional[str] = TagOpt,
    signature: Optional[str] = SigOpt,
    whole_graph: bool = WholeOpt,
    fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
    step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
    memory: Optional[str] = MemoryOpt,
    gpu_memory_fraction: Optional[float] = GpuFractionOpt,
    batch_size: Optional[int] = BatchSizeOpt,
    format: Optional[str] = typer.Option(
        None, "--format", "-f", help="Output format: text, json, sarif, github (workflow "
                                     "annotations) or markdown (a pull-request comment). "
                                     "Default: text, or output-format in the config."),
    output_format: Optional[str] = typer.Option(
        None, "--output-format", help="How much of each finding the text format shows: "
                                      "concise (one line per finding, the default) or full "
                                      "(TensorFlow's wording, the fix and every node). Also "
                                      "takes the --format values, as ruff's does."),
    statistics: bool = typer.Option(
        False, "--statistics", help="Print the number of findings (and nodes) per rule "
                                    "instead of the findings."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write the report to FILE (the summary line still goes "
                                     "to stderr)."),
    config: Optional[Path] = typer.Option(
        None, "--config", help="Config file to use instead of searching upwards for "
                               "placelint.toml / pyproject.toml [tool.placelint]."),
    isolated: bool = typer.Option(False, "--isolated", help="Ignore all config files."),
    select: Optional[str] = typer.Option(
        None, "--select", help="Only these rules: comma-separated code prefixes or names "
                               "(PL1,cross-device-copy). Replaces select in the config."),
    ignore: Optional[str] = typer.Option(
        None, "--ignore", help="Skip these rules (code prefixes or names). Replaces ignore "
                               "in the config."),
    fail_on: Optional[str] = typer.Option(
        None, "--fail-on", help="Lowest severity that fails the run: error, warning "
                                "(default) or info."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings "
                                                              "(internal errors still exit 2)."),
    baseline: Optional[Path] = typer.Option(
        None, "--baseline", help="Hide the findings recorded in this baseline file; report "
                                 "only new ones."),
    write_baseline: bool = typer.Option(
        False, "--write-baseline", help="Record the current findings in the baseline file "
                                        "(--baseline or baseline in the config) and exit 0."),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", min=0, help="Worker processes for many models (0 = one per "
                                          "core, the default; 1 = no pool)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the "
                                                            "result cache."),
    max_text_size: Optional[str] = typer.Option(
        None, "--max-text-size", help="Largest text-format model (.pbtxt) to parse: 32M "
                                      "(the default), 128M, 1G... Text parsing is pure "
                                      "Python, ~3 s per 100k nodes."),
    exclude: Optional[List[str]] = typer.Option(
        None, "--exclude", help="Leave out of directory walks what this glob matches (a "
                                "name, or a path from the project root); replaces exclude "
                                "in the config and its default. Repeatable."),
    extend_exclude: Optional[List[str]] = typer.Option(
        None, "--extend-exclude", help="Like --exclude, but added to the config's and the "
                                       "default patterns. Repeatable."),
    force_exclude: bool = typer.Option(
        False, "--force-exclude", help="Apply the exclude patterns to paths named on the "
                                       "command line too."),
    pre_commit: bool = typer.Option(
        False, "--pre-commit", help="The paths are pre-commit's file selection (the hook sets "
                                    "this): excludes apply to them, files that are not "
                                    "TensorFlow models are skipped with a note, stale "
                                    "per-node-ignores are not reported."),
):
    """Check models and report placement and parallelism problems.

    Exit status: 0 clean, 1 findings, 2 usage or internal error.
    """
    from ..config import ConfigError, load_config, parse_selectors
    from ..diagnostics import Severity

    try:
        cfg = load_config(config, isolated=isolated)
    except ConfigError as exc:
        usage_error(str(exc))
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph,
                                   config=cfg, cluster=cluster, memory=memory,
                                   gpu_memory_fraction=gpu_memory_fraction, batch_size=batch_size)
    try:
        if select is not None:
            settings.select = parse_selectors(select, "--select")
        if ignore is not None:
            settings.ignore = parse_selectors(ignore, "--ignore")
    except ConfigError as exc:
        usage_error(str(exc))
    if fail_on is not None:
        try:
            settings.fail_on = Severity.parse(fail_on)
        except ValueError as exc:
            usage_error(f"--fail-on: {exc}")
    if max_text_size is not None:
        from ..humanize import parse_size
        try:
            settings.load.max_text_bytes = parse_size(max_text_size)
        except ValueError as exc:
            usage_error(f"--max-text-size: {exc}")
    fmt, detail = "text", "concise"
    for flag, value in (("output-format", cfg.get("output_format")),
                        ("--output-format", output_format), ("--format", format)):
        if value is None:
            continue
        if value in DETAILS:
            fmt, detail = "text", value
        elif value in FORMATS:
            fmt = value
        else:
            usage_error(f"unknown {flag} {value!r} (expected "
                        f"{', '.join(FORMATS if flag == '--format' else DETAILS + FORMATS)})")
    baseline_path = baseline or cfg.path_value("baseline")
    if write_baseline and baseline_path is None:
        usage_error("--write-baseline needs a file: give --baseline FILE or set baseline "
                    "in the config")

    refs = find_models(paths, cfg, pre_commit=pre_commit, exclude=exclude,
                       extend_exclude=extend_exclude, force_exclude=force_exclude)
    results = skip_not_models(_check_models(refs, settings, cfg, jobs, no_cache, fmt), refs)
    if not results:
        if pre_commit:
            typer.echo("placelint: no TensorFlow models among the files passed", err=True)
            raise typer.Exit(EXIT_CLEAN)
        usage_error("no models found in " + ", ".join(shorten(str(p)) for p in paths)
                    + f" ({len(refs)} file(s) skipped: not TensorFlow models)")
    # "matched no finding" means something only when every model in scope was checked:
    # whole directory trees, not single models or pre-commit's staged files
    from ..loaders.discover import is_saved_model_dir
    whole_scope = not pre_commit and all(p.is_dir() and not is_saved_model_dir(p)
                                         for p in paths)
    _apply_ignores(results, settings, report_stale=whole_scope)

    hidden = 0
    if baseline_path is not None:
        hidden = _apply_baseline(results, baseline_path, write_baseline)

    from ..output import RunInfo, find_repo_root, render, want_colour
    from ..output.text import summary
    info = RunInfo(devices_line=settings.describe_devices(), device_names=settings.devices.names,
                   devices=settings.devices,
                   root=find_repo_root(), colour=output is None and want_colour(sys.stdout),
                   baseline_hidden=hidden, cached=sum(r.cached for r in results),
                   detail=detail, statistics=statistics,
                   project_root=cfg.path_value("project_root"))
    report = render(fmt, results, info)
    if output is None:
        sys.stdout.write(report)
    else:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(report, encoding="utf-8")
        except OSError as exc:
            usage_error(f"--output: cannot write {output}: {exc.strerror or exc}")
        typer.echo(summary(results, info.devices_line, hidden), err=True)
    code = exit_code(results, settings)
    raise typer.Exit(EXIT_CLEAN if exit_zero and code == EXIT_FINDINGS else code)


def _check_models(refs, settings, cfg, jobs, no_cache, fmt):
    """Analyse the models, through the cache and the process pool, with a progress
    display when a person watches."""
    from ..runner import run_models

    cache = None
    if not no_cache and cfg.get("cache", True):
        from ..cache import CACHE_DIR_NAME, Cache
        cache = Cache(cfg.path_value("cache_dir") or cfg.root / CACHE_DIR_NAME)
    if jobs is None:
        jobs = cfg.get("jobs", 0)
    return run_models(refs, settings, jobs=jobs, cache=cache, progress=make_progress(fmt))


def _apply_ignores(results, settings, report_stale: bool = True):
    from ..suppress import apply_per_node_ignores
    stale = apply_per_node_ignores(results, settings.per_node_ignores)
    for glob in stale if report_stale else ():
        codes = ", ".join(settings.per_node_ignores[glob])
        typer.echo(f"placelint: warning: per-node-ignores entry {glob!r} ({codes}) matched no "
                   "finding; remove it or fix the pattern", err=True)


def _apply_baseline(results, path: Path, write: bool) -> int:
    """Write the baseline (and exit), or hide its findings; returns how many were hidden."""
    from ..baseline import Baseline, BaselineError, write as write_file
    previous = None
    if write:
        if path.is_file():
            try:
                previous = Baseline.load(path)
            except BaselineError:
                previous = None
        n = write_file(path, results, previous)
        typer.echo(f"placelint: wrote {n} finding{'s' if n != 1 else ''} to baseline {path}",
                   err=True)
        raise typer.Exit(EXIT_CLEAN)
    try:
        bl = Baseline.load(path)
    except BaselineError as exc:
        usage_error(str(exc))
    outcome = bl.apply(results)
    if outcome.stale:
        typer.echo(f"placelint: {len(outcome.stale)} baseline entr"
                   f"{'y no longer occurs' if len(outcome.stale) == 1 else 'ies no longer occur'}"
                   f" (fixed?); run with --write-baseline to drop "
                   f"{'it' if len(outcome.stale) == 1 else 'them'}", err=True)
    return outcome.hidden
