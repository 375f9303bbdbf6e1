"""ruff-style text: one line per finding, then a summary line."""

from __future__ import annotations

from collections import Counter

from ..diagnostics import Diagnostic, Severity

_COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def format_diagnostic(d: Diagnostic, colour: bool = False) -> str:
    where = d.model
    if d.file_line is not None:
        where = f"{where}:{d.file_line}"
    node = f" {d.node}:" if d.node else ""
    sev = d.severity.value
    head = f"{d.code} [{d.rule}] {sev}"
    if colour:
        where = f"{_BOLD}{where}{_RESET}"
        head = f"{_COLOURS[d.severity]}{head}{_RESET}"
    line = f"{where}:{node} {head}: {d.message}"
    if d.location is not None:
        loc = f"(created at {d.location})"
        line += f" {_DIM}{loc}{_RESET}" if colour else f" {loc}"
    return line


def summary(reports, devices_line: str) -> str:
    counts = Counter(d.severity for r in reports for d in r.diagnostics)
    with_findings = sum(1 for r in reports if r.diagnostics)
    n = len(reports)
    if not counts:
        return f"All checks passed: {n} model{'s' if n != 1 else ''} ({devices_line})."
    parts = [f"{counts[s]} {s.value}{'s' if counts[s] != 1 else ''}"
             for s in (Severity.ERROR, Severity.WARNING, Severity.INFO) if counts[s]]
    return (f"Found {', '.join(parts)} in {with_findings} of {n} model{'s' if n != 1 else ''} "
            f"({devices_line}).")


def render(reports, devices_line: str, colour: bool = False) -> str:
    lines = [format_diagnostic(d, colour) for r in reports for d in r.diagnostics]
    lines.append(summary(reports, devices_line))
    return "\n".join(lines) + "\n"
