"""The ``placelint`` command line (Typer).

Importing this module must stay cheap and must never import TensorFlow: it runs on every
commit as a pre-commit hook.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  pretty_exceptions_enable=False,
                  help="Static analysis of TensorFlow device placement and parallelism.")

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

PathsArg = typer.Argument(..., help="Model files (.pb, .pbtxt, .meta) or directories "
                                    "(SavedModels, or trees searched recursively).")
DevicesOpt = typer.Option(None, "--devices", "-d",
                          help="Target devices: names (CPU:0,GPU:0,GPU:1) or counts as in "
                               "ConfigProto.device_count (CPU=1,GPU=2). Default: CPU:0,GPU:0.")
SoftOpt = typer.Option(None, "--allow-soft-placement/--no-allow-soft-placement",
                       help="Predict with TF's allow_soft_placement (default: off, as in TF1 "
                            "sessions and TF2 graph mode).")
TagOpt = typer.Option(None, "--tag", help="SavedModel MetaGraph tag(s), comma separated "
                                          "(default: serve, or the only MetaGraph).")
SigOpt = typer.Option(None, "--signature", help="SavedModel signature to analyse "
                                                "(default: serving_default).")
WholeOpt = typer.Option(False, "--whole-graph", help="Analyse the whole graph, including "
                                                     "save/restore functions, not one signature.")
FormatOpt = typer.Option("text", "--format", "-f", help="Output format.")


def _version(value: bool):
    if value:
        typer.echo(f"placelint {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(version: bool = typer.Option(False, "--version", callback=_version,
                                               is_eager=True, help="Show the version and exit.")):
    pass


def _settings(devices, soft, tag, signature, whole_graph):
    from .loaders import LoadOptions
    from .model.devices import DeviceSet, DeviceSetError
    from .settings import Settings

    s = Settings()
    if devices:
        try:
            s.devices = DeviceSet.parse(devices)
        except DeviceSetError as exc:
            _usage_error(f"--devices: {exc}")
    if soft is not None:
        s.allow_soft_placement = soft
    s.load = LoadOptions(tag=tag, signature=signature, whole_graph=whole_graph)
    return s


def _usage_error(message: str):
    typer.echo(f"placelint: error: {message}", err=True)
    raise typer.Exit(EXIT_ERROR)


def _devices_line(settings) -> str:
    src = "default; set --devices" if settings.devices.source == "default" else settings.devices.source
    soft = ", soft placement" if settings.allow_soft_placement else ""
    return f"devices: {settings.devices.describe()} ({src}){soft}"


def _run(paths, settings):
    from .loaders import discover
    from .pipeline import analyze

    refs = discover(paths)
    return [analyze(ref, settings) for ref in refs]


def _exit_code(reports, settings) -> int:
    diags = [d for r in reports for d in r.diagnostics]
    if any(d.code == "PL009" for d in diags):
        return EXIT_ERROR
    if any(d.severity.rank >= settings.fail_on.rank for d in diags):
        return EXIT_FINDINGS
    return EXIT_CLEAN


@app.command()
def check(paths: List[Path] = PathsArg, devices: Optional[str] = DevicesOpt,
          allow_soft_placement: Optional[bool] = SoftOpt, tag: Optional[str] = TagOpt,
          signature: Optional[str] = SigOpt, whole_graph: bool = WholeOpt,
          format: str = FormatOpt):
    """Check models and report placement and parallelism problems.

    Exit status: 0 clean, 1 findings, 2 usage or internal error.
    """
    if format not in ("text", "json"):
        _usage_error(f"unknown --format {format!r} (expected text or json)")
    settings = _settings(devices, allow_soft_placement, tag, signature, whole_graph)
    reports = _run(paths, settings)
    if not reports:
        _usage_error("no models found in " + ", ".join(str(p) for p in paths))
    if format == "json":
        from .output import json_out
        sys.stdout.write(json_out.render(reports, settings.devices))
    else:
        from .output import text
        sys.stdout.write(text.render(reports, _devices_line(settings), colour=sys.stdout.isatty()))
    raise typer.Exit(_exit_code(reports, settings))


@app.command("rules")
def rules_cmd():
    """List every rule: code, name, default severity, summary."""
    from .checks import all_rules
    for r in all_rules():
        typer.echo(f"{r.code}  {r.name:<28} {r.severity.value:<8} {r.summary}")


@app.command("rule")
def rule_cmd(code: str = typer.Argument(..., help="Rule code (PL101) or name (unknown-device).")):
    """Print a rule's documentation: what it flags, why, examples, the fix."""
    from .checks import find_rule
    from .rulebook import read_doc
    r = find_rule(code)
    if r is None:
        _usage_error(f"unknown rule {code!r} (see `placelint rules`)")
    doc = read_doc(r.code, r.name)
    typer.echo(doc if doc is not None else f"{r.code} {r.name}: {r.summary}")


def main():
    app()


if __name__ == "__main__":
    main()
