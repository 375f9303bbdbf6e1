"""A NodeDef's attrs as wire bytes: what the graph builder keys its copies and typings on
(equal bytes are equal attrs)."""

from __future__ import annotations


def varint_size(n: int) -> int:
    """The bytes of ``n`` as a varint."""
    return (n.bit_length() + 6) // 7 or 1


_CLASS_KEY = b"\n\x06_class\x12"     # a map entry's key field ("_class"), its value's tag


def split_class(key: bytes) -> tuple[bytes, bytes | None]:
    """``key`` (a NodeDef's wire bytes from its attr map's entries on: each a field 5,
    its length, its key and value fields) without the ``_class`` entry, and that entry's
    AttrValue bytes; (``key``, None) when it has none."""
    at = key.find(_CLASS_KEY)
    i = 0
    while at >= 0:
        if i >= len(key) or key[i] != 0x2A:
            return key, None
        n = key[i + 1]
        if n < 0x80:
            body = i + 2
        else:
            n, body = _read_varint(key, i + 1)
        end = body + n
        if body == at:
            size, value = _read_varint(key, at + len(_CLASS_KEY))
            if value + size != end:
                return key, None
            return key[:i] + key[end:], key[value:end]
        if end > at:        # within another entry's bytes
            at = key.find(_CLASS_KEY, end)
        i = end
    return key, None


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    """The varint at ``data[i]`` and the index past it."""
    n = shift = 0
    while True:
        b = data[i]
        n |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return n, i
        shift += 7
