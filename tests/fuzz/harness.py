"""Run one fuzz input through the whole pipeline and say what is wrong with the result.

Passing means: only documented diagnostics (registered rule codes), no PL009 internal
error, no exception out of ``analyze``, messages of bounded length, within a time limit.
``FuzzTimeout`` is a ``BaseException`` so that no ``except Exception`` in placelint can
swallow it: a hang surfaces as a failure, not as a PL009.
"""

from __future__ import annotations

import signal
import tempfile
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

from placelint.checks import all_rules
from placelint.loaders import discover
from placelint.pipeline import analyze
from placelint.settings import Settings

KNOWN_CODES = frozenset(r.code for r in all_rules())
MAX_MESSAGE = 2000


class FuzzTimeout(BaseException):
    pass


@contextmanager
def time_limit(seconds: float):
    def fire(signum, frame):
        raise FuzzTimeout(f"no result after {seconds} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def problems(report) -> list[str]:
    out = []
    for d in report.diagnostics:
        if d.code not in KNOWN_CODES:
            out.append(f"undocumented code {d.code}: {d.message[:200]}")
        elif d.code == "PL009":
            out.append(f"PL009 {d.message[:500]}")
        if len(d.message) > MAX_MESSAGE:
            out.append(f"{d.code} message of {len(d.message)} characters")
    return out


def run_bytes(name: str, data: bytes, settings: Settings | None = None,
              seconds: float = 30.0) -> list[str]:
    """Write ``data`` as ``name`` (``saved_model.pb*`` in its own directory) and analyse it."""
    with tempfile.TemporaryDirectory(prefix="placelint-fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        return run_path(path, settings, seconds)


def run_path(path: Path, settings: Settings | None = None, seconds: float = 30.0) -> list[str]:
    settings = settings or Settings()
    start = time.monotonic()
    try:
        with time_limit(seconds):
            found = []
            for ref in discover([path]):
                found += problems(analyze(ref, settings))
    except FuzzTimeout as exc:
        return [f"hang: {exc}"]
    except Exception:   # noqa: BLE001 - analyze must never raise
        return ["exception out of analyze: " + traceback.format_exc(limit=-3)]
    if time.monotonic() - start > seconds:
        found.append(f"slow: {time.monotonic() - start:.1f} s")
    return found
