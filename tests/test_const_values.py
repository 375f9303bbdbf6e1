"""An integer Const's value as the shape functions read it: ``tensor_content`` of any
other size than its shape's elements times the item size gives no value (TF makes no
tensor of it), never an internal error."""

from __future__ import annotations

import struct

import pytest
from google.protobuf import text_format

import placelint
from placelint.analyses.shape_fns.base import const_value
from placelint.model.graph import Node
from placelint.proto import AttrValue, GraphDef


def _const(content: bytes, dims=(2,), dtype=3) -> Node:     # 3: DT_INT32
    value = AttrValue()
    value.tensor.dtype = dtype
    for d in dims:
        value.tensor.tensor_shape.dim.add(size=d)
    value.tensor.tensor_content = content
    return Node("c", "Const", "", None, {"value": value})


def test_exact_content_is_read():
    assert const_value(_const(struct.pack("<ii", 3, -4))) == (3, -4)
    assert const_value(_const(struct.pack("<qq", 5, 6), dtype=9)) == (5, 6)   # DT_INT64


@pytest.mark.parametrize("content", [b"\x01\x02\x03", struct.pack("<iii", 1, 2, 3),
                                     struct.pack("<i", 1), b"\x00" * 7])
def test_content_of_another_size_has_no_value(content):
    assert const_value(_const(content)) is None


def test_a_reshape_by_a_const_of_odd_content_is_no_internal_error():
    gd = text_format.Parse(r'''
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "s" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
    tensor_content: "\001\002\003" } } } }
node { name: "r" op: "Reshape" input: "x" input: "s" device: "/device:GPU:0"
  attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
''', GraphDef())
    report = placelint.analyze(gd, devices="CPU=1,GPU=1")
    assert "PL009" not in [d.code for d in report.findings]
