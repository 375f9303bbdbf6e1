"""A NodeDef's attrs as wire bytes: what the graph builder keys its copies and typings on
(equal bytes are equal attrs)."""

from __future__ import annotations

from ..wire import read_varint


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
            n, body = read_varint(key, i + 1) or (0, len(key))
        end = body + n
        if body == at:
            size, value = read_varint(key, at + len(_CLASS_KEY)) or (0, -1)
            if value + size != end:
                return key, None
            return key[:i] + key[end:], key[value:end]
        if end > at:        # within another entry's bytes
            at = key.find(_CLASS_KEY, end)
        i = end
    return key, None
