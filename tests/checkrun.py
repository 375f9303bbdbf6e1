"""Helpers for the tests of ``placelint check``: run the CLI in-process, write small graphs."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
CPU1_SAMPLE = SAMPLES / "alexnet_cpu1_assign.pbtxt"
CPU1_NODE = "conv1_2/Assign_3/value"   #: the node TF names when placing it on one CPU


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def codes(self) -> list[str]:
        """Rule codes in the text output, in order."""
        out = []
        for line in self.stdout.splitlines():
            for word in line.split():
                if len(word) == 5 and word.startswith("PL") and word[2:].isdigit():
                    out.append(word)
                    break
        return out


def invoke(args: list[str], cwd: Path | None = None, env: dict | None = None) -> Run:
    """``placelint <args>`` in this process, from ``cwd``."""
    from placelint.cli import _register_commands, app
    _register_commands()
    base = {"NO_COLOR": None, "FORCE_COLOR": None, "GITHUB_STEP_SUMMARY": None}
    with contextlib.chdir(cwd or Path.cwd()):
        r = CliRunner(env={**base, **(env or {})}).invoke(app, [str(a) for a in args])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return Run(r.exit_code, r.stdout, r.stderr)


def const_node(name: str, device: str = "") -> str:
    dev = f'  device: "{device}"\n' if device else ""
    return (f'node {{\n  name: "{name}"\n  op: "Const"\n{dev}'
            '  attr { key: "dtype" value { type: DT_FLOAT } }\n'
            '  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } '
            'float_val: 1.0 } } }\n}\n')


def write_graph(path: Path, nodes: list[tuple[str, str]]) -> Path:
    """A text GraphDef of Const nodes ``(name, device)``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(const_node(n, d) for n, d in nodes) + "versions { producer: 1994 }\n")
    return path


def write_binary_graph(path: Path, nodes: list[tuple[str, str]]) -> Path:
    from google.protobuf import text_format

    from placelint.proto import GraphDef
    g = GraphDef()
    text_format.Parse("".join(const_node(n, d) for n, d in nodes), g)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(g.SerializeToString())
    return path


def name_line(path: Path, node: str) -> int:
    """1-based line of ``name: "<node>"`` in a text model."""
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip() == f'name: "{node}"':
            return i
    raise AssertionError(f"{node} not in {path}")


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def git_commit_all(path: Path, message: str = "init") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "add", "-A", "."], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=path, check=True,
                   env=env)
