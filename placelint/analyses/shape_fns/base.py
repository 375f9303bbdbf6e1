"""What every shape function shares: shape algebra after TensorFlow's
``InferenceContext`` (common_shape_fns.cc), small integer values, the handler type.

A handler takes ``(inf, node, ins, srcs)``: the inferencer (``inf.value(edge)`` and
``inf.handle(edge)`` look up what an input carries), the node, its input shapes by slot
and its data input edges by slot; it returns the output shapes, or None when nothing is
known. Shapes are tuples with -1 for an unknown dim, None for an unknown rank.
"""

from __future__ import annotations

from math import prod
from typing import Any, Callable

import numpy as np

from ... import dtypes as _dt
from ...model.attrs import attr
from ...model.graph import Node
from ...opdb.arg_types import MAX_ARG_COUNT

Shape = tuple[int, ...]
Value = tuple  # tuple[int | None, ...]
Handler = Callable[[Any, Node, list, list], "list[Shape | None] | None"]

#: Largest integer tensor whose value is tracked (shape vectors, axes, perms are tiny).
MAX_VALUE_ELEMENTS = 1024
INT_TYPES = frozenset({_dt.DT_INT32, _dt.DT_INT64, _dt.DT_UINT8, _dt.DT_INT16, _dt.DT_INT8,
                       _dt.DT_UINT16, _dt.DT_UINT32, _dt.DT_UINT64})
#: little-endian numpy types of their ``tensor_content`` bytes
_NUMPY_INT = {_dt.DT_INT32: "<i4", _dt.DT_INT64: "<i8", _dt.DT_UINT8: "<u1", _dt.DT_INT16: "<i2",
              _dt.DT_INT8: "<i1", _dt.DT_UINT16: "<u2", _dt.DT_UINT32: "<u4", _dt.DT_UINT64: "<u8"}


def table(*entries: tuple[Handler, str]) -> dict[str, Handler]:
    """op -> handler, from ``(handler, "Op OtherOp ...")`` pairs (each op once)."""
    out: dict[str, Handler] = {}
    for fn, ops in entries:
        for op in ops.split():
            assert op not in out, f"{op} has two shape functions"
            out[op] = fn
    return out


def refine(recorded: Shape | None, inferred: Shape | None) -> Shape | None:
    """The recorded shape, with its unknown dims filled from the inferred one."""
    if recorded is None:
        return inferred
    if inferred is None or inferred == recorded or len(inferred) != len(recorded):
        return recorded
    return tuple(r if r >= 0 else i for r, i in zip(recorded, inferred))


def common(a: Shape | None, b: Shape | None) -> Shape | None:
    """Most specific shape both fit (what a Merge of the two produces)."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else -1 for x, y in zip(a, b))


def merge(a: Shape | None, b: Shape | None) -> Shape | None:
    """Combine two descriptions of the same tensor (TF's InferenceContext::Merge)."""
    if a is None:
        return b
    if b is None or a == b or len(a) != len(b):
        return a
    return tuple(x if x >= 0 else y for x, y in zip(a, b))


def broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    """BroadcastBinaryOpOutputShapeFn (common_shape_fns.cc); None when incompatible."""
    if a is None or b is None:
        return None
    if len(a) < len(b):
        a, b = b, a
    pad = len(a) - len(b)
    out = list(a[:pad])
    for x, y in zip(a[pad:], b):
        if x == y:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x < 0 and y < 0:
            out.append(-1)
        elif x < 0:
            out.append(y)
        elif y < 0:
            out.append(x)
        else:
            return None
    return tuple(out)


def window(size: int, k: int, stride: int, dilation: int, padding: str,
            pad_before: int = 0, pad_after: int = 0) -> int:
    """GetWindowedOutputSizeVerbose (kernel_shape_util.cc)."""
    if size < 0 or k < 0:
        return -1
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        out = (size - eff + stride) // stride
    elif padding == "EXPLICIT":
        out = (size + pad_before + pad_after - eff + stride) // stride
    else:  # SAME
        out = (size + stride - 1) // stride
    return out if out >= 0 else -1


def const_value(node: Node) -> Value | None:
    """Flattened value of an integer Const with at most MAX_VALUE_ELEMENTS elements."""
    a = attr(node, "value")
    if a is None:
        return None
    t = a.tensor
    if t.dtype not in INT_TYPES or t.tensor_shape.unknown_rank:
        return None
    shape = tuple(int(d.size) for d in t.tensor_shape.dim)
    count = prod(shape)
    if count > MAX_VALUE_ELEMENTS or any(d < 0 for d in shape):
        return None
    if t.tensor_content:
        np_type = np.dtype(_NUMPY_INT[t.dtype])
        if len(t.tensor_content) != count * np_type.itemsize:
            # TF makes no tensor of it (Tensor::FromProto: "Input size was N and expected
            # M"): no value, and no frombuffer of a size that is no multiple of the item's
            return None
        return tuple(np.frombuffer(t.tensor_content, dtype=np_type).tolist())
    vals = list(t.int64_val) if t.dtype in (_dt.DT_INT64, _dt.DT_UINT64) else list(t.int_val)
    if t.dtype == _dt.DT_UINT32:
        vals = list(t.uint32_val) or vals
    if t.dtype == _dt.DT_UINT64:
        vals = list(t.uint64_val) or vals
    if not vals:
        return tuple([0] * count)
    if len(vals) < count:  # TF repeats the last value
        vals += [vals[-1]] * (count - len(vals))
    return tuple(int(v) for v in vals[:count])


def attr_count(node: Node, key: str, default: int) -> int | None:
    """A number attr that sizes a node's outputs (Unpack's ``num``, Split's
    ``num_split``; ``default`` when unset or 0); None past the op database's bound
    (``opdb.arg_types.MAX_ARG_COUNT``: the node's outputs are unknown, and no list that
    long is made)."""
    a = attr(node, key)
    n = (int(a.i) if a is not None and a.WhichOneof("value") == "i" else 0) or default
    return n if n <= MAX_ARG_COUNT else None


def as_shape(value: Value | None) -> Shape | None:
    """A shape given as a tensor value (unknown elements -> -1)."""
    if value is None:
        return None
    return tuple(-1 if v is None or v < 0 else int(v) for v in value)


def norm_axis(axis: int | None, rank: int) -> int | None:
    if axis is None or not -rank <= axis < rank:
        return None
    return axis % rank


def first(inf, node, ins, srcs):
    """The first input's shape: pass-through and element-wise unary ops."""
    return [ins[0] if ins else None]


def scalar(inf, node, ins, srcs):
    return [()]
