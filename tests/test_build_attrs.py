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


def test_nodes_differing_in_class_share_the_other_values_and_their_typing():
    """``_class`` (colocation) is set apart: the rest of the attrs is one dict of values
    per distinct rest, typed once; each ``_class`` value is one object. A string attr
    whose bytes hold a ``_class`` entry is not taken for one."""
    gd = GraphDef()
    gd.node.add(name="x", op="Placeholder").attr["dtype"].type = 1
    fake = AttrValue()
    fake.list.s.append(b"loc:@x")
    fake_entry = b"\n\x06_class\x12" + bytes([len(fake.SerializeToString())]) + \
        fake.SerializeToString()
    for name, cls in [("i1", b"loc:@x"), ("i2", b"loc:@y"), ("i3", b"loc:@x"), ("i4", None)]:
        nd = gd.node.add(name=name, op="Identity", input=["x"])
        nd.attr["T"].type = 1
        if cls is not None:
            nd.attr["_class"].list.s.append(cls)
    s = gd.node.add(name="s", op="Const")
    s.attr["dtype"].type = 7
    s.attr["value"].tensor.dtype = 7
    s.attr["value"].tensor.string_val.append(b"*" + bytes([len(fake_entry)]) + fake_entry)
    g = build_graph(gd).graph
    i1, i2, i3, i4 = (g.nodes[n] for n in ("i1", "i2", "i3", "i4"))
    assert i1.attrs["T"] is i2.attrs["T"] is i4.attrs["T"]
    assert i1.attrs["_class"] is i3.attrs["_class"]
    assert list(i2.attrs["_class"].list.s) == [b"loc:@y"]
    assert "_class" not in i4.attrs
    assert i1.op_signature is i2.op_signature is i4.op_signature
    assert sorted(g.nodes["s"].attrs) == ["dtype", "value"]
    assert g.nodes["s"].attrs["value"] == s.attr["value"]
