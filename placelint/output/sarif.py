"""SARIF 2.1.0, as GitHub code scanning accepts it.

- ``tool.driver.rules``: every registered rule with short description (its summary), full
  description (the doc's "What it does"), ``help`` (the whole rule document as Markdown),
  ``helpUri`` when the package metadata names where the rule docs are published
  (``[project.urls] Rules``), and the default level. ``informationUri`` likewise comes from
  ``Homepage`` / ``Repository``.
- Every result has a *physical* location (GitHub rejects results with only logical ones):
  the Python file and line that created the finding's first node, when the model's debug
  info names a file in the repository, with the model file as a ``relatedLocation``;
  otherwise the model file, relative to the repository root, with ``region.startLine`` the
  line of the node's ``name:`` in a text model and 1 in a binary one. The node is in
  ``logicalLocations``; the message names the cause, the nodes and the fix.
- ``partialFingerprints`` hash (model, rule, node), so a finding keeps its identity when
  lines move.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..checks.pl009_internal_error import InternalError
from ..diagnostics import Severity
from ..rulebook import doc_url, parse_doc, project_urls, read_doc
from . import RunInfo, artifact_file, python_loc, relative_path, sorted_diagnostics

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
SRCROOT = "%SRCROOT%"


def rule_descriptor(rule) -> dict:
    text = read_doc(rule.code, rule.name)
    what = None
    if text is not None:
        try:
            what = parse_doc(text).sections.get("What it does")
        except ValueError:
            what = None
    desc = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _plain(what) if what else rule.summary},
        "help": {"text": text if text else f"{rule.code} {rule.name}: {rule.summary}",
                 "markdown": text if text else f"**{rule.code} {rule.name}**: {rule.summary}"},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": [rule.origin]},
    }
    url = doc_url(rule.code, rule.name)
    if url:
        desc["helpUri"] = url
    return desc


def _plain(markdown: str) -> str:
    """A section as one paragraph of plain text (for ``fullDescription``)."""
    return " ".join(markdown.replace("`", "").split())


def _uri(path: Path, root: Path) -> dict:
    rel = relative_path(path, root)
    if rel is not None:
        return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}
    return {"uri": Path(path).resolve().as_uri()}


def _fingerprint(uri: str, d) -> str:
    return hashlib.sha256(f"{uri}\0{d.code}\0{d.node or ''}".encode()).hexdigest()[:32]


def message_text(d) -> str:
    """The message, naming the node or the nodes, then the fix."""
    text = d.message
    if len(d.nodes) > 1:
        text = f"{text} ({d.nodes_text()})"
    elif d.node and not re.search(rf"(?<![\w/.>-]){re.escape(d.node)}(?![\w/.>-])", text):
        text = f"Node '{d.node}': {text}"
    if not text.endswith("."):
        text += "."
    return d.with_fix(text)


def _region(line, column=None) -> dict:
    region = {"startLine": line if line and line > 0 else 1}
    if column:
        region["startColumn"] = column
    return region


def result_object(d, index: dict[str, int], root: Path, info: RunInfo | None = None) -> dict:
    artifact = _uri(artifact_file(d), root)
    model_region = _region(d.file_line)
    py = python_loc(d, info) if info is not None else None
    if py is not None:
        physical = {"artifactLocation": _uri(py.path, root), "region": _region(py.line, py.column)}
    else:
        physical = {"artifactLocation": artifact, "region": model_region}
    location: dict = {"physicalLocation": physical}
    if d.node:
        location["logicalLocations"] = [{"name": d.node, "fullyQualifiedName":
                                         f"{d.model}::{d.node}", "kind": "member"}]
    result = {
        "ruleId": d.code,
        "level": LEVELS[d.severity],
        "message": {"text": message_text(d)},
        "locations": [location],
        "partialFingerprints": {"placelintFinding/v1": _fingerprint(artifact["uri"], d)},
    }
    if py is not None:
        result["relatedLocations"] = [{
            "id": 1, "physicalLocation": {"artifactLocation": artifact, "region": model_region},
            "message": {"text": f"the model ({d.model})"}}]
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    props = {"model": d.model}
    if len(d.nodes) > 1:
        props["nodes"] = list(d.nodes)
    if d.related_nodes:
        props["relatedNodes"] = list(d.related_nodes)
    if d.detail:
        props["tensorflowMessage"] = d.detail
    if d.location is not None:
        props["pythonLocation"] = str(d.location)
    if d.phase:
        props["phase"] = d.phase
    result["properties"] = props
    return result


def sarif_log(results, info: RunInfo) -> dict:
    from ..checks import all_rules
    rules = list(all_rules())
    index = {r.code: i for i, r in enumerate(rules)}
    diags = sorted_diagnostics(results, info)
    root = info.root.resolve()
    driver = {"name": "placelint", "version": __version__, "semanticVersion": __version__,
              "rules": [rule_descriptor(r) for r in rules]}
    urls = project_urls()
    home = urls.get("homepage") or urls.get("repository") or urls.get("source")
    if home:
        driver["informationUri"] = home
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
            "invocations": [{"executionSuccessful": not any(d.code == InternalError.code for d in diags)}],
            "results": [result_object(d, index, root, info) for d in diags],
            "properties": {"devices": list(info.device_names)},
        }],
    }


def render(results, info: RunInfo) -> str:
    return json.dumps(sarif_log(results, info), indent=2) + "\n"
