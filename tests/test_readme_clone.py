"""The README's two commands work on a fresh clone with no sibling folders.

The repository's files (``git ls-files``: tracked, plus untracked files that are not
ignored, as a CI checkout of this tree would hold) are copied into an empty temporary
directory, and the commands are taken from README.md itself, so that this test breaks
when the README changes:

- the quick start's check (``placelint check samples/ --devices CPU=1``), run from the copy
  with this interpreter and ``PYTHONPATH`` at the copy (fast), or, in the slow variant,
  the whole quick start line as written (a fresh venv, ``pip install -e .``);
- the test command (``python -m pytest -m "not slow"``) on a few test modules that read
  shipped data (the SARIF schema, the rule documents, the samples), from the copy.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkrun import ROOT

README = ROOT / "README.md"
#: tests run from the copy: they read the SARIF schema in tests/data (once read from a
#: sibling folder that a clone does not have), the rule documents and the samples
SELECTION = ["tests/test_output_formats.py::test_sarif_validates_against_the_official_schema",
             "tests/test_rulebook.py"]


def readme_blocks() -> tuple[str, str]:
    """(quick start, development) command lines from the README's ``sh`` blocks."""
    blocks = [b.strip() for b in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S)]
    quick = next(b for b in blocks if "pip install -e ." in b and "placelint check" in b)
    dev = next(b for b in blocks if "pytest" in b)
    return quick, dev


def steps(line: str) -> list[list[str]]:
    """The ``&&``-joined commands of one line, each split as a shell would."""
    return [shlex.split(part) for part in line.split("&&")]


def step_running(line: str, program: str) -> list[str]:
    """The step whose program is ``program`` (``placelint``, ``python``), arguments after it."""
    for argv in steps(line):
        if Path(argv[0]).name == program:
            return argv[1:]
    raise AssertionError(f"no {program} step in the README line: {line}")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """This tree's files alone in an empty directory (no sibling folder of the project, no other checkout)."""
    empty = tmp_path_factory.mktemp("fresh")
    dest = empty / "placelint"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    assert [p.name for p in empty.iterdir()] == ["placelint"]
    return dest


def _env(clone: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CI", "GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = str(clone)
    return env


def _check_quick_start_output(proc):
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr   # "exits 1 because there are findings"
    assert re.search(r"^samples/alexnet_cpu1_assign\.pbtxt:\d+: PL101 \[unknown-device\] "
                     r"error: explicit device CPU:1 is not on the target", out, re.M), out
    assert "Traceback" not in out + proc.stderr


def test_readme_commands_parse():
    quick, dev = readme_blocks()
    assert step_running(quick, "placelint")[0] == "check"
    assert step_running(dev, "python")[:2] == ["-m", "pytest"]


def test_quick_start_check_from_a_fresh_copy(clone):
    quick, _ = readme_blocks()
    args = step_running(quick, "placelint")
    proc = subprocess.run([sys.executable, "-m", "placelint", *args], cwd=clone,
                          env=_env(clone), capture_output=True, text=True, timeout=300)
    _check_quick_start_output(proc)


def test_test_command_from_a_fresh_copy(clone):
    """The README's pytest command on tests that read shipped data, from the copy: the
    SARIF schema (tests/data/sarif), the rule documents and their example graphs."""
    _, dev = readme_blocks()
    args = step_running(dev, "python")
    proc = subprocess.run([sys.executable, *args, "-q", "-x", "-p", "no:cacheprovider",
                           *SELECTION], cwd=clone, env=_env(clone), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\d+ passed", proc.stdout) and " skipped" not in proc.stdout.splitlines()[-1]
    # the copy's own code ran, not this tree's
    assert str(ROOT) not in proc.stdout


@pytest.mark.slow
def test_quick_start_as_written_in_a_fresh_venv(clone):
    """The whole quick start line, verbatim: a new venv, ``pip install -e .`` (PyPI or
    pip's cache), then the check."""
    quick, _ = readme_blocks()
    env = _env(clone)
    env.pop("PYTHONPATH")
    env.pop("VIRTUAL_ENV", None)
    line = quick.replace("python3 ", f"{shlex.quote(sys.executable)} ", 1) \
        if shutil.which("python3") is None else quick
    proc = subprocess.run(["bash", "-c", line], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=1800)
    _check_quick_start_output(proc)
    assert (clone / ".venv" / "bin" / "placelint").is_file()
