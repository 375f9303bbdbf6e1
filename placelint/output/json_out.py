"""JSON: an array, one object per model. A stable contract for other programs."""

from __future__ import annotations

import json

from . import RunInfo


def model_object(result, device_names: list[str]) -> dict:
    return {
        "model": result.path,
        "format": result.format,
        "entry": result.entry,
        "devices": list(device_names),
        "diagnostics": [d.to_json() for d in result.diagnostics],
    }


def render(results, info: RunInfo) -> str:
    return json.dumps([model_object(r, info.device_names) for r in results], indent=2) + "\n"
