"""``analyses.placed.placed_devices``: a placement's codes by position, or a dict's values
when it follows the names (the fast paths), a look-up per name otherwise; all give the
same list."""

from placelint.analyses.placed import placed_devices


def test_values_when_the_dict_follows_the_names():
    names = {"a": 0, "b": 1, "c": 2}
    device = dict.fromkeys(names)
    device.update(a="CPU:0", b="CPU:1", c=None)
    assert placed_devices(names, device) == ["CPU:0", "CPU:1", None]


def test_looks_up_when_order_count_or_keys_differ():
    names = {"a": 0, "b": 1, "c": 2}
    # another order (the placer's processing order), a name missing, an extra name, and
    # equal but distinct key strings: each falls back to a look-up per name
    assert placed_devices(names, {"b": "B", "a": "A", "c": "C"}) == ["A", "B", "C"]
    assert placed_devices(names, {"a": "A", "c": "C"}) == ["A", None, "C"]
    assert placed_devices(names, {"a": "A", "b": "B", "c": "C", "d": "D"}) == ["A", "B", "C"]
    copies = {"".join(["a"]): "A", "".join(["b"]): "B", "".join(["c"]): "C"}
    assert placed_devices(list(names), copies) == ["A", "B", "C"]


def test_a_placement_in_processing_order_is_read_by_graph_position():
    # a GraphDef listing consumers first: the placement iterates in processing order, not
    # graph order; with the graph given, its codes are read by graph position rather than
    # each name looked up
    from graphdefs import graph, op, placeholder

    from placelint.analyses.placer import place
    from placelint.model.devices import DeviceSet

    nodes = [placeholder("x", (2,))] + [
        op(f"r{i}", "Relu", [f"r{i - 1}" if i else "x"], device=f"/device:CPU:{i % 3}")
        for i in range(6)]
    g = graph(*reversed(nodes))
    device = place(g, DeviceSet.parse("CPU=3")).device
    from placelint.analyses.processing_order import ordered
    assert list(device) != list(g.nodes) and list(device) == [n.name for n in ordered(g)[0]]
    want = [device.get(n) for n in g.nodes]
    assert len(set(want)) == 3
    assert placed_devices(g.nodes, device, g) == want == placed_devices(g.nodes, device)
