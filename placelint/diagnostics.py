"""Diagnostics: what every rule and loader reports, and its JSON contract.

A finding tells one *cause* once. Rules group the nodes that share a cause (a missing
device, a colocation group, an op without a kernel, a device pair and name scope, ...)
into one ``Diagnostic``: ``message`` names the cause in a line, ``fix`` says what to do,
``detail`` keeps TensorFlow's exact wording, and ``nodes`` lists every node of the group
in TensorFlow's processing order, so ``nodes[0]`` is the node TF stops at first (and is
``node``). The output formats print the count, the name scopes and the first few nodes
from ``nodes``, so dropping nodes from a group (per-node ignores) keeps them right.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .humanize import MAX_LISTED, list_names, plural  # noqa: F401 - re-exported for rules
from .location import SourceLocation


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls(text.lower())
        except ValueError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None


#: How many nodes the concise output names for a grouped finding.
FIRST_NODES = 3


def top_scope(name: str) -> str:
    """A node's outermost name scope (``tower_0`` for ``tower_0/matmul0``), '' at top level."""
    head, sep, _ = name.partition("/")
    return head if sep else ""


def scopes_of(nodes) -> list[str]:
    """The outermost name scopes of ``nodes``, in first-seen order."""
    seen: dict[str, None] = {}
    for n in nodes:
        s = top_scope(n)
        if s:
            seen.setdefault(s, None)
    return list(seen)


@dataclass(slots=True)
class Diagnostic:
    code: str
    rule: str
    severity: Severity
    message: str                             #: the cause, in one line
    node: str | None = None                  #: the node TF stops at first (``nodes[0]``)
    related_nodes: list[str] = field(default_factory=list)
    location: SourceLocation | None = None   #: Python file:line that created the node
    model: str = ""                          #: model path as given by the user
    file: str = ""                           #: file holding the model (for SARIF/GitHub)
    file_line: int | None = None             #: line in that file, where known (text models)
    fix: str = ""                            #: what to do about it
    detail: str = ""                         #: TensorFlow's own wording, when it has one
    nodes: list[str] = field(default_factory=list)   #: every node of the finding, TF's order
    #: what runs the node: ``restore``, ``init``, ``step`` (a SavedModel's load and serving
    #: phases, or the step named by --fetch/--step) or ``graph`` (the whole graph)
    phase: str | None = None

    def __post_init__(self):
        if self.node and not self.nodes:
            self.nodes = [self.node]
        elif self.nodes and not self.node:
            self.node = self.nodes[0]

    @property
    def full_message(self) -> str:
        """Message and fix in one text (for formats with one message field)."""
        return self.with_fix(self.message)

    def with_fix(self, text: str) -> str:
        """``text`` (the message, or a format's wording of it), then ``Fix: <fix>``."""
        if not self.fix:
            return text
        end = "" if text.endswith((".", "!", "?")) else "."
        return f"{text}{end} Fix: {self.fix}"

    def nodes_text(self, limit: int = FIRST_NODES) -> str:
        """``18 nodes in tower_0, tower_1: a, b, c and 15 more`` ('' for one node or none)."""
        n = len(self.nodes)
        if n <= 1:
            return ""
        scopes = scopes_of(self.nodes)
        where = f" in {list_names(scopes, 3)}" if scopes else ""
        return f"{plural(n, 'node')}{where}: {list_names(self.nodes, limit)}"

    def to_json(self) -> dict[str, Any]:
        """The stable JSON object (``check --format json`` and ``place --format json``)."""
        return {
            "code": self.code,
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "fix": self.fix or None,
            "detail": self.detail or None,
            "node": self.node,
            "nodes": list(self.nodes),
            "scopes": scopes_of(self.nodes),
            "related_nodes": list(self.related_nodes),
            "phase": self.phase,
        }

    @property
    def sort_key(self):
        """Within a model: by line in the model file (text models), then severity, rule, node."""
        return (self.model, self.file_line or 0, -self.severity.rank, self.code, self.node or "",
                self.message)
