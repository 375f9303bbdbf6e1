"""ruff-style text, concise (the default) or full, then a summary line.

Concise: one line per finding, sorted by file and line:
``path:line: CODE [rule] severity: message (N nodes in SCOPES: first, second and K more)``.
The path is the Python file that created the node when the model's debug info names one
in the project (the model follows as ``in MODEL``), else the model file and the node's
line in it. Full adds, under each finding, its detail (TensorFlow's own error text for the
placement rules), the fix, every node,
the related nodes, both locations and the rule's documentation. ``--statistics`` prints
counts per rule instead of the findings. After the findings: what was analysed, the
transfers per device pair and, with a memory budget (``--memory``), each model's memory
table (``memory_lines``). On a terminal the path is bold, the code and
severity take the severity's colour (see ``output.want_colour`` for ``NO_COLOR`` /
``FORCE_COLOR``).
"""

from __future__ import annotations

from collections import Counter

from ..diagnostics import Diagnostic, Severity
from ..humanize import plural
from . import RunInfo, display_path, python_loc, sorted_diagnostics

_COLOURS = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;33m",
            Severity.INFO: "\033[1;36m"}
_BOLD, _DIM, _CYAN, _RESET = "\033[1m", "\033[2m", "\033[36m", "\033[0m"
#: nodes a concise line names before "and N more"
CONCISE_NODES = 2


def _model_where(d: Diagnostic, info: RunInfo) -> str:
    where = display_path(d.model, info.cwd)
    return f"{where}:{d.file_line}" if d.file_line is not None else where


def _nodes_part(d: Diagnostic) -> str:
    if len(d.nodes) > 1:
        return f" ({d.nodes_text(CONCISE_NODES)})"
    if d.node:
        return f" (node {d.node})"
    return ""


def format_diagnostic(d: Diagnostic, info: RunInfo | None = None, colour: bool = False,
                      phases: bool = False) -> str:
    """One finding, concise: its location, code, rule, severity, phase, message and nodes;
    ``phases``: name its phase even when it is ``graph`` (a model analysed with steps or
    load phases, where ``graph`` means no step runs the node)."""
    info = info or RunInfo()
    py = python_loc(d, info)
    where = py.shown(info.cwd) if py is not None else _model_where(d, info)
    sev = d.severity.value
    if colour:
        where = f"{_BOLD}{where}{_RESET}"
        head = f"{_COLOURS[d.severity]}{d.code}{_RESET} [{d.rule}] {_COLOURS[d.severity]}{sev}{_RESET}"
    else:
        head = f"{d.code} [{d.rule}] {sev}"
    if d.phase and (phases or d.phase != "graph"):
        head += f" ({d.phase})"
    line = f"{where}: {head}: {d.message}{_nodes_part(d)}"
    if py is not None:
        model = f"(in {display_path(d.model, info.cwd)})"
        line += f" {_DIM}{model}{_RESET}" if colour else f" {model}"
    return line


def format_full(d: Diagnostic, info: RunInfo, colour: bool = False,
                phases: bool = False) -> list[str]:
    """The concise line, then TF's wording, the fix, every node and the locations."""
    from ..rulebook import doc_url
    lines = [format_diagnostic(d, info, colour, phases)]
    pad = "    "
    if d.detail:
        detail = d.detail.splitlines()
        lines.append(f"  detail: {detail[0]}")
        lines += [f"{pad}{x}" for x in detail[1:]]
    if d.fix:
        lines.append(f"  fix: {d.fix}")
    if len(d.nodes) > 1:
        lines.append(f"  nodes ({len(d.nodes)}): {', '.join(d.nodes)}")
    elif d.node:
        lines.append(f"  node: {d.node}")
    if d.related_nodes:
        lines.append(f"  related ({len(d.related_nodes)}): {', '.join(d.related_nodes)}")
    if python_loc(d, info) is not None:
        lines.append(f"  model: {_model_where(d, info)}")
    elif d.location is not None:
        lines.append(f"  created at: {d.location}")
    url = doc_url(d.code, d.rule)
    lines.append(f"  help: {url}" if url else f"  help: placelint rule {d.code}")
    return lines


def summary(results, devices_line: str, baseline_hidden: int = 0) -> str:
    counts = Counter(d.severity for r in results for d in r.diagnostics)
    with_findings = sum(1 for r in results if r.diagnostics)
    n = len(results)
    hidden = f" {plural(baseline_hidden, 'finding')} hidden by the baseline." if baseline_hidden else ""
    if not counts:
        return f"All checks passed: {plural(n, 'model')} ({devices_line}).{hidden}"
    parts = [plural(counts[s], s.value) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
             if counts[s]]
    return (f"Found {', '.join(parts)} in {with_findings} of {plural(n, 'model')} "
            f"({devices_line}).{hidden}")


def statistics_lines(diags) -> list[str]:
    """ruff's ``--statistics``: per rule, the findings and the nodes they cover."""
    by_rule: dict[tuple, list] = {}
    for d in diags:
        by_rule.setdefault((d.code, d.rule), []).append(d)
    rows = []
    for (code, rule), ds in sorted(by_rule.items()):
        sevs = sorted({d.severity for d in ds}, key=lambda s: -s.rank)
        nodes = sum(max(len(d.nodes), 1) for d in ds)
        rows.append((str(len(ds)), code, f"[{rule}]", "/".join(s.value for s in sevs),
                     plural(nodes, "node")))
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(widths[0]) if i == 0 else c.ljust(widths[i])
                      for i, c in enumerate(r)).rstrip() for r in rows]


def transfer_lines(results, devices=None) -> list[str]:
    """Per model that crosses devices: its transfers per step by device pair."""
    from ..analyses.transfers import PairSummary
    from .transfer_text import pair_lines
    lines = []
    for r in results:
        if r.transfer_pairs:
            pairs = [PairSummary.from_dict(p, devices) for p in r.transfer_pairs]
            lines += pair_lines(pairs, head=f"{r.path}: ")
    return lines


def memory_lines(results, devices=None, full: bool = False) -> list[str]:
    """With a memory budget (the only time ``check`` analyses memory): per model, the table
    of every device (resident, peak, bound, total, budget); ``full`` adds each device's
    largest owners and the ops of unknown size."""
    from .memory_text import detail_lines, table_lines
    lines = []
    for r in results:
        if r.memory:
            lines.append(f"{r.path}: memory per device (peak of one step in graph order; "
                         "bound: no schedule needs less):")
            lines += ["  " + x for x in table_lines(r.memory, devices)]
            if full:
                lines += ["  " + x for x in detail_lines(r.memory, devices)]
    return lines


def has_phases(result) -> bool:
    """The model was analysed as steps (a SavedModel's load phases, --fetch, --step)."""
    return any(d.phase not in (None, "graph") for d in result.diagnostics) or bool(
        result.entry and not result.entry.startswith("whole graph"))


def analysed_lines(results) -> list[str]:
    """Per model: which graph was analysed (the whole graph, or a step and its phases)."""
    return [f"{r.path}: analysed: {r.entry}" for r in results if r.entry]


def render(results, info: RunInfo) -> str:
    diags = sorted_diagnostics(results, info)
    if info.statistics:
        lines = statistics_lines(diags)
    else:
        phased = {id(d) for r in results if has_phases(r) for d in r.diagnostics}
        if info.detail == "full":
            lines = [x for d in diags
                     for x in format_full(d, info, info.colour, id(d) in phased)]
        else:
            lines = [format_diagnostic(d, info, info.colour, id(d) in phased) for d in diags]
        lines += analysed_lines(results)
        lines += transfer_lines(results, info.devices)
        lines += memory_lines(results, info.devices, info.detail == "full")
    text = summary(results, info.devices_line, info.baseline_hidden)
    lines.append(f"{_BOLD}{text}{_RESET}" if info.colour else text)
    return "\n".join(lines) + "\n"
