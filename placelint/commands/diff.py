"""``placelint diff OLD NEW``: what a change to a model does to placement, copies,
parallelism and findings.

OLD and NEW are model files, SavedModel directories, directories of models (paired by
their path inside the directory), or ``REV:PATH`` read from git's objects
(``placelint diff origin/main:models/m models/m``). Exit status: 1 when NEW has a finding
OLD did not have at or above ``fail-on``, 0 otherwise, 2 on a usage, load or internal error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ._common import (EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, ClusterOpt, DevicesOpt, FeedOpt,
                      FetchOpt, PrunedOpt, SigOpt, SoftOpt, StepOpt, TagOpt, WholeOpt, command,
                      settings_from_flags, usage_error)

FORMATS = ("text", "json", "markdown")


@command()
def diff(
    old: str = typer.Argument(..., help="The model before the change: a file, a directory, "
                                        "or REV:PATH from git (HEAD~1:models/m)."),
    new: str = typer.Argument(..., help="The model after the change (same forms)."),
    devices: Optional[str] = DevicesOpt,
    cluster: Optional[Path] = ClusterOpt,
    allow_soft_placement: Optional[bool] = SoftOpt,
    tag: Optional[str] = TagOpt,
    signature: Optional[str] = SigOpt,
    whole_graph: bool = WholeOpt,
    fetch: Optional[str] = FetchOpt, feed: Optional[str] = FeedOpt,
    step: Optional[str] = StepOpt, place_pruned_graph: Optional[bool] = PrunedOpt,
    format: str = typer.Option("text", "--format", "-f",
                               help="text, json, or markdown (a pull-request comment)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o",
                                          help="Write the report to FILE."),
    fail_on: Optional[str] = typer.Option(
        None, "--fail-on", help="Lowest severity of a NEW finding that fails the run: "
                                "error, warning (default, or fail-on in the config) or info."),
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with new findings."),
):
    """Compare two versions of a model: moved nodes, added and removed copies with bytes
    per step, parallelism before -> after, new and fixed findings.

    Exit status: 0 no new finding at or above fail-on, 1 new findings, 2 usage, load or internal error.
    """
    from ..diagnostics import Severity

    if format not in FORMATS:
        usage_error(f"unknown --format {format!r} (expected {', '.join(FORMATS)})")
    settings = settings_from_flags(devices, allow_soft_placement, tag, signature, whole_graph,
                                   cluster=cluster, fetch=fetch, feed=feed, step=step,
                                   place_pruned_graph=place_pruned_graph)
    if fail_on is not None:
        try:
            settings.fail_on = Severity.parse(fail_on)
        except ValueError as exc:
            usage_error(f"--fail-on: {exc}")
    import tempfile
    with tempfile.TemporaryDirectory(prefix="placelint-diff-") as tmp:
        diffs, errors = compare_paths(old, new, settings, Path(tmp))
    for e in errors:
        typer.echo(f"placelint: error: {e}", err=True)
    if errors and not diffs:
        raise typer.Exit(EXIT_ERROR)

    from ..output.diff import render_json, render_markdown, render_text
    line = settings.describe_devices()
    text = (render_json(diffs) if format == "json" else
            render_markdown(diffs, line) if format == "markdown" else render_text(diffs, line))
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            usage_error(f"--output: cannot write {output}: {exc.strerror or exc}")
    if errors:
        raise typer.Exit(EXIT_ERROR)
    failing = [f for d in diffs for f in d.new_failures(settings.fail_on)]
    raise typer.Exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


def resolve(arg: str, into: Path) -> tuple[Path, str | None]:
    """(local path, git revision or None) for a command-line OLD/NEW argument."""
    from ..loaders.git import GitSpecError, extract, is_git_spec, split_spec
    if is_git_spec(arg):
        try:
            return extract(arg, into), split_spec(arg)[0]
        except GitSpecError as exc:
            usage_error(str(exc))
    path = Path(arg)
    if not path.exists():
        spec = split_spec(arg)
        hint = (f" (and {spec[0]!r} is not a git revision here)" if spec else "")
        usage_error(f"{arg} does not exist{hint}")
    return path, None


def _models(path: Path):
    """{key inside the argument: ModelRef}; a single model has the key ''."""
    from ..loaders import discover
    refs = discover([path])
    if len(refs) == 1 and (refs[0].path == path or path.is_file()):
        return {"": refs[0]}
    out = {}
    for r in refs:
        try:
            out[r.path.relative_to(path).as_posix()] = r
        except ValueError:
            out[r.path.as_posix()] = r
    return out


def _label(arg: str, rev: str | None, key: str) -> str:
    if not key:
        return arg
    if rev is not None:
        return f"{arg.rstrip('/')}/{key}"
    return (Path(arg) / key).as_posix()


def _analyse(ref, settings, label: str, rev: str | None, local_root: Path):
    """(report.diff.Side, error text or None) for one model."""
    from ..pipeline import analyze
    from ..report.diff import Side
    report = analyze(ref, settings)
    if rev is not None:
        tmp = str(local_root)
        for d in report.diagnostics:
            d.model = label
            d.file = label
            d.message = d.message.replace(str(ref.path), label).replace(tmp, rev + ":")
    if report.context is None:
        why = "; ".join(f"{d.code} {d.message}" for d in report.diagnostics) or "cannot load"
        return None, f"{label}: {why}"
    from ..checks.pl009_internal_error import InternalError
    internal = [d.message for d in report.diagnostics if d.code == InternalError.code]
    return Side.of(report, label), (f"{label}: {internal[0]}" if internal else None)


def compare_paths(old: str, new: str, settings, tmp: Path):
    """Every model pair under OLD and NEW compared; (diffs, load errors)."""
    from ..report.diff import Side, compare
    old_path, old_rev = resolve(old, tmp / "old")
    new_path, new_rev = resolve(new, tmp / "new")
    old_models, new_models = _models(old_path), _models(new_path)
    if not old_models and not new_models:
        usage_error(f"no models found in {old} or {new}")
    if "" in old_models and "" in new_models:
        pairs = [("", "")]
    elif "" in old_models or "" in new_models:
        usage_error(f"compare a model with a model, or a directory with a directory "
                     f"({old}: {len(old_models)} models, {new}: {len(new_models)})")
    else:
        keys = sorted(set(old_models) | set(new_models))
        pairs = [(k, k) for k in keys]
    diffs, errors = [], []
    for ko, kn in pairs:
        lo, ln = _label(old, old_rev, ko), _label(new, new_rev, kn)
        sides = []
        for models, key, label, rev, root in ((old_models, ko, lo, old_rev, tmp / "old"),
                                             (new_models, kn, ln, new_rev, tmp / "new")):
            if key not in models:
                sides.append(Side.empty(label + " (absent)"))
                continue
            side, error = _analyse(models[key], settings, label, rev, root)
            if error:            # a load error (no side), or an internal error (exit 2)
                errors.append(error)
            sides.append(side)
        if None in sides:
            continue
        diffs.append(compare(sides[0], sides[1], settings.devices.names))
    return diffs, errors
