"""The builder copies each node's attrs out of the parsed GraphDef, one copy per distinct
set of attrs: the graph holds no part of the GraphDef (which is then freed), and the
copies equal the NodeDefs' attrs whatever the node's other fields (their wire size is
what the copy skips)."""

from __future__ import annotations

from placelint.model.build import build_graph
from placelint.proto import AttrValue, GraphDef


def _graph_def() -> GraphDef:
    gd = GraphDef()
    a = gd.node.add(name="a", op="Placeholder")
    a.attr["dtype"].type = 1
    a.attr["shape"].shape.dim.add(size=3)
    b = gd.node.add(name="b" * 200, op="Identity", input=["a"], device="/device:CPU:0")
    b.attr["T"].type = 1
    c = gd.node.add(name="c_\u00e9t\u00e9", op="Identity", input=["a", "^" + "b" * 200])
    c.attr["T"].type = 1
    d = gd.node.add(name="d", op="Const", device="/job:w/replica:0/task:0/device:CPU:0")
    d.attr["dtype"].type = 1
    d.attr["value"].tensor.dtype = 1
    d.attr["value"].tensor.float_val.extend([1.0] * 2000)     # a large value
    d.attr["_class"].list.s.append(b"loc:@a")
    gd.node.add(name="e", op="NoOp", input=["^d"])
    return gd


def test_attrs_equal_the_nodedefs_and_equal_attrs_share_one_copy():
    gd = _graph_def()
    g = build_graph(gd).graph
    for nd in gd.node:
        attrs = g.nodes[nd.name].attrs
        assert sorted(attrs) == sorted(nd.attr)
        for key in nd.attr:
            assert attrs[key] == nd.attr[key]
    assert g.nodes["b" * 200].attrs is g.nodes["c_\u00e9t\u00e9"].attrs
    assert g.nodes["b" * 200].attrs["T"] == AttrValue(type=1)
    assert len(g.nodes["d"].attrs["value"].tensor.float_val) == 2000
    assert len(g.nodes["e"].attrs) == 0


def test_the_attrs_are_copies():
    """A change to the GraphDef after the build leaves the graph as it was (the attrs are
    no view into the GraphDef's message, which would keep all of it alive)."""
    gd = _graph_def()
    g = build_graph(gd).graph
    gd.node[0].attr["dtype"].type = 2
    gd.node[0].attr["shape"].shape.dim[0].size = 5
    assert g.nodes["a"].attrs["dtype"].type == 1
    assert [d.size for d in g.nodes["a"].attrs["shape"].shape.dim] == [3]
