"""The rulebook (rules/<CODE>-<name>.md): every rule has a document in the format, and
every example in it does what it claims when run through the real pipeline, so the docs
cannot drift from the rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from checkrun import invoke

from placelint.checks import all_rules
from placelint.loaders import ModelRef
from placelint.loaders.read import GRAPHDEF
from placelint.pipeline import analyze
from placelint.rulebook import (DocFormatError, check_doc, doc_path, parse_doc, read_doc,
                                rulebook_dir)

RULES = list(all_rules())
ANALYSIS_RULES = [r for r in RULES if r.origin == "analysis"]


def _doc(rule):
    text = read_doc(rule.code, rule.name)
    assert text is not None, f"no rule document {doc_path(rule.code, rule.name)}"
    return parse_doc(text)


def _examples():
    """(rule, example) for every example of every rule that has a parseable document."""
    out = []
    for rule in RULES:
        text = read_doc(rule.code, rule.name)
        if text is None:
            continue
        try:
            doc = parse_doc(text)
        except DocFormatError:
            continue
        for ex in doc.examples:
            out.append(pytest.param(rule, ex, id=f"{rule.code}-{ex.kind}-line{ex.line}"))
    return out


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_every_rule_has_a_document_in_the_format(rule):
    doc = _doc(rule)
    assert check_doc(doc, rule) == []


def test_no_document_without_a_rule():
    known = {f"{r.code}-{r.name}.md" for r in RULES}
    assert sorted(p.name for p in rulebook_dir().glob("*.md") if p.name not in known) == []


@pytest.mark.parametrize("rule, example", _examples())
def test_example_does_what_it_claims(rule, example, tmp_path: Path):
    path = tmp_path / "example.pbtxt"
    path.write_text(example.graph)
    report = analyze(ModelRef(path, GRAPHDEF), example.settings())
    codes = [d.code for d in report.diagnostics]
    assert "PL001" not in codes, f"the example is not a valid text GraphDef: {report.diagnostics}"
    # an internal error while loading, or in this rule, makes the example meaningless
    # (another rule's crash is that rule's own test failure)
    crashes = [d.message for d in report.diagnostics if d.code == "PL009"
               and (" in rule " not in d.message or f" in rule {rule.code} " in d.message)]
    assert crashes == []
    if example.kind == "failing":
        assert rule.code in codes, f"failing example does not trigger {rule.code}: {codes}"
    else:
        assert rule.code not in codes, [d.message for d in report.diagnostics
                                         if d.code == rule.code]


def test_pl102_document_has_examples_with_options():
    doc = _doc(next(r for r in RULES if r.code == "PL102"))
    assert [(e.kind, e.devices, e.soft) for e in doc.examples] == [
        ("failing", "CPU:0,GPU:0", False), ("failing", "CPU:0", True),
        ("passing", "CPU:0,GPU:0", False)]
    assert doc.severity == "error" and list(doc.sections)[:4] == [
        "What it does", "Why is this bad?", "Example", "How to fix"]


GOOD = """# PL777 some-rule

**Severity:** warning (info under --quiet)

## What it does
Flags things.

## Why is this bad?
Because.

## Example
```pbtxt failing devices=CPU=2 soft=true
node { name: "a" op: "NoOp" }
```
```pbtxt passing
node { name: "b" op: "NoOp" }
```

## How to fix
Do not.
"""


def test_parser_reads_the_format():
    doc = parse_doc(GOOD)
    assert (doc.code, doc.name, doc.severity) == ("PL777", "some-rule", "warning")
    assert doc.severity_line == "warning (info under --quiet)"
    assert [(e.kind, e.devices, e.soft, e.line) for e in doc.examples] == [
        ("failing", "CPU=2", True, 12), ("passing", None, False, 15)]
    assert doc.examples[0].graph == 'node { name: "a" op: "NoOp" }\n'
    assert doc.sections["How to fix"] == "Do not.\n"
    s = doc.examples[0].settings()
    assert s.allow_soft_placement and len(s.devices.devices) == 2


@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.replace("# PL777 some-rule", "# some-rule"), "title"),
    (lambda t: t.replace("**Severity:** warning (info under --quiet)\n", ""), "Severity"),
    (lambda t: t.replace("**Severity:** warning", "**Severity:** loud"), "must start with"),
    (lambda t: t.replace("## Why is this bad?", "## Why"), "missing section"),
    (lambda t: t.replace("Because.", ""), "is empty"),
    (lambda t: t.replace("pbtxt failing", "pbtxt failng"), "failng"),
    (lambda t: t.replace("soft=true", "soft=yes"), "soft=yes"),
    (lambda t: t.rstrip() + "\n```pbtxt passing\nnode {}\n", "not closed"),
    (lambda t: t.replace("## How to fix\nDo not.\n", "") + "\n## How to fix\nx\n## Example\ny\n",
     "appears twice"),
])
def test_parser_rejects_broken_documents(mutate, message):
    with pytest.raises(DocFormatError, match=message):
        parse_doc(mutate(GOOD))


def test_section_order_and_registry_checks():
    swapped = GOOD.replace("## What it does\nFlags things.\n\n## Why is this bad?\nBecause.\n",
                           "## Why is this bad?\nBecause.\n\n## What it does\nFlags things.\n")
    with pytest.raises(DocFormatError, match="order"):
        parse_doc(swapped)
    rule = next(r for r in RULES if r.code == "PL102")
    problems = check_doc(parse_doc(GOOD.replace("pbtxt passing", "text")), rule)
    assert problems == ["title names PL777 some-rule, the rule is PL102 malformed-device",
                        "severity line says warning, the rule's default is error",
                        "no '```pbtxt passing' example"]


def test_headings_inside_code_blocks_are_not_sections():
    doc = parse_doc(GOOD.replace("Flags things.", "Flags things.\n```\n## Example\n```"))
    assert "```\n## Example\n```" in doc.sections["What it does"]


def test_rule_command_prints_the_document():
    r = invoke(["rule", "PL102"])
    assert r.exit_code == 0
    assert r.stdout == (Path(rulebook_dir()) / "PL102-malformed-device.md").read_text() + "\n"
    assert invoke(["rule", "malformed-device"]).stdout == r.stdout
    bad = invoke(["rule", "PL999"])
    assert bad.exit_code == 2 and "unknown rule 'PL999'" in bad.stderr


def test_rules_command_lists_every_rule():
    r = invoke(["rules"])
    assert r.exit_code == 0
    listed = [line.split()[0] for line in r.stdout.splitlines()]
    assert listed == [rule.code for rule in RULES]
    assert "malformed-device" in r.stdout
