"""The layers stay one-way: load -> model -> analyses -> checks -> report -> output/render ->
commands, with no upward import and no import cycle between modules.

Imports are read with ``ast`` from every module of the package, including the lazy ones
inside functions (they run too, just later); only ``if TYPE_CHECKING:`` blocks are skipped.
A module may import its own layer or a lower one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "placelint"

#: Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # leaves and TensorFlow's own facts: every layer may use them
    ("base", ("placelint", "placelint.humanize", "placelint.formats", "placelint.data",
              "placelint.location", "placelint.proto", "placelint.wire", "placelint.dtypes",
              "placelint.opdb", "placelint.diagnostics")),
    # rule declarations every layer reports in: the Rule base class, the selector, and the
    # loader rules (code, name, severity; loaders and the model builder create their
    # diagnostics, see _loader_rule_modules)
    ("rules", ("placelint.checks.base", "placelint.checks.selector")),
    ("load", ("placelint.loaders",)),
    ("model", ("placelint.model",)),
    ("analyses", ("placelint.analyses",)),
    # the rules, what they read (context, settings) and how they are selected and documented
    ("checks", ("placelint.checks", "placelint.context", "placelint.settings",
                "placelint.config", "placelint.suppress", "placelint.rulebook")),
    # one model or many analysed into reports: the pipeline, the public API, caching
    ("report", ("placelint.pipeline", "placelint.api", "placelint.runner", "placelint.cache",
                "placelint.baseline", "placelint.report_graph", "placelint.report")),
    ("output", ("placelint.output", "placelint.render")),
    ("commands", ("placelint.commands", "placelint.cli", "placelint.__main__")),
]

#: (importer, imported) pairs allowed to go upward, each with its reason.
KNOWN_UPWARD: set[tuple[str, str]] = set()   # (render/view.py asks Settings.describe_devices())

#: The package's public facade: ``placelint.analyze`` / ``placelint.load`` import
#: ``placelint.api`` on first use (PEP 562 ``__getattr__``), so ``import placelint`` stays
#: cheap and every module can read ``placelint.__version__``.
FACADE = ("placelint", "placelint.api")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported placelint module, line) for every import in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import sub`` imports the module pkg.sub
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in mods else module
                       for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            if target != "placelint" and not target.startswith("placelint."):
                continue
            while target not in mods:
                target = target.rpartition(".")[0]
            if target != name:
                out.append((target, node.lineno))
    return out


def _loader_rule_modules() -> tuple[str, ...]:
    """The modules of the rules with ``origin = "loader"``: they declare what the loaders
    and the graph builder report, analyse nothing, and sit in the "rules" layer."""
    from placelint.checks import all_rules
    return tuple(r.__module__ for r in all_rules() if r.origin == "loader")


def _layer(module: str) -> int:
    if module in _loader_rule_modules():
        return [name for name, _ in LAYERS].index("rules")
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    assert best is not None, f"{module} is in no layer: add it to LAYERS in {__file__}"
    return best


@pytest.fixture(scope="module")
def import_graph() -> nx.MultiDiGraph:
    mods = _modules()
    g = nx.MultiDiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for target, line in _imports(name, path, mods):
            g.add_edge(name, target, line=line)
    return g


def test_every_module_has_a_layer(import_graph):
    for module in import_graph:
        _layer(module)


def test_no_upward_import(import_graph):
    upward = []
    for src, dst, line in import_graph.edges(data="line"):
        if _layer(dst) > _layer(src) and (src, dst) not in KNOWN_UPWARD and (src, dst) != FACADE:
            upward.append(f"{src} (line {line}, layer {LAYERS[_layer(src)][0]}) imports "
                          f"{dst} (layer {LAYERS[_layer(dst)][0]})")
    assert not upward, "upward imports:\n  " + "\n  ".join(sorted(upward))


def test_known_exceptions_still_exist(import_graph):
    """An exception that is no longer needed is removed from the list."""
    for src, dst in KNOWN_UPWARD:
        assert import_graph.has_edge(src, dst), f"{src} -> {dst} is gone: drop it from KNOWN_UPWARD"


def test_no_import_cycle(import_graph):
    """No two modules import each other, directly or through others. A package's
    ``__init__`` may import its own submodules (it dispatches to them: ``output.render``
    picks a format module lazily), so those edges do not count."""
    g = nx.DiGraph()
    g.add_nodes_from(import_graph)
    for src, dst in import_graph.edges():
        if dst.startswith(src + ".") or (src, dst) == FACADE:
            continue
        g.add_edge(src, dst)
    cycles = [" -> ".join(c + [c[0]]) for c in nx.simple_cycles(g)]
    assert not cycles, "import cycles:\n  " + "\n  ".join(sorted(cycles))


def test_the_check_finds_an_upward_import_and_a_cycle(tmp_path):
    """The scanner sees lazy and relative imports (a test that could not fail is no test)."""
    mods = {"placelint.model.x": tmp_path / "x.py", "placelint.checks": tmp_path / "c.py",
            "placelint.model": tmp_path / "m.py"}
    mods["placelint.model.x"].write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..checks import Rule\n"
        "def f():\n    from ..checks import all_rules\n")
    found = _imports("placelint.model.x", mods["placelint.model.x"], mods)
    assert found == [("placelint.checks", 5)]
    assert _layer("placelint.checks") > _layer("placelint.model.x")


MAX_LINES = 500


def test_modules_stay_small():
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[rel] = lines
    assert long == {}, f"modules over {MAX_LINES} lines: split them by what they do"

