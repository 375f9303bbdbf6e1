#!/usr/bin/env python3
"""Write the Keras application models of tests/tfmodels.py into a directory (needs TensorFlow).

    TF_CPP_MIN_LOG_LEVEL=2 python tools/make_keras_models.py OUT_DIR
    python tools/make_keras_models.py OUT_DIR --models ResNet50 MobileNetV2 --format frozen

For each model: OUT_DIR/<name>/ (SavedModel with debug info) and/or OUT_DIR/<name>.pb (frozen
GraphDef). Prints the build time of each. The output is large (tens of MB per model): it is for
benchmarks and manual checks, never committed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parent.parent


def _tfmodels():
    spec = importlib.util.spec_from_file_location("_tfmodels", ROOT / "tests" / "tfmodels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    tfmodels = _tfmodels()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--models", nargs="+", default=tfmodels.app_names(), metavar="NAME",
                    help=f"default: all of {', '.join(tfmodels.app_names())}")
    ap.add_argument("--format", choices=("savedmodel", "frozen", "both"), default="both")
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for name in args.models:
        if args.format in ("savedmodel", "both"):
            jobs.append((name, "savedmodel", tfmodels.keras_app_savedmodel, args.out_dir / name))
        if args.format in ("frozen", "both"):
            jobs.append((name, "frozen", tfmodels.keras_app_frozen_graphdef,
                         args.out_dir / f"{name}.pb"))
    for name, kind, build, target in jobs:
        t0 = time.perf_counter()
        try:
            out = build(name, target)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        dt = time.perf_counter() - t0
        print(f"{name:13s} {kind:10s} {dt:7.1f} s {_size(out) / 1e6:8.1f} MB  {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
