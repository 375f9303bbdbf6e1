"""Progress and Ctrl-C, as a person sees them: ``placelint check --jobs 2`` on a directory
of many models runs in a real terminal (tmux), shows its progress, and stops within a
second or two of Ctrl-C with exit 130, "interrupted", and no worker process left behind.

The progress display itself (when it is wanted, what it shows) is tested without a
terminal below, with a Rich console forced to act as one.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from checkrun import ROOT, SAMPLES, invoke

from placelint.commands import _progress
from placelint.commands._progress import Progress, wanted

TMUX = shutil.which("tmux")
PHASES = ("loading", "placement", "shapes", "transfers", "parallelism", "rules")


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("fmt, env, tty, shown", [
    ("text", {}, True, True),
    ("markdown", {}, True, True),
    (None, {}, True, True),
    ("json", {}, True, False), ("sarif", {}, True, False), ("github", {}, True, False),
    ("text", {"CI": "true"}, True, False),
    ("text", {"CI": "1"}, True, False),
    ("text", {"CI": "false"}, True, True),
    ("text", {"TERM": "dumb"}, True, False),
    ("text", {}, False, False),
])
def test_progress_is_wanted_only_when_a_person_watches(fmt, env, tty, shown):
    streams = (_Tty(), _Tty()) if tty else (_Tty(), io.StringIO())
    assert wanted(fmt, environ=env, streams=streams) is shown


def test_no_progress_output_without_a_terminal(tmp_path):
    """Through the CLI with captured (non-terminal) output: the report alone."""
    r = invoke(["check", "--no-cache", str(SAMPLES / "py_function_branches.pbtxt")],
               cwd=tmp_path)
    assert "models" not in r.stderr and "\x1b" not in r.stdout + r.stderr


def test_progress_shows_models_done_and_phases():
    from rich.console import Console
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    p = Progress(delay=0.0, console=console)
    p.start(3, done=1)
    time.sleep(0.3)                       # the timer thread starts the display
    p.model_started(0, "models/a.pb")
    p.model_started(2, "models/c.pbtxt")
    p.phase(2, "placement")
    assert p.describe() == "models/a.pb: loading; models/c.pbtxt: placement"
    p._bar.refresh()
    p.model_done(0)
    p._bar.refresh()
    p.stop()
    text = out.getvalue()
    assert "1/3 models" in text and "2/3 models" in text
    assert "models/a.pb: loading; models/c.pbtxt: placement" in text


def test_a_short_run_shows_nothing():
    p = Progress(delay=0.5, console=None)
    p.start(1)
    p.model_started(0, "a.pb")
    p.model_done(0)
    p.stop()
    time.sleep(0.7)
    assert p._bar is None


# -- the real thing, in a terminal ------------------------------------------------------

COPIES = 500      # of each sample: 1000 models


def _link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:         # another file system (a tmpfs /tmp)
        shutil.copy2(src, dst)


@pytest.fixture(scope="module")
def many_models(tmp_path_factory) -> Path:
    """1000 models (a small Keras SavedModel, a 150 KB text graph): about 18 s
    of work with two workers here, so that on a machine several times faster the run still
    lasts well beyond the progress display's delay. (60 models once took 4-15 s; after the
    fourth session's speed-ups they took 2 s, and a faster CI machine finished them before
    the display appeared.) The test itself stops the run once the display shows."""
    root = tmp_path_factory.mktemp("many") / "models"
    for i in range(COPIES):
        shutil.copytree(SAMPLES / "keras_cnn", root / f"keras_{i:03d}",
                        copy_function=_link_or_copy)
        _link_or_copy(SAMPLES / "alexnet_cpu1_assign.pbtxt", root / f"alexnet_{i:03d}.pbtxt")
    return root


def _marked_processes(marker: str) -> list[int]:
    """Live processes whose environment holds the marker (the run and its workers)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if f"PLACELINT_TEST_MARK={marker}".encode() in (entry / "environ").read_bytes():
                status = (entry / "status").read_text()
                if "\nState:\tZ" not in status:
                    pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.skipif(TMUX is None, reason="needs tmux (apt-get install tmux)")
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
def test_ctrl_c_in_a_terminal_stops_the_run_and_its_workers(many_models):
    marker = uuid.uuid4().hex
    tmux = [TMUX, "-L", f"placelint-test-{marker[:12]}", "-f", os.devnull]
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "CI", "TERM")}
    subprocess.run([*tmux, "new-session", "-d", "-x", "160", "-y", "24",
                    "-c", str(many_models.parent), "-e", f"PLACELINT_TEST_MARK={marker}",
                    "-e", f"PYTHONPATH={ROOT}", sys.executable, "-m", "placelint", "check",
                    "--no-cache", "--jobs", "2", "models", ";",
                    "set-option", "remain-on-exit", "on"], check=True, env=env)

    def pane(what: str) -> str:
        return subprocess.run([*tmux, *what.split()], capture_output=True, text=True).stdout

    def dead() -> tuple[bool, str]:
        """(whether the process has ended, its exit status or "signal N"). tmux marks the
        pane dead when the terminal closes and records the status when it reaps the
        process; on a busy machine it sometimes leaves the process a zombie for good (seen:
        pane dead, status empty, ``[python] <defunct>``). A zombie's exit status is in
        field 52 of its /proc stat (``exit_code``, as waitpid reports it)."""
        pid, flag, status, sig = pane("display -p #{pane_pid}:#{pane_dead}:"
                                      "#{pane_dead_status}:#{pane_dead_signal}").strip().split(":")
        status = status or (f"signal {sig}" if sig else "")
        if flag == "1" and not status:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                stat = ""
            fields = stat.rsplit(")", 1)[-1].split()    # field 3 onwards (after "(comm)")
            if len(fields) >= 50 and fields[0] == "Z":
                code = int(fields[49])
                status = str(code >> 8) if code & 0x7F == 0 else f"signal {code & 0x7F}"
        return flag == "1" and status != "", status

    try:
        screen, m, deadline = "", None, time.monotonic() + 90
        progress = re.compile(rf"(\d+)/{2 * COPIES} models .*models/(keras|alexnet)_\d+(\.pbtxt)?: "
                              rf"({'|'.join(PHASES)})")
        while time.monotonic() < deadline and not dead()[0]:
            screen = pane("capture-pane -p")
            m = progress.search(screen)
            if m and int(m.group(1)) >= 2 and len(_marked_processes(marker)) >= 3:
                break                          # progress shown, both workers busy
            time.sleep(0.1)
        ended, status = dead()
        assert m, (f"no progress display on the terminal (the run ended: {ended}, "
                   f"status {status!r}):\n" + pane("capture-pane -p -S -"))
        assert not ended, "the run ended before it could be interrupted"
        running = _marked_processes(marker)

        subprocess.run([*tmux, "send-keys", "C-c"], check=True)
        t0 = time.monotonic()
        while not dead()[0] and time.monotonic() - t0 < 15:
            time.sleep(0.05)
        stopped = time.monotonic() - t0
        assert dead() == (True, "130"), (
            f"not stopped with 130 after {stopped:.1f} s: {dead()}\n"
            + pane("capture-pane -p -S -"))
        assert stopped < 2.0, f"Ctrl-C took {stopped:.2f} s"
        time.sleep(0.5)
        left = [p for p in _marked_processes(marker) if p in running]
        assert left == [], f"processes left behind: {left}"
        # the whole pane with its history (tmux scrolls the screen when the pane dies);
        # the terminal may echo the Ctrl-C as "^C" before the message
        lines = [line for line in pane("capture-pane -p -S -").splitlines() if line.strip()]
        if lines[-1].startswith("Pane is dead"):       # tmux's line, once it reaped the run
            assert lines[-1].startswith("Pane is dead (status 130"), lines
            lines.pop()
        assert re.fullmatch(r"(\^C)?placelint: interrupted", lines[-1]), lines
        assert not any("Traceback" in line or "KeyboardInterrupt" in line for line in lines)
        print(f"progress: {m.group(0)!r}; stopped {stopped:.2f} s after Ctrl-C, "
              f"{len(running)} processes ended")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
