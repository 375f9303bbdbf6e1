"""Which models a list of command-line paths names.

A SavedModel directory (holding ``saved_model.pb``, ``saved_model.pbtxt`` or the chunked
``saved_model.cpb``) is one model; any other GraphDef/MetaGraphDef file is one model.
Directories are walked recursively; files inside a SavedModel directory, and files whose
extension is not a model extension, are skipped. A file named explicitly is always tried,
whatever its extension (the format is detected from its content), except that a file of a
SavedModel (``saved_model.pb``, ``variables/...``: what pre-commit passes) names its
SavedModel directory; the result has no duplicates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .read import GRAPHDEF, METAGRAPH, SAVEDMODEL

SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")
CHUNKED_SAVED_MODEL = "saved_model.cpb"
MODEL_EXTENSIONS = {".pb": GRAPHDEF, ".pbtxt": GRAPHDEF, ".pbtext": GRAPHDEF,
                    ".graphdef": GRAPHDEF, ".meta": METAGRAPH}


@dataclass(frozen=True)
class ModelRef:
    """One model to analyse: ``path`` is a file, or a SavedModel directory."""

    path: Path
    kind: str   #: GRAPHDEF / METAGRAPH (the extension's guess), SAVEDMODEL, or "missing"

    @property
    def display(self) -> str:
        return str(self.path)


#: Files that mark a SavedModel directory even when its graph file is missing (reported
#: as PL001 rather than skipped, so a half-copied model does not pass silently).
SAVED_MODEL_MARKERS = ("fingerprint.pb", "variables/variables.index")


def is_saved_model_dir(path: Path) -> bool:
    return any((path / f).is_file()
               for f in (*SAVED_MODEL_FILES, CHUNKED_SAVED_MODEL, *SAVED_MODEL_MARKERS))


#: Subdirectories of a SavedModel directory (assets may nest further).
SAVED_MODEL_SUBDIRS = ("variables", "assets", "assets.extra", "debug")


def saved_model_root(path: Path) -> Path | None:
    """The SavedModel directory a file belongs to: ``saved_model.pb``, ``fingerprint.pb``,
    ``variables/variables.index``, ``assets/...``, ``debug/...`` map to the directory.

    A model file in a plain subdirectory of a SavedModel's parent is not claimed: only
    the SavedModel's own files and its standard subdirectories are.
    """
    parents = [path.parent, *path.parent.parents][:8]
    for parent in parents:
        if not is_saved_model_dir(parent):
            continue
        rel = path.relative_to(parent).parts
        if len(rel) == 1 or rel[0] in SAVED_MODEL_SUBDIRS:
            return parent
    return None


def discover(paths: list[str | Path]) -> list[ModelRef]:
    """Expand command-line paths into models, in a stable order, without duplicates."""
    refs: list[ModelRef] = []
    seen: set[Path] = set()

    def add(ref: ModelRef):
        try:
            key = ref.path.resolve() if ref.path.exists() else ref.path
        except (OSError, RuntimeError, ValueError):   # name too long, symlink loop
            key = ref.path
        if key not in seen:
            seen.add(key)
            refs.append(ref)

    for raw in paths:
        path = Path(raw)
        try:
            path.stat()
        except (OSError, ValueError):   # missing, name too long, symlink loop...
            add(ModelRef(path, "missing"))   # load_raw says why
            continue
        if path.is_dir():
            if is_saved_model_dir(path):
                add(ModelRef(path, SAVEDMODEL))
                continue
            for ref in _walk(path):
                add(ref)
        elif path.is_file():
            # pre-commit passes file names: a SavedModel's files stand for its directory
            root = saved_model_root(path)
            if root is not None:
                add(ModelRef(root, SAVEDMODEL))
            else:
                add(ModelRef(path, MODEL_EXTENSIONS.get(path.suffix.lower(), GRAPHDEF)))
        else:
            add(ModelRef(path, "missing"))
    return refs


def _walk(root: Path):
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        here = Path(dirpath)
        keep = []
        for d in dirnames:
            if d.startswith(".") or d in ("__pycache__", "node_modules"):
                continue
            if is_saved_model_dir(here / d):
                yield ModelRef(here / d, SAVEDMODEL)
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            kind = MODEL_EXTENSIONS.get(Path(f).suffix.lower())
            if kind is not None:
                yield ModelRef(here / f, kind)
