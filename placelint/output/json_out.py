"""JSON: an array, one object per model. A stable contract for other programs."""

from __future__ import annotations

import json


def model_object(report, devices) -> dict:
    return {
        "model": report.path,
        "format": report.model.format if report.model else None,
        "entry": report.model.entry if report.model else None,
        "devices": devices.names,
        "diagnostics": [d.to_json() for d in report.diagnostics],
    }


def render(reports, devices) -> str:
    return json.dumps([model_object(r, devices) for r in reports], indent=2) + "\n"
