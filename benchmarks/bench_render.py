#!/usr/bin/env python3
"""Render-time benchmark of ``placelint graph`` (not run in CI).

    python benchmarks/bench_render.py --models DIR      # DIR from tools/make_keras_models.py
    python benchmarks/bench_render.py --build-models     # builds them first (needs TF, ~3 min)

Renders every sample and each Keras application model (SavedModel and frozen GraphDef) to
SVG through the real command line, one process each, and reports wall time, CPU time (the
command plus ``dot``), the boxes drawn and whether the SVG parses. Then the stress cases
that make plain ``dot`` slow, through the API: a flat 10k-op graph and a 1k-op graph with
an ``init`` hub of 320 control edges. Exit status 1 when any render takes over ``--limit``
seconds (default 10) or writes an invalid SVG.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ["alexnet_cpu1_assign.pbtxt", "cpu_vars_gpu_ops.pbtxt", "py_function_branches.pbtxt",
           "towers_gpu.pb", "while_loop_v1.meta", "keras_cnn"]
KERAS = ["InceptionV3", "ResNet50", "MobileNetV2", "NASNetMobile", "DenseNet121"]
DEVICES = "CPU:0,CPU:1,GPU:0,GPU:1,GPU:2,GPU:3"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(mod)
    return mod


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def render_cli(model: Path, out: Path, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "placelint", "graph", str(model), "-o", str(out),
           "--devices", DEVICES, *extra]
    cpu0, t0 = _children_cpu(), time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    ok = proc.returncode == 0
    try:
        ok = ok and ET.parse(out).getroot().tag.endswith("svg")
    except (ET.ParseError, OSError):
        ok = False
    m = re.search(r"(\d+) boxes for (\d+) of (\d+) nodes.*\((analysis [\d.]+ s), (.*)\)", proc.stdout)
    return {"wall": wall, "cpu": cpu, "ok": ok,
            "info": f"{m.group(1)} boxes, {m.group(3)} nodes, {m.group(4)}, {m.group(5)}" if m
            else (proc.stdout + proc.stderr).strip()[-200:]}


def stress_cases() -> list[tuple[str, float, str]]:
    """Render the synthetic graphs that make plain dot slow, via the API."""
    from placelint.render.dot import to_dot
    from placelint.render.run_dot import render
    from placelint.render.view import ViewOptions, build_view
    tests = _load(ROOT / "tests" / "test_render.py", "test_render_for_bench")
    out = []
    for name, graph in (("flat 10k ops", tests.synthetic_graph(10_000)),
                        ("10k ops in scopes", tests.synthetic_graph(10_000, scopes=40)),
                        ("1k ops + init hub (320 control edges)",
                         tests.synthetic_graph(1000, scopes=10, hub_controls=320))):
        t0 = time.monotonic()
        view = build_view(tests.inputs_for(graph), ViewOptions())
        res = render(to_dot(view), "svg", timeout=60)
        out.append((name, time.monotonic() - t0,
                    f"{len(view.units)} boxes, {res.layout} {res.seconds:.1f} s"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, help="directory written by tools/make_keras_models.py")
    ap.add_argument("--build-models", action="store_true", help="build the Keras models first")
    ap.add_argument("--limit", type=float, default=10.0, help="seconds allowed per render")
    ap.add_argument("--out", type=Path, help="keep the SVGs here (default: a temp dir)")
    ap.add_argument("--no-stress", action="store_true", help="skip the synthetic stress cases")
    args = ap.parse_args(argv)

    tmp = tempfile.TemporaryDirectory(prefix="placelint-bench-")
    out_dir = args.out or Path(tmp.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    models_dir = args.models
    if args.build_models:
        models_dir = models_dir or Path(tmp.name) / "models"
        subprocess.run([sys.executable, str(ROOT / "tools" / "make_keras_models.py"),
                        str(models_dir)], check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))

    cases = [(f"sample {s}", ROOT / "samples" / s) for s in SAMPLES]
    if models_dir:
        for name in KERAS:
            for label, path in ((f"{name} SavedModel", models_dir / name),
                                (f"{name} frozen", models_dir / f"{name}.pb")):
                if path.exists():
                    cases.append((label, path))
                else:
                    print(f"missing {path} (skipped)")
    failed = 0
    print(f"{'model':36s} {'wall s':>7s} {'cpu s':>6s}  result")
    for label, path in cases:
        r = render_cli(path, out_dir / (re.sub(r"\W+", "_", label) + ".svg"), [])
        bad = not r["ok"] or r["wall"] > args.limit
        failed += bad
        print(f"{label:36s} {r['wall']:7.2f} {r['cpu']:6.2f}  {'FAIL ' if bad else ''}{r['info']}",
              flush=True)
    if not args.no_stress:
        for label, seconds, info in stress_cases():
            bad = seconds > args.limit
            failed += bad
            print(f"{label:36s} {seconds:7.2f} {'':6s}  {'FAIL ' if bad else ''}{info}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
