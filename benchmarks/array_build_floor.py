#!/usr/bin/env python3
"""What the top-level graph costs to build as arrays rather than objects (not CI).

    .venv/bin/python benchmarks/array_build_floor.py benchmarks/out/tf1_train_100000.pb [--repeat 3]

The array-based core of the performance issue would hold the graph as integer arrays
built from the parsed protobuf, with no ``Node``/``Edge`` object per node and edge. This
measures the floor of such a build on a binary GraphDef, in the way placelint parses it
(``proto_lite``: attrs left as bytes): the parse, reading each node's name, op, device
and inputs (the protobuf fields, one Python string each), the names' positions with ops
and devices as integer codes, and each input as (source position, output slot) arrays
(CSR by destination). Nothing else: no attrs keys or records, no typing, no import-time
validation, no function expansion, which the real build does besides; so the figure is a
lower bound for an array build, to set against ``placelint``'s build of the same file
(printed too: CPU seconds of ``model_from_raw``, garbage collection paused).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def array_build(data: bytes) -> dict:
    """The graph of binary GraphDef ``data`` as arrays: ``names`` (list), ``op``/``device``
    (int32 codes into ``ops``/``devices``), ``dst``/``src``/``slot`` per input in node
    order (src -1: not a node of the graph; slot -1: a control input), and the CPU seconds
    of each step."""
    from placelint.proto_lite import GraphDefLite

    clock = time.process_time
    t0 = clock()
    graph = GraphDefLite.FromString(data)
    t1 = clock()
    names, ops, devices, inputs = [], [], [], []
    for nd in graph.node:
        names.append(nd.name)
        ops.append(nd.op)
        devices.append(nd.device)
        inputs.append(nd.input[:])
    t2 = clock()
    position = dict(zip(names, range(len(names))))
    op_table: dict[str, int] = {}
    device_table: dict[str, int] = {}
    op = np.fromiter((op_table.setdefault(o, len(op_table)) for o in ops), np.int32, len(ops))
    device = np.fromiter((device_table.setdefault(d, len(device_table)) for d in devices),
                         np.int32, len(devices))
    t3 = clock()
    counts = np.fromiter(map(len, inputs), np.int64, len(inputs))
    flat = [ref for refs in inputs for ref in refs]
    src = np.empty(len(flat), np.int64)
    slot = np.empty(len(flat), np.int64)
    get = position.get
    for k, ref in enumerate(flat):
        if ref[:1] == "^":
            src[k], slot[k] = get(ref[1:], -1), -1
        elif ":" in ref:
            name, _, index = ref.rpartition(":")
            src[k] = get(name, -1)
            slot[k] = int(index) if index.isdigit() and index.isascii() else -1
        else:
            src[k], slot[k] = get(ref, -1), 0
    dst = np.repeat(np.arange(len(inputs), dtype=np.int64), counts)
    t4 = clock()
    return {"names": names, "op": op, "ops": list(op_table), "device": device,
            "devices": list(device_table), "dst": dst, "src": src, "slot": slot,
            "seconds": {"parse": t1 - t0, "fields": t2 - t1, "codes": t3 - t2,
                        "edges": t4 - t3, "total": t4 - t0}}


def placelint_build(path: Path) -> float:
    """CPU seconds of placelint's own build (``model_from_raw``) of the file."""
    from placelint.loaders import discover, load_raw
    from placelint.model import model_from_raw
    from placelint.settings import Settings

    raw = load_raw(discover([path])[0], Settings().load)
    start = time.process_time()
    model_from_raw(raw)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path, help="a binary GraphDef (.pb)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = args.graph.read_bytes()
    gc.disable()
    for _ in range(args.repeat):
        built = array_build(data)
        s = built["seconds"]
        print(f"arrays: parse {s['parse']:.3f} fields {s['fields']:.3f} codes {s['codes']:.3f} "
              f"edges {s['edges']:.3f} total {s['total']:.3f} s, without the parse "
              f"{s['total'] - s['parse']:.3f} s ({len(built['names'])} nodes, "
              f"{len(built['src'])} inputs)")
        del built
    for _ in range(args.repeat):
        print(f"placelint build: {placelint_build(args.graph):.3f} s")


if __name__ == "__main__":
    main()
