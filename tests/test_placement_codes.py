"""The placement as device codes: ``PlacementResult.device`` is a view over one code per
node (``DeviceOf``), the processing order's index a view over the graph's positions
(``ProcessingIndex``), and transfers and parallelism read the codes instead of looking up
every name. Each fast path is checked against the look-up by name it replaces."""

from placelint.analyses.parallelism import _device_codes as parallelism_codes
from placelint.analyses.placer import place
from placelint.analyses.placer_events import DeviceOf, PlacementResult, device_codes
from placelint.analyses.processing_order import ProcessingIndex, ordered, processing_positions
from placelint.analyses.transfers import _device_codes as transfer_codes
from placelint.context import Context
from placelint.model import Model, build_graph
from placelint.model.devices import DeviceSet
from placelint.model.step import Resolver
from placelint.proto import AttrValue
from placelint.settings import Settings

from graphdefs import FLOAT, Shape, Type, const, graph, graph_def, op, placeholder

CPU = "/job:localhost/replica:0/task:0/device:CPU:"


def _variable(name: str, device: str):
    return op(name, "VariableV2", device=device, shape=Shape((2,)), dtype=Type(FLOAT))


def _consumers_first():
    """Graph order lists the Assigns first; TF processes w, set_w before v, set_v."""
    init = op("init", "Const", dtype=Type(FLOAT), value=AttrValue(tensor={"dtype": FLOAT}))
    return graph(op("set_v", "Assign", ["v", "init"]), op("set_w", "Assign", ["w", "init"]),
                 init, _variable("w", "/device:CPU:1"), _variable("v", "/device:CPU:0"))


def _by_name(result: PlacementResult) -> PlacementResult:
    """The same placement with its devices as a plain dict (the look-up path)."""
    return PlacementResult(result.devices, result.allow_soft_placement, dict(result.device.items()),
                           result.errors, result.events, result.unknown_ops, result.group_of)


def test_processing_index_is_the_mapping_of_names_to_processing_positions() -> None:
    g = _consumers_first()
    order, idx = ordered(g)
    assert isinstance(idx, ProcessingIndex)
    names = [n.name for n in order]
    assert names != list(g.nodes)          # (the case under test)
    assert list(idx) == names and len(idx) == len(names)
    assert dict(idx) == {name: k for k, name in enumerate(names)}
    assert idx.get("nowhere", -1) == -1 and "nowhere" not in idx and "v" in idx
    at = processing_positions(g)
    assert [names[p] for p in at.tolist()] == list(g.nodes)


def test_graph_in_processing_order_keeps_its_positions_as_the_index() -> None:
    g = graph(op("a", "NoOp"), op("b", "NoOp", ["^a"]))
    order, idx = ordered(g)
    assert idx is g.positions() and processing_positions(g) is None


def test_device_view_reads_like_the_dict_of_every_node_in_processing_order() -> None:
    g = _consumers_first()
    result = place(g, DeviceSet.parse("CPU=2"))
    device = result.device
    assert isinstance(device, DeviceOf)
    names = [n.name for n in ordered(g)[0]]
    assert list(device) == names and len(device) == len(names)
    assert device["w"] == device["set_w"] == CPU + "1" and device.get("v") == CPU + "0"
    assert device.get("nowhere") is None and "nowhere" not in device and "init" in device
    assert device.items() == [(n, device[n]) for n in names]
    assert device.values() == [device[n] for n in names]
    assert device == {n: device[n] for n in names}
    codes, table = device.codes(g)
    assert [table[c] for c in codes.tolist()] == [device[n] for n in g.nodes]
    assert device.codes(graph(op("other", "NoOp"))) is None     # another graph: its names are looked up


def test_failed_group_reads_as_unplaced_in_the_view_and_its_codes() -> None:
    g = graph(_variable("v", "/device:CPU:3"), op("a", "NoOp"))
    result = place(g, DeviceSet.parse("CPU=2"))
    assert result.errors and result.device["v"] is None and result.device["a"] == CPU + "0"
    codes, table = device_codes(result.device, g)
    assert codes.min() >= 0 and [table[c] for c in codes.tolist()] == [None, CPU + "0"]
    # transfers and parallelism read the codes as they read the names
    assert _same_codes(transfer_codes(g, result), transfer_codes(g, _by_name(result)))
    fast, slow = parallelism_codes(g, result), parallelism_codes(g, _by_name(result))
    assert fast[1] == slow[1] == ["(unplaced)", CPU + "0"]
    assert fast[0].tolist() == slow[0].tolist() == [0, 1]


def _same_codes(a, b) -> bool:
    return (a.dev.tolist() == b.dev.tolist() and a.names == b.names
            and a.cpu.tolist() == b.cpu.tolist() and a.host.tolist() == b.host.tolist())


def _fed_step_context(*extra) -> Context:
    gd = graph_def(
        placeholder("x", (4,)),
        const("c", [1.0, 2.0, 3.0, 4.0], dtype=FLOAT, shape=(4,)),
        op("a", "Mul", ["x", "c"], device="/device:CPU:1"),
        op("out_a", "Relu", ["a"], device="/device:CPU:1"),
        op("b", "Mul", ["x", "c"], device="/device:CPU:2"),
        op("out_b", "Relu", ["b"], device="/device:CPU:2"), *extra)
    built = build_graph(gd, name="<memory>")
    model = Model(path="<memory>", file="<memory>", format="GraphDef", entry="whole graph",
                  graph=built.graph, diagnostics=built.diagnostics,
                  resolver=Resolver(built.graph, built.alias, built.control_alias),
                  fetch=("out_a:0",), feed=("x:0",))
    return Context(model, Settings(devices=DeviceSet.parse("CPU=3")))


def test_step_placement_gives_the_step_graph_its_codes_by_position() -> None:
    ctx = _fed_step_context()
    step, placement = ctx.step, ctx.step_placement
    assert step.feeds and list(step.graph.nodes)[0].startswith("_arg_x_0")
    device = placement.device
    arg = list(step.graph.nodes)[0]
    # the whole graph's nodes, then the fed tensor's _Arg on the client's device
    assert list(device) == [n.name for n in ordered(ctx.graph)[0]] + [arg]
    assert device[arg] == CPU + "0" and len(device) == len(ctx.graph.nodes) + 1
    assert dict(device.items()) == {**dict(ctx.placement.device.items()), arg: CPU + "0"}
    codes, table = device_codes(placement.device, step.graph)
    assert [table[c] for c in codes.tolist()] == [device[n] for n in step.graph.nodes]
    g = step.graph
    assert _same_codes(transfer_codes(g, placement), transfer_codes(g, _by_name(placement)))
    fast, slow = parallelism_codes(g, placement), parallelism_codes(g, _by_name(placement))
    assert fast[1] == slow[1] and fast[0].tolist() == slow[0].tolist()


def test_a_kept_node_named_as_the_feeds_arg_leaves_the_codes_to_the_names() -> None:
    # (the step's graph then has fewer nodes than its _Args and kept nodes: reading the
    # codes by position would shift every device after the clash)
    ctx = _fed_step_context(op("_arg_x_0_0", "Relu", ["a"], device="/device:CPU:2"),
                            op("clash", "Relu", ["_arg_x_0_0"]))
    ctx.model.fetch = ("out_a:0", "clash:0")
    step, placement = ctx.step, ctx.step_placement
    g = step.graph
    assert len(g.nodes) < len(step.feeds) + len(step.kept)
    assert device_codes(placement.device, g) is None
    assert _same_codes(transfer_codes(g, placement), transfer_codes(g, _by_name(placement)))
    fast, slow = parallelism_codes(g, placement), parallelism_codes(g, _by_name(placement))
    assert fast[1] == slow[1] and fast[0].tolist() == slow[0].tolist()


def test_transfers_and_parallelism_read_the_placers_codes_without_names(monkeypatch) -> None:
    # (the placer's DeviceOf, for the whole graph and for a fed step's graph: no name is
    # looked up; a view that stopped recognising the graph would fall back silently)
    import placelint.analyses.placed as placed

    def looked_up(*_):
        raise AssertionError("names looked up")
    g = _consumers_first()
    result = place(g, DeviceSet.parse("CPU=2"))
    ctx = _fed_step_context()
    step_graph, step_placement = ctx.step.graph, ctx.step_placement
    monkeypatch.setattr(placed, "_looked_up", looked_up)
    assert transfer_codes(g, result) and parallelism_codes(g, result)
    assert transfer_codes(step_graph, step_placement)
    assert parallelism_codes(step_graph, step_placement)
