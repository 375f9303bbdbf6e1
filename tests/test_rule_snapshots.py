"""Per-rule snapshots: each rule alone (``select`` = its code) on every example of its
rulebook document, with the findings' code, severity, node, grouped nodes, related nodes,
message and fix
written to ``tests/snapshots/<CODE>-<name>.txt``. A change in a rule's wording, grouping
or node choice shows up in review as a diff of that file.

Update after an intended change:

    PLACELINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_rule_snapshots.py
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from placelint.checks import all_rules
from placelint.loaders import ModelRef
from placelint.loaders.read import GRAPHDEF
from placelint.pipeline import analyze
from placelint.rulebook import parse_doc, read_doc

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("PLACELINT_UPDATE_SNAPSHOTS") == "1"


def _has_examples(rule) -> bool:
    text = read_doc(rule.code, rule.name)
    return text is not None and bool(parse_doc(text).examples)


#: the rules whose documents have examples (some loader rules' cannot: an unreadable file)
RULES = [r for r in all_rules() if _has_examples(r)]


def snapshot(rule, workdir: Path) -> str:
    """The snapshot text of ``rule`` alone over its document's examples."""
    doc = parse_doc(read_doc(rule.code, rule.name))
    out = [f"# {rule.code} {rule.name}, alone on the examples of rules/{rule.code}-{rule.name}.md"]
    for i, example in enumerate(doc.examples):
        settings = example.settings()
        settings.select = [rule.code]
        options = "".join([f" devices={example.devices}" if example.devices else "",
                           " soft=true" if example.soft else ""])
        out.append("")
        out.append(f"## {example.kind} example {i + 1}{options}")
        name = f"example{i + 1}.pbtxt"
        (workdir / name).write_text(example.graph, encoding="utf-8")
        with contextlib.chdir(workdir):
            report = analyze(ModelRef(Path(name), GRAPHDEF), settings)
        if not report.diagnostics:
            out.append("(no findings)")
        for d in report.diagnostics:
            out.append(f"{d.code} {d.severity.value} node={d.node or '-'}"
                       + (f" nodes={', '.join(d.nodes)}" if len(d.nodes) > 1 else "")
                       + (f" related={', '.join(d.related_nodes)}" if d.related_nodes else ""))
            out.append(f"  {d.message}")
            if d.fix:
                out.append(f"  fix: {d.fix}")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_snapshot(rule, tmp_path):
    path = SNAPSHOTS / f"{rule.code}-{rule.name}.txt"
    text = snapshot(rule, tmp_path)
    if UPDATE or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"{path.name} was missing and has been written: review and commit it")
    assert text == path.read_text(encoding="utf-8"), (
        f"{rule.code}'s findings on its examples changed; if intended, rerun with "
        "PLACELINT_UPDATE_SNAPSHOTS=1 and commit tests/snapshots/")


def test_no_snapshot_without_a_rule():
    known = {f"{r.code}-{r.name}.txt" for r in RULES}
    assert sorted(p.name for p in SNAPSHOTS.glob("*.txt") if p.name not in known) == []


def test_failing_examples_have_findings_in_their_snapshot():
    """A snapshot records what the rule says, not that it said nothing."""
    for rule in RULES:
        text = (SNAPSHOTS / f"{rule.code}-{rule.name}.txt").read_text(encoding="utf-8")
        for block in text.split("\n## ")[1:]:
            if block.startswith("failing"):
                assert f"\n{rule.code} " in block, f"{rule.code}: {block.splitlines()[0]}"
            else:
                assert f"\n{rule.code} " not in block, f"{rule.code}: {block.splitlines()[0]}"


def test_no_message_carries_its_fix(tmp_path):
    """The advice is the diagnostic's ``fix`` field, never a "Fix:" sentence inside the
    message (the formats print the two apart: JSON ``fix``, text ``full``, SARIF joins
    them once). Every rule at once, with its example's settings, on every example of
    every rulebook document; PL008, which no graph example can show, on a misnamed file."""
    from placelint.loaders import format_note
    from placelint.loaders.read import SAVEDMODEL

    found = []
    for rule in RULES:
        for i, example in enumerate(parse_doc(read_doc(rule.code, rule.name)).examples):
            name = f"{rule.code}-{i + 1}.pbtxt"
            (tmp_path / name).write_text(example.graph, encoding="utf-8")
            with contextlib.chdir(tmp_path):
                found += analyze(ModelRef(Path(name), GRAPHDEF), example.settings()).diagnostics
    found += [format_note(Path("graph.pb"), True, GRAPHDEF),
              format_note(Path("saved_model.pbtxt"), False, SAVEDMODEL)]
    assert [(d.code, d.message) for d in found if "Fix:" in d.message or "fix:" in d.message] == []
    with_fix = {d.code for d in found if d.fix}
    # the rules that used to write their advice into the message now carry it apart
    assert {"PL007", "PL008", "PL108", "PL401", "PL402"} <= with_fix
    pl008 = [d for d in found if d.code == "PL008"]
    assert [d.fix for d in pl008] == [
        "rename it to .pbtxt, or write it in binary (tf.io.write_graph(..., as_text=False)).",
        "rename it to .pb, or write it as text (tf.io.write_graph(..., as_text=True))."]
    assert pl008[0].message.endswith("placelint still reads it.")
