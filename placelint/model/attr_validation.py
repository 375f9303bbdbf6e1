"""TensorFlow's per-attr checks, in its words: ``AttrValueHasType`` (attr_value_util.cc),
``ValidateAttrValue`` (op_def_util.cc), ``PartialTensorShape::IsValidShape``
(tensor_shape.cc), ``DataTypeString`` (types.cc), and the ``Op<...>`` summary of an op
(``SummarizeOpDef``, shipped as data by tools/gen_opdb.py). Used by nodedef_validation.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..data import op_summaries
from ..opdb.arg_types import value_case

MAX_RANK = 254          # PartialTensorShape: at most 254 dimensions
MAX_ELEMENTS = 2**63 - 1

_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")
_SCALAR_KIND = {"s": "string", "i": "int", "f": "float", "b": "bool", "type": "type",
                "shape": "shape", "tensor": "tensor", "func": "func"}
_FIELD_OF_KIND = {v: k for k, v in _SCALAR_KIND.items()}


# --------------------------------------------------------------------------- data


def op_summary(op: str) -> str:
    """TensorFlow's ``Op<...>`` summary of ``op``, as its import errors quote it."""
    return op_summaries().get(op) or f"Op<name={op}>"


def dtype_string(dtype: int) -> str:
    """types.cc DataTypeString: DT_FLOAT -> 'float', DT_FLOAT_REF -> 'float_ref'."""
    if dtype == _dt.DT_INVALID:
        return "INVALID"
    name = _dt.dtype_enum_name(dtype)
    if not name.startswith("DT_") or name.startswith("DT_UNKNOWN"):
        return f"unknown dtype enum ({dtype})"
    return name[3:].lower()


# --------------------------------------------------------------------------- attrs


def attr_value_has_type(value, attr_type: str) -> str | None:
    """attr_value_util.cc AttrValueHasType: None when ``value`` is of ``attr_type``,
    else TensorFlow's message."""
    case = value_case(value)
    is_list = attr_type.startswith("list(")
    num_set = 0
    if case == "list":
        lst = value.list
        for fld in _LIST_FIELDS:
            if len(getattr(lst, fld)):
                kind = _SCALAR_KIND[fld]
                if attr_type != f"list({kind})":
                    return f"AttrValue had value with type 'list({kind})' when '{attr_type}' expected"
                num_set += 1
    elif case in _SCALAR_KIND:
        kind = _SCALAR_KIND[case]
        if attr_type != kind:
            return f"AttrValue had value with type '{kind}' when '{attr_type}' expected"
        num_set += 1
    elif case == "placeholder":
        return "AttrValue had value with unexpected type 'placeholder'"
    if is_list and case != "list":
        if num_set:
            return f"AttrValue missing value with expected type '{attr_type}'"
        num_set += 1
    if num_set == 0 and not is_list:
        return f"AttrValue missing value with expected type '{attr_type}'"
    if attr_type == "type":
        return _type_error(value.type, "AttrValue has invalid DataType")
    if attr_type == "list(type)":
        for t in value.list.type:
            err = _type_error(t, "AttrValue contains invalid DataType")
            if err:
                return err
    return None


def _type_error(t: int, invalid: str) -> str | None:
    if not _dt.is_valid(t):
        return f"AttrValue has invalid DataType enum: {t}"
    if _dt.is_ref(t):
        return f"AttrValue must not have reference type value of {dtype_string(t)}"
    if t == _dt.DT_INVALID:
        return invalid
    return None


def validate_attr_value(value, attr) -> str | None:
    """op_def_util.cc ValidateAttrValue for one ``opdb.AttrDef``."""
    err = attr_value_has_type(value, attr.type)
    if err:
        return f"{err} for attr '{attr.name}'"
    if attr.minimum is not None:
        if attr.type == "int":
            if value.i < attr.minimum:
                return (f"Value for attr '{attr.name}' of {value.i} must be at least minimum "
                        f"{attr.minimum}")
        else:
            fld = _FIELD_OF_KIND.get(attr.type[5:-1]) if attr.type.startswith("list(") else None
            length = len(getattr(value.list, fld)) if fld else -1
            if length < attr.minimum:
                return (f"Length for attr '{attr.name}' of {length} must be at least minimum "
                        f"{attr.minimum}")
    if attr.allowed is not None:
        if attr.type == "type":
            return _allowed_type(value.type, attr)
        if attr.type == "list(type)":
            for t in value.list.type:
                err = _allowed_type(t, attr)
                if err:
                    return err
        elif attr.type == "string":
            return _allowed_string(value.s, attr)
        elif attr.type == "list(string)":
            for s in value.list.s:
                err = _allowed_string(s, attr)
                if err:
                    return err
    return None


def _allowed_type(t: int, attr) -> str | None:
    if t in attr.allowed:
        return None
    allowed = ", ".join(dtype_string(a) for a in attr.allowed)
    return (f"Value for attr '{attr.name}' of {dtype_string(t)} is not in the list of allowed "
            f"values: {allowed}")


def _allowed_string(s: bytes, attr) -> str | None:
    if s in attr.allowed:
        return None
    allowed = ", ".join(f'"{_text(a)}"' for a in attr.allowed)
    return (f"Value for attr '{attr.name}' of \"{_text(s)}\" is not in the list of allowed "
            f"values: {allowed}")


def _text(s: bytes) -> str:
    return s.decode("utf-8", errors="backslashreplace")


def missing_order(op: str, missing: list[str]) -> list[str]:
    """The order TensorFlow lists several missing attrs in: its ``unordered_map`` of the
    OpDef's attrs, which (libstdc++) iterates the most recently inserted first, i.e.
    the OpDef's attrs backwards. The summary gives the OpDef's order."""
    if len(missing) < 2:
        return missing
    summary = op_summary(op)
    pos = {m: summary.find(f"; attr={m}:") for m in missing}
    return sorted(missing, key=lambda m: -pos[m])


# --------------------------------------------------------------------------- shapes


def shape_error(shape) -> str | None:
    """PartialTensorShape::IsValidShape (tensor_shape.cc) on a TensorShapeProto."""
    dims = shape.dim
    if shape.unknown_rank:
        if len(dims):
            return "An unknown shape must not have any dimensions set."
        return None
    if len(dims) > MAX_RANK:
        return f"Shape {shape_text(shape)} has too many dimensions"
    elements = 1
    for d in dims:
        size = d.size
        if size < -1:
            return (f"Shape {shape_text(shape)} has dimensions with values below -1 (where -1 "
                    "means unknown)")
        if size == -1:
            elements = -1
        elif elements >= 0:
            elements *= size
            if elements > MAX_ELEMENTS:
                return (f"Shape {shape_text(shape)} is too large (more than 2**63 - 1 "
                        "entries)")
    return None


def shape_text(shape) -> str:
    """PartialTensorShape::DebugString: ``[?,-7]``, ``<unknown>``."""
    dims = "[" + ",".join("?" if d.size == -1 else str(d.size) for d in shape.dim) + "]"
    return f"<unknown>{dims if len(shape.dim) else ''}" if shape.unknown_rank else dims


