"""Colocation groups as the placer reports them: the members a group's error names and
``PlacementResult.members`` (both read from an index of the groups, built once)."""

from placelint.analyses.placer import place
from placelint.analyses.placer_events import PlacerEventKind
from placelint.model.devices import DeviceSet
from placelint.proto import AttrValue

from graphdefs import FLOAT, Shape, Type, graph, op


def _with(group: str, name: str, device: str = ""):
    """A NoOp colocated with ``group`` by a ``_class`` attr."""
    nd = op(name, "NoOp", device=device)
    nd.attr["_class"].CopyFrom(AttrValue(list=AttrValue.ListValue(s=[f"loc:@{group}".encode()])))
    return nd


def _variable(name: str, device: str):
    return op(name, "VariableV2", device=device, shape=Shape((2,)), dtype=Type(FLOAT))


def test_each_failing_group_names_its_own_members_in_graph_order() -> None:
    g = graph(_with("v", "a1"), _with("w", "b1"), _with("v", "a2"), op("free", "NoOp"),
              _variable("v", "/device:CPU:3"), _with("w", "b2"), _variable("w", "/device:CPU:5"))
    result = place(g, DeviceSet.parse("CPU=2"))
    by_node = {e.node: e for e in result.errors}
    assert by_node["a1"].kind is PlacerEventKind.COLOCATION
    assert by_node["a1"].related == ["a2", "v"]
    assert by_node["b1"].kind is PlacerEventKind.COLOCATION
    assert by_node["b1"].related == ["b2", "w"]
    assert "incompatible device '/device:CPU:3'" in by_node["a1"].message
    assert result.members("a2") == ["a1", "a2", "v"]
    assert result.members("w") == ["b1", "b2", "w"]
    assert result.members("free") == ["free"]
