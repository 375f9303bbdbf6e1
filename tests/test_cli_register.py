"""``cli._register_commands``: the command the arguments name is registered alone (typer
then makes one click command, not nine); anything else registers every command. Each case
runs in a fresh interpreter: registration fills the process's one ``app``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "towers_gpu.pb"

_REGISTERED = """
import json, sys
from placelint import cli
cli._register_commands({argv!r})
print(json.dumps(sorted(c.name or c.callback.__name__ for c in cli.app.registered_commands)))
"""


def registered(argv) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _REGISTERED.format(argv=argv)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


ALL = ["check", "diff", "graph", "memory", "parallelism", "place", "rule", "rules", "steps"]


@pytest.mark.parametrize("argv, expected", [
    (["check", str(SAMPLE)], ["check"]),
    (["check", "--devices", "CPU=2", str(SAMPLE)], ["check"]),
    (["steps", "--help"], ["steps"]),
    (["rules"], ["rule", "rules"]),        # rules.py declares both
    (None, ALL),                           # tests and library callers: everything
    ([], ALL),
    (["--help"], ALL),
    (["--version"], ALL),
    (["chek", "x"], ALL),                  # mistyped: click lists every command
    (["rule", "PL201"], ALL),              # a command declared by a module of another name
])
def test_registers_the_named_command_alone_else_all(argv, expected):
    assert registered(argv) == expected


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "placelint", *args], cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.parametrize("args", [
    ("check", "--no-cache", "--output-format", "json", str(SAMPLE), "--devices", "CPU=2"),
    ("check", "--help"),
    ("chek", str(SAMPLE)),
])
def test_one_command_registered_runs_as_with_all(args, tmp_path):
    """The command's output and exit status are those of a process that registered every
    command (``main`` with the registration forced to all)."""
    alone = run(*args)
    forced = subprocess.run(
        [sys.executable, "-c",
         "import sys; from placelint import cli; "
         "real = cli._register_commands; cli._register_commands = lambda argv=None: real(); "
         f"sys.argv = ['placelint', *{list(args)!r}]; cli.run()"],
        cwd=ROOT, capture_output=True, text=True)
    # (usage lines name the program as started: ``python -m placelint`` there)
    same = [(p.returncode, p.stdout.replace("python -m placelint", "placelint"),
             p.stderr.replace("python -m placelint", "placelint")) for p in (alone, forced)]
    assert same[0] == same[1]
