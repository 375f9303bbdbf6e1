"""The per-device memory table: ``placelint memory``, and ``check``'s text, JSON and Markdown
output when a budget is set (``--memory``, or ``memory`` in the config).

A device's row is plain data (``analyses.memory_budget.device_objects``): the JSON schema
of the issue (``resident_bytes``, ``peak_bytes``, ``peak_lower_bound_bytes``, ``unknown_ops``,
``largest``) plus ``budget_bytes`` and ``budget`` (how it was set), both null for a device
no budget names. ``check`` keeps these objects in its results (the cache, the worker
processes) and the formats render them.
"""

from __future__ import annotations

from ..analyses.memory_budget import device_objects
from ..humanize import format_bytes, list_names
from ..model.devices import DeviceName

SCHEDULE_NOTE = ("peak: the analysed step, each device running its ops in the graph's "
                 "topological order; bound: the most any one op needs at once")

#: The columns of the table.
HEAD = ("device", "resident", "peak", "bound", "total", "budget")


def total_bytes(obj: dict) -> int:
    return obj["resident_bytes"] + obj["peak_bytes"]


def row_cells(obj: dict, display: str) -> tuple[str, ...]:
    """One device's cells, in the order of ``HEAD``; the total ends in ``+?`` when ops of
    unknown size are not counted."""
    total = total_bytes(obj)
    budget = obj.get("budget_bytes")
    return (display, format_bytes(obj["resident_bytes"]), format_bytes(obj["peak_bytes"]),
            format_bytes(obj["peak_lower_bound_bytes"]),
            format_bytes(total) + ("+?" if obj["unknown_ops"] else ""),
            "-" if not budget else f"{format_bytes(budget)} ({total / budget:.0%})")


def display_name(name: str, devices=None) -> str:
    """How a full device name is shown (as the run's device set shows it, when given)."""
    return DeviceName.of(devices.name(name) if devices is not None else name).display


def table_lines(objects: dict[str, dict], devices=None) -> list[str]:
    """``device  resident  peak  bound  total  budget`` and one row per device."""
    rows = [row_cells(obj, display_name(name, devices)) for name, obj in sorted(objects.items())]
    widths = [max(len(r[i]) for r in [HEAD, *rows]) for i in range(len(HEAD))]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*HEAD).rstrip()] + [fmt.format(*r).rstrip() for r in rows]


def detail_lines(objects: dict[str, dict], devices=None) -> list[str]:
    """Per device: its largest owners and the ops of unknown size."""
    lines = []
    for name, obj in sorted(objects.items()):
        shown = display_name(name, devices)
        if obj["largest"]:
            lines.append(f"largest on {shown}: " + ", ".join(
                f"{o['name']} ({o['kind']}, {format_bytes(o['bytes'])})" for o in obj["largest"]))
        if obj["unknown_ops"]:
            lines.append(f"unknown size on {shown} (not counted; --batch-size sets an "
                         f"unknown first dimension): {list_names(obj['unknown_ops'])}")
    return lines


def memory_text(report, settings) -> str:
    objects = device_objects(report, settings)
    lines = ["memory per device (" + SCHEDULE_NOTE + "):"]
    lines += ["  " + line for line in table_lines(objects)]
    lines += detail_lines(objects)
    return "\n".join(lines) + "\n"
