"""PL203 finds every device pair's ping-pong: one source shared by several devices' paths,
and paths behind many parameter-server round trips, are reported."""

from __future__ import annotations

from google.protobuf import text_format

from placelint.api import place_graphdef
from placelint.proto import GraphDef

F32 = 'attr { key: "T" value { type: DT_FLOAT } }'


def _pl203(gd: GraphDef, devices: str):
    return [d for d in place_graphdef(gd, devices=devices).diagnostics if d.code == "PL203"]


def test_one_source_and_target_give_a_finding_per_device():
    """Data-parallel towers: the labels on CPU:0 go to each GPU's loss and every loss comes
    back to one sum on CPU:0. Each GPU's round trip is two copies of its own: one finding per
    device pair, whatever nodes the paths share on CPU:0."""
    towers = "\n".join(
        f'node {{ name: "t{i}/loss" op: "Relu" input: "labels" device: "/device:GPU:{i}" {F32} }}'
        for i in range(3))
    gd = text_format.Parse(f"""
node {{ name: "labels" op: "Placeholder" device: "/device:CPU:0" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ dim {{ size: 8 }} }} }} }} }}
{towers}
node {{ name: "total" op: "AddN" input: "t0/loss" input: "t1/loss" input: "t2/loss" device: "/device:CPU:0" {F32} attr {{ key: "N" value {{ i: 3 }} }} }}
""", GraphDef())
    found = _pl203(gd, "CPU:0,GPU:0,GPU:1,GPU:2")
    assert sorted(d.node for d in found) == ["t0/loss", "t1/loss", "t2/loss"]
    assert all("labels" in d.related_nodes and "total" in d.related_nodes for d in found)
    assert sorted(d.message.split(" in scope")[0] for d in found) == [
        f"data goes CPU:0 -> GPU:{i} -> CPU:0" for i in range(3)]


def test_round_trips_do_not_use_up_the_paths_looked_for():
    """Thirty variables read on the PS and updated from the worker (round trips by design,
    not reported) are met before a real ping-pong of the same device pair: it is still found
    (the bound on paths per pair counts reported paths only)."""
    variables = []
    for i in range(30):
        variables.append(f"""
node {{ name: "w{i}" op: "VarHandleOp" device: "/job:ps/task:0" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ dim {{ size: 4 }} }} }} }} attr {{ key: "container" value {{ s: "" }} }} attr {{ key: "shared_name" value {{ s: "w{i}" }} }} }}
node {{ name: "read{i}" op: "ReadVariableOp" input: "w{i}" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}
node {{ name: "grad{i}" op: "Relu" input: "read{i}" device: "/job:worker/task:0" {F32} }}
node {{ name: "update{i}" op: "AssignSubVariableOp" input: "w{i}" input: "grad{i}" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} }}""")
    gd = text_format.Parse(f"""
node {{ name: "x" op: "Placeholder" device: "/job:ps/task:0" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ dim {{ size: 4 }} }} }} }} }}
node {{ name: "y" op: "Relu" input: "x" device: "/job:worker/task:0" {F32} }}
node {{ name: "z" op: "Tanh" input: "y" device: "/job:ps/task:0" {F32} }}
""" + "\n".join(variables), GraphDef())
    found = _pl203(gd, "/job:ps/task:0/device:CPU:0,/job:worker/task:0/device:CPU:0")
    assert [d.node for d in found] == ["y"]
    assert set(found[0].related_nodes) == {"x", "z"}
    assert "(1 path;" in found[0].message


def test_the_count_of_paths_is_every_path():
    """Twenty-five separate round trips CPU:0 -> GPU:0 -> CPU:0 (fewer than MAX_PATHS): the
    finding counts them all, exactly, and lists every entry node."""
    trips = "\n".join(f"""
node {{ name: "x{i}" op: "Placeholder" device: "/device:CPU:0" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ dim {{ size: 4 }} }} }} }} }}
node {{ name: "y{i}" op: "Relu" input: "x{i}" device: "/device:GPU:0" {F32} }}
node {{ name: "z{i}" op: "Tanh" input: "y{i}" device: "/device:CPU:0" {F32} }}""" for i in range(25))
    found = _pl203(text_format.Parse(trips, GraphDef()), "CPU:0,GPU:0")
    assert len(found) == 1
    assert "(25 paths;" in found[0].message
    assert sorted(found[0].nodes) == sorted(f"y{i}" for i in range(25))


def test_a_pair_with_more_paths_than_looked_for_says_at_least():
    """The walk of a device pair stops at MAX_PATHS paths (its cost at 10^6 nodes): the
    finding then counts them as a lower bound."""
    from placelint.checks.pl203_device_ping_pong import MAX_PATHS

    n = MAX_PATHS + 10
    trips = "\n".join(f"""
node {{ name: "x{i}" op: "Placeholder" device: "/device:CPU:0" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ dim {{ size: 4 }} }} }} }} }}
node {{ name: "y{i}" op: "Relu" input: "x{i}" device: "/device:GPU:0" {F32} }}
node {{ name: "z{i}" op: "Tanh" input: "y{i}" device: "/device:CPU:0" {F32} }}""" for i in range(n))
    (found,) = _pl203(text_format.Parse(trips, GraphDef()), "CPU:0,GPU:0")
    assert f"(at least {MAX_PATHS} paths;" in found.message
    assert len(found.nodes) == MAX_PATHS
