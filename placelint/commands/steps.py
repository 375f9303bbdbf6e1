"""``placelint steps``: the named steps a MetaGraph or SavedModel declares."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from ._common import EXIT_CLEAN, EXIT_ERROR, PathsArg, TagOpt, command, usage_error


def model_steps(ref, tag: str | None) -> dict:
    """``{"model", "format", "default", "steps": [{"name", "phase", "runs", ...}]}`` or an
    ``error`` entry."""
    from ..loaders import LoadError, LoadOptions, load_raw
    from ..loaders.steps import loader_phases

    try:
        # (nothing is built: read as protobuf reads it, so that a model whose attrs it
        # refuses is refused here too; see ``proto_lite``)
        raw = load_raw(ref, LoadOptions(tag=tag), lite=False)
    except LoadError as exc:
        return {"model": ref.display, "error": f"{exc.code}: {exc.message}"}
    loaded = {id(s) for s in loader_phases(raw.steps)}
    steps = [{"name": name, "phase": spec.phase, "what": spec.name,
              "fetch": list(spec.fetches), "feed": list(spec.feeds), "run": list(spec.targets),
              "on_load": id(spec) in loaded and spec.phase != "step",
              "served": id(spec) in loaded and spec.phase == "step"}
             for name, spec in raw.steps.items()]
    return {"model": ref.display, "format": raw.format, "default": raw.step, "steps": steps}


def model_text(entry: dict) -> list[str]:
    if "error" in entry:
        return [f"{entry['model']}: {entry['error']}"]
    if not entry["steps"]:
        return [f"{entry['model']}: no named steps ({entry['format']}: name one with --fetch "
                "and --feed; without them the whole graph is analysed)"]
    lines = [f"{entry['model']} ({entry['format']}):"]
    width = max(len(s["name"]) for s in entry["steps"])
    for s in entry["steps"]:
        mark = "*" if s["name"] == entry["default"] else " "
        when = ("runs on load" if s["on_load"] else "served" if s["served"] else "")
        what = "; ".join(x for x in (
            "fetch " + ",".join(s["fetch"]) if s["fetch"] else "",
            "run " + ",".join(s["run"]) if s["run"] else "",
            "feed " + ",".join(s["feed"]) if s["feed"] else "") if x)
        lines.append(f" {mark} {s['name']:<{width}}  {s['phase']:<7} {what}"
                     + (f"  ({when})" if when else ""))
    default = entry["default"]
    lines.append(f"   (* analysed by default; pick another with --step NAME)" if default else
                 "   (no step analysed by default: the whole graph; pick one with --step NAME)")
    return lines


@command("steps")
def steps_cmd(paths: List[Path] = PathsArg, tag: Optional[str] = TagOpt,
              format: str = typer.Option("text", "--format", "-f", help="text or json.")):
    """List the named steps a MetaGraph or SavedModel declares: its signatures, the saver's
    restore op, the init op, op collections such as train_op. Each can be analysed with
    --step NAME; a SavedModel is analysed as its loader runs it (restore, init, then the
    serving signature)."""
    from ..loaders import discover

    if format not in ("text", "json"):
        usage_error(f"unknown --format {format!r} (expected text or json)")
    refs = discover(paths)
    if not refs:
        usage_error("no models found in " + ", ".join(str(p) for p in paths))
    entries = [model_steps(ref, tag) for ref in refs]
    if format == "json":
        sys.stdout.write(json.dumps(entries, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(line for e in entries for line in model_text(e)) + "\n")
    raise typer.Exit(EXIT_ERROR if any("error" in e for e in entries) else EXIT_CLEAN)
