"""Build small GraphDefs in tests without TensorFlow.

    g = graph(placeholder("x", (2, 3)), op("y", "Relu", ["x"]))

``op(name, op_type, inputs, **attrs)`` turns keyword attrs into AttrValues: ``bool`` -> b,
``int`` -> i, ``str`` -> s, ``list[int]`` -> list.i, ``Shape((...))`` -> shape, ``Type(n)``
-> type. ``T`` defaults to DT_FLOAT for ops that have a ``T`` attr.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from placelint.model.build import build_graph
from placelint.opdb import get_opdb
from placelint.proto import AttrValue, GraphDef, NodeDef

FLOAT, INT32, INT64, STRING, BOOL, RESOURCE = 1, 3, 9, 7, 10, 20


@dataclass(frozen=True)
class Type:
    value: int


@dataclass(frozen=True)
class Shape:
    dims: tuple[int, ...] | None     #: None = unknown rank


def attr(value) -> AttrValue:
    if isinstance(value, AttrValue):
        return value
    if isinstance(value, bool):
        return AttrValue(b=value)
    if isinstance(value, int):
        return AttrValue(i=value)
    if isinstance(value, str):
        return AttrValue(s=value.encode())
    if isinstance(value, Type):
        return AttrValue(type=value.value)
    if isinstance(value, Shape):
        a = AttrValue()
        if value.dims is None:
            a.shape.unknown_rank = True
        else:
            for d in value.dims:
                a.shape.dim.add(size=d)
        return a
    if isinstance(value, list) and all(isinstance(v, Type) for v in value):
        return AttrValue(list=AttrValue.ListValue(type=[v.value for v in value]))
    if isinstance(value, list):
        return AttrValue(list=AttrValue.ListValue(i=list(value)))
    raise TypeError(value)


def op(name: str, op_type: str, inputs=(), device: str = "", **attrs) -> NodeDef:
    nd = NodeDef(name=name, op=op_type, device=device)
    nd.input.extend(inputs)
    info = get_opdb().op(op_type)
    if info is not None and "T" in info.attr_defs and "T" not in attrs:
        attrs["T"] = Type(FLOAT)
    for k, v in attrs.items():
        nd.attr[k].CopyFrom(attr(v))
    return nd


def placeholder(name: str, shape, dtype: int = FLOAT) -> NodeDef:
    return op(name, "Placeholder", dtype=Type(dtype), shape=Shape(None if shape is None else tuple(shape)))


def const(name: str, values, dtype: int = INT32, shape=None, content: bool = True) -> NodeDef:
    """An integer or float Const; ``content`` stores it as tensor_content, else int_val."""
    arr = np.asarray(values, dtype={INT32: np.int32, INT64: np.int64, FLOAT: np.float32}[dtype])
    shape = arr.shape if shape is None else tuple(shape)
    nd = op(name, "Const", dtype=Type(dtype))
    t = nd.attr["value"].tensor
    t.dtype = dtype
    for d in shape:
        t.tensor_shape.dim.add(size=d)
    if content:
        t.tensor_content = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    elif dtype == INT64:
        t.int64_val.extend(int(v) for v in arr.ravel())
    elif dtype == INT32:
        t.int_val.extend(int(v) for v in arr.ravel())
    else:
        t.float_val.extend(float(v) for v in arr.ravel())
    return nd


def graph_def(*nodes: NodeDef) -> GraphDef:
    gd = GraphDef()
    gd.node.extend(nodes)
    return gd


def graph(*nodes: NodeDef, name: str = "test"):
    return build_graph(graph_def(*nodes), name=name).graph


def to_pbtxt(*nodes: NodeDef) -> str:
    from google.protobuf import text_format
    return text_format.MessageToString(graph_def(*nodes))
