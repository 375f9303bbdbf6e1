"""JSON: one object with the models and a summary. A stable contract for other programs.

::

    {"models": [{"model", "format", "entry", "devices", "diagnostics": [...], "memory"}],
     "summary": {"models", "models_with_findings", "findings", "nodes", "by_severity",
                 "by_rule", "devices", "baseline_hidden"}}

Each diagnostic: ``code``, ``rule``, ``severity``, ``message`` (the cause), ``fix``,
``detail`` (TensorFlow's own wording, or null), ``help_uri`` (or null), ``node`` (the node
TF stops at first), ``nodes`` (every node of the finding), ``scopes``, ``related_nodes``,
``location`` (where to show it: ``file``, ``line``, ``column``; the Python line that
created the node when that file is in the project, else the model file),
``python_location`` (``file``, ``line``, ``column``, ``function`` from the debug info, or
null) and ``model_location`` (``file``, ``line``: the model file and the node's line in a
text model). Files are relative to the current directory when below it.

``memory`` is null unless a budget is set (``--memory`` or ``memory`` in the config: only
then does ``check`` analyse memory), else ``{"devices": {FULL_DEVICE_NAME:
{"resident_bytes", "peak_bytes", "peak_lower_bound_bytes", "unknown_ops", "largest":
[{"name", "kind", "bytes"}], "budget_bytes", "budget"}}}``, the objects of ``placelint
memory --format json`` with the device's budget (bytes, and how it was set; null for a
device no budget names).
"""

from __future__ import annotations

import json
from collections import Counter

from . import RunInfo, display_path, model_loc, python_loc


def _loc(loc, info: RunInfo) -> dict:
    return {"file": display_path(loc.path, info.cwd), "line": loc.line, "column": loc.column}


def diagnostic_object(d, info: RunInfo) -> dict:
    from ..rulebook import doc_url
    obj = d.to_json()
    py = python_loc(d, info)
    model = model_loc(d)
    obj["help_uri"] = doc_url(d.code, d.rule)
    obj["location"] = _loc(py or model, info)
    src = d.location
    obj["python_location"] = None if src is None else {
        "file": display_path(py.path, info.cwd) if py is not None else src.file,
        "line": src.line, "column": src.column, "function": src.function}
    obj["model_location"] = {"file": display_path(model.path, info.cwd), "line": model.line}
    return obj


def model_object(result, info: RunInfo) -> dict:
    return {
        "model": result.path,
        "format": result.format,
        "entry": result.entry,
        "devices": list(info.device_names),
        "diagnostics": [diagnostic_object(d, info) for d in result.diagnostics],
        "memory": None if result.memory is None else {"devices": result.memory},
    }


def summary_object(results, info: RunInfo) -> dict:
    diags = [d for r in results for d in r.diagnostics]
    severities = Counter(d.severity.value for d in diags)
    rules = Counter(d.code for d in diags)
    return {
        "models": len(results),
        "models_with_findings": sum(1 for r in results if r.diagnostics),
        "findings": len(diags),
        "nodes": sum(len(d.nodes) for d in diags),
        "by_severity": {s: severities.get(s, 0) for s in ("error", "warning", "info")},
        "by_rule": dict(sorted(rules.items())),
        "devices": list(info.device_names),
        "devices_line": info.devices_line,
        "baseline_hidden": info.baseline_hidden,
    }


def render(results, info: RunInfo) -> str:
    return json.dumps({"models": [model_object(r, info) for r in results],
                       "summary": summary_object(results, info)}, indent=2) + "\n"
