"""The ``placelint`` program's exit (``cli.run``): the process leaves with ``os._exit`` once
its output is flushed, keeping the last model analysed referenced rather than freeing it.
Everything a user sees must be as with an ordinary exit: the whole report on a pipe or in
``--output``, the exit status, usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from checkrun import ROOT, SAMPLES, invoke

from placelint import runner
from placelint.loaders import discover
from placelint.settings import Settings

SAMPLE = SAMPLES / "towers_gpu.pb"


def _program(*args: str, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "placelint", *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_whole_report_reaches_a_pipe_with_the_findings_status(tmp_path):
    proc = _program("check", "--no-cache", "--isolated", "--format", "json", str(SAMPLE),
                    cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr       # PL101 errors: findings
    in_process = invoke(["check", "--no-cache", "--isolated", "--format", "json", SAMPLE],
                        cwd=tmp_path)
    assert json.loads(proc.stdout) == json.loads(in_process.stdout)
    assert in_process.exit_code == 1


def test_output_file_is_complete_and_the_summary_goes_to_stderr(tmp_path):
    out = tmp_path / "report.txt"
    proc = _program("check", "--no-cache", "--isolated", "-o", str(out), str(SAMPLE),
                    cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    text = out.read_text()
    assert text.count("PL101 [unknown-device]") == 2 and text.endswith("\n")
    assert proc.stderr.startswith("Found 2 errors")


def test_usage_error_and_version_statuses(tmp_path):
    bad = _program("check", "--no-such-option", str(SAMPLE), cwd=tmp_path)
    assert bad.returncode == 2 and "No such option: --no-such-option" in bad.stderr
    version = _program("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("placelint ")


def test_keep_last_report_holds_one_report_at_a_time(monkeypatch):
    monkeypatch.setattr(runner, "_kept", None)
    ref = discover([SAMPLES / "cpu_vars_gpu_ops.pbtxt"])[0]
    runner.analyze_one(ref, Settings())
    assert runner._kept is None                     # the library keeps nothing
    runner.keep_last_report()
    first = runner.analyze_one(ref, Settings())
    assert [r.path for r in runner._kept] == [first.path]
    kept = runner._kept[0]
    other = discover([SAMPLE])[0]
    runner.analyze_one(other, Settings())
    assert len(runner._kept) == 1 and runner._kept[0] is not kept
    assert runner._kept[0].path == other.display


def test_a_profiler_still_writes_its_report(tmp_path):
    """Under cProfile (``bench_kinds.py --profile``) the program exits the ordinary way."""
    stats = tmp_path / "check.prof"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "placelint",
                           "check", "--no-cache", "--isolated", str(SAMPLE)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert "PL101 [unknown-device]" in proc.stdout
    import pstats
    assert any(fn[2] == "run" and fn[0].endswith("cli.py") for fn in pstats.Stats(str(stats)).stats)
