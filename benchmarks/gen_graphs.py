"""Generate large, realistic GraphDefs without TensorFlow: model-parallel towers.

Each tower is a chain of dense layers (VariableV2 weight + bias with Identity reads,
MatMul, BiasAdd, Relu) pinned to one of several devices; towers meet in an AddN every few
layers, like a model-parallel network, so placement, colocation (ref edges), transfers and
parallelism all have work to do. ``python benchmarks/gen_graphs.py N OUT.pb`` writes one.
"""

from __future__ import annotations

import sys

from placelint.proto import AttrValue, GraphDef

F32 = 1


def _attr_f32(n):
    n.attr["T"].type = F32


def _shape(dims):
    v = AttrValue()
    for d in dims:
        v.shape.dim.add(size=d)
    return v


def make_towers(target_nodes: int, towers: int = 4, devices: int = 4, width: int = 256,
                batch: int = 32, device_type: str = "CPU") -> GraphDef:
    """About ``target_nodes`` nodes: ``towers`` chains of dense layers on ``devices`` devices."""
    gd = GraphDef()
    x = gd.node.add(name="input", op="Placeholder", device=f"/device:{device_type}:0")
    x.attr["dtype"].type = F32
    x.attr["shape"].CopyFrom(_shape([batch, width]))
    per_layer = 8
    layers = max(1, target_nodes // (towers * per_layer + 1))
    heads = ["input"] * towers
    for layer in range(layers):
        for t in range(towers):
            dev = f"/device:{device_type}:{t % devices}"
            p = f"t{t}/l{layer}"
            w = gd.node.add(name=f"{p}/w", op="VariableV2", device=dev)
            w.attr["dtype"].type = F32
            w.attr["shape"].CopyFrom(_shape([width, width]))
            b = gd.node.add(name=f"{p}/b", op="VariableV2", device=dev)
            b.attr["dtype"].type = F32
            b.attr["shape"].CopyFrom(_shape([width]))
            wr = gd.node.add(name=f"{p}/w/read", op="Identity", input=[w.name], device=dev)
            _attr_f32(wr)
            br = gd.node.add(name=f"{p}/b/read", op="Identity", input=[b.name], device=dev)
            _attr_f32(br)
            mm = gd.node.add(name=f"{p}/MatMul", op="MatMul", input=[heads[t], wr.name], device=dev)
            _attr_f32(mm)
            ba = gd.node.add(name=f"{p}/BiasAdd", op="BiasAdd", input=[mm.name, br.name], device=dev)
            _attr_f32(ba)
            r = gd.node.add(name=f"{p}/Relu", op="Relu", input=[ba.name], device=dev)
            _attr_f32(r)
            sq = gd.node.add(name=f"{p}/Square", op="Square", input=[r.name], device=dev)
            _attr_f32(sq)
            heads[t] = r.name
        if layer % 4 == 3:
            s = gd.node.add(name=f"mix{layer}", op="AddN", input=list(heads),
                            device=f"/device:{device_type}:0")
            _attr_f32(s)
            s.attr["N"].i = towers
            heads = [s.name] * towers
    return gd


if __name__ == "__main__":
    n, out = int(sys.argv[1]), sys.argv[2]
    with open(out, "wb") as fh:
        fh.write(make_towers(n).SerializeToString())
