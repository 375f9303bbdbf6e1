"""TensorFlow ``DataType`` enum helpers, without TensorFlow.

Names and sizes come from the generated op database (``tools/gen_opdb.py`` read
them from ``tf.dtypes``; ``placelint.data`` reads the file), so they follow the TensorFlow release the data was
generated from.  The few enum values below are fixed by
``tensorflow/core/framework/types.proto`` and used by placement rules; the
shipped-data tests check them against the generated table.
"""

from __future__ import annotations

import functools

from .data import opdb_document

# types.proto: every reference type is its base type + 100 (DT_FLOAT_REF = 101).
REF_OFFSET = 100

DT_INVALID = 0
DT_FLOAT = 1
DT_INT32 = 3
DT_STRING = 7
DT_RESOURCE = 20
DT_VARIANT = 21
# the integer types whose values shape inference reads from constants
DT_INT64 = 9
DT_UINT8 = 4
DT_INT16 = 5
DT_INT8 = 6
DT_UINT16 = 17
DT_UINT32 = 22
DT_UINT64 = 23


@functools.lru_cache(maxsize=1)
def _table() -> tuple[dict[int, tuple[str, str, int]], dict[str, int]]:
    """enum -> (DT_ name, Python name, size) and name -> enum, from the opdb."""
    header, _ = opdb_document()
    by_enum: dict[int, tuple[str, str, int]] = {}
    by_name: dict[str, int] = {}
    for num, enum_name, py_name, size in header["dtypes"]:
        by_enum[num] = (enum_name, py_name, size)
        by_name[enum_name] = num
        by_name[py_name] = num
    return by_enum, by_name


def is_ref(dtype: int) -> bool:
    """True for reference dtypes such as DT_FLOAT_REF (types.h IsRefType)."""
    return dtype > REF_OFFSET


def base_type(dtype: int) -> int:
    """The non-reference dtype (types.h BaseType): DT_FLOAT_REF -> DT_FLOAT."""
    return dtype - REF_OFFSET if dtype > REF_OFFSET else dtype


def ref_type(dtype: int) -> int:
    """The reference dtype (types.h MakeRefType): DT_FLOAT -> DT_FLOAT_REF."""
    return dtype if dtype > REF_OFFSET else dtype + REF_OFFSET


def is_valid(dtype: int) -> bool:
    """True when the enum value exists in this TensorFlow's DataType (incl. refs)."""
    return dtype in _table()[0]


def dtype_name(dtype: int) -> str:
    """TensorFlow's Python name: 1 -> 'float32', 101 -> 'float32_ref', 0 -> 'invalid'.

    Unknown values give ``'unknown_dtype_<n>'`` rather than raising, so that
    messages about malformed graphs can still be printed.
    """
    entry = _table()[0].get(dtype)
    return entry[1] if entry else f"unknown_dtype_{dtype}"


def dtype_enum_name(dtype: int) -> str:
    """The types.proto enum name: 1 -> 'DT_FLOAT'."""
    entry = _table()[0].get(dtype)
    return entry[0] if entry else f"DT_UNKNOWN_{dtype}"


def dtype_enum(name: str) -> int:
    """Enum value for 'DT_FLOAT' or 'float32' (KeyError when unknown)."""
    return _table()[1][name]


def dtype_size(dtype: int) -> int | None:
    """Bytes per element (types.cc DataTypeSize): float32 4, float16 2, refs as
    their base; None for DT_STRING, DT_RESOURCE, DT_VARIANT and unknown values."""
    entry = _table()[0].get(dtype)
    if entry is None or entry[2] == 0:
        return None
    return entry[2]


def always_on_host(dtype: int) -> bool:
    """types.cc DataTypeAlwaysOnHost: DT_STRING, DT_STRING_REF and DT_RESOURCE."""
    return dtype in (DT_STRING, DT_STRING + REF_OFFSET, DT_RESOURCE)
