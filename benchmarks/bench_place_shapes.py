"""CPU seconds of the placement and shape phases alone, best of several runs in one process.

Loads a benchmark graph once, then repeats ``place`` (with the graph's derived indexes
cleared, so each run pays for them as a fresh check does, except the edge index
``dag.graph_edges``, which transfers build anyway: it is made before the timing) and
``infer_shapes``; prints the
best process time of each and a fingerprint of their results (devices, groups, errors,
shapes), which must not change with a speed-up.

    PYTHONPATH=$PWD python benchmarks/bench_place_shapes.py benchmarks/out/tf1_train_100000.pb
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--devices", default="CPU=4")
    args = ap.parse_args(argv)

    from placelint.analyses.dag import graph_edges
    from placelint.analyses.placer import place
    from placelint.analyses.shape_inference import infer_shapes
    from placelint.loaders import discover, load_raw
    from placelint.model import model_from_raw
    from placelint.model.devices import DeviceSet
    from placelint.pipeline import gc_paused
    from placelint.settings import Settings

    settings = Settings(devices=DeviceSet.parse(args.devices))
    ref = discover([args.model])[0]
    with gc_paused():
        graph = model_from_raw(load_raw(ref, settings.load)).graph
        best = {"placement": float("inf"), "shapes": float("inf")}
        for _ in range(args.repeat):
            graph._derived = None
            graph_edges(graph)
            c0 = time.process_time()
            placement = place(graph, settings.devices)
            c1 = time.process_time()
            shapes = infer_shapes(graph)
            c2 = time.process_time()
            best["placement"] = min(best["placement"], c1 - c0)
            best["shapes"] = min(best["shapes"], c2 - c1)
    h = hashlib.sha1()
    for name in sorted(placement.device):
        h.update(f"{name}={placement.device[name]} {placement.group_of.get(name)}\n".encode())
    for e in [*placement.errors, *placement.events]:
        h.update(f"{e.kind} {e.node} {e.message}\n".encode())
    for name in sorted(graph.nodes):
        outs = shapes.output_shapes(name)
        dtypes = [shapes.dtype(name, s) for s in range(len(outs))]
        h.update(f"{name}={outs} {dtypes} {[shapes.value(name, s) for s in range(2)]}\n".encode())
    print(f"{args.model.name}: {len(graph)} nodes; CPU best of {args.repeat}: placement "
          f"{best['placement']:.3f} s, shapes {best['shapes']:.3f} s; sha1 {h.hexdigest()[:12]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
