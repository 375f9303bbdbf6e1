"""One rule per file in placelint/checks/, named for its code and name, documented in the
rulebook, and referred to elsewhere through its class, never by a code literal."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from placelint.checks import all_rules
from placelint.checks.base import Rule
from placelint.rulebook import doc_path

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "placelint" / "checks"
RULE_FILES = sorted(p for p in CHECKS.glob("pl*.py"))
CODE = re.compile(r"PL\d{3}")


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_file_matches_its_code_and_name(path: Path):
    module = importlib.import_module(f"placelint.checks.{path.stem}")
    rule = module.RULE
    assert issubclass(rule, Rule)
    assert path.stem == f"pl{rule.code[2:]}_{rule.name.replace('-', '_')}", (
        f"{path.name} holds {rule.code} {rule.name}")
    assert rule.__name__ == _camel(rule.name), f"{rule.code}'s class is {rule.__name__}"
    assert (module.__doc__ or "").startswith(f"{rule.code} {rule.name}"), path.name
    own = {v for v in vars(module).values()
           if isinstance(v, type) and issubclass(v, Rule) and v.__module__ == module.__name__}
    assert own == {rule}, f"{path.name} defines {[c.__name__ for c in own]}: one rule per file"
    assert doc_path(rule.code, rule.name).is_file(), f"no rulebook document for {rule.code}"


def test_every_registered_rule_has_its_file():
    assert sorted(f"pl{r.code[2:]}_{r.name.replace('-', '_')}" for r in all_rules()) == \
        [p.stem for p in RULE_FILES]


def _code_literals(path: Path) -> list[tuple[int, str]]:
    """String constants that are exactly a rule code, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and CODE.fullmatch(n.value) and id(n) not in docstrings]


def test_rule_codes_only_in_their_own_file():
    """Code outside a rule's file names the rule through its class (``InternalError.code``,
    ``InvalidGraph.diag(...)``), so a renumbered rule cannot leave a stale literal behind."""
    stray = []
    for path in sorted((ROOT / "placelint").rglob("*.py")):
        for line, code in _code_literals(path):
            own = CHECKS / f"pl{code[2:]}_"
            if not str(path).startswith(str(own)):
                stray.append(f"{path.relative_to(ROOT)}:{line}: {code!r}")
    assert stray == []


def test_the_literal_scan_sees_code_but_not_docstrings(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('"""PL005 in a docstring."""\nx = "PL009"\ny = f"PL1{x}"\n')
    assert _code_literals(src) == [(2, "PL009")]


def test_every_rule_document_says_how_its_findings_are_grouped():
    """One cause, one finding: each rule's document names its grouping key (issue 14)."""
    from placelint.rulebook import parse_doc, read_doc
    missing = [r.code for r in all_rules()
               if not parse_doc(read_doc(r.code, r.name)).sections.get("Grouping", "").strip()]
    assert missing == []
