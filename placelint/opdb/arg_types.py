"""A NodeDef's actual input and output dtypes, as TensorFlow types a node.

``InOutTypesForNode`` and ``NameRangesForNode`` (node_def_util.cc): every OpDef arg
expanded by its number or type-list attr, ref args as ref enums. Attr values are read
as ``GetNodeAttr`` reads them (a value of the wrong kind is unset), with the OpDef's
defaults for attrs the NodeDef lacks (``AddDefaultsToNodeDef``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from placelint import dtypes as _dt

#: get(attr name) -> the node's AttrValue, else the OpDef default, else None
Getter = Callable[[str], Any]

_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")


# --------------------------------------------------------------------------- attr values


class _ListValue:
    """Stand-in for AttrValue.ListValue (only what defaults need)."""

    __slots__ = ("type", "s", "i", "f", "b", "shape", "tensor", "func")

    def __init__(self, types: Iterable[int] = ()) -> None:
        self.type = tuple(types)
        self.s = self.i = self.f = self.b = self.shape = self.tensor = self.func = ()


class DefaultValue:
    """Stand-in for an AttrValue holding an OpDef default (duck-typed like protobuf)."""

    __slots__ = ("_case", "type", "i", "b", "s", "list")

    def __init__(self, attr_type: str, value: Any) -> None:
        self.type, self.i, self.b, self.s, self.list = 0, 0, False, b"", _ListValue()
        if attr_type == "type":
            self._case, self.type = "type", value
        elif attr_type == "int":
            self._case, self.i = "i", value
        elif attr_type == "bool":
            self._case, self.b = "b", value
        elif attr_type == "string":
            self._case, self.s = "s", value.encode("utf-8")
        elif attr_type == "list(type)":
            self._case, self.list = "list", _ListValue(value)
        else:  # gen_opdb keeps no other defaults
            raise ValueError(f"unsupported default kind {attr_type!r}")

    def WhichOneof(self, _field: str) -> str:  # noqa: N802 (protobuf's name)
        return self._case


def value_case(value: Any) -> str | None:
    """Which field of the AttrValue's ``value`` oneof is set (``"i"``, ``"list"``...)."""
    return value.WhichOneof("value")


def _list_kind_ok(value: Any, wanted: str) -> bool:
    """AttrValueHasType(value, 'list(<wanted>)') for a value whose case is 'list'."""
    lst = value.list
    return all(not getattr(lst, f) for f in _LIST_FIELDS if f != wanted)


def _valid_type(t: int) -> bool:
    """A legal 'type' attr value: a known, non-ref, non-invalid enum (AttrValueHasType)."""
    return t != _dt.DT_INVALID and not _dt.is_ref(t) and _dt.is_valid(t)


def get_type(value: Any) -> int | None:
    """GetNodeAttr(..., DataType*): the value when it is a valid 'type'."""
    if value is None or value_case(value) != "type" or not _valid_type(value.type):
        return None
    return int(value.type)


def get_type_list(value: Any) -> list[int] | None:
    """GetNodeAttr(..., DataTypeVector*): an unset value counts as an empty list."""
    if value is None:
        return None
    case = value_case(value)
    if case is None:
        return []
    if case != "list" or not _list_kind_ok(value, "type"):
        return None
    types = [int(t) for t in value.list.type]
    return types if all(_valid_type(t) for t in types) else None


def get_int(value: Any) -> int | None:
    if value is None or value_case(value) != "i":
        return None
    return int(value.i)


#: TF keeps an arg's size in an int32: a number attr beyond is refused (AddArgToSig,
#: node_def_util.cc: "Number of outputs is too big: N", for input and output args alike).
MAX_INT32 = 2**31 - 1
#: The most values one arg is expanded to here (a list per distinct set of attrs; ~8 MiB):
#: past it the node's dtypes are unknown. TF's own import of one node with 10^7 outputs
#: takes ~5 GB and half a minute; a number attr of 2**31 - 1 took 24 GB here before.
MAX_ARG_COUNT = 2**20


def get_count(value: Any) -> int | None:
    """A number attr as the size of an arg: None when unset, not an int, negative (TF's
    ``Value for number_attr() N < 0``), over int32 (see ``MAX_INT32``) or over
    ``MAX_ARG_COUNT``."""
    n = get_int(value)
    return n if n is not None and 0 <= n <= MAX_ARG_COUNT else None


def count_error(args: tuple[ArgDef, ...], get: Getter) -> str | None:
    """TF's refusal of a number attr that no int32 holds, for the first arg sized by one
    (``AddArgToSig``), else None."""
    for arg in args:
        if arg.number_attr:
            n = get_int(get(arg.number_attr))
            if n is not None and not -MAX_INT32 - 1 <= n <= MAX_INT32:
                return f"Number of outputs is too big: {n}"
    return None


# --------------------------------------------------------------------------- OpDef records


class ArgDef(NamedTuple):
    """One OpDef input or output arg (the fields that decide its dtypes)."""

    name: str
    type: int = 0  # fixed DataType, 0 when typed by an attr
    type_attr: str = ""
    type_list_attr: str = ""
    number_attr: str = ""
    is_ref: bool = False


class AttrDef(NamedTuple):
    """One OpDef attr: its type string, whether it has a default, the default itself
    when it is a type, int, bool, string or list(type) (else None), and the AttrDef
    constraints ``minimum`` (has_minimum) and ``allowed`` (allowed_values: DataType
    enums or byte strings, in the OpDef's order), None when unset."""

    name: str
    type: str
    has_default: bool = False
    default: Any = None
    minimum: int | None = None
    allowed: tuple | None = None
    shape_checked: bool = False     #: a shape attr TF's importer validates (gen_opdb)

    @property
    def default_kept(self) -> bool:
        """True when ``default`` holds the default (see gen_opdb)."""
        return self.has_default and self.default is not None

    @classmethod
    def from_raw(cls, name: str, raw: dict[str, Any]) -> AttrDef:
        """From one attr of an op's record in ``opdb.json.gz``."""
        allowed = raw.get("allowed")
        if allowed is not None:
            allowed = tuple(v.encode("utf-8") for v in allowed) \
                if raw["type"] in ("string", "list(string)") else tuple(allowed)
        return cls(name, raw["type"], "default" in raw or raw.get("has_default", False),
                   raw.get("default"), raw.get("min"), allowed, raw.get("shape_checked", False))


# --------------------------------------------------------------------------- typing


def arg_types(args: tuple[ArgDef, ...], get: Getter) -> list[int] | None:
    """node_def_util.cc AddArgToSig for every arg; None when unresolvable."""
    out: list[int] = []
    for arg in args:
        if arg.number_attr:
            repeats = get_count(get(arg.number_attr))
            if repeats is None:
                return None
            dtype = get_type(get(arg.type_attr)) if arg.type_attr else arg.type
            if not dtype:
                return None
            types = [dtype] * repeats
        elif arg.type_list_attr:
            types = get_type_list(get(arg.type_list_attr))
            if types is None:
                return None
        elif arg.type_attr:
            dtype = get_type(get(arg.type_attr))
            if dtype is None:
                return None
            types = [dtype]
        elif arg.type:
            types = [arg.type]
        else:
            return None
        if arg.is_ref:
            if any(_dt.is_ref(t) for t in types):
                return None
            types = [_dt.ref_type(t) for t in types]
        out.extend(types)
    return out


def arg_count(args: tuple[ArgDef, ...], get: Getter, head: int) -> tuple[int, list[int]] | None:
    """How many values ``args`` stand for and the dtypes of the first ``head`` of them,
    also when a number attr is past ``MAX_ARG_COUNT`` (up to an int32: see ``count_error``),
    which ``arg_types`` does not expand: what TF's refusal of a node whose inputs are not
    that many says. None when unresolvable."""
    total, first = 0, []
    for arg in args:
        if arg.number_attr:
            n = get_int(get(arg.number_attr))
            if n is None or not 0 <= n <= MAX_INT32:
                return None
            # one value's dtype, as ``arg_types`` types the arg's values (ref included)
            one = arg_types((arg._replace(number_attr=""),), get)
            if one is None:
                return None
            types = one * min(n, max(head - len(first), 0))
        else:
            types = arg_types((arg,), get)
            if types is None:
                return None
            n = len(types)
        first.extend(types[:max(head - len(first), 0)])
        total += n
    return total, first


def arg_ranges(args: tuple[ArgDef, ...], get: Getter) -> dict[str, tuple[int, int]] | None:
    """node_def_util.cc NameRangesForNode: arg name -> [start, end) actual indices."""
    ranges: dict[str, tuple[int, int]] = {}
    start = 0
    for arg in args:
        if arg.number_attr:
            size = get_count(get(arg.number_attr))
            if size is None:
                return None
        elif arg.type_list_attr:
            types = get_type_list(get(arg.type_list_attr))
            if types is None:
                return None
            size = len(types)
        else:
            size = 1
        ranges[arg.name] = (start, start + size)
        start += size
    return ranges
