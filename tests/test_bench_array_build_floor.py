"""benchmarks/array_build_floor.py: the arrays it builds are the graph placelint builds (the
same nodes in order, ops, devices, and every edge with the same ends and slot), so its
figures measure a build of the same graph."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import array_build_floor  # noqa: E402

from placelint.loaders import discover, load_raw  # noqa: E402
from placelint.model import model_from_raw  # noqa: E402
from placelint.model.edge_index import graph_edges  # noqa: E402
from placelint.settings import Settings  # noqa: E402


def _graph_with_every_kind_of_input(tmp_path: Path) -> Path:
    from placelint.proto import GraphDef
    gd = GraphDef()
    gd.node.add(name="a", op="Const", device="/device:CPU:1").attr["dtype"].type = 1
    split = gd.node.add(name="s", op="Split", input=["a", "a"])
    split.attr["num_split"].i = 2
    split.attr["T"].type = 1
    gd.node.add(name="add", op="Add", input=["s:1", "s", "^a"]).attr["T"].type = 1
    gd.node.add(name="lost", op="Identity", input=["missing"]).attr["T"].type = 1
    path = tmp_path / "g.pb"
    path.write_bytes(gd.SerializeToString())
    return path


@pytest.mark.parametrize("sample", ["towers_gpu.pb", "every kind of input"])
def test_the_arrays_are_placelints_graph(sample, tmp_path):
    path = (ROOT / "samples" / sample if sample.endswith(".pb")
            else _graph_with_every_kind_of_input(tmp_path))
    built = array_build_floor.array_build(path.read_bytes())
    graph = model_from_raw(load_raw(discover([path])[0], Settings().load)).graph
    assert built["names"] == list(graph.nodes)
    assert [built["ops"][k] for k in built["op"]] == [n.op for n in graph]
    assert [built["devices"][k] for k in built["device"]] == [n.device for n in graph]
    ge = graph_edges(graph)
    # (an input naming no node is -1 in the arrays; placelint makes no edge of it: PL005)
    kept = built["src"] >= 0
    for ours, theirs in ((built["src"], ge.src), (built["dst"], ge.dst),
                         (built["slot"], ge.src_slot)):
        assert np.array_equal(ours[kept], theirs)
    if sample != "towers_gpu.pb":
        assert int((~kept).sum()) == 1 and (ge.src_slot == -1).any() and (ge.src_slot == 1).any()
    else:
        assert len(ge.src) >= 20
    assert set(built["seconds"]) == {"parse", "fields", "codes", "edges", "total"}
