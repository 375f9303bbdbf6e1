"""``placelint check``: run every rule over models and report findings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ..cli import (DevicesOpt, FormatOpt, PathsArg, SigOpt, SoftOpt, TagOpt, WholeOpt, _devices_line,
                   _exit_code, _run, _settings, _usage_error, app)


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
        from ..output import json_out
        sys.stdout.write(json_out.render(reports, settings.devices))
    else:
        from ..output import text
        sys.stdout.write(text.render(reports, _devices_line(settings), colour=sys.stdout.isatty()))
    raise typer.Exit(_exit_code(reports, settings))
