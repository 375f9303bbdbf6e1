"""Which files a run reads: protobuf files that are not models (label maps, serving and
pipeline configs, tf.train.Example fixtures), and what the loaders still call broken.

The CLI side (skipping with a note, --pre-commit, excludes, .gitignore, missing paths) is
in tests/test_cli_inputs.py.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from checkrun import ROOT, SAMPLES
from hostile.corpus import CASES

from placelint.loaders import LoadError, LoadOptions, discover, load_raw
from placelint import wire
from placelint.loaders import sniff
from placelint.pipeline import analyze
from placelint.settings import Settings

NOT_MODELS = ROOT / "tests" / "data" / "not_models"
OTHER_FILES = ["label_map.pbtxt", "models_config.pbtxt", "ssd_pipeline.pbtxt", "example.pbtxt",
               "example.pb"]
KINDS = {"label_map.pbtxt": "object-detection label map",
         "models_config.pbtxt": "TF Serving model config",
         "ssd_pipeline.pbtxt": "object-detection pipeline config",
         "example.pbtxt": "tf.train.Example", "example.pb": "tf.train.Example"}


def _load_error(path: Path) -> LoadError:
    with pytest.raises(LoadError) as info:
        load_raw(discover([path])[0])
    return info.value


@pytest.mark.parametrize("name", OTHER_FILES)
def test_other_protobuf_files_are_not_models(name):
    err = _load_error(NOT_MODELS / name)
    assert err.not_a_model and err.code == "PL001"
    assert err.message.startswith("not a TensorFlow model: ")
    assert f"perhaps {'an' if KINDS[name][0] in 'aeiou' else 'a'} {KINDS[name]}" in err.message


@pytest.mark.parametrize("name", OTHER_FILES)
def test_an_analysed_other_file_is_a_pl001_marked_not_a_model(name):
    report = analyze(discover([NOT_MODELS / name])[0], Settings())
    assert report.model is None and report.not_a_model.startswith("not a TensorFlow model")
    assert [d.code for d in report.diagnostics] == ["PL001"]


def test_example_fixture_is_what_tensorflow_writes():
    """example.pb is a real tf.train.Example (TensorFlow reads it back), and TensorFlow's
    own GraphDef parser finds no graph in it: no node has an op."""
    tf = pytest.importorskip("tensorflow")
    data = (NOT_MODELS / "example.pb").read_bytes()
    feature = tf.train.Example.FromString(data).features.feature
    assert sorted(feature) == ["image/encoded", "image/height", "image/object/bbox/xmin",
                               "image/object/class/text"]
    assert feature["image/height"].int64_list.value == [32]
    assert feature["image/object/class/text"].bytes_list.value == [b"person", b"bicycle"]
    try:
        g = tf.compat.v1.GraphDef.FromString(data)
    except Exception:  # noqa: BLE001 - TF refuses it outright: fine too
        return
    assert not any(n.op for n in g.node)


def test_every_shipped_model_is_a_model():
    """No sample and no fuzz seed is taken for another kind of file."""
    paths = [p for p in sorted(SAMPLES.rglob("*")) if p.suffix in (".pb", ".pbtxt", ".meta")
             and p.name not in ("fingerprint.pb", "saved_model_debug_info.pb")]
    paths += sorted((ROOT / "tests" / "fuzz" / "seeds").iterdir())
    assert len(paths) > 10
    for path in paths:
        data = path.read_bytes()
        assert not sniff.is_binary_of_other_message(data), path
        text = data.decode("utf-8", "replace")
        assert not sniff.is_text_of_other_message(text)[0], path


@pytest.mark.parametrize("text, fields", [
    ('item { name: "a" id: 1 }\nitem { id: 2 }', ["item"]),
    ("a: [1, 2.5, -inf] b: ['x' \"y\", 'z'] c: [{x: 1}, <y: 2>] d [] e: []", list("abcde")),
    ("f { [ext.foo] { x: 1 } [type.googleapis.com/a.B] { y: -3e5 } } g: 0x1F;", ["f", "g"]),
    ("# a comment\nm: { n: true, o: E_NUM }", ["m"]),
    ("", []),
    # not text format: these are never "another kind of protobuf"
    ('node { name: "a" op: "NoOp"', None),          # unclosed
    ("These are my notes, not a model.", None),     # prose
    ("a: [1, 2", None), ("a: [{x: 1}, ]", None), ("}", None), ("a 1", None),
])
def test_text_format_syntax(text, fields):
    assert sniff.text_fields(text) == fields


@pytest.mark.parametrize("text, other", [
    ('item { id: 1 }', True),
    ('item { id: 1 }\nnode { name: "a" op: "NoOp" }', False),   # a broken graph
    ('node { name: "a" op: "NoOp" }', False),
    ('nodes { name: "a" }', True),                              # no model field at all
    ("# only a comment\n", False),                              # an empty GraphDef
])
def test_text_other_kind_needs_no_model_field(text, other):
    assert sniff.is_text_of_other_message(text)[0] is other


def test_broken_binary_graphs_stay_broken():
    """Truncations and byte corruptions of a real binary GraphDef are never "another kind
    of protobuf": they keep their "corrupt, truncated" diagnostic in every walk."""
    data = (SAMPLES / "towers_gpu.pb").read_bytes()
    rng = random.Random(14)
    for cut in range(1, len(data), max(1, len(data) // 300)):
        assert not sniff.is_binary_of_other_message(data[:cut]), cut
    for _ in range(300):
        b = bytearray(data)
        for _ in range(3):
            b[rng.randrange(len(b))] = rng.randrange(256)
        assert not sniff.is_binary_of_other_message(bytes(b))


@pytest.mark.parametrize("case", [c for c in CASES if c.code in ("PL001", "PL002")],
                         ids=lambda c: c.name)
def test_hostile_files_are_not_called_other_files(case, tmp_path):
    """Every broken file of the hostile corpus keeps its own diagnostic: none is taken for
    a well-formed file of another kind (which a walk would skip)."""
    path = case.make(tmp_path)
    try:
        load_raw(discover([path])[0], LoadOptions(**case.options))
    except LoadError as exc:
        assert not exc.not_a_model, (case.name, exc.message)


def test_wire_fields():
    # (number, wire type, field start, value start, value end)
    assert wire.fields(b"\x08\x96\x01") == [(1, 0, 0, 1, 3)]
    assert wire.fields(b"\x12\x03abc\x1d\x00\x00\x80\x3f") == [(2, 2, 0, 2, 5), (3, 5, 5, 6, 10)]
    assert wire.fields(b"\x92\x00\x01a") == [(2, 2, 0, 3, 4)]    # a tag written long
    assert wire.fields(b"\x0a\x02\x08\x05", 2, 4) == [(1, 0, 2, 3, 4)]    # a field's value
    assert wire.fields(b"\x12\x05abc") is None          # length past the end
    assert wire.fields(b"\x0b") is None                 # a group
    assert wire.fields(b"\x00\x01") is None             # field number 0
    assert wire.read_varint(b"\xff" * 11, 0) is None     # over ten bytes
    assert wire.length_delimited(2, b"abc") == b"\x12\x03abc"
    assert wire.length_delimited(300, b"x" * 200)[:4] == b"\xe2\x12\xc8\x01"
    assert [wire.varint_size(n) for n in (0, 127, 128, 16383, 16384)] == [1, 1, 2, 2, 3]


def _binary_graph(path: Path, n: int, bad: int) -> Path:
    """A binary GraphDef of ``n`` NoOps whose node ``bad`` has neither a name nor an op."""
    from placelint.proto import GraphDef
    gd = GraphDef()
    for i in range(n):
        if i == bad:
            gd.node.add()
        else:
            gd.node.add(name=f"n{i}", op="NoOp")
    path.write_bytes(gd.SerializeToString())
    return path


def test_a_large_binary_graph_is_told_from_other_files_by_its_first_nodes(tmp_path: Path):
    """The first PLAUSIBLE_NODES nodes tell a binary GraphDef from another file parsed as
    one (a pass over every node cost 0.4 s at 10^6 nodes); a later node without a name
    or an op is reported by the build, as in a text-format file."""
    from placelint.loaders.read import PLAUSIBLE_NODES
    early = _binary_graph(tmp_path / "early.pb", PLAUSIBLE_NODES + 10, bad=5)
    assert "corrupt, truncated" in _load_error(early).message
    late = _binary_graph(tmp_path / "late.pb", PLAUSIBLE_NODES + 10, bad=PLAUSIBLE_NODES + 5)
    report = analyze(discover([late])[0], Settings())
    assert report.model is not None
    found = {d.code: d.message for d in report.diagnostics}
    assert len(report.model.graph) == PLAUSIBLE_NODES + 10
    assert "has no name" in found["PL005"] and "op '' is not registered" in found["PL105"]
