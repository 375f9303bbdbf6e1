"""A NodeDef's attrs as wire bytes: what the graph builder keys its copies and typings on
(equal bytes are equal attrs)."""

from __future__ import annotations

from ..wire import read_varint, varint_size


_CLASS_KEY = b"\n\x06_class\x12"     # a map entry's key field ("_class"), its value's tag
_VALUE_SIZE = len(_CLASS_KEY)        # (where the value's length follows the key)


def attrs_key(nd, name: str, op: str, device: str, inputs: list[str]) -> bytes:
    """``nd``'s wire bytes from its attr map's entries on (``name``, ``op``, ``device``,
    ``inputs``: its fields 1-4 as the caller read them, whose size the strings give: a
    message is serialized in field number order)."""
    text = f"{name}{op}{device}{''.join(inputs)}"
    if text.isascii() and (len(text) < 128 or max(len(name), len(op), len(device),
                                                  *map(len, inputs)) < 128):
        # each field: tag, 1-byte length, bytes (an empty name, op or device: none)
        skip = len(text) + 2 * ((name != "") + (op != "") + (device != "") + len(inputs))
    else:
        strings = [s for s in (name, op, device) if s] + inputs
        skip = sum(1 + varint_size(len(b)) + len(b) for b in map(str.encode, strings))
    return nd.SerializeToString()[skip:]


def split_class(key: bytes) -> tuple[bytes, bytes | None]:
    """``key`` (a NodeDef's wire bytes from its attr map's entries on: each a field 5,
    its length, its key and value fields) without the ``_class`` entry, and that entry's
    AttrValue bytes; (``key``, None) when it has none."""
    at = key.find(_CLASS_KEY)
    i = 0
    # (an entry at ``i`` starts before ``at``: its first two bytes are in ``key``)
    while at >= 0:
        if key[i] != 0x2A:
            return key, None
        n = key[i + 1]
        if n < 0x80:
            body = i + 2
        else:
            n, body = read_varint(key, i + 1) or (0, len(key))
        end = body + n
        if body == at:
            value = at + _VALUE_SIZE
            size = key[value] if value < len(key) else 0x80
            if size < 0x80:
                value += 1
            else:
                size, value = read_varint(key, value) or (0, -1)
            if value + size != end:
                return key, None
            return key[:i] + key[end:], key[value:end]
        if end > at:        # within another entry's bytes
            at = key.find(_CLASS_KEY, end)
        i = end
    return key, None
