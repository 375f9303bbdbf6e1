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


def test_group_of_is_a_mapping_of_the_grouped_nodes_to_their_roots() -> None:
    g = graph(_with("v", "a1"), _with("v", "a2"), op("free", "NoOp"), _variable("v", ""))
    result = place(g, DeviceSet.parse("CPU=2"))
    # a2 joins a1's group first (equal ranks: a2 becomes the root), then v joins it
    assert dict(result.group_of) == {"a1": "a2", "a2": "a2", "v": "a2"}
    assert list(result.group_of) == ["a1", "a2", "v"]       # processing order
    assert len(result.group_of) == 3
    assert result.group_of.get("free", "free") == "free" and "free" not in result.group_of
    assert result.group_of["v"] == "a2" and result.group_of.get("nowhere") is None
    assert result.members("free") == ["free"]
    assert result.members("v") == ["a1", "a2", "v"]


def test_ref_edges_follow_processing_order_when_the_graph_lists_consumers_first() -> None:
    from placelint.analyses.colocation_joins import ref_edge_arrays
    from placelint.analyses.processing_order import ordered

    init = op("init", "Const", dtype=Type(FLOAT), value=AttrValue(tensor={"dtype": FLOAT}))
    # graph order lists set_v first; TF processes w, set_w before v, set_v
    g = graph(op("set_v", "Assign", ["v", "init"]), op("set_w", "Assign", ["w", "init"]),
              init, _variable("w", "/device:CPU:1"), _variable("v", "/device:CPU:0"))
    order, idx = ordered(g)
    assert [n.name for n in order] != list(g.nodes)     # (the case under test)
    expected = [(idx[e.src], idx[n.name], False) for n in order for e in n.in_edges
                if e.ref and e.src_slot >= 0]
    s_at, d_at, body = ref_edge_arrays(g, set())
    assert list(zip(s_at.tolist(), d_at.tolist(), body.tolist())) == expected
    assert [(order[s].name, order[d].name) for s, d, _ in expected] == [("w", "set_w"),
                                                                        ("v", "set_v")]
    result = place(g, DeviceSet.parse("CPU=2"))
    assert result.device["set_w"] == result.device["w"] == "/job:localhost/replica:0/task:0/device:CPU:1"
    assert result.device["set_v"] == result.device["v"] == "/job:localhost/replica:0/task:0/device:CPU:0"


def test_processing_order_takes_the_first_ready_node_of_the_graphdef() -> None:
    from placelint.analyses.processing_order import ordered

    # b waits for a, listed after it; the loop's Merge waits for x alone (its back edge
    # from nx aside), listed last
    g = graph(op("b", "NoOp", ["^a"]),
              op("c", "NoOp"), op("m", "Merge", ["x", "nx"], N=2), op("nx", "NextIteration", ["m"]),
              op("a", "NoOp"), op("x", "Const", dtype=Type(FLOAT),
                                  value=AttrValue(tensor={"dtype": FLOAT})))
    order, idx = ordered(g)
    assert [n.name for n in order] == ["c", "a", "b", "x", "m", "nx"]
    assert idx == {"c": 0, "a": 1, "b": 2, "x": 3, "m": 4, "nx": 5}


def test_class_names_read_off_the_wire_bytes_as_the_message_gives_them() -> None:
    """``_class_names`` reads the usual ``_class`` value (short strings only) off its bytes
    and any other through the message: both ways give the message's ``loc:@`` entries."""
    from placelint.analyses.colocation_joins import _class_names

    def by_message(value):
        return tuple(s[5:].decode("utf-8", "replace") for s in value.list.s
                     if s[:5] == b"loc:@")

    long_name = "scope/" * 30 + "v"         # (over 127 bytes: a two-byte length)
    cases = [
        AttrValue(list=AttrValue.ListValue(s=[b"loc:@v"])),
        AttrValue(list=AttrValue.ListValue(s=[b"loc:@a/b", b"other", b"loc:@c", b"loc:@"])),
        AttrValue(list=AttrValue.ListValue(s=[f"loc:@{long_name}".encode(), b"loc:@w"])),
        AttrValue(list=AttrValue.ListValue(s=[b"loc:@x"] * 40)),    # (over 129 bytes)
        AttrValue(list=AttrValue.ListValue(s=[b"loc:@v"], i=[3])),
        AttrValue(list=AttrValue.ListValue()),
        AttrValue(s=b"loc:@v"),
        AttrValue(list=AttrValue.ListValue(s=["loc:@caf\u00e9".encode(), b"loc:@\xff"])),
    ]
    for value in cases:
        assert _class_names(value.SerializeToString(), value) == by_message(value), value
    assert _class_names(cases[1].SerializeToString(), cases[1]) == ("a/b", "c", "")
    assert _class_names(cases[2].SerializeToString(), cases[2]) == (long_name, "w")


def test_ref_and_class_unions_give_the_same_groups_whatever_the_order_of_finds() -> None:
    """Ref edges and ``_class`` joins whose two sides already share a group, and joins
    whose sides sit deeper than a root's child (the union loops find roots inline)."""
    init = op("init", "Const", dtype=Type(FLOAT), value=AttrValue(tensor={"dtype": FLOAT}))
    g = graph(init, _variable("v", ""), op("set_v", "Assign", ["v", "init"]),
              op("set_v2", "Assign", ["v", "init"]), _with("v", "a1"), _with("a1", "a2"),
              _with("a2", "a3"), _with("v", "a4"), _variable("w", ""),
              op("set_w", "Assign", ["w", "init"]), _with("w", "b1"), _with("a3", "b2"),
              _with("b1", "b3"))
    result = place(g, DeviceSet.parse("CPU=2"))
    assert not result.errors
    groups = {frozenset(result.members(n)) for n in g.nodes}
    assert groups == {frozenset({"init"}),
                      frozenset({"v", "set_v", "set_v2", "a1", "a2", "a3", "a4", "b2"}),
                      frozenset({"w", "set_w", "b1", "b3"})}
    # the roots TF's order of unions gives (as before the loops found roots inline)
    assert dict(result.group_of) == {
        "v": "v", "set_v": "v", "set_v2": "v", "a1": "v", "a2": "v", "a3": "v", "a4": "v",
        "w": "w", "set_w": "w", "b1": "w", "b2": "v", "b3": "w"}


def test_a_build_without_class_attrs_notes_it_and_the_class_pass_finds_none() -> None:
    """The builder notes a graph none of whose nodes has a ``_class`` (the placer's
    ``_class`` pass then reads no node's attrs); a graph with one is not noted, nor a
    graph a node was added to since, and the step's graph of a noted graph is noted."""
    import numpy as np

    from placelint.analyses.colocation_joins import class_joins
    from placelint.model.graph import Node
    from placelint.model.step import subgraph

    init = op("init", "Const", dtype=Type(FLOAT), value=AttrValue(tensor={"dtype": FLOAT}))
    plain = graph(init, _variable("v", ""), op("set_v", "Assign", ["v", "init"]))
    assert not plain.may_have_class_attrs()
    assert [a.size for a in class_joins(plain)[:3]] == [0, 0, 0]
    assert not subgraph(plain, np.ones(len(plain), dtype=bool), []).may_have_class_attrs()
    classed = graph(init, _variable("v", ""), op("set_v", "Assign", ["v", "init"]),
                    _with("v", "a1"))
    assert classed.may_have_class_attrs()
    at, root, group, names = class_joins(classed)
    assert names == ["v"] and list(at) == [3] and list(root) == [1]
    plain.add_node(Node("late", "NoOp"))
    assert plain.may_have_class_attrs()


def test_a_class_attr_the_key_split_cannot_cut_still_counts() -> None:
    """A ``_class`` entry laid out otherwise than protobuf writes it (here its value field
    before its key field, which protobuf reads all the same) stays in the attrs' base,
    which is parsed whole: the records still say a ``_class`` was seen, so the build does
    not note the graph as without one."""
    from placelint.model.attr_records import AttrRecords
    from placelint.opdb import get_opdb

    value = AttrValue(list=AttrValue.ListValue(s=[b"loc:@v"])).SerializeToString()
    entry = b"\x12" + bytes([len(value)]) + value + b"\n\x06_class"
    key = b"\x2a" + bytes([len(entry)]) + entry
    records = AttrRecords(get_opdb())
    attrs, _ = records.miss("NoOp", key, {})
    assert "_class" in attrs and records.class_seen
    plain = AttrRecords(get_opdb())
    plain.miss("NoOp", b"", {})
    assert not plain.class_seen


def test_group_leaders_are_the_first_of_each_group_in_the_sequence() -> None:
    """``_firsts`` (the assignment's leaders) gives what ``np.unique``'s first indices,
    sorted, give: each group's first node in the sequence, in the sequence's order."""
    import numpy as np

    from placelint.analyses.placer import _firsts

    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 50, 1000):
        for _ in range(20):
            roots = rng.integers(0, max(1, n // rng.integers(1, 5)), size=n)
            seq = rng.permutation(n)
            _, first = np.unique(roots[seq], return_index=True)
            assert _firsts(seq, roots, n).tolist() == seq[np.sort(first)].tolist()
