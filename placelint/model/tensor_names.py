"""Tensor names as NodeDef inputs write them: ``name``, ``name:k``, ``^name``."""

from __future__ import annotations

#: Largest output index TensorFlow can parse (``name:k`` with k an int32).
MAX_SLOT = 2**31 - 1


def parse_input(ref: str) -> tuple[str, int]:
    """``name:k`` -> (name, k); ``name`` -> (name, 0); ``^name`` -> (name, -1).

    Returns slot -2 for an unparsable output index.
    """
    if ref.startswith("^"):
        return (ref[1:], -1) if ref[1:] and ":" not in ref else (ref, -2)
    name, sep, idx = ref.rpartition(":")
    if not sep:
        return (ref, 0) if ref else (ref, -2)
    slot = slot_index(idx)
    if name and slot is not None:
        return name, slot
    return ref, -2


def top_resolve(ref: str) -> tuple[str, int, str]:
    """An input of a top-level node, as the graph builder resolves it: (source node, output
    slot, the input as written)."""
    if ref and ref[0] != "^" and ":" not in ref:    # the usual case: a node name
        return ref, 0, ref
    src, slot = parse_input(ref)
    return src, slot, ref


def slot_index(text: str) -> int | None:
    """An output index as TF parses it: ASCII digits within int32."""
    if text.isascii() and text.isdigit() and len(text) <= 10 and int(text) <= MAX_SLOT:
        return int(text)
    return None

