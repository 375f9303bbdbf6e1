"""A large binary GraphDef read a chunk of nodes at a time (``loaders.chunked``) gives the
model and findings the whole parse gives; files laid out otherwise are parsed whole; a
chunk protobuf refuses is PL001, as the whole file is."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from placelint import api
from placelint.loaders import chunked, read
from placelint.loaders.chunked import ChunkedGraphDef, chunked_graph_def
from placelint.model.edge_index import graph_edges
from placelint.proto import GraphDef, MetaGraphDef, NodeDef, SavedModel
from placelint.proto_lite import GraphDefLite
from placelint.wire import length_delimited

ROOT = Path(__file__).resolve().parents[1]

#: GraphDefs of the samples and test data, as binary files (text ones converted)
SOURCES = ["samples/towers_gpu.pb", "samples/alexnet_cpu1_assign.pbtxt",
           "samples/cpu_vars_gpu_ops.pbtxt", "samples/ps_worker.pbtxt",
           "samples/py_function_branches.pbtxt",
           "tests/data/import_validation/concat_without_attrs.pbtxt",
           "tests/data/import_validation/function_body_relu_string.pbtxt",
           "tests/data/import_validation/placeholder_dim_minus7.pbtxt",
           "tests/data/import_validation/while_less_resource.pbtxt",
           "tests/data/memory/wide_mlp.pbtxt"]


def _graph_def(source: str) -> GraphDef:
    path = ROOT / source
    if path.suffix == ".pb":
        return GraphDef.FromString(path.read_bytes())
    return text_format.Parse(path.read_text(), GraphDef())


def _meta_graph(path: Path) -> GraphDef:
    meta = text_format.Parse(path.read_text(), MetaGraphDef()) if path.suffix != ".meta" \
        else MetaGraphDef.FromString(path.read_bytes())
    return meta.graph_def


@pytest.fixture
def small_chunks(monkeypatch):
    """Every binary GraphDef parsed in chunks, of a few nodes each."""
    monkeypatch.setattr(read, "CHUNKED_MIN_BYTES", 0)
    monkeypatch.setattr(chunked, "CHUNK_NODES", 7)
    monkeypatch.setattr(chunked, "FIRST_CHUNK", 3)


def _findings(report) -> list[tuple]:
    return [(d.code, d.node, d.message) for d in report.findings]


@pytest.mark.parametrize("source", SOURCES)
def test_chunks_hold_the_nodes_the_whole_parse_gives(source, small_chunks):
    data = _graph_def(source).SerializeToString()
    gd = GraphDef.FromString(data)      # (parsed from the same bytes: the same attr order)
    got = chunked_graph_def(data)
    assert isinstance(got, ChunkedGraphDef)
    assert len(got.node) == len(gd.node)
    assert [n.SerializeToString() for n in got.node] == [n.SerializeToString() for n in gd.node]
    # (iterated again: parsed again, the same)
    assert [n.name for n in got.node] == [n.name for n in gd.node]
    assert got.library == gd.library and got.versions == gd.versions
    assert len(got.node._chunks) == (1 if len(gd.node) <= 3 else 2 + (len(gd.node) - 4) // 7)


@pytest.mark.parametrize("source", SOURCES)
def test_check_finds_what_it_finds_without_chunks(source, tmp_path, monkeypatch):
    path = tmp_path / (Path(source).stem + ".pb")
    path.write_bytes(_graph_def(source).SerializeToString())
    whole = api.analyze(path, "CPU=2,GPU=2")
    monkeypatch.setattr(read, "CHUNKED_MIN_BYTES", 0)
    monkeypatch.setattr(chunked, "CHUNK_NODES", 5)
    monkeypatch.setattr(chunked, "FIRST_CHUNK", 2)
    parts = api.analyze(path, "CPU=2,GPU=2")
    assert _findings(parts) == _findings(whole)
    assert parts.placement == whole.placement
    assert parts.graph is not None and list(parts.graph.nodes) == list(whole.graph.nodes)
    assert graph_edges(parts.graph).src.tolist() == graph_edges(whole.graph).src.tolist()


def test_a_graph_of_a_meta_graph_file_in_chunks(tmp_path, small_chunks):
    """The while loop sample's graph (Enter/Merge/NextIteration: pending edges, a loop)."""
    path = tmp_path / "while.pb"
    path.write_bytes(_meta_graph(ROOT / "samples/while_loop_v1.meta").SerializeToString())
    parts = api.analyze(path, "CPU=1")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(read, "CHUNKED_MIN_BYTES", 2**40)
        whole = api.analyze(path, "CPU=1")
    assert _findings(parts) == _findings(whole)
    assert parts.placement == whole.placement and parts.placement


def _node_field(node: bytes) -> bytes:
    """A GraphDef's field 1 (a node) holding ``node``'s bytes."""
    return length_delimited(1, node)


def _towers() -> GraphDef:
    return _graph_def("samples/towers_gpu.pb")


def test_other_layouts_are_parsed_whole(small_chunks):
    gd = _towers()
    nodes = b"".join(_node_field(n.SerializeToString()) for n in gd.node)
    versions = length_delimited(4, gd.versions.SerializeToString())
    # the usual layout: nodes first
    assert chunked_graph_def(nodes + versions) is not None
    # versions first; a node after versions; a length written as a padded varint
    assert chunked_graph_def(versions + nodes) is None
    first = _node_field(gd.node[0].SerializeToString())
    assert chunked_graph_def(first + versions + nodes[len(first):]) is None
    node = gd.node[0].SerializeToString()
    assert len(node) < 0x80
    padded = b"\x0a" + bytes([len(node) | 0x80, 0]) + node
    assert GraphDef.FromString(padded + nodes).node[0] == gd.node[0]   # (protobuf reads it)
    assert chunked_graph_def(padded + nodes) is None
    # each such file still loads, parsed whole, with every node
    for data in (versions + nodes, padded + nodes):
        assert len(read._parse_binary(Path("x.pb"), data, read.GRAPHDEF).message.node) \
            == len(GraphDef.FromString(data).node)


def test_a_node_protobuf_refuses_is_pl001(tmp_path, small_chunks):
    """A node name that is not UTF-8: the skeleton takes its bytes, its chunk's parse
    refuses it, as the whole file's parse does."""
    gd = _towers()
    bad = b"\x0a\x02\xff\xfe\x12\x04NoOp"        # NodeDef name b"\xff\xfe", op NoOp
    for where in (0, len(gd.node) - 1):         # in the first chunk, in a later one
        fields = [_node_field(n.SerializeToString()) for n in gd.node]
        fields[where] = _node_field(bad)
        path = tmp_path / f"bad{where}.pb"
        path.write_bytes(b"".join(fields))
        with pytest.raises(Exception):
            GraphDef.FromString(path.read_bytes())
        report = api.analyze(path, "CPU=1")
        assert report.model is None
        assert [d.code for d in report.findings] == ["PL001"]
        assert report.findings[0].message.startswith(
            "not a GraphDef, MetaGraphDef or SavedModel: the file is corrupt, truncated, "
            "or another format (")


@pytest.mark.parametrize("suffix", [".pb", ".meta"])
@pytest.mark.parametrize("where", [0, -1])
def test_a_chunk_protobuf_refuses_is_worded_as_the_whole_files_parse(tmp_path, small_chunks,
                                                                     suffix, where):
    """The PL001 of a model a chunk's parse refuses quotes the whole file's parse, whether
    the loader meets the chunk (its first nodes: the plausibility test) or the build does
    (a later one): for a ``.meta`` file protobuf names the MetaGraphDef, not the GraphDef a
    chunk is parsed as, and the error is the one the whole parse meets first."""
    from placelint.loaders import LoadError, load_raw
    from placelint.loaders.discover import discover

    fields = [_node_field(NodeDef(name=f"n{i}", op="NoOp").SerializeToString())
              for i in range(read.PLAUSIBLE_NODES + 20)]
    fields[where] = _node_field(b"\x0a\x02\xff\xfe\x12\x04NoOp")  # a name that is not UTF-8
    data = b"".join(fields)
    if suffix == ".meta":
        data = length_delimited(2, data)     # MetaGraphDef.graph_def
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(data)
    ref = discover([path])[0]
    with pytest.raises(LoadError) as whole:
        load_raw(ref, lite=False, chunked=False)
    if where == -1:     # (past the plausibility test: the loader reads the file in chunks)
        assert isinstance(load_raw(ref).graph_def.node, chunked.ChunkedNodes)
    report = api.analyze(path, "CPU=1")
    assert report.model is None
    assert [d.message for d in report.findings] == [whole.value.diagnostic().message]
    kind = "MetaGraphDef" if suffix == ".meta" else "GraphDef"
    assert f"'tensorboard.{kind}'" in report.findings[0].message


def test_large_files_only():
    """Files from 1 MiB on (a few thousand nodes): the samples are parsed whole."""
    assert read.CHUNKED_MIN_BYTES >= 2**20
    data = _towers().SerializeToString()
    assert len(data) < read.CHUNKED_MIN_BYTES
    parsed = read._parse_binary(Path("x.pb"), data, read.GRAPHDEF)
    assert isinstance(parsed.message, GraphDefLite)   # (parsed whole: see ``proto_lite``)


def test_a_meta_graph_file_reads_its_graph_in_chunks(tmp_path, small_chunks):
    """A ``.meta`` file: its graph in chunks, its collections and signatures as they are;
    the steps it declares, the findings and the placement as without chunks."""
    meta = MetaGraphDef.FromString((ROOT / "samples/while_loop_v1.meta").read_bytes())
    assert meta.collection_def and len(meta.graph_def.node) > 3
    meta.signature_def["serving_default"].outputs["y"].name = "out:0"   # (a step to run)
    path = tmp_path / "model.meta"
    path.write_bytes(meta.SerializeToString())
    parsed = read.read_model_file(path, expect=read.METAGRAPH)
    graph, = parsed.graphs
    assert isinstance(graph, ChunkedGraphDef)
    assert not parsed.message.HasField("graph_def")
    assert parsed.message.collection_def == meta.collection_def
    assert [n.name for n in graph.node] == [n.name for n in meta.graph_def.node]
    for options in ({}, {"whole_graph": True}):
        parts = api.analyze(path, "CPU=1", **options)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(read, "CHUNKED_MIN_BYTES", 2**40)
            whole = api.analyze(path, "CPU=1", **options)
        assert whole.model.entry == parts.model.entry
        assert whole.model.steps == parts.model.steps and whole.model.steps
        assert _findings(parts) == _findings(whole)
        assert parts.placement == whole.placement and parts.placement


def test_a_meta_graph_laid_out_otherwise_is_parsed_whole(tmp_path, small_chunks):
    meta = MetaGraphDef.FromString((ROOT / "samples/while_loop_v1.meta").read_bytes())
    graph = meta.graph_def.SerializeToString()
    twice = (length_delimited(2, graph[:-10])
             + length_delimited(2, graph[-10:]))      # (graph_def written in two fields)
    assert chunked.chunked_meta_graph(twice) is None
    data = meta.SerializeToString()
    assert chunked.chunked_meta_graph(data) is not None
    path = tmp_path / "model.meta"
    path.write_bytes(length_delimited(2, graph))
    assert read.read_model_file(path, expect=read.METAGRAPH).graphs[0] is not None
    path.write_bytes(length_delimited(2, b""))         # (an empty graph: no nodes to read)
    assert read.read_model_file(path, expect=read.METAGRAPH).graphs[0] is not None



def test_the_loaders_import_without_numpy():
    """``placelint steps`` reads a model's declared steps through the loaders alone: the
    chunked reader imports numpy when a large file needs it, not at start-up."""
    import subprocess
    import sys
    code = "import sys, placelint.loaders; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "False"


def _saved_model(*metas: MetaGraphDef) -> bytes:
    return SavedModel(saved_model_schema_version=1, meta_graphs=metas).SerializeToString()


def test_a_saved_model_reads_a_large_graph_in_chunks(tmp_path, monkeypatch):
    """A TF1 SavedModel (its graph's nodes at the top level): the MetaGraph whose GraphDef
    is large is read in chunks, the others whole; the served step, findings and placement
    are those of the whole parse; a TF2 SavedModel's functions stay read apart."""
    meta = MetaGraphDef.FromString((ROOT / "samples/while_loop_v1.meta").read_bytes())
    meta.signature_def["serving_default"].outputs["y"].name = "out:0"
    meta.meta_info_def.tags.append("serve")
    small = MetaGraphDef()
    small.meta_info_def.tags.append("train")
    small.graph_def.node.add(name="x", op="NoOp")
    model = tmp_path / "sm"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(_saved_model(small, meta))
    whole = api.analyze(model, "CPU=1")
    monkeypatch.setattr(chunked, "CHUNK_NODES", 5)
    monkeypatch.setattr(chunked, "FIRST_CHUNK", 2)
    for limit in (meta.graph_def.ByteSize(), 0):
        monkeypatch.setattr(read, "CHUNKED_MIN_BYTES", limit)
        monkeypatch.setattr(chunked, "CHUNKED_MIN_BYTES", limit)
        parsed = read.read_model_file(model / "saved_model.pb", expect=read.SAVEDMODEL)
        first, second = parsed.graphs
        assert (first is None) == (limit > 0) and isinstance(second, ChunkedGraphDef)
        assert not parsed.message.meta_graphs[1].HasField("graph_def")
        assert parsed.message.meta_graphs[1].signature_def == meta.signature_def
        parts = api.analyze(model, "CPU=1")
        assert parts.model.entry == whole.model.entry
        assert whole.model.entry.startswith("signature 'serving_default'")
        assert _findings(parts) == _findings(whole)
        assert parts.placement == whole.placement and parts.placement
        train = api.analyze(model, "CPU=1", tag="train")
        assert list(train.graph.nodes) == ["x"]
    keras = read.read_model_file(ROOT / "samples/keras_cnn/saved_model.pb",
                                 expect=read.SAVEDMODEL)
    assert keras.libraries and keras.libraries[0].lazy      # (functions still apart)



@pytest.mark.parametrize("source", SOURCES)
def test_attr_keys_cut_from_the_file_are_the_keys_the_builder_cuts(source):
    """A node's attrs key, cut from the file's bytes, is what ``attrs_key`` cuts from the
    node serialized again: the builder makes the same records either way."""
    from placelint.model.attr_wire import attrs_key

    data = _graph_def(source).SerializeToString()
    got = chunked_graph_def(data, lite=True)
    keys = list(got.node.attr_keys())
    nodes = list(got.node)
    assert len(keys) == len(nodes)
    assert keys == [attrs_key(nd, nd.name, nd.op, nd.device, nd.input[:]) for nd in nodes]


def _node_bytes(*fields: tuple[int, bytes]) -> bytes:
    """A NodeDef's bytes with its length-delimited fields in the order given."""
    return b"".join(length_delimited(number, value) for number, value in fields)


def test_attr_offsets_read_every_node_as_its_fields_lay_it_out():
    """Where each node's fields after ``device`` start: at its end when it has none, past
    fields of 128 bytes and more (two-byte lengths), -1 for a node with more fields 1-4 than
    the walk reads; a node laid out out of field order keeps its late fields 1-4 in its key
    (its attrs are still read from it: the same attrs)."""
    import numpy as np

    from placelint.loaders.chunked import attr_offsets
    from placelint.proto import AttrValue

    entry = NodeDef(attr={"T": AttrValue(type=1)}).SerializeToString()    # (field 5)
    long_name = b"n" * 256          # (its length written 0x80 0x02)
    nodes = [
        _node_bytes((1, b"a"), (2, b"NoOp")),                               # no attrs
        entry,                                                              # attrs only
        _node_bytes((1, long_name), (2, b"Relu"), (3, b"x")) + entry,       # a 2-byte length
        _node_bytes((1, b"c"), (2, b"AddN"), *[(3, b"i")] * 70) + entry,    # past the walk
        _node_bytes((1, b"d"), (2, b"Relu")) + entry + _node_bytes((3, b"x")),   # out of order
        _node_bytes((1, b"e"), (2, b"Relu"), (3, b"x"), (4, b"/cpu:0")) + entry,
    ]
    data = b"".join(map(_node_field, nodes))
    wire = np.frombuffer(data, dtype=np.uint8)
    ends, starts, at = [], [], 0
    for n in nodes:
        whole = _node_field(n)
        starts.append(at + len(whole) - len(n))
        at += len(whole)
        ends.append(at)
    got = attr_offsets(wire, np.array(starts), np.array(ends)).tolist()
    assert got[0] == ends[0] and got[1] == starts[1] and got[3] == -1
    for k in (2, 4, 5):
        assert data[got[k]:ends[k]].startswith(entry), k
    assert data[got[4]:ends[4]] == entry + _node_bytes((3, b"x"))
    assert attr_offsets(wire, np.array(starts), np.array(ends), max_fields=80)[3] \
        == ends[3] - len(entry)
    # the attrs parsed from each key are the node's attrs
    for k in (1, 2, 4, 5):
        node = NodeDef.FromString(nodes[k])
        assert dict(NodeDef.FromString(data[got[k]:ends[k]]).attr) == dict(node.attr)


def test_a_node_read_in_chunks_past_the_walk_is_keyed_as_before(tmp_path, monkeypatch):
    """A node with more inputs than ``attr_offsets`` reads, in a model read in chunks: its
    key is cut by the builder, and the model is the one the whole parse gives."""
    from graphdefs import graph_def, op, placeholder

    nodes = [placeholder(f"x{i}", (2,)) for i in range(70)]
    nodes.append(op("sum", "AddN", [f"x{i}" for i in range(70)], N=70))
    path = tmp_path / "addn.pb"
    path.write_bytes(graph_def(*nodes).SerializeToString())
    whole = api.analyze(path, "CPU=1")
    monkeypatch.setattr(read, "CHUNKED_MIN_BYTES", 0)
    monkeypatch.setattr(chunked, "CHUNK_NODES", 5)
    monkeypatch.setattr(chunked, "FIRST_CHUNK", 2)
    parts = api.analyze(path, "CPU=1")
    assert chunked_graph_def(path.read_bytes(), True).node._attrs[0][-1] == -1
    assert _findings(parts) == _findings(whole)
    assert parts.graph.nodes["sum"].attrs == whole.graph.nodes["sum"].attrs
    assert parts.shapes.shape("sum") == whole.shapes.shape("sum") == (2,)
