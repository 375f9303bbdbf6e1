"""A called function's body nodes are added by ``BodyNodes.add_body``'s loop, which does
for the usual body node and input what ``add`` and ``_add_inputs`` do; anything else goes
through them, and each body node's record is looked up by the attrs' wire bytes the check
of the called bodies read (``body_keys``). Built both ways (``fast=False``: every node
through ``add``, each record from the NodeDef), random libraries give the same graph,
diagnostics and findings: body inputs naming an argument, a body node (``n``, ``n:output:0``, ``n:y:0`` of a call, ``^n``), themselves, a later node,
nothing, or an output arg the node lacks; data inputs after control ones; nested calls
(by name and through ``StatefulPartitionedCall``), calls with control inputs, recursion,
soft-placed calls, duplicate body node names, and a call whose body node names clash
with graph nodes."""

from __future__ import annotations

import random

import pytest
from tensorboard.compat.proto.config_pb2 import ConfigProto

from placelint.proto import GraphDef

from tests.test_build_top_level import _built, count_adds

FLOAT, INT32 = 1, 3
SOFT = ConfigProto(allow_soft_placement=True).SerializeToString()


def _function(gd: GraphDef, rng: random.Random, k: int, n_functions: int) -> None:
    f = gd.library.function.add()
    f.signature.name = f"f{k}"
    args = [f"a{i}" for i in range(rng.randrange(1, 4))]
    for a in args:
        f.signature.input_arg.add(name=a, type=FLOAT if rng.random() < 0.9 else INT32)
    names = [rng.choice(("n{}", "n{}", "scope/n{}", "a0")).format(i)
             for i in range(rng.randrange(1, 12))]
    made = []
    for i, name in enumerate(names):
        if i and rng.random() < 0.05:
            name = names[rng.randrange(i)]      # a duplicate name
        op = rng.choice(("Identity", "Identity", "Add", "NoOp", "Const", "MyCustomOp", "Cast")
                        + ((f"f{rng.randrange(n_functions)}", "StatefulPartitionedCall")
                           if rng.random() < 0.3 else ()))
        nd = f.node_def.add(name=name, op=op)
        if rng.random() < 0.2:
            nd.device = rng.choice(("/device:CPU:1", "bad::"))
        if op in ("Identity", "Add"):
            nd.attr["T"].type = FLOAT
        elif op == "Const":
            nd.attr["dtype"].type = FLOAT
            nd.attr["value"].tensor.dtype = FLOAT
        elif op == "Cast":
            nd.attr["SrcT"].type = FLOAT
            nd.attr["DstT"].type = INT32
        elif op == "StatefulPartitionedCall":
            callee = f"f{rng.randrange(n_functions)}"
            nd.attr["f"].func.name = rng.choice((callee, callee, "missing"))
            nd.attr["Tin"].list.type.append(FLOAT)
            nd.attr["Tout"].list.type.append(FLOAT)
            if rng.random() < 0.5:
                nd.attr["config_proto"].s = SOFT
        data = {"Identity": 1, "Add": 2, "NoOp": 0, "Const": 0, "Cast": 1,
                "StatefulPartitionedCall": 1, "MyCustomOp": rng.randrange(3)}.get(op, 1)
        outs = {"Identity": "output", "Add": "z", "Cast": "y", "Const": "output",
                "StatefulPartitionedCall": "output"}
        inputs = []
        sources = made if made and rng.random() < 0.85 else names
        for _ in range(data):
            r = rng.random()
            if r < 0.3 or not sources:
                inputs.append(rng.choice(args))
            else:
                src = rng.choice(sources)
                inputs.append(rng.choice((
                    src, f"{src}:{outs.get(op, 'output')}:0", f"{src}:output:0",
                    f"{src}:y:0", f"{src}:output:1", f"{src}:nope:0", "missing:output:0",
                    name, f"{src}:x:y")))
        controls = [f"^{rng.choice(sources or args)}" for _ in range(rng.choice((0, 0, 1, 2)))]
        if controls and inputs and rng.random() < 0.2:
            inputs.insert(rng.randrange(len(inputs)), controls.pop())  # data after control
        nd.input.extend(inputs + controls)
        made.append(name)
    f.signature.output_arg.add(name="y", type=FLOAT)
    f.ret["y"] = rng.choice((f"{made[-1]}:output:0", made[-1], args[0]))
    if rng.random() < 0.3:
        f.signature.control_output.append("c")
        f.control_ret["c"] = rng.choice(made)


def _random_graph(rng: random.Random) -> GraphDef:
    gd = GraphDef()
    n_functions = rng.randrange(1, 5)
    for k in range(n_functions):
        _function(gd, rng, k, n_functions)
    p = gd.node.add(name="p", op="Placeholder")
    p.attr["dtype"].type = FLOAT
    top = ["p"]
    for i in range(rng.randrange(1, 5)):
        name = rng.choice((f"c{i}", f"c{i}", "p"))
        if rng.random() < 0.5:
            nd = gd.node.add(name=name, op=f"f{rng.randrange(n_functions)}")
        else:
            nd = gd.node.add(name=name, op="StatefulPartitionedCall")
            nd.attr["f"].func.name = f"f{rng.randrange(n_functions)}"
            if rng.random() < 0.5:
                nd.attr["config_proto"].s = SOFT
        nd.input.append(rng.choice(top))
        if rng.random() < 0.3:
            nd.input.append(f"^{rng.choice(top)}")
        top.append(name)
        if rng.random() < 0.2:      # a graph node named like a body node
            clash = gd.node.add(name=f"{name}/n1", op="Placeholder")
            clash.attr["dtype"].type = FLOAT
        if rng.random() < 0.5:
            use = gd.node.add(name=f"use{i}", op="Identity", input=[rng.choice(top)])
            use.attr["T"].type = FLOAT
            top.append(use.name)
    return gd


@pytest.mark.parametrize("seed", [1, 2])
def test_the_loop_builds_what_add_builds(seed, monkeypatch):
    made = count_adds(monkeypatch)
    rng = random.Random(seed)
    by_loop = findings = 0
    for _ in range(300):
        gd = _random_graph(rng)
        made.clear()
        fast = _built(gd, True)
        fast_adds = len(made)
        made.clear()
        assert fast == _built(gd, False)
        by_loop += len(made) - fast_adds
        findings += len(fast[1]) > 0
    assert by_loop > 1000 and findings > 100     # (both ways are used)
