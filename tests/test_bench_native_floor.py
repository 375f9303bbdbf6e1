"""benchmarks/native_build_floor.py: the compiled floor (``native_floor.c``) builds the same
arrays as the Python floor from the same bytes, so the two figures measure one build.

It needs a C compiler and the interpreter's headers: CI installs them (``.ci/run``); without
them these tests are skipped."""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import array_build_floor  # noqa: E402
import native_build_floor  # noqa: E402

from placelint.proto import GraphDef  # noqa: E402
from placelint.wire import length_delimited  # noqa: E402


pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc"))
    or not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists(),
    reason="no C compiler or no Python headers")


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    return native_build_floor.compile_native(tmp_path_factory.mktemp("native"))


def _odd_graph() -> bytes:
    """Every kind of input, names that repeat, ops and devices in a new order, fields the
    build skips (attrs, the library, versions) and a node whose fields come out of order."""
    gd = GraphDef()
    gd.node.add(name="a", op="Const", device="/device:CPU:1").attr["dtype"].type = 1
    gd.node.add(name="s", op="Split", input=["a", "a"]).attr["num_split"].i = 2
    gd.node.add(name="add", op="Add", input=["s:1", "s", "^a", "^missing"])
    gd.node.add(name="odd", op="Identity", device="/device:GPU:0",
                input=["s:x", "s:", ":1", "", "a:007", "lost:2"])
    gd.node.add(name="a", op="NoOp", input=["^add"])         # (a name again: this one wins)
    gd.library.function.add().signature.name = "f"
    gd.versions.producer = 1
    # device (4), input (3), op (2), name (1): written backwards
    node = (length_delimited(4, b"/device:CPU:1") + length_delimited(3, b"odd")
            + length_delimited(2, b"Identity") + length_delimited(1, b"late"))
    return gd.SerializeToString() + length_delimited(1, node)


@pytest.mark.parametrize("sample", ["towers_gpu.pb", "odd graph"])
def test_the_native_arrays_are_the_python_floors(native, sample):
    data = (ROOT / "samples" / sample).read_bytes() if sample.endswith(".pb") else _odd_graph()
    floor = array_build_floor.array_build(data)
    built = native_build_floor.native_arrays(native, data, names=True)
    assert native_build_floor.same_graph(built, floor)
    if sample == "odd graph":
        assert built["names"] == ["a", "s", "add", "odd", "a", "late"]
        assert built["ops"] == ["Const", "Split", "Add", "Identity", "NoOp"]
        assert built["devices"] == ["/device:CPU:1", "", "/device:GPU:0"]
        # add's inputs, then odd's: the last "a" (4) is the source; a slot that is not
        # digits is -1, and so is a name not in the graph
        assert built["src"][2:12].tolist() == [1, 1, 4, -1, 1, 1, -1, -1, 4, -1]
        assert built["slot"][2:12].tolist() == [1, 0, -1, -1, -1, -1, 1, 0, 7, 2]
    # one that differs in a single slot is told apart
    changed = {**built, "slot": built["slot"].copy()}
    changed["slot"][0] += 1
    assert not native_build_floor.same_graph(changed, floor)


def test_a_truncated_graph_is_refused(native):
    data = (ROOT / "samples" / "towers_gpu.pb").read_bytes()
    with pytest.raises(ValueError, match="truncated"):
        native.build(data[:len(data) // 2])     # (within a node)
    assert np.frombuffer(native.build(data)["op"], np.int32).size == 20
