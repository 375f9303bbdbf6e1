"""Small integer values (shape vectors, axes, permutations) through the ops that make
and combine them: Const, Shape/Size/Rank, Pack, ConcatV2, StridedSlice, Slice, element-wise
integer arithmetic, Prod/Sum, Gather. Value handlers store into ``inf.values`` (one
value per (node, slot)); an unknown element is None."""

from __future__ import annotations

from math import prod

from ...model.attrs import attr_b, attr_i
from ...model.graph import Node
from ...model.ops import CONSTANT, METADATA
from ...model.shapes import num_elements
from .base import INT_TYPES, MAX_VALUE_ELEMENTS, Handler, Value, const_value, table


def _set_value(inf, node: Node, slot: int, value: Value | None) -> None:
    if value is not None and len(value) <= MAX_VALUE_ELEMENTS:
        inf.values[(node.name, slot)] = tuple(value)
    else:
        inf.values.pop((node.name, slot), None)


def _v_const(inf, node, ins, srcs):
    out_types = node.output_dtypes      # its ``dtype`` attr: a float constant is no shape
    if out_types and out_types[0] not in INT_TYPES:     # (without reading its tensor)
        if inf.passes > 1:      # (on the first pass it has no value yet to drop)
            _set_value(inf, node, 0, None)
        return
    a = node.attrs.get("value")
    if a is None or a.tensor.dtype not in INT_TYPES:
        _set_value(inf, node, 0, None)
        return
    raw = a.SerializeToString()     # a model repeats its small integer constants
    try:
        value = inf.const_values[raw]
    except KeyError:
        value = inf.const_values[raw] = const_value(node)
    _set_value(inf, node, 0, value)


def _v_pass(inf, node, ins, srcs):
    out_types = node.output_dtypes
    if out_types and out_types[0] not in INT_TYPES:
        _set_value(inf, node, 0, None)  # e.g. a Cast to float: no longer a shape-like value
        return
    _set_value(inf, node, 0, inf.value(srcs[0] if srcs else None))


def _v_shape(inf, node, ins, srcs):
    for slot, s in enumerate(ins if node.op == "ShapeN" else ins[:1]):
        _set_value(inf, node, slot, None if s is None else tuple(d if d >= 0 else None for d in s))


def _v_size(inf, node, ins, srcs):
    n = num_elements(ins[0]) if ins else None
    _set_value(inf, node, 0, None if n is None else (n,))


def _v_rank(inf, node, ins, srcs):
    _set_value(inf, node, 0, None if not ins or ins[0] is None else (len(ins[0]),))


def _v_pack(inf, node, ins, srcs):
    vals = [inf.value(r) for r in srcs]
    if vals and all(v is not None and len(v) == 1 for v in vals) and attr_i(node, "axis", 0) in (0, -1):
        _set_value(inf, node, 0, tuple(v[0] for v in vals))
    else:
        _set_value(inf, node, 0, None)


def _v_concat(inf, node, ins, srcs):
    parts = srcs[:-1] if node.op == "ConcatV2" else srcs[1:]
    vals = [inf.value(r) for r in parts]
    ok = all(v is not None for v in vals) and all(s is not None and len(s) == 1 for s in ins[:len(parts)])
    _set_value(inf, node, 0, tuple(x for v in vals for x in v) if ok and vals else None)


def _v_strided_slice(inf, node, ins, srcs):
    v = inf.value(srcs[0] if srcs else None)
    b, e, s = (inf.value(srcs[i] if len(srcs) > i else None) for i in (1, 2, 3))
    if v is None or b is None or e is None or s is None or len(b) != 1 or None in (b[0], e[0], s[0]) \
            or (ins[0] is not None and len(ins[0]) != 1) or s[0] == 0 \
            or attr_i(node, "ellipsis_mask", 0) or attr_i(node, "new_axis_mask", 0):
        _set_value(inf, node, 0, None)
        return
    bm, em, sm = (attr_i(node, k, 0) & 1 for k in ("begin_mask", "end_mask", "shrink_axis_mask"))
    if sm:
        i = b[0] if b[0] >= 0 else b[0] + len(v)
        _set_value(inf, node, 0, (v[i],) if 0 <= i < len(v) else None)
        return
    _set_value(inf, node, 0, tuple(v[slice(None if bm else b[0], None if em else e[0], s[0])]))


def _v_slice(inf, node, ins, srcs):
    """Slice of a 1-D value (array_ops.cc Slice: ``size`` -1 takes the rest), as
    softmax_cross_entropy_with_logits slices a Shape to rebuild a logits shape."""
    v = inf.value(srcs[0] if srcs else None)
    b, n = (inf.value(srcs[i] if len(srcs) > i else None) for i in (1, 2))
    if v is None or b is None or n is None or len(b) != 1 or len(n) != 1 or None in (b[0], n[0]) \
            or not 0 <= b[0] <= len(v) or n[0] < -1:
        _set_value(inf, node, 0, None)
        return
    end = len(v) if n[0] == -1 else b[0] + n[0]
    _set_value(inf, node, 0, tuple(v[b[0]:end]) if end <= len(v) else None)


def _v_binary(inf, node, ins, srcs):
    a, b = (inf.value(srcs[i] if len(srcs) > i else None) for i in (0, 1))
    if a is None or b is None or (len(a) != len(b) and 1 not in (len(a), len(b))):
        _set_value(inf, node, 0, None)
        return
    n = max(len(a), len(b))
    a = a * n if len(a) == 1 else a
    b = b * n if len(b) == 1 else b
    fn = {"Add": lambda x, y: x + y, "AddV2": lambda x, y: x + y, "Sub": lambda x, y: x - y,
          "Mul": lambda x, y: x * y, "FloorDiv": lambda x, y: x // y if y else None,
          "Maximum": max, "Minimum": min}[node.op]
    _set_value(inf, node, 0, tuple(None if x is None or y is None else fn(x, y) for x, y in zip(a, b)))


def _v_reduce(inf, node, ins, srcs):
    v = inf.value(srcs[0] if srcs else None)
    if v is None or ins[0] is None or len(ins[0]) != 1 or attr_b(node, "keep_dims"):
        _set_value(inf, node, 0, None)
        return
    if None in v:
        _set_value(inf, node, 0, (None,))
        return
    _set_value(inf, node, 0, (prod(v) if node.op == "Prod" else sum(v),))


def _v_gather(inf, node, ins, srcs):
    v = inf.value(srcs[0] if srcs else None)
    idx = inf.value(srcs[1] if len(srcs) > 1 else None)
    if v is None or idx is None or ins[0] is None or len(ins[0]) != 1 or None in idx \
            or not all(-len(v) <= i < len(v) for i in idx):
        _set_value(inf, node, 0, None)
        return
    _set_value(inf, node, 0, tuple(v[i] for i in idx))


#: value ops that produce a value from shapes or attrs alone (the others need an input value)
SOURCE_VALUE_OPS = CONSTANT | METADATA | {"ShapeN"}
VALUE_OPS: dict[str, Handler] = table(
    (_v_const, "Const HostConst"),
    (_v_pass, "Identity Cast StopGradient Snapshot Enter Exit _Arg _Retval Reshape Squeeze ExpandDims"),
    (_v_shape, "Shape ShapeN"), (_v_size, "Size"), (_v_rank, "Rank"), (_v_pack, "Pack"),
    (_v_concat, "ConcatV2 Concat"), (_v_strided_slice, "StridedSlice"),
    (_v_slice, "Slice"),
    (_v_binary, "Add AddV2 Sub Mul FloorDiv Maximum Minimum"), (_v_reduce, "Prod Sum"),
    (_v_gather, "GatherV2 Gather"),
)
