#!/usr/bin/env python3
"""What the top-level graph costs to build as arrays in compiled code (not CI).

    .venv/bin/python benchmarks/native_build_floor.py benchmarks/out/tf1_train_100000.pb [--repeat 3]

Issue 20's open targets wait on a decision between an array core in Python and a compiled
core (the ``python-native`` kind of machine). ``array_build_floor.py`` measures the Python
floor of an array build; this measures the same build in C (``native_floor.c``, compiled
here with the interpreter's headers into a temporary directory, never shipped): the same
arrays from the same bytes, checked equal to the Python floor's, read straight from the
wire format instead of through protobuf's messages. CPU seconds, best of ``--repeat``:

* **native**: the arrays alone (ops and devices as codes, inputs as source and slot);
* **native+names**: the same with every node's name made a Python ``str`` too;
* **python floor**: ``array_build_floor.array_build`` (protobuf parse, fields, codes, edges);
* **placelint build**: ``model_from_raw`` of the file, which does far more (attrs
  records, typing, validation, ``Node``/``Edge`` objects).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import array_build_floor  # noqa: E402

SOURCE = HERE / "native_floor.c"


def compile_native(directory: Path):
    """``native_floor.c`` compiled into ``directory`` and imported (a C compiler on PATH:
    ``cc``, or ``gcc``)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("native_build_floor: no C compiler (cc or gcc) on PATH")
    target = directory / ("_native_floor" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-Wall",
                    f"-I{sysconfig.get_paths()['include']}", str(SOURCE), "-o", str(target)],
                   check=True)
    spec = importlib.util.spec_from_file_location("_native_floor", target)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def native_arrays(module, data: bytes, names: bool = False) -> dict:
    """``module.build(data)``'s arrays as numpy arrays, keyed as ``array_build``'s."""
    built = module.build(data, names)
    return {**built, "op": np.frombuffer(built["op"], np.int32),
            "device": np.frombuffer(built["device"], np.int32),
            "src": np.frombuffer(built["src"], np.int64),
            "dst": np.frombuffer(built["dst"], np.int64),
            "slot": np.frombuffer(built["slot"], np.int64)}


def same_graph(native: dict, floor: dict) -> bool:
    """The native build's arrays are the Python floor's (``native`` built with names)."""
    return (native["names"] == floor["names"] and native["ops"] == floor["ops"]
            and native["devices"] == floor["devices"]
            and all(np.array_equal(native[k], floor[k])
                    for k in ("op", "device", "src", "dst", "slot")))


def best_cpu(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path, help="a binary GraphDef (.pb)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = args.graph.read_bytes()
    gc.disable()
    with tempfile.TemporaryDirectory() as tmp:
        module = compile_native(Path(tmp))
        floor = array_build_floor.array_build(data)
        if not same_graph(native_arrays(module, data, names=True), floor):
            raise SystemExit("native_build_floor: the native arrays differ from the Python floor's")
        nodes, inputs = len(floor["names"]), len(floor["src"])
        del floor
        native = best_cpu(lambda: module.build(data), args.repeat)
        with_names = best_cpu(lambda: module.build(data, True), args.repeat)
        python = best_cpu(lambda: array_build_floor.array_build(data), args.repeat)
        placelint = min(array_build_floor.placelint_build(args.graph)
                        for _ in range(args.repeat))
    print(f"{args.graph.name}: {nodes} nodes, {inputs} inputs; CPU seconds, best of "
          f"{args.repeat}")
    print(f"  native {native:.3f}  native+names {with_names:.3f}  python floor {python:.3f}  "
          f"placelint build {placelint:.3f}")


if __name__ == "__main__":
    main()
