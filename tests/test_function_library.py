"""A binary SavedModel's function library read apart from the rest of the file
(``loaders/library.py``): the same functions, names and refusals as the whole file's parse."""

from pathlib import Path

import pytest

from placelint.loaders import LoadError, discover, load_raw
from placelint.loaders.library import FunctionLibrary, split_saved_model
from placelint.proto import FunctionDef, SavedModel
from placelint.wire import length_delimited


def _saved_model(functions, n_meta=1) -> SavedModel:
    sm = SavedModel(saved_model_schema_version=1)
    for i in range(n_meta):
        meta = sm.meta_graphs.add()
        meta.meta_info_def.tags.append(f"tag{i}")
        meta.graph_def.node.add(name="x", op="Placeholder")
        for name, n in functions:
            f = meta.graph_def.library.function.add()
            f.signature.name = name
            for k in range(n):
                f.node_def.add(name=f"n{k}", op="NoOp")
        meta.graph_def.library.gradient.add(function_name="f", gradient_func="g")
    return sm


def test_split_is_the_whole_parse_without_functions():
    sm = _saved_model([("f", 2), ("g", 300), ("f", 3), ("h", 0)], n_meta=2)
    stripped, libraries = split_saved_model(sm.SerializeToString())
    whole = SavedModel.FromString(sm.SerializeToString())
    assert len(libraries) == 2
    for meta, lib in zip(whole.meta_graphs, libraries):
        expected = {f.signature.name: f for f in meta.graph_def.library.function}
        # a dict's order and its last function of a name (``f`` with 3 nodes)
        assert list(lib) == list(expected) == ["f", "g", "h"]
        assert [len(lib[name].node_def) for name in lib] == [3, 300, 0]
        assert all(lib[name] == expected[name] for name in lib)
        meta.graph_def.library.ClearField("function")
    assert SavedModel.FromString(stripped) == whole
    assert whole.meta_graphs[0].graph_def.library.gradient[0].gradient_func == "g"


def test_a_released_function_is_parsed_again():
    _, (lib,) = split_saved_model(_saved_model([("f", 2)]).SerializeToString())
    first = lib["f"]
    lib.release()
    assert "f" in lib and lib.get("f") == first and lib.get("missing") is None
    eager = FunctionLibrary.of(_saved_model([("f", 2)]).meta_graphs[0].graph_def)
    assert not eager.lazy and eager["f"] == first


def test_corrupt_function_refuses_the_file_as_the_whole_parse_does(tmp_path: Path,
                                                                   monkeypatch):
    sm = _saved_model([("f", 2)])
    data = bytearray(sm.SerializeToString())
    body = FunctionDef(signature=sm.meta_graphs[0].graph_def.library.function[0].signature)
    at = bytes(data).index(body.signature.SerializeToString())
    data[at + 2] = 0xFF                    # the name's first byte: not UTF-8
    (tmp_path / "saved_model.pb").write_bytes(bytes(data))
    with pytest.raises(Exception):
        SavedModel.FromString(bytes(data))
    with pytest.raises(LoadError) as exc:
        load_raw(discover([tmp_path])[0])
    monkeypatch.setattr("placelint.loaders.read.split_saved_model", lambda data: None)
    with pytest.raises(LoadError) as whole:
        load_raw(discover([tmp_path])[0])
    assert exc.value.message == whole.value.message
    assert "SavedModel': String field had bad UTF-8" in exc.value.message


def _overlong_tags(data: bytes, field_bytes: bytes) -> bytes:
    """``data`` with the one-byte tag of each top-level field ``field_bytes`` written as two
    bytes (0x92 0x00 for 0x12: a varint with a zero continuation, which protobuf reads as the
    same tag)."""
    out, i = bytearray(), 0
    while i < len(data):
        tag = data[i]
        size, j, shift = 0, i + 1, 0
        while True:
            b = data[j]
            size |= (b & 0x7F) << shift
            j += 1
            shift += 7
            if b < 0x80:
                break
        end = j if tag & 7 == 0 else j + size        # a varint field's value: read above
        head = bytes([tag | 0x80, 0]) if bytes([tag]) == field_bytes else bytes([tag])
        out += head + data[i + 1:end]
        i = end
    return bytes(out)


def test_a_field_tag_written_long_is_cut_where_it_starts():
    # the MetaGraphs' tags written in two bytes: the file read apart is still the whole
    # parse without its functions (a field is cut at its tag's first byte, wherever the
    # varint ends)
    sm = _saved_model([("f", 2), ("g", 1)], n_meta=2)
    data = _overlong_tags(sm.SerializeToString(), b"\x12")
    whole = SavedModel.FromString(data)
    assert whole == sm
    stripped, libraries = split_saved_model(data)
    assert [list(lib) for lib in libraries] == [["f", "g"], ["f", "g"]]
    for meta in whole.meta_graphs:
        meta.graph_def.library.ClearField("function")
    assert SavedModel.FromString(stripped) == whole


def test_a_graph_def_written_twice_is_parsed_whole():
    # protobuf merges the two: the split gives up (None) rather than guess
    sm = _saved_model([("f", 1)])
    data = sm.SerializeToString()
    meta = sm.meta_graphs[0]
    twice = SavedModel(saved_model_schema_version=1)
    doubled = meta.SerializeToString() + length_delimited(2, meta.graph_def.SerializeToString())
    data = twice.SerializeToString() + length_delimited(2, doubled)
    assert len(SavedModel.FromString(data).meta_graphs[0].graph_def.node) == 2    # merged
    assert split_saved_model(data) is None


def test_control_outputs_follow_the_signature_not_the_map():
    # ``control_ret`` is a protobuf map whose iteration order changes from one process to
    # the next: the expansion orders the exit NoOp's in-edges by the signature's
    # ``control_output`` (a key it does not declare comes last, by name)
    from placelint.model.expand import control_ret_nodes
    f = FunctionDef()
    f.signature.control_output.extend(["c5", "c0", "c9", "c3"])
    for i in (0, 3, 5, 9, 7, 1):
        f.control_ret[f"c{i}"] = f"node{i}"
    parsed = FunctionDef.FromString(f.SerializeToString())
    assert control_ret_nodes(parsed) == ["node5", "node0", "node9", "node3", "node1", "node7"]
