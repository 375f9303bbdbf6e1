#!/usr/bin/env python3
"""Every phase of ``placelint check`` per graph kind and size, next to TensorFlow (not CI).

    .venv/bin/python benchmarks/bench_kinds.py --kinds tf1_train,tf2_savedmodel,towers \\
        --sizes 1e4,1e5 --repeat 3 --cli 3 --tf
    .venv/bin/python benchmarks/bench_kinds.py --profile tf1_train:1e5     # cProfile of check

The graphs come from ``realistic.py`` (cached under ``benchmarks/out/``). The measurement is
``bench_scale.py``'s: each run in its own process, phase by phase (parse, build, placement,
shapes, transfers, parallelism, rules), peak RSS and the result fingerprint; ``--cli N`` the
whole ``placelint check`` command in a fresh process; ``--tf`` TensorFlow's
``import_graph_def`` + first-run placement of the same file (for a SavedModel: its first
MetaGraph's graph, whose function library TF imports but places only when called).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import (PHASES, ROOT, best_of, load_average, print_ratios,  # noqa: E402
                         print_table, run_child, size_arg, time_cli_cpu)
from realistic import KINDS, ensure  # noqa: E402


def profile_check(path: Path, devices: int, top: int = 20) -> str:
    """cProfile of the whole ``placelint check`` command on ``path``, in a fresh process:
    the ``top`` functions by cumulative and by own time."""
    with tempfile.TemporaryDirectory(prefix="placelint-prof-") as tmp:
        stats = Path(tmp) / "check.prof"
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "placelint",
                        "check", str(path), "--no-cache", "--isolated", "--jobs", "1",
                        "--devices", f"CPU={devices}"], capture_output=True, cwd=ROOT)
        # cumulative: placelint's own functions (the CLI's wrappers above them say nothing)
        code = ("import pstats, sys\n"
                f"p = pstats.Stats({str(stats)!r})\n"
                f"p.sort_stats('cumulative').print_stats('placelint/', {top})\n"
                f"p.sort_stats('tottime').print_stats({top})\n")
        text = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    # no path of this machine in what is printed (and pasted into the README)
    for prefix in (str(ROOT) + "/", str(Path(sys.prefix)) + "/", tmp + "/"):
        text = text.replace(prefix, "")
    return re.sub(r"(?<![\w.])/(?:[^\s/:()]+/)+(?=[^\s/:()]+:\d+\()", "", text)   # stdlib, site-packages


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help=f"graph kinds, comma separated (default {','.join(KINDS)})")
    ap.add_argument("--sizes", type=size_arg, default=size_arg("1e4,1e5"),
                    help="node counts, comma separated (default 1e4,1e5)")
    ap.add_argument("--devices", type=int, default=4, help="CPU devices (default 4)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per graph; the best is shown")
    ap.add_argument("--cli", type=int, default=0, metavar="N",
                    help="also time the whole `placelint check` command, N times")
    ap.add_argument("--tf", action="store_true", help="also time TensorFlow's import + placement")
    ap.add_argument("--tf-repeat", type=int, default=1, help="TF runs per graph; the best is shown")
    ap.add_argument("--tf-timeout", type=float, default=900.0, help="seconds per TF run")
    ap.add_argument("--profile", metavar="KIND:SIZE", help="print a cProfile of `check` and stop")
    ap.add_argument("--json", type=Path, help="write every measurement to this file")
    args = ap.parse_args(argv)

    if args.profile:
        kind, size = args.profile.split(":")
        path, info = ensure(kind, int(float(size)))
        print(f"load average: {load_average()}; {kind} {info['nodes']} nodes")
        print(profile_check(path, args.devices))
        return 0

    common = ["--devices", str(args.devices)]
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)", flush=True)
    everything: dict[str, dict] = {}
    for kind in args.kinds.split(","):
        results, tf, cli, cli_cpu, loads = {}, {}, {}, {}, {}
        for n in args.sizes:
            path, info = ensure(kind, n)
            loads[n] = load_average()
            results[n] = best_of([run_child(["placelint", str(path), *common])
                                  for _ in range(args.repeat)])
            r = results[n]
            line = (r.get("error") or f"check {sum(r['seconds'][p] for p in PHASES):.2f} s, "
                    f"peak RSS {r['rss_peak_mib']:.0f} MiB, {r['fingerprint']}")
            print(f"{kind} {n:.0e} ({info['nodes']} nodes, load {loads[n]}): {line}", flush=True)
            if args.cli:
                cli[n], cli_cpu[n] = time_cli_cpu(path, f"CPU={args.devices}", args.cli)
                print(f"  whole `placelint check` command: best {min(cli[n]):.2f} s of "
                      f"{[round(t, 2) for t in cli[n]]}; CPU best {min(cli_cpu[n]):.2f} s of "
                      f"{[round(t, 2) for t in cli_cpu[n]]}", flush=True)
            if args.tf:
                runs = [run_child(["tf", str(path), *common], timeout=args.tf_timeout)
                        for _ in range(args.tf_repeat)]
                ok = [t for t in runs if "error" not in t]
                tf[n] = min(ok, key=lambda t: t["seconds"]["import_place"]) if ok else runs[0]
                t = tf[n]
                if "error" in t:
                    print(f"  tensorflow: {t['error']}", flush=True)
                else:
                    s = t["seconds"]
                    print(f"  tensorflow: parse {s['parse']:.2f} + import_graph_def "
                          f"{s['import_graph_def']:.2f} + first run {s['first_run']:.2f} = "
                          f"{s['import_place']:.2f} s, peak RSS {t['rss_peak_mib']:.0f} MiB, "
                          f"{t['nodes']} ops", flush=True)
        everything[kind] = {"placelint": results, "tensorflow": tf, "cli": cli,
                            "cli_cpu": cli_cpu, "load": loads}

    print(f"\nload average after: {load_average()}")
    for kind, e in everything.items():
        print(f"\n{kind}: seconds per phase (best of {args.repeat}); check = parse..rules; "
              f"ratio = check / TF import+place")
        print_table(e["placelint"], e["tensorflow"], False)
        if e["cli"]:
            print("whole command (fresh process), best: " + ", ".join(
                f"{n:.0e} {min(t):.2f} s" + (
                    f" (ratio {min(t) / e['tensorflow'][n]['seconds']['import_place']:.3f})"
                    if n in e["tensorflow"] and "error" not in e["tensorflow"][n] else "")
                for n, t in e["cli"].items()))
        cpu = []
        for n, r in e["placelint"].items():
            if "error" in r:
                continue
            c = sum(r["cpu"][p] for p in PHASES)
            t = e["tensorflow"].get(n, {}).get("seconds", {}).get("import_place_cpu")
            cpu.append(f"{n:.0e} check {c:.2f} s" + (f", TF {t:.2f} s, ratio {c / t:.3f}" if t else ""))
            if n in e["cli_cpu"]:
                w = min(e["cli_cpu"][n])
                cpu.append(f"{n:.0e} whole command {w:.2f} s"
                           + (f", ratio {w / t:.3f}" if t else ""))
        print("CPU seconds (process time, all threads): " + "; ".join(cpu))
        print("load average at each size: " + ", ".join(f"{n:.0e} {la}" for n, la in e["load"].items()))
        print_ratios(e["placelint"])
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
