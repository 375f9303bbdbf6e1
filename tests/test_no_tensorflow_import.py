"""placelint never imports TensorFlow: not on ``import placelint``, not on ``import
placelint.cli``, and not while ``check`` runs over the samples in any format, with or
without worker processes and the cache.

Each case runs in a fresh interpreter with a ``sitecustomize`` that records every attempt
to import ``tensorflow`` (in the process and in any worker it starts) to a log file;
``sys.modules`` is checked as well. TensorFlow is installed in the test environment, so an
import would succeed silently without this.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SITECUSTOMIZE = textwrap.dedent("""
    import os, sys

    class _RecordTensorFlow:
        def find_spec(self, name, path=None, target=None):
            if name == "tensorflow" or name.startswith("tensorflow."):
                with open(os.environ["PLACELINT_TF_LOG"], "a") as fh:
                    fh.write(f"{os.getpid()} {name}\\n")
            return None

    sys.meta_path.insert(0, _RecordTensorFlow())
""")

CHECK = textwrap.dedent("""
    import sys
    from placelint.cli import main
    sys.argv = ["placelint", *sys.argv[1:]]
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    leaked = sorted(m for m in sys.modules if m == "tensorflow" or m.startswith("tensorflow."))
    assert not leaked, leaked
    print("EXIT", code)
""")


def _run(tmp_path: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "tf-imports.log"
    # the tree under test first: run from cwd=tmp_path, the child would otherwise import
    # whatever placelint is installed (an editable install of another checkout)
    path = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path),
           "PLACELINT_TF_LOG": str(log), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert not log.exists(), f"tensorflow was imported: {log.read_text()}"
    return proc


def test_the_recorder_sees_a_tensorflow_import(tmp_path):
    """The guard itself works: importing TensorFlow is caught (so its silence means something)."""
    with pytest.raises(AssertionError, match="tensorflow was imported"):
        _run(tmp_path, "import importlib.util; importlib.util.find_spec('tensorflow')")


def test_import_placelint_and_cli(tmp_path):
    proc = _run(tmp_path, "import sys, placelint, placelint.cli; "
                          "print(sorted(m for m in sys.modules if m.startswith('tensorflow')))")
    assert proc.stdout.strip() == "[]"


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    proc = _run(tmp_path, CHECK, "check", "--isolated", *args, str(ROOT / "samples"))
    # 0/1 clean/findings; 2 when a rule reported an internal error (PL009) - still a full run
    assert proc.stdout.strip().splitlines()[-1] in ("EXIT 0", "EXIT 1", "EXIT 2")
    assert "placelint: internal error" not in proc.stderr and "Traceback" not in proc.stderr
    return proc


@pytest.mark.parametrize("args", [
    ["--no-cache", "--jobs", "1"],
    ["--no-cache", "--format", "json", "--whole-graph"],
    ["--no-cache", "--format", "github"],
    ["--no-cache", "--format", "markdown"],
], ids=["text", "json-whole-graph", "github", "markdown"])
def test_check_on_the_samples(tmp_path, args):
    assert "CPU" in _check(tmp_path, *args).stdout   # the report names the devices


def test_check_with_workers_then_from_the_cache(tmp_path):
    args = ("--jobs", "2", "--format", "sarif", "--select", "PL0,PL1")
    first = _check(tmp_path, *args)
    assert len(list((tmp_path / ".placelint_cache").rglob("*.json"))) == 7   # one per sample
    second = _check(tmp_path, *args)
    assert second.stdout == first.stdout


def test_rules_and_rule_commands(tmp_path):
    _run(tmp_path, CHECK, "rules")
    _run(tmp_path, CHECK, "rule", "PL102")


#: Modules that ``placelint check`` on a small sample must not import: each costs a fresh
#: process more than the analysis does, or belongs to other paths. pydantic: Typer 0.29
#: converts option values with it, ``commands._values`` converts them without; rich: the
#: progress display; networkx and scipy: ``graph`` and the parallelism judge; numpy.ma:
#: plain ``np.unique``; concurrent.futures' pool and multiprocessing: ``--jobs`` over many
#: models; the memory analysis: a budget (``--memory``); the cache (and hashlib): a run
#: without ``--no-cache``; tomllib: a config file (not with ``--isolated``).
NOT_FOR_A_SMALL_CHECK = ("pydantic", "pydantic_core", "typer._adapters", "rich", "networkx",
                         "scipy", "numpy.ma", "concurrent.futures.process", "multiprocessing",
                         "placelint.analyses.memory", "placelint.cache", "hashlib", "tomllib")

LOADED = CHECK + textwrap.dedent(f"""
    heavy = {NOT_FOR_A_SMALL_CHECK!r}
    print("LOADED", sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy))
""")


@pytest.mark.parametrize("sample, args", [
    ("towers_gpu.pb", []),
    ("towers_gpu.pb", ["--jobs", "1", "--devices", "CPU:0,GPU:0,GPU:1", "--format", "json"]),
    ("towers_gpu.pb", ["--allow-soft-placement", "--batch-size", "8",
                       "--gpu-memory-fraction", "0.5"]),
    # constants read on several CPUs: the transfers' constant replication
    ("cpu_vars_gpu_ops.pbtxt", ["--devices", "CPU=4"]),
], ids=["defaults", "options", "more-options", "replicated-constants"])
def test_check_on_a_small_sample_leaves_heavy_modules_out(tmp_path, sample, args):
    proc = _run(tmp_path, LOADED, "check", "--isolated", "--no-cache", *args,
                str(ROOT / "samples" / sample))
    assert proc.stdout.strip().splitlines()[-2:] == ["EXIT 1", "LOADED []"], proc.stdout[-500:]
