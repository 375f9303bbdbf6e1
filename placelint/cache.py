"""Content-hash cache for ``check``: an unchanged model is nearly free on the next run.

The key hashes everything a model's diagnostics depend on: the bytes of the file(s) the
loader reads, the model's path, the analysis settings, and the placelint code itself (its
version plus the name, size and mtime of every file in the package, so an edited checkout
never serves stale results). The value is the model's ``ModelResult`` as JSON.

Entries live in ``.placelint_cache/v1/<2 hex>/<key>.json`` under the project root (the
config file's directory, else the current directory), written atomically; the directory
holds a ``.gitignore`` and a ``CACHEDIR.TAG`` so neither git nor backups pick it up.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from . import __version__
from .loaders.read import PROTOBUF_LIMIT

CACHE_DIR_NAME = ".placelint_cache"
_LAYOUT = "v1"
_CHUNK = 1 << 20
_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by placelint.\n")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """placelint's version and the stat of every file of the package."""
    pkg = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for path in sorted(pkg.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            st = path.stat()
            h.update(f"{path.relative_to(pkg)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def settings_fingerprint(settings) -> str:
    """The analysis settings, canonical. Per-node ignores are applied after the cache."""
    data = dataclasses.asdict(settings)
    data.pop("per_node_ignores", None)
    return json.dumps(data, sort_keys=True, default=str)


def model_files(ref) -> list[Path] | None:
    """The files the loader reads for ``ref``; None when the model cannot be cached."""
    from .loaders.discover import CHUNKED_SAVED_MODEL, SAVED_MODEL_FILES
    from .loaders.read import SAVEDMODEL
    if ref.kind == SAVEDMODEL:
        names = (*SAVED_MODEL_FILES, CHUNKED_SAVED_MODEL, "debug/saved_model_debug_info.pb")
        files = [ref.path / n for n in names if (ref.path / n).is_file()]
        return files or None
    return [ref.path] if ref.path.is_file() else None


def _hash_file(h, path: Path) -> None:
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


class Cache:
    """Get and put ``ModelResult`` dicts by content key."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    def key(self, ref, settings, settings_fp: str | None = None) -> str | None:
        files = model_files(ref)
        if files is None:
            return None
        h = hashlib.sha256()
        h.update(f"{code_fingerprint()}\n{settings_fp or settings_fingerprint(settings)}\n"
                 f"{ref.kind}\n{ref.display}\n".encode())
        try:
            sizes = [path.stat().st_size for path in files]
            if max(sizes) > PROTOBUF_LIMIT:
                # The loader refuses such a file from its size alone, at once: reading
                # gigabytes to hash it would cost more than the check.
                return None
            for path, size in zip(files, sizes):
                h.update(f"{path.name}:{size}\n".encode())
                _hash_file(h, path)
        except OSError:
            return None
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / _LAYOUT / key[:2] / f"{key}.json"

    def get(self, key: str | None) -> dict | None:
        if key is None:
            return None
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return data

    def put(self, key: str | None, value: dict) -> None:
        """Store ``value``; a cache that cannot be written is skipped silently."""
        if key is None:
            return
        path = self._path(key)
        try:
            self._init_dir()
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(value, fh)
            os.replace(tmp, path)
        except OSError:
            pass

    def _init_dir(self) -> None:
        if (self.directory / "CACHEDIR.TAG").is_file():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / ".gitignore").write_text("# created by placelint\n*\n")
        (self.directory / "CACHEDIR.TAG").write_text(_TAG)
