"""benchmarks/ab.py: each side runs its own checkout, the runs alternate, and a change of
findings between the two checkouts is caught."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import ab  # noqa: E402

SAMPLE = ROOT / "samples" / "towers_gpu.pb"


def _copy(tmp_path: Path, name: str) -> Path:
    checkout = tmp_path / name
    shutil.copytree(ROOT / "placelint", checkout / "placelint",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return checkout


def test_each_side_imports_its_own_checkout(tmp_path: Path):
    a = _copy(tmp_path, "a")
    assert ab.imported_from(a, tmp_path) == a.resolve()
    assert ab.imported_from(ROOT, tmp_path) == ROOT


def test_runs_alternate_and_a_change_of_findings_is_caught(tmp_path: Path):
    a, b = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    lines: list[str] = []
    found = ab.compare(a, b, [SAMPLE], 2, "CPU=2", say=lines.append)
    runs = found[str(SAMPLE)]
    assert [len(runs["A"]), len(runs["B"])] == [2, 2] and runs["same_output"] is True
    assert all(r["wall"] > 0 and r["rss_kib"] > 10_000 and r["exit"] == 1    # (warnings)
               for r in runs["A"] + runs["B"])
    sides = [line.split()[0] for line in lines if line.startswith("  ") and "KiB" in line
             and not line.lstrip().startswith("median")]
    assert sides == ["A", "B", "B", "A"]
    # side B's rule now words its finding otherwise: the outputs differ
    rule = b / "placelint" / "checks" / "pl101_unknown_device.py"
    rule.write_text(rule.read_text().replace("is not on the target", "is missing"))
    found = ab.compare(a, b, [SAMPLE], 1, "CPU=2", say=lines.append)
    assert found[str(SAMPLE)]["same_output"] is False
