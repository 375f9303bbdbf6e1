#!/usr/bin/env python3
"""Two checkouts of placelint, the whole ``placelint check`` command alternated (not CI).

    git worktree add ../base <commit>
    .venv/bin/python benchmarks/ab.py ../base . benchmarks/out/tf1_train_100000.pb \\
        benchmarks/out/towers_100000.pb --rounds 5

The host's speed drifts by ~10% between sittings, so a change is measured against the code
before it in one sitting, each run in a fresh process and the two checkouts taking turns
(which goes first alternates from round to round). Each run is ``python -m placelint check
GRAPH --no-cache --isolated --jobs 1 --devices DEVICES`` in a scratch directory, with the
checkout first on ``PYTHONPATH`` (the same interpreter and packages for both); its
wall seconds, user and system CPU and peak RSS (the child's own, from ``wait4``) are
printed per run, then the median of each side. The JSON output of the last round's runs of
each graph is compared: a speed-up must give the same findings byte for byte (``--no-compare``
to skip, for a change that means to change them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(checkout: Path, graph: Path, devices: str, cwd: Path,
             output: Path | None = None) -> dict:
    """One ``placelint check`` of ``graph`` by ``checkout``, run in ``cwd`` (the same for
    both sides: the report names the model relative to it): wall, user, sys seconds, peak
    RSS in KiB, exit code (``output``: write the JSON report there instead of the text)."""
    cmd = [sys.executable, "-m", "placelint", "check", str(graph.resolve()), "--no-cache",
           "--isolated", "--jobs", "1", "--devices", devices]
    if output is not None:
        cmd += ["--output-format", "json"]
    env = _env(checkout)
    with open(output or os.devnull, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
            "rss_kib": usage.ru_maxrss, "exit": proc.returncode}


def _env(checkout: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout.resolve()),
                                                      env.get("PYTHONPATH")]))
    return env


def imported_from(checkout: Path, cwd: Path) -> Path:
    """Where a run for ``checkout`` imports placelint from (its own tree, unless the
    interpreter finds another first)."""
    out = subprocess.run([sys.executable, "-c", "import placelint; print(placelint.__file__)"],
                         cwd=cwd, env=_env(checkout), capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()).resolve().parent.parent


def _line(label: str, r: dict) -> str:
    return (f"  {label:<5} {r['wall']:6.2f} s  {r['user']:6.2f} u  {r['sys']:5.2f} s  "
            f"{r['rss_kib']:>8} KiB  exit {r['exit']}")


def compare(a: Path, b: Path, graphs: list[Path], rounds: int, devices: str,
            check_output: bool = True, say=print) -> dict[str, dict[str, list[dict]]]:
    """Every run of both checkouts on each graph, alternated; returns graph -> side ->
    runs (``say``: where the per-run lines go)."""
    sides = {"A": a, "B": b}
    found: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="placelint-ab-") as tmp:
        for side, checkout in sides.items():
            if imported_from(checkout, Path(tmp)) != checkout.resolve():
                raise SystemExit(f"{side}: placelint is not imported from {checkout}")
        for graph in graphs:
            runs: dict[str, list[dict]] = {"A": [], "B": []}
            say(f"{graph}")
            for k in range(rounds):
                order = ("A", "B") if k % 2 == 0 else ("B", "A")
                for side in order:
                    out = (Path(tmp) / f"{side}.json"
                           if check_output and k == rounds - 1 else None)
                    r = run_once(sides[side], graph, devices, Path(tmp), out)
                    runs[side].append(r)
                    say(_line(side, r))
            for side in "AB":
                walls = [r["wall"] for r in runs[side]]
                say(f"  median {side}: {statistics.median(walls):.2f} s wall, "
                    f"{statistics.median(r['user'] + r['sys'] for r in runs[side]):.2f} s CPU, "
                    f"peak {max(r['rss_kib'] for r in runs[side])} KiB")
            if check_output:
                same = (Path(tmp) / "A.json").read_bytes() == (Path(tmp) / "B.json").read_bytes()
                say(f"  JSON output: {'identical' if same else 'DIFFERENT'}")
                runs["same_output"] = same      # type: ignore[assignment]
            found[str(graph)] = runs
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path, help="the checkout measured first (A), e.g. the base")
    ap.add_argument("b", type=Path, help="the other checkout (B), e.g. the change")
    ap.add_argument("graphs", type=Path, nargs="+", help="models to check")
    ap.add_argument("--rounds", type=int, default=3, help="runs per checkout and graph")
    ap.add_argument("--devices", default="CPU=4", help="--devices of every run (CPU=4)")
    ap.add_argument("--no-compare", action="store_true",
                    help="do not compare the two checkouts' JSON output")
    args = ap.parse_args(argv)
    for side in (args.a, args.b):
        if not (side / "placelint" / "__init__.py").is_file():
            ap.error(f"{side} is not a placelint checkout")
    print(f"A = {args.a}, B = {args.b}; load average "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    found = compare(args.a, args.b, args.graphs, args.rounds, args.devices,
                    not args.no_compare, say=lambda s: print(s, flush=True))
    differ = [g for g, runs in found.items() if runs.get("same_output") is False]
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
