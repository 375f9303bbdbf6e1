"""Run Graphviz on DOT source with a time limit, falling back to cheaper layouts.

``dot`` can take minutes on large or hub-heavy graphs (and the Python ``graphviz`` package
has no timeout), so the source is piped to the real ``dot`` binary under
``subprocess.run(timeout=...)``. The time budget is shared by up to three layouts, each
tried only when the one before ran out of time:

1. ``dot``: the full hierarchical layout;
2. ``dot`` with crossing minimisation and network simplex cut short and straight edges;
3. ``sfdp`` (``dot -Ksfdp``): force-directed, ignores clusters, fast on large graphs.

The result says which layout was used, so the caller can tell the user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field

INSTALL_HINT = (
    "Graphviz's `dot` was not found on PATH. Install Graphviz: `sudo apt-get install graphviz` "
    "(Debian/Ubuntu), `sudo dnf install graphviz` (Fedora), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`; or set PLACELINT_DOT to the dot binary. "
    "Writing DOT source (-o graph.dot) needs no Graphviz."
)

#: (name, engine, extra arguments, share of the time budget)
LAYOUTS: tuple[tuple[str, str, tuple[str, ...], float], ...] = (
    ("dot", "dot", (), 0.5),
    ("dot (fast)", "dot", ("-Gmclimit=0.1", "-Gnslimit=0.2", "-Gnslimit1=0.2",
                           "-Gsearchsize=10", "-Gremincross=false", "-Gsplines=line"), 0.3),
    ("sfdp", "sfdp", ("-Goverlap=prism", "-Gsplines=false"), 0.2),
)

FORMATS = ("svg", "png", "pdf")


class DotNotFound(RuntimeError):
    def __init__(self, message: str = INSTALL_HINT):
        super().__init__(message)


class DotFailed(RuntimeError):
    """Graphviz rejected the source, or every layout ran out of time."""


@dataclass
class Attempt:
    layout: str
    seconds: float
    outcome: str                     #: ok, timeout, or an error text


@dataclass
class RenderResult:
    data: bytes
    layout: str                      #: the layout that produced ``data``
    attempts: list[Attempt] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   #: Graphviz's own warnings

    @property
    def fallback(self) -> bool:
        return self.layout != LAYOUTS[0][0]

    @property
    def seconds(self) -> float:
        return sum(a.seconds for a in self.attempts)


def find_dot() -> str | None:
    """The ``dot`` binary: ``$PLACELINT_DOT`` if set, else ``dot`` on PATH."""
    override = os.environ.get("PLACELINT_DOT")
    if override:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    return shutil.which("dot")


def render(source: str, fmt: str = "svg", timeout: float = 30.0,
           layouts=LAYOUTS, dot: str | None = None) -> RenderResult:
    """Lay out and render ``source`` to ``fmt`` bytes within about ``timeout`` seconds."""
    if fmt not in FORMATS:
        raise ValueError(f"unsupported format {fmt!r} (expected one of {', '.join(FORMATS)})")
    dot = dot or find_dot()
    if dot is None:
        raise DotNotFound()
    data = source.encode("utf-8")
    attempts: list[Attempt] = []
    deadline = time.monotonic() + timeout
    for i, (name, engine, extra, share) in enumerate(layouts):
        left = deadline - time.monotonic()
        last = i == len(layouts) - 1
        limit = left if last else min(left, timeout * share)
        if limit <= 0.05:
            break
        cmd = [dot, f"-K{engine}", f"-T{fmt}", *extra]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, input=data, capture_output=True, timeout=limit)
        except subprocess.TimeoutExpired:
            attempts.append(Attempt(name, time.monotonic() - t0, "timeout"))
            continue
        except OSError as exc:
            raise DotNotFound(f"cannot run {dot}: {exc}. {INSTALL_HINT}") from None
        seconds = time.monotonic() - t0
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        if proc.returncode != 0 or not proc.stdout:
            attempts.append(Attempt(name, seconds, f"error: {stderr or proc.returncode}"))
            if "syntax error" in stderr:
                break                 # the source is wrong; another layout will not help
            continue
        attempts.append(Attempt(name, seconds, "ok"))
        warnings = [line for line in stderr.splitlines() if line.strip()]
        return RenderResult(proc.stdout, name, attempts, warnings)
    tried = "; ".join(f"{a.layout}: {a.outcome} after {a.seconds:.1f} s" for a in attempts)
    raise DotFailed(f"Graphviz could not draw the graph within {timeout:g} s ({tried}). "
                    "Draw less: a smaller --max-nodes, --focus NODE --radius K, or write .dot "
                    "and render it without a time limit.")
