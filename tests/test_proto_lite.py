"""A binary model is parsed with its top-level nodes' attrs left as wire bytes
(``placelint.proto_lite``): the lite messages hold the real ones' bytes, a lite node's
attrs key is its attrs' bytes in the file's order, a graph built from a lite GraphDef is
the graph built from the real one (nodes, attrs, typing, edges, diagnostics, import-time
findings), and a model whose attrs protobuf refuses is refused with protobuf's own
message as before, whether its nodes are parsed whole or in chunks."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from google.protobuf import text_format

from placelint.loaders import LoadError, ModelRef, load_raw
from placelint.loaders.library import FunctionLibrary
from placelint.loaders.read import read_model_file
from placelint.model import model_from_raw
from placelint.model.attr_wire import attrs_key
from placelint.model.build import _build
from placelint.model.expand import Reexpanded
from placelint.pipeline import load_model
from placelint.proto import AttrValue, GraphDef, MetaGraphDef, NodeDef, SavedModel
from placelint.loaders import chunked, read
from placelint.proto_lite import (GraphDefLite, LiteRefused, MetaGraphDefLite, NodeDefLite,
                                  SavedModelLite, node_depth, real_node)
from placelint.settings import Settings
from placelint.wire import fields, length_delimited

from tests.test_build_top_level import _library, _random_graph

ROOT = Path(__file__).resolve().parent.parent
FLOAT = 1


def _models() -> list[Path]:
    """The binary and text models of the samples and the test corpora."""
    found = [p for d in ("samples", "tests") for p in (ROOT / d).rglob("*")
             if p.suffix in (".pb", ".pbtxt", ".meta") and p.is_file()]
    return sorted(found)


def _real_messages():
    """(name, real message) of every model of ``_models`` that parses (a SavedModel's
    functions included)."""
    out = []
    for path in _models():
        try:
            parsed = read_model_file(path, lite=False)
        except LoadError:
            continue
        msg = parsed.message
        if parsed.libraries is not None:        # (functions read apart: parse it whole)
            msg = SavedModel.FromString(path.read_bytes())
        out.append((str(path.relative_to(ROOT)), msg))
    return out


_LITE_OF = {GraphDef: GraphDefLite, MetaGraphDef: MetaGraphDefLite, SavedModel: SavedModelLite}


def _shuffled_attrs(data: bytes, rng: random.Random) -> bytes:
    """A GraphDef's bytes with each node's attr entries in a random order (the order TF's
    C++ writes them in is not the one protobuf's Python serializes a parsed map in)."""
    out = []
    for number, _wt, head, s, e in fields(data):
        if number != 1:
            out.append(data[head:e])
            continue
        node = fields(data, s, e)
        entries = [data[h:x] for n, _w, h, _s, x in node if n == 5]
        rng.shuffle(entries)
        parts = ([data[h:x] for n, _w, h, _s, x in node if n < 5] + entries
                 + [data[h:x] for n, _w, h, _s, x in node if n > 5])
        out.append(length_delimited(1, b"".join(parts)))
    return b"".join(out)


def _graphs(rng: random.Random, n: int):
    """Random GraphDefs (a call among them, functional control flow, field 6 and 7 of
    some nodes), as bytes whose attr entries are in a random order."""
    for i in range(n):
        gd = _random_graph(rng, with_call=i % 2 == 1)
        for nd in gd.node:
            if rng.random() < 0.2:
                nd.experimental_debug_info.original_node_names.append(nd.name + "_orig")
            if rng.random() < 0.1:
                nd.experimental_type.type_id = 10
            if rng.random() < 0.3:
                nd.attr["_output_shapes"].list.shape.add().dim.add(size=3)
                nd.attr["zz"].s = b"z" * rng.choice((1, 200, 5000))
        if i % 3 == 2:
            _library(gd, "g")       # (``f`` may be the random graph's own)
            call = gd.node.add(name=f"pc{i}", op="StatefulPartitionedCall", input=[gd.node[0].name])
            call.attr["f"].func.name = "g"
            call.attr["Tin"].list.type.append(FLOAT)
            call.attr["Tout"].list.type.append(FLOAT)
            ifn = gd.node.add(name=f"if{i}", op="If", input=[gd.node[0].name, gd.node[0].name])
            ifn.attr["then_branch"].func.name = "g"
            ifn.attr["else_branch"].func.name = "g"
            ifn.attr["Tin"].list.type.append(FLOAT)
            ifn.attr["Tout"].list.type.append(FLOAT)
        yield _shuffled_attrs(gd.SerializeToString(), rng)


def test_lite_messages_hold_the_real_bytes():
    rng = random.Random(1)
    checked = 0
    for name, msg in _real_messages():
        # (equal messages: protobuf writes the maps of a parsed message, those of a
        # SavedModel's signatures or functions too, in its table's order)
        data = msg.SerializeToString()
        lite = _LITE_OF[type(msg)].FromString(data)
        assert type(msg).FromString(lite.SerializeToString()) == msg, name
        checked += 1
    for _name, data, lite in _lite_graphs_of_corpora(data=True):
        # (a lite node's bytes are the file's: its attrs in the file's order)
        assert [nd.SerializeToString() for nd in lite.node] == [
            data[s:e] for number, _wt, _head, s, e in fields(data) if number == 1]
        checked += 1
    assert checked >= 20
    for data in _graphs(rng, 100):
        lite = GraphDefLite.FromString(data)
        assert lite.SerializeToString() == data
        assert GraphDef.FromString(lite.SerializeToString()) == GraphDef.FromString(data)
        for a, b in zip(lite.node, GraphDef.FromString(data).node):
            assert real_node(a) == b


def _lite_graphs_of_corpora(data: bool = False):
    """(name, real GraphDef (``data``: its bytes), lite GraphDef) of each graph of the
    corpora, its attrs in a random order."""
    for name, msg in _real_messages():
        if isinstance(msg, GraphDef):
            graphs = [msg]
        elif isinstance(msg, MetaGraphDef):
            graphs = [msg.graph_def]
        else:
            graphs = [m.graph_def for m in msg.meta_graphs]
        for gd in graphs:
            wire = _shuffled_attrs(gd.SerializeToString(), random.Random(len(name)))
            yield name, wire if data else GraphDef.FromString(wire), GraphDefLite.FromString(wire)


def test_the_attrs_key_of_a_lite_node_is_its_attrs_in_the_files_order():
    pairs = [(GraphDef.FromString(d), GraphDefLite.FromString(d))
             for d in _graphs(random.Random(2), 100)]
    pairs += [(real, lite) for _name, real, lite in _lite_graphs_of_corpora()]
    differ = 0
    for real, lite in pairs:
        for a, b in zip(real.node, lite.node):
            key = attrs_key(a, a.name, a.op, a.device, a.input[:])
            raw = attrs_key(b, b.name, b.op, b.device, b.input[:])
            # (then its fields after the attrs: debug info, experimental type)
            assert raw.startswith(b"".join(length_delimited(5, e) for e in b.attr_wire))
            # (the same attrs: protobuf writes a parsed map in its table's order)
            assert NodeDef.FromString(raw).attr == NodeDef.FromString(key).attr
            differ += raw != key
    assert differ > 100     # (the file's order and protobuf's differ)


def _attrs(node) -> list[tuple[str, bytes]]:
    # (by name: a lite node's attrs are in the file's order, a real one's in protobuf's)
    return sorted((k, v.SerializeToString()) for k, v in node.attrs.items())


def _shape(result):
    graph = result.graph
    nodes = [(n.name, n.op, n.device, n.spec, _attrs(n),
              n.output_dtypes, n.output_shapes, n.op_signature, n.function, n.call_site,
              n.soft, [(e.src, e.src_slot, e.dst_slot, e.dtype, e.ref) for e in n.in_edges],
              [(e.dst, e.src_slot, e.dst_slot) for e in n.out_edges]) for n in graph]
    return (nodes, [(d.rule, d.node or "", d.message) for d in result.diagnostics],
            dict(graph.invalid_nodes), graph.edges_point_forward())


def _built(gd, fast: bool = True):
    library = FunctionLibrary.of(gd)
    try:
        return _shape(_build(gd, "t", library, True, fast))
    except Reexpanded:
        return _shape(_build(gd, "t", library, False, fast))


@pytest.mark.parametrize("fast", [True, False])
def test_a_lite_graph_builds_the_real_graphs_graph(fast):
    rng = random.Random(3 + fast)
    for data in _graphs(rng, 150):
        assert _built(GraphDefLite.FromString(data), fast) == _built(GraphDef.FromString(data),
                                                                     fast)
    for name, real, lite in _lite_graphs_of_corpora():
        assert _built(lite, fast) == _built(real, fast), name


def _write_models(tmp_path: Path) -> list[Path]:
    """A GraphDef, a MetaGraphDef and a SavedModel directory (with debug info, and nodes
    that carry experimental_debug_info) of one random graph with a call."""
    data = list(_graphs(random.Random(7), 3))[2]
    gd = GraphDef.FromString(data)
    gd.node[0].experimental_debug_info.original_node_names.append("orig")
    (tmp_path / "g.pb").write_bytes(gd.SerializeToString())
    meta = MetaGraphDef()
    meta.graph_def.CopyFrom(gd)
    meta.meta_info_def.tags.append("serve")
    (tmp_path / "m.meta").write_bytes(meta.SerializeToString())
    root = tmp_path / "sm"
    (root / "debug").mkdir(parents=True)
    sm = SavedModel()
    sm.meta_graphs.add().CopyFrom(meta)
    (root / "saved_model.pb").write_bytes(sm.SerializeToString())
    from placelint.proto import GraphDebugInfo
    info = GraphDebugInfo()
    info.files.append("model.py")
    trace = info.traces[gd.node[0].name]
    trace.file_line_cols.add(file_index=0, line=42)
    (root / "debug" / "saved_model_debug_info.pb").write_bytes(info.SerializeToString())
    return [tmp_path / "g.pb", tmp_path / "m.meta", root]


def _ref(path: Path) -> ModelRef:
    from placelint.loaders import discover
    return discover([path])[0]


def test_meta_and_saved_models_load_lite_and_build_the_same(tmp_path):
    for path in _write_models(tmp_path):
        ref = _ref(path)
        lite, real = load_raw(ref), load_raw(ref, lite=False)
        assert node_depth(lite.graph_def) == {"g.pb": 1, "m.meta": 2, "sm": 3}[path.name]
        assert node_depth(real.graph_def) == 0
        assert lite.steps.keys() == real.steps.keys() and lite.format == real.format
        a, b = model_from_raw(lite), model_from_raw(real)
        assert _shape_of_model(a) == _shape_of_model(b)
        if path.name == "sm":
            first = a.graph[GraphDef.FromString(real.graph_def.SerializeToString()).node[0].name]
            assert first.location is not None and first.location.line == 42


def _shape_of_model(model):
    return [(n.name, n.op, _attrs(n),
             n.output_dtypes, [(e.src, e.src_slot) for e in n.in_edges], n.location)
            for n in model.graph], [(d.code, d.message) for d in model.diagnostics]


def _bad_attr_graphs():
    """GraphDef bytes whose attrs the real parse refuses and a lite one takes: a map key
    that is not UTF-8, a truncated AttrValue, a NameAttrList name that is not UTF-8, attrs
    nested past the depth limit; on the first node, a later one, a call, a duplicate."""
    def graph(entry: bytes, where: int, op: str = "Identity", dup: bool = False) -> bytes:
        gd = GraphDef()
        p = gd.node.add(name="p", op="Placeholder")
        p.attr["dtype"].type = FLOAT
        for i in range(3):
            n = gd.node.add(name=f"n{i}" if not (dup and i == 2) else "n0", op=op, input=["p"])
            n.attr["T"].type = FLOAT
        data = b""
        for i, nd in enumerate(gd.node):
            raw = nd.SerializeToString()
            if i == where:
                raw += length_delimited(5, entry)
            data += length_delimited(1, raw)
        return data

    def nested(depth: int) -> bytes:
        v = AttrValue(s=b"x")
        for _ in range(depth):
            w = AttrValue()
            w.func.name = "f"
            w.func.attr["a"].CopyFrom(v)
            v = w
        return length_delimited(1, b"deep") + length_delimited(2, v.SerializeToString())

    bad_key = length_delimited(1, b"\xff\xfe") + length_delimited(2, b"\x30\x01")
    truncated = length_delimited(1, b"k") + length_delimited(2, b"\x0a\x05ab")
    bad_name = length_delimited(1, b"k") + length_delimited(2, length_delimited(10, length_delimited(1, b"\xff")))
    out = []
    for entry in (bad_key, truncated, bad_name, nested(40)):
        for where, op, dup in ((0, "Identity", False), (2, "Identity", False),
                               (2, "StatefulPartitionedCall", False), (3, "Identity", True)):
            out.append(graph(entry, where, op, dup))
    return out


def _written(tmp_path: Path, stem: str, data: bytes, kind: str) -> Path:
    """``data`` written as a model of ``kind`` ("g": a GraphDef file, "m": a ``.meta``,
    "s": a SavedModel directory) named ``stem``."""
    if kind == "s":
        path = tmp_path / stem
        path.mkdir()
        (path / "saved_model.pb").write_bytes(data)
    else:
        path = tmp_path / (stem + (".pb" if kind == "g" else ".meta"))
        path.write_bytes(data)
    return path


def _wrapped(data: bytes, kind: str) -> bytes:
    if kind == "g":
        return data
    meta = length_delimited(2, data) + length_delimited(1, length_delimited(4, b"serve"))
    return meta if kind == "m" else length_delimited(2, meta)


@pytest.mark.parametrize("kind", ["g", "m", "s"])
def test_a_refused_file_that_would_look_implausible_is_refused_as_before(tmp_path, kind):
    """A lite parse takes attrs the real one refuses, and a node without a name makes the
    model look implausible: the file is refused with protobuf's words, as the real parse
    refuses it, not as implausible (found by fuzzing a SavedModel)."""
    gd = GraphDef()
    gd.node.add(name="p", op="Placeholder").attr["dtype"].type = FLOAT
    gd.node.add(op="Identity", input=["p"])         # (no name)
    bad_key = length_delimited(1, b"\xff\xfe") + length_delimited(2, b"\x30\x01")
    data = b"".join(length_delimited(1, nd.SerializeToString()) for nd in gd.node[:1])
    data += length_delimited(1, gd.node[1].SerializeToString() + length_delimited(5, bad_key))
    data = _wrapped(data, kind)
    path = _written(tmp_path, "x", data, kind)
    ref = _ref(path)
    with pytest.raises(LoadError) as real:
        load_raw(ref, lite=False)
    assert "bad UTF-8" in real.value.message
    model, diags = load_model(ref, Settings())
    assert model is None and [(d.code, d.message) for d in diags] == [
        (real.value.code, real.value.message)]


@pytest.mark.parametrize("kind", ["g", "m", "s"])
def test_attrs_protobuf_refuses_refuse_the_model_in_chunks_too(tmp_path, kind, monkeypatch):
    """The nodes of a large GraphDef, parsed a chunk at a time (``loaders.chunked``, here
    chunks of two nodes), are lite too: the model is refused as when it is parsed whole."""
    for i, data in enumerate(_bad_attr_graphs()):
        data = _wrapped(data, kind)
        path = _written(tmp_path, f"x{i}", data, kind)
        ref = _ref(path)
        whole = load_model(ref, Settings())
        with monkeypatch.context() as mp:
            mp.setattr(read, "CHUNKED_MIN_BYTES", 0)
            mp.setattr(chunked, "CHUNKED_MIN_BYTES", 0)     # (a SavedModel's GraphDef)
            mp.setattr(chunked, "CHUNK_NODES", 2)
            mp.setattr(chunked, "FIRST_CHUNK", 1)
            assert isinstance(load_raw(ref).graph_def, chunked.ChunkedGraphDef)
            model, diags = load_model(ref, Settings())
        assert whole[0] is None and model is None, (i, kind)
        # (protobuf's words name the message it was parsing: the chunk's GraphDef, where the
        # whole parse names a MetaGraphDef or SavedModel)
        assert [(d.code, _TYPE.sub("", d.message)) for d in diags] == [
            (d.code, _TYPE.sub("", d.message)) for d in whole[1]], (i, kind)
        assert all(d.code == "PL001" for d in diags)


_TYPE = re.compile(r"with type '[\w.]+'")


@pytest.mark.parametrize("kind", ["g", "m", "s"])
def test_attrs_protobuf_refuses_refuse_the_model_as_before(tmp_path, kind):
    for i, data in enumerate(_bad_attr_graphs()):
        data = _wrapped(data, kind)
        with pytest.raises(Exception):
            {"g": GraphDef, "m": MetaGraphDef, "s": SavedModel}[kind].FromString(data)
        path = _written(tmp_path, f"x{i}", data, kind)
        ref = _ref(path)
        try:
            load_raw(ref, lite=False)
            real = None
        except LoadError as exc:
            real = exc.diagnostic().message
        settings = Settings()
        model, diags = load_model(ref, settings)
        assert model is None and [d.message for d in diags] == [real], (i, kind)


@pytest.mark.parametrize("kind", ["g", "m", "s"])
def test_nesting_at_the_depth_limit_is_judged_as_deep_as_the_file_nests_it(tmp_path, kind):
    """Around protobuf's depth limit, the nodes of a GraphDef, of a MetaGraphDef's and of
    a SavedModel's are judged as the real parse of their file judges them."""
    outcomes = set()
    for depth in range(21, 28):
        v = AttrValue(s=b"x")
        for _ in range(depth):
            w = AttrValue()
            w.list.func.add(name="f").attr["a"].CopyFrom(v)
            v = w
        gd = GraphDef()
        p = gd.node.add(name="p", op="Placeholder")
        p.attr["dtype"].type = FLOAT
        p.attr["deep"].CopyFrom(v)
        data = _wrapped(gd.SerializeToString(), kind)
        ref = _ref(_written(tmp_path, f"{kind}{depth}", data, kind))
        settings = Settings()
        lite_model, lite_diags = load_model(ref, settings)
        try:
            real_model = model_from_raw(load_raw(ref, lite=False))
            real = [(d.code, d.message) for d in real_model.diagnostics]
        except LoadError as exc:
            real_model, real = None, [(exc.code, exc.message)]
        assert (lite_model is None) == (real_model is None), depth
        assert [(d.code, d.message) for d in lite_diags] == real, depth
        outcomes.add(real_model is None)
    assert outcomes == {True, False}


def test_real_node():
    nd = NodeDef(name="a", op="Identity", input=["x"])
    nd.attr["T"].type = FLOAT
    lite = NodeDefLite.FromString(nd.SerializeToString())
    assert real_node(nd) is nd
    assert real_node(lite) == nd
    assert not hasattr(lite, "attr")        # (a reader of ``attr`` fails loudly)
    with pytest.raises(LiteRefused):
        real_node(NodeDefLite.FromString(nd.SerializeToString() + b"\x2a\x02\x0a\xff"))
