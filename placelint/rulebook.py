"""The rulebook: one Markdown document per rule, ``rules/<CODE>-<name>.md``.

In a wheel the documents are shipped as ``placelint/rulebook/``; in a source checkout
(including editable installs) they are read from the repository's ``rules/``.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def rulebook_dir() -> Path:
    shipped = _HERE / "rulebook"
    if shipped.is_dir():
        return shipped
    return _HERE.parent / "rules"


def doc_path(code: str, name: str) -> Path:
    return rulebook_dir() / f"{code}-{name}.md"


def read_doc(code: str, name: str) -> str | None:
    path = doc_path(code, name)
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
