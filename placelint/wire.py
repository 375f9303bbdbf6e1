"""Protobuf's wire format read and written by hand, where a parse is not wanted: telling
what a binary file is (``loaders.sniff``), finding a SavedModel's functions without parsing
them (``loaders.library``), cutting a NodeDef's attrs at an entry (``model.attr_wire``)."""

from __future__ import annotations

__all__ = ["fields", "length_delimited", "read_varint", "varint_size"]

LENGTH_DELIMITED = 2


def read_varint(data, i: int, end: int | None = None) -> tuple[int, int] | None:
    """The varint at ``data[i]`` and the index past it; None when it runs past ``end``
    (default: the end of ``data``) or over ten bytes."""
    end = len(data) if end is None else end
    value = shift = 0
    for _ in range(10):
        if i >= end:
            return None
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
    return None


def fields(data, i: int = 0, end: int | None = None
           ) -> list[tuple[int, int, int, int, int]] | None:
    """``(number, wire type, field start, value start, value end)`` of each field of the
    message at ``data[i:end]`` (a varint or fixed-size value: the value's own bytes; a
    length-delimited one: past its length); None unless all of it is well-formed fields
    (groups are not: no model uses them)."""
    end = len(data) if end is None else end
    out = []
    while i < end:
        head = i
        r = read_varint(data, i, end)
        if r is None:
            return None
        key, i = r
        number, wt = key >> 3, key & 7
        if number == 0 or number > 2**29 - 1:
            return None
        start = i
        if wt == 0:
            r = read_varint(data, i, end)
            if r is None:
                return None
            i = r[1]
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == LENGTH_DELIMITED:
            r = read_varint(data, i, end)
            if r is None:
                return None
            size, start = r
            i = start + size
        else:
            return None
        if i > end:
            return None
        out.append((number, wt, head, start, i))
    return out


def varint_size(n: int) -> int:
    """The bytes of ``n`` (>= 0) as a varint."""
    return (n.bit_length() + 6) // 7 or 1


def length_delimited(number: int, value: bytes) -> bytes:
    """Field ``number`` holding ``value`` (bytes, a string or a message)."""
    head = bytearray()
    for n in (number << 3 | LENGTH_DELIMITED, len(value)):
        while n >= 0x80:
            head.append(n & 0x7F | 0x80)
            n >>= 7
        head.append(n)
    return bytes(head) + value
