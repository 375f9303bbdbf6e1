"""``analyses.placed.placed_devices``: the dict's values when it follows the names (the
fast path), a look-up per name otherwise; both give the same list."""

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
