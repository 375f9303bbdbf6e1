"""Markdown: a summary fit for a pull-request comment (or a GitHub job summary).

A headline with the counts, a table of findings per rule, then the findings themselves in
a collapsed table (at most ``MAX_ROWS`` rows, so a comment stays under GitHub's size limit),
and with a memory budget (``--memory``) a table of each model's memory per device.
"""

from __future__ import annotations

from collections import Counter

from ..diagnostics import Severity
from ..humanize import plural
from . import RunInfo, primary_loc, relative_path, sorted_diagnostics

MAX_ROWS = 100
_ICONS = {Severity.ERROR: ":x:", Severity.WARNING: ":warning:", Severity.INFO: ":information_source:"}


def cell(text: str) -> str:
    """Text safe inside a table cell: no pipes or newlines, HTML special characters escaped."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\r", " ").replace("\n", "<br>"))


def code(text: str) -> str:
    """Inline code inside a table cell: survives backticks and pipes (GFM unescapes ``\\|``
    in a cell before it parses the code span)."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def render(results, info: RunInfo) -> str:
    diags = sorted_diagnostics(results, info)
    n = len(results)
    counts = Counter(d.severity for d in diags)
    out = []
    if not diags:
        out.append(f"### :white_check_mark: placelint: all checks passed ({plural(n, 'model')})")
    else:
        parts = [plural(counts[s], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
                 if counts[s]]
        models = sum(1 for r in results if r.diagnostics)
        out.append(f"### placelint: {', '.join(parts)} in {models} of {plural(n, 'model')}")
    out.append("")
    out.append(f"Target {cell(info.devices_line)}.")
    if info.baseline_hidden:
        out.append(f"{plural(info.baseline_hidden, 'known finding')} hidden by the baseline.")
    if not diags:
        return "\n".join(out + memory_table(results, info)) + "\n"

    by_rule = Counter((d.code, d.rule, d.severity) for d in diags)
    out += ["", "| Rule | Severity | Findings |", "|---|---|---:|"]
    for (c, rule, sev), k in sorted(by_rule.items(), key=lambda kv: (-kv[0][2].rank, kv[0][0])):
        out.append(f"| {c} {cell(rule)} | {_ICONS[sev]} {sev.value} | {k} |")

    out += ["", f"<details><summary>{plural(len(diags), 'finding')}</summary>", "",
            "| | Location | Node | Rule | Message |", "|---|---|---|---|---|"]
    for d in diags[:MAX_ROWS]:
        loc = primary_loc(d, info)
        where = relative_path(loc.path, info.root) or str(loc.path)
        if loc.line:
            where += f":{loc.line}"
        node = code(d.node) if d.node else ""
        if len(d.nodes) > 1:
            node += f" and {len(d.nodes) - 1} more"
        out.append(f"| {_ICONS[d.severity]} | {code(where)} | {node} | {d.code} | "
                   f"{cell(d.full_message)} |")
    if len(diags) > MAX_ROWS:
        out.append(f"| | | | | and {len(diags) - MAX_ROWS} more |")
    out += ["", "</details>"]
    return "\n".join(out + memory_table(results, info)) + "\n"


def memory_table(results, info: RunInfo) -> list[str]:
    """With a budget: one row per model and device (resident, peak of one step, lower
    bound, total, budget); ``+?`` marks a total without the ops of unknown size."""
    from .memory_text import HEAD, display_name, row_cells
    models = [r for r in results if r.memory]
    if not models:
        return []
    out = ["", "#### Memory per device", "",
           "| Model | " + " | ".join(h.capitalize() for h in HEAD) + " |",
           "|---|---|" + "---:|" * (len(HEAD) - 1)]
    for r in models:
        for name, obj in sorted(r.memory.items()):
            cells = row_cells(obj, display_name(name, info.devices))
            out.append(f"| {code(r.path)} | {code(cells[0])} | "
                       + " | ".join(cell(c) for c in cells[1:]) + " |")
    return out
