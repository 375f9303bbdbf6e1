#!/usr/bin/env python3
"""What parsing a binary GraphDef in chunks of nodes costs and frees (not CI).

    .venv/bin/python benchmarks/chunked_parse.py benchmarks/out/tf1_train_1000000.pb [--chunk 50000]

At 10^6 nodes the end of the graph build was ``placelint check``'s peak memory: the parsed
GraphDef (~1 GB for a TF1 training graph) and the object graph were both alive
(benchmarks/README.md, "Thirteenth session"). Built chunk by chunk, only the file's bytes
and one chunk are alive: the loader does so since the fourteenth session
(``placelint/loaders/chunked.py``). This measures, each in a fresh process: a skeleton
parse that gives every node's bytes (a message declaring only ``repeated bytes node =
1``), the nodes' lengths and their offsets in the file, the parse of the file's slices of
``--chunk`` nodes as GraphDefs, and one whole parse, with the peak RSS of each way.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def _peak_mib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _skeleton_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    fd = descriptor_pb2.FileDescriptorProto(name="skeleton.proto", package="skeleton",
                                            syntax="proto3")
    msg = fd.message_type.add(name="Graph")
    msg.field.add(name="node", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                  label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("skeleton.Graph"))


def child_chunked(path: Path, chunk: int) -> dict:
    import numpy as np
    from placelint.proto import GraphDef
    data = path.read_bytes()
    skeleton = _skeleton_class()
    t0 = time.process_time()
    graph = skeleton.FromString(data)
    t1 = time.process_time()
    lengths = np.fromiter(map(len, graph.node), dtype=np.int64, count=len(graph.node))
    t2 = time.process_time()
    del graph
    # each node field: its tag (one byte), its length as a varint, its bytes
    varint = 1 + sum((lengths >= 1 << (7 * k)).astype(np.int64) for k in range(1, 5))
    ends = np.cumsum(1 + varint + lengths).tolist()
    view = memoryview(data)
    nodes = start = 0
    t3 = time.process_time()
    for last in range(chunk - 1, len(ends) + chunk - 1, chunk):
        end = ends[min(last, len(ends) - 1)]
        part = GraphDef.FromString(view[start:end])
        nodes += len(part.node)
        del part
        start = end
    t4 = time.process_time()
    return {"skeleton_parse": t1 - t0, "lengths": t2 - t1, "chunked_parse": t4 - t3,
            "nodes": nodes, "peak_mib": _peak_mib()}


def child_whole(path: Path) -> dict:
    from placelint.proto import GraphDef
    data = path.read_bytes()
    t0 = time.process_time()
    graph = GraphDef.FromString(data)
    t1 = time.process_time()
    return {"whole_parse": t1 - t0, "nodes": len(graph.node), "peak_mib": _peak_mib()}


def _child(graph: Path, chunk: int, kind: str) -> dict:
    out = subprocess.run([sys.executable, __file__, str(graph), "--chunk", str(chunk),
                          "--child", kind], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path, help="a binary GraphDef (.pb)")
    ap.add_argument("--chunk", type=int, default=50_000, help="nodes per chunk")
    ap.add_argument("--child", choices=("chunked", "whole"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        result = (child_chunked(args.graph, args.chunk) if args.child == "chunked"
                  else child_whole(args.graph))
        print(json.dumps(result))
        return 0
    chunked = _child(args.graph, args.chunk, "chunked")
    whole = _child(args.graph, args.chunk, "whole")
    assert chunked["nodes"] == whole["nodes"], (chunked, whole)
    print(f"{args.graph.name}: {whole['nodes']} nodes")
    print(f"  skeleton parse {chunked['skeleton_parse']:.3f} s, lengths {chunked['lengths']:.3f} s, "
          f"chunks of {args.chunk} parsed {chunked['chunked_parse']:.3f} s; "
          f"peak {chunked['peak_mib']} MiB (the file's bytes and one chunk)")
    print(f"  whole parse {whole['whole_parse']:.3f} s; peak {whole['peak_mib']} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
