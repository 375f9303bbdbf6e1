"""The rulebook: one Markdown document per rule, ``rules/<CODE>-<name>.md``.

In a wheel the documents are shipped as ``placelint/rulebook/``; in a source checkout
(including editable installs) they are read from the repository's ``rules/``.

A document looks like this (``parse_doc`` reads it, ``check_doc`` checks it against the
rule registry, and the tests run every example through the real pipeline)::

    # PL102 malformed-device

    **Severity:** error

    ## What it does
    ## Why is this bad?
    ## Example
    ```pbtxt failing devices=CPU:0,GPU:0 soft=true
    node { ... }            <- a complete text-format GraphDef
    ```
    ```pbtxt passing
    ...
    ```
    ## How to fix

Example blocks are fenced blocks whose info string is ``pbtxt failing`` or ``pbtxt
passing``, optionally followed by ``devices=...`` (as ``--devices``) and ``soft=true``
(``--allow-soft-placement``). A failing example must make its rule report; a passing one
must not. Other sections may follow the four required ones.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

_HERE = Path(__file__).resolve().parent

SECTIONS = ("What it does", "Why is this bad?", "Example", "How to fix")
SEVERITIES = ("error", "warning", "info")
_TITLE = re.compile(r"# (PL\d{3}) ([a-z0-9]+(?:-[a-z0-9]+)*)")
_SEVERITY = re.compile(r"\*\*Severity:\*\*\s*(\S.*)")
_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(.*)$")


class DocFormatError(ValueError):
    """A rule document that does not follow the rulebook format."""


@dataclass
class Example:
    kind: str                     #: "failing" or "passing"
    graph: str                    #: the text-format GraphDef
    devices: str | None = None    #: ``devices=`` (None: placelint's default)
    soft: bool = False            #: ``soft=true``
    memory: str | None = None     #: ``memory=GPU=4GiB,...`` (as ``--memory``)
    line: int = 0                 #: line of the opening fence in the document

    def settings(self):
        """The ``Settings`` the example runs with."""
        from .model.devices import DeviceSet
        from .settings import Settings
        s = Settings()
        if self.devices is not None:
            s.devices = DeviceSet.parse(self.devices, source="example")
        s.allow_soft_placement = self.soft
        if self.memory is not None:
            from .analyses.memory_budget import parse_budget
            s.memory = parse_budget(self.memory)
        return s


@dataclass
class RuleDoc:
    code: str
    name: str
    severity: str                 #: the first word of the severity line
    severity_line: str            #: the whole line after ``**Severity:**``
    sections: dict[str, str] = field(default_factory=dict)   #: title -> body, in order
    examples: list[Example] = field(default_factory=list)


def rulebook_dir() -> Path:
    shipped = _HERE / "rulebook"
    if shipped.is_dir():
        return shipped
    return _HERE.parent / "rules"


def doc_path(code: str, name: str) -> Path:
    return rulebook_dir() / f"{code}-{name}.md"


def read_doc(code: str, name: str) -> str | None:
    path = doc_path(code, name)
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def project_urls() -> dict[str, str]:
    """The installed package's ``Project-URL`` entries, label (lower case) -> URL (read once
    per process: each lookup searches every entry of sys.path, ~1 ms, and ``doc_url`` asks
    for each finding of a JSON or full report)."""
    from importlib import metadata
    try:
        entries = metadata.metadata("placelint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip().lower()] = url.strip()
    return urls


def doc_url(code: str, name: str) -> str | None:
    """Where the document is published: the package's ``Project-URL`` labelled ``Rules``
    (``[project.urls] Rules = "https://.../rules"``), or None when it names none."""
    urls = project_urls()
    base = urls.get("rules") or urls.get("rulebook")
    return f"{base.rstrip('/')}/{code}-{name}.md" if base else None


def _example(info: str, body: str, line: int) -> Example | None:
    words = info.split()
    if not words or words[0] != "pbtxt" or len(words) == 1:
        return None
    if words[1] not in ("failing", "passing"):
        raise DocFormatError(f"line {line}: example kind {words[1]!r} is not failing or passing")
    ex = Example(words[1], body, line=line)
    for word in words[2:]:
        key, eq, value = word.partition("=")
        if key == "devices" and eq and value:
            ex.devices = value
        elif key == "soft" and value in ("true", "false"):
            ex.soft = value == "true"
        elif key == "memory" and eq and value:
            ex.memory = value
        else:
            raise DocFormatError(f"line {line}: unknown example option {word!r} "
                                 "(expected devices=..., soft=true or memory=...)")
    return ex


def parse_doc(text: str) -> RuleDoc:
    """Read a rule document; raises ``DocFormatError`` naming the first problem."""
    lines = text.splitlines()
    if not lines or not _TITLE.fullmatch(lines[0].rstrip()):
        raise DocFormatError("line 1 must be the title '# PLNNN rule-name'")
    code, name = _TITLE.fullmatch(lines[0].rstrip()).groups()
    severity_line = None
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    examples: list[Example] = []
    fence = None          # (marker, info, first line number, body lines) while in a block
    for no, line in enumerate(lines[1:], start=2):
        if fence is not None:
            closing = line.strip()
            if len(closing) >= len(fence[0]) and set(closing) == {fence[0][0]}:
                ex = _example(fence[1], "\n".join(fence[3]) + "\n", fence[2])
                if ex is not None:
                    examples.append(ex)
                fence = None
            else:
                fence[3].append(line)
            if current is not None:
                current.append(line)
            continue
        m = _FENCE.match(line.strip())
        if m:
            fence = (m.group(1), m.group(2), no, [])
            if current is not None:
                current.append(line)
            continue
        if line.startswith("# "):
            raise DocFormatError(f"line {no}: a second title")
        if line.startswith("## "):
            title = line[3:].strip()
            if title in sections:
                raise DocFormatError(f"line {no}: section {title!r} appears twice")
            current = sections[title] = []
            continue
        sm = _SEVERITY.fullmatch(line.strip())
        if sm and current is None:
            if severity_line is not None:
                raise DocFormatError(f"line {no}: a second severity line")
            severity_line = sm.group(1).strip()
            continue
        if current is not None:
            current.append(line)
        elif line.strip():
            raise DocFormatError(f"line {no}: text before the first section must be the "
                                 "'**Severity:** ...' line")
    if fence is not None:
        raise DocFormatError(f"line {fence[2]}: code block is not closed")
    if severity_line is None:
        raise DocFormatError("no '**Severity:** ...' line under the title")
    severity = re.split(r"[^a-z]", severity_line.lower(), maxsplit=1)[0]
    if severity not in SEVERITIES:
        raise DocFormatError(f"severity line must start with error, warning or info, "
                             f"not {severity_line!r}")
    present = [t for t in sections if t in SECTIONS]
    missing = [t for t in SECTIONS if t not in sections]
    if missing:
        raise DocFormatError(f"missing section(s): {', '.join('## ' + t for t in missing)}")
    if present != list(SECTIONS):
        raise DocFormatError(f"sections must come in the order {', '.join(SECTIONS)}")
    for title, body in sections.items():
        if not "\n".join(body).strip():
            raise DocFormatError(f"section {title!r} is empty")
    return RuleDoc(code, name, severity, severity_line,
                   {t: "\n".join(b).strip() + "\n" for t, b in sections.items()}, examples)


def check_doc(doc: RuleDoc, rule) -> list[str]:
    """Problems of a parsed document against its registered rule (empty: fine)."""
    problems = []
    if (doc.code, doc.name) != (rule.code, rule.name):
        problems.append(f"title names {doc.code} {doc.name}, the rule is {rule.code} {rule.name}")
    if doc.severity != rule.severity.value:
        problems.append(f"severity line says {doc.severity}, the rule's default is "
                        f"{rule.severity.value}")
    if rule.origin == "analysis":
        kinds = {ex.kind for ex in doc.examples}
        for kind in ("failing", "passing"):
            if kind not in kinds:
                problems.append(f"no '```pbtxt {kind}' example")
    return problems


def rule_table(rules) -> str:
    """The Markdown table of ``rules`` (code linked to its document, name, default
    severity, summary): ``placelint rules --format markdown``, and the README's table."""
    lines = ["| code | name | severity | what |", "|---|---|---|---|"]
    for r in rules:
        summary = r.summary.replace("|", "\\|")
        lines.append(f"| [{r.code}](rules/{r.code}-{r.name}.md) | {r.name} | "
                     f"{r.severity.value} | {summary} |")
    return "\n".join(lines) + "\n"
