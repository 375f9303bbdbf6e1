"""``Graph.arrays``: the graph as integer arrays (node ids, interned ops and devices, CSR
in/out edges with slots and kind), built once and dropped when the graph changes."""

from __future__ import annotations

from google.protobuf import text_format

from placelint.model.arrays import CONTROL, DATA, REF
from placelint.model.build import build_graph
from placelint.model.graph import Edge
from placelint.proto import GraphDef

GRAPH = """
node { name: "v" op: "VariableV2" device: "/cpu:0"
       attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "a" op: "Assign" input: "v" input: "c" device: "/cpu:0"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "r" op: "Identity" input: "v" input: "^a" attr { key: "T" value { type: DT_FLOAT } } }
"""


def _graph():
    return build_graph(text_format.Parse(GRAPH, GraphDef())).graph


def test_arrays_hold_ids_interned_names_and_csr_edges():
    g = _graph()
    a = g.arrays
    assert a.names == ["v", "c", "a", "r"] and a.index == {"v": 0, "c": 1, "a": 2, "r": 3}
    assert a.op_names == ["VariableV2", "Const", "Assign", "Identity"]
    assert a.op.tolist() == [0, 1, 2, 3]
    assert a.device_names == ["/cpu:0", ""] and a.device.tolist() == [0, 1, 0, 1]
    # in-edges per node in Node.in_edges order: a <- v (ref input), c; r <- v, ^a
    assert a.in_ptr.tolist() == [0, 0, 0, 2, 4]
    assert a.in_src.tolist() == [0, 1, 0, 2]
    assert a.in_src_slot.tolist() == [0, 0, 0, -1]
    assert a.in_dst_slot.tolist() == [0, 1, 0, -1]
    assert a.in_kind.tolist() == [REF, DATA, DATA, CONTROL]
    # out-edges: v -> a, r; c -> a; a -> ^r
    assert a.out_ptr.tolist() == [0, 2, 3, 4, 4]
    assert a.out_dst.tolist() == [2, 3, 2, 3]
    assert a.out_kind.tolist() == [REF, DATA, DATA, CONTROL]
    assert g.arrays is a        # built once


def test_arrays_are_rebuilt_after_the_graph_changes():
    g = _graph()
    before = g.arrays
    g.add_edge(Edge("c", -1, "r", -1))
    after = g.arrays
    assert after is not before
    assert after.in_ptr.tolist() == [0, 0, 0, 2, 5] and after.in_src.tolist()[-1] == 1
    assert after.in_kind.tolist()[-1] == CONTROL
