"""Numbers and names as messages and reports print them: bytes, name lists, plurals.

A leaf module (it imports nothing from placelint), so every layer can use it: model and
checks for messages, analyses for summaries, output and render for reports and diagrams.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: How many node names a message lists before it says "and N more".
MAX_LISTED = 10

_UNITS = ("KiB", "MiB", "GiB", "TiB")


def format_bytes(n: int | float | None, *, compact: bool = False) -> str:
    """``512 B``, ``1.5 KiB``, ``2.0 MiB`` (binary units); ``unknown size`` for None.

    ``compact`` (diagram labels): ``? B`` for None and no decimal from 100 of a unit up
    (``150 KiB``).
    """
    if n is None:
        return "? B" if compact else "unknown size"
    if abs(n) < 1024:
        return f"{n} B"
    value = float(n)
    for unit in _UNITS:
        value /= 1024
        if abs(value) < 1024 or unit == _UNITS[-1]:
            break
    return f"{value:.0f} {unit}" if compact and abs(value) >= 100 else f"{value:.1f} {unit}"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.I)


def parse_size(text: str) -> int:
    """``128M``, ``1.5GiB``, ``200k``, ``1000`` -> bytes (binary multiples). ValueError if
    malformed."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r} (examples: 128M, 1G, 500000)")
    scale = 1024 ** " kmgt".index(m.group(2).lower() or " ")
    return int(float(m.group(1)) * scale)


def size_setting(n: int) -> str:
    """A size as a setting writes it, exactly (``4GiB``, ``1500B``): ``parse_size`` reads
    it back."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def list_names(names: Iterable[str], limit: int = MAX_LISTED) -> str:
    """``a, b, c`` and, past ``limit`` names, ``... and N more``."""
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 model``, ``2 models``; ``many`` for irregular words (``plural(n, "copy", "copies")``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"
