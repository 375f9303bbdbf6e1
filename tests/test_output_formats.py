"""The five ``check`` formats. SARIF is validated against the official SARIF 2.1.0 schema
(shipped in tests/data/sarif/ with its OASIS notice, so a fresh clone needs nothing beside it) and held to GitHub code scanning's
rules: a physical location on every result, paths relative to the repository root."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from checkrun import (CPU1_NODE, CPU1_SAMPLE, ROOT, SAMPLES, git_init, invoke, name_line,
                      write_binary_graph, write_graph)

from placelint.checks import all_rules
from placelint.diagnostics import Diagnostic, Severity
from placelint.output import RunInfo, render
from placelint.output.github import annotation, escape_data, escape_property
from placelint.output.markdown import MAX_ROWS, cell
from placelint.runner import ModelResult

SCHEMA = ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json"
SELECT = "PL0,PL102"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A git repository with a text model, a binary model, an unreadable file, a model
    whose name needs URI escaping, a SavedModel and the CPU:1 sample."""
    root = git_init(tmp_path_factory.mktemp("repo") / "proj")
    models = root / "models"
    write_graph(models / "text.pbtxt", [("ok", "/cpu:0"), ("bad/w", "/gpu0")])
    write_binary_graph(models / "bin.pb", [("b", "/gpu0")])
    write_graph(models / "with space ü.pbtxt", [("s", "gpu:0")])
    (models / "broken.pb").write_bytes(b"\x00\x01 definitely not a protobuf \xff")
    shutil.copytree(SAMPLES / "keras_cnn", models / "keras_cnn")
    shutil.copy(CPU1_SAMPLE, models / "cpu1.pbtxt")
    return root


def run_format(repo: Path, fmt: str, *extra, select: str = SELECT, env=None):
    # run from a subdirectory: paths must still be relative to the repository root
    return invoke(["check", "--isolated", "--no-cache", "--select", select, "--format", fmt,
                   *extra, "."], cwd=repo / "models", env=env)


@pytest.fixture(scope="module")
def sarif(repo) -> dict:
    out = repo / "out" / "placelint.sarif"
    r = run_format(repo, "sarif", "--output", out)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith("Found ")          # the summary goes to stderr with --output
    return json.loads(out.read_text())


def by_uri(sarif: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for res in sarif["runs"][0]["results"]:
        out.setdefault(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                       []).append(res)
    return out


def test_sarif_validates_against_the_official_schema(sarif):
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert sarif["version"] == "2.1.0"
    # and the schema does catch a broken log: a result without a message is invalid
    broken = json.loads(json.dumps(sarif))
    del broken["runs"][0]["results"][0]["message"]
    assert list(validator.iter_errors(broken))


def test_every_sarif_result_has_a_physical_location_relative_to_the_repo(sarif, repo):
    results = sarif["runs"][0]["results"]
    assert len(results) == 4   # bad/w, b, s, broken.pb
    for res in results:
        phys = res["locations"][0]["physicalLocation"]
        uri = phys["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "file:")) and uri.startswith("models/")
        assert phys["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert phys["region"]["startLine"] >= 1
    base = sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == repo.resolve().as_uri() + "/"


def test_sarif_lines_nodes_and_messages(sarif, repo):
    res = by_uri(sarif)
    [text] = res["models/text.pbtxt"]
    assert text["ruleId"] == "PL102" and text["level"] == "error"
    assert text["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        name_line(repo / "models" / "text.pbtxt", "bad/w") == 9
    assert text["locations"][0]["logicalLocations"][0]["name"] == "bad/w"
    assert "bad/w" in text["message"]["text"]
    [binary] = res["models/bin.pb"]
    assert binary["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert binary["locations"][0]["logicalLocations"][0]["name"] == "b"
    [escaped] = res["models/with%20space%20%C3%BC.pbtxt"]
    assert escaped["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    [broken] = res["models/broken.pb"]
    assert broken["ruleId"] == "PL001" and "logicalLocations" not in broken["locations"][0]
    fingerprints = {r["partialFingerprints"]["placelintFinding/v1"]
                    for r in sarif["runs"][0]["results"]}
    assert len(fingerprints) == 4


def test_sarif_rules_carry_the_rule_docs(sarif):
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    pl102 = next(r for r in rules if r["id"] == "PL102")
    doc = (ROOT / "rules" / "PL102-malformed-device.md").read_text()
    assert pl102["help"]["markdown"] == doc
    assert pl102["fullDescription"]["text"].startswith("Flags a node whose device string")
    assert pl102["shortDescription"]["text"] == next(
        r.summary for r in all_rules() if r.code == "PL102")
    assert pl102["defaultConfiguration"]["level"] == "error"
    for res in sarif["runs"][0]["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]


def test_sarif_cpu1_sample_is_reported_at_the_node_line(repo):
    """Depends on PL101 unknown-device (the placer rule)."""
    out = repo / "out" / "cpu1.sarif"
    r = run_format(repo, "sarif", "--devices", "CPU=1", "--output", out, select="PL101")
    assert r.exit_code == 1
    [res] = [x for x in by_uri(json.loads(out.read_text()))["models/cpu1.pbtxt"]
             if x["locations"][0]["logicalLocations"][0]["name"] == CPU1_NODE]
    assert res["ruleId"] == "PL101"
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        name_line(CPU1_SAMPLE, CPU1_NODE)


def test_github_annotations(repo, tmp_path):
    summary = tmp_path / "step-summary.md"
    r = run_format(repo, "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    lines = r.stdout.splitlines()
    line = name_line(repo / "models" / "text.pbtxt", "bad/w")
    assert [x for x in lines if "text.pbtxt" in x][0].startswith(
        f"::error file=models/text.pbtxt,line={line},title=PL102 malformed-device::")
    assert any(x.startswith("::error file=models/bin.pb,line=1,title=PL102") for x in lines)
    assert any(x.startswith("::error file=models/broken.pb,line=1,title=PL001 unreadable-model::")
               for x in lines)
    assert lines[-1].startswith("Found 4 errors in 4 of 6 models")
    assert summary.read_text().startswith("### placelint: 4 errors in 4 of 6 models")


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    d = Diagnostic("PL102", "malformed-device", Severity.INFO, "bad\nnews: 100%", node="n",
                   model="m,1:x.pbtxt", file="m,1:x.pbtxt", file_line=7)
    got = annotation(d, RunInfo(root=Path.cwd()))
    assert got == ("::notice file=m%2C1%3Ax.pbtxt,line=7,title=PL102 malformed-device::"
                   "Node 'n': bad%0Anews: 100%25.")
    d.fix, d.nodes = "do this", ["n", "n2", "n3"]
    assert annotation(d, RunInfo(root=Path.cwd())).endswith(
        "::bad%0Anews: 100%25 (3 nodes: n, n2, n3). Fix: do this")


def test_markdown_summary(repo):
    r = run_format(repo, "markdown")
    md = r.stdout
    assert md.startswith("### placelint: 4 errors in 4 of 6 models\n")
    assert "| PL102 malformed-device | :x: error | 3 |" in md
    assert "| PL001 unreadable-model | :x: error | 1 |" in md
    assert "| :x: | `models/text.pbtxt:9` | `bad/w` | PL102 |" in md
    assert md.count("<details>") == 1 and "</details>" in md
    clean = run_format(repo, "markdown", select="PL003")
    assert clean.stdout.startswith("### :white_check_mark: placelint: all checks passed (6 models)")


def test_markdown_escaping_and_truncation():
    assert cell("a|b\nc<d> & e") == "a\\|b<br>c&lt;d&gt; &amp; e"
    diags = [Diagnostic("PL102", "malformed-device", Severity.ERROR, f"m{i}", node=f"n{i}",
                        model="x.pbtxt", file="x.pbtxt") for i in range(MAX_ROWS + 7)]
    md = render("markdown", [ModelResult("x.pbtxt", diagnostics=diags)], RunInfo())
    assert md.count("| :x: |") == MAX_ROWS and "| and 7 more |" in md


def test_text_colours_only_when_wanted(repo, tmp_path):
    plain = run_format(repo, "text", env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\033[" not in plain.stdout
    assert "text.pbtxt:9: PL102 [malformed-device] error: malformed device specification " \
        "'/gpu0' (node bad/w)" in plain.stdout
    coloured = run_format(repo, "text", env={"FORCE_COLOR": "1"})
    assert "\033[1;31mPL102\033[0m" in coloured.stdout
    assert coloured.stdout.splitlines()[-1].startswith("\033[1mFound 4 errors")
    out = tmp_path / "report.txt"
    run_format(repo, "text", "--output", out, env={"FORCE_COLOR": "1"})
    assert "\033[" not in out.read_text() and "bad/w" in out.read_text()


def test_json_contract(repo):
    report = json.loads(run_format(repo, "json").stdout)
    assert set(report) == {"models", "summary"}
    data = report["models"]
    # SavedModel directories first, then files by name: a stable order
    assert [m["model"] for m in data] == ["keras_cnn", "bin.pb", "broken.pb", "cpu1.pbtxt",
                                          "text.pbtxt", "with space ü.pbtxt"]
    text = next(m for m in data if m["model"].endswith("text.pbtxt"))
    assert text["format"] == "GraphDef (text)" and text["entry"] == "whole graph"
    assert text["devices"] == ["/job:localhost/replica:0/task:0/device:GPU:0",
                               "/job:localhost/replica:0/task:0/device:CPU:0"]
    [d] = text["diagnostics"]
    assert set(d) == {"code", "rule", "severity", "message", "fix", "detail", "help_uri", "node",
                      "nodes", "scopes", "related_nodes", "location", "python_location",
                      "model_location", "phase"}
    assert (d["code"], d["node"], d["nodes"], d["severity"], d["phase"]) == \
        ("PL102", "bad/w", ["bad/w"], "error", "graph")
    # the line text shows is in JSON too; message and fix are separate
    assert d["location"] == {"file": "text.pbtxt", "line": 9, "column": None}
    assert d["model_location"] == {"file": "text.pbtxt", "line": 9}
    assert d["python_location"] is None
    assert d["message"] == "malformed device specification '/gpu0'"
    assert d["fix"].startswith("use a name such as")
    assert "Malformed device specification '/gpu0' in node 'bad/w'" in d["detail"]
    assert report["summary"] == {
        "models": 6, "models_with_findings": 4, "findings": 4, "nodes": 3,
        "by_severity": {"error": 4, "warning": 0, "info": 0},
        "by_rule": {"PL001": 1, "PL102": 3}, "devices": text["devices"],
        "devices_line": "devices: CPU:0, GPU:0 (default; set --devices)", "baseline_hidden": 0}
    saved = next(m for m in data if m["model"] == "keras_cnn")
    assert saved["entry"].startswith("signature 'serving_default'")
    assert all(d["phase"] in ("restore", "init", "step", "graph") for d in saved["diagnostics"])
    broken = next(m for m in data if m["model"].endswith("broken.pb"))
    assert broken["format"] is None and broken["diagnostics"][0]["code"] == "PL001"


def test_unknown_format_is_a_usage_error(repo):
    r = run_format(repo, "xml")
    assert r.exit_code == 2 and "unknown --format 'xml'" in r.stderr


def test_sarif_links_come_from_the_package_metadata(monkeypatch, request):
    from importlib import metadata

    from placelint.output.sarif import rule_descriptor, sarif_log
    from placelint.rulebook import project_urls

    # project_urls reads the metadata once per process: again under each patch here, and
    # once more after the test
    request.addfinalizer(project_urls.cache_clear)

    class Meta:
        def get_all(self, key):
            assert key == "Project-URL"
            return ["Homepage, https://example.org/placelint",
                    "Rules, https://example.org/placelint/blob/main/rules/"]
    monkeypatch.setattr(metadata, "metadata", lambda name: Meta())
    project_urls.cache_clear()
    rule = next(r for r in all_rules() if r.code == "PL102")
    assert rule_descriptor(rule)["helpUri"] == \
        "https://example.org/placelint/blob/main/rules/PL102-malformed-device.md"
    driver = sarif_log([], RunInfo())["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://example.org/placelint"
    monkeypatch.setattr(metadata, "metadata", lambda name: (_ for _ in ()).throw(
        metadata.PackageNotFoundError(name)))
    project_urls.cache_clear()
    assert "helpUri" not in rule_descriptor(rule)
    assert "informationUri" not in sarif_log([], RunInfo())["runs"][0]["tool"]["driver"]
