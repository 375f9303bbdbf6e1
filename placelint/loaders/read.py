"""Reading model files into TensorFlow protobufs, format detected from content.

Only protobuf parsing happens here: no TensorFlow, nothing of the model is executed.
Every failure is a ``LoadError`` with a stable code and a message a user can act on.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from google.protobuf import message as pb_message
from google.protobuf import text_format

from ..checks.base import LoaderRule
from ..checks.pl001_unreadable_model import UnreadableModel
from ..checks.pl002_unsupported_format import UnsupportedFormat
from ..diagnostics import Diagnostic
from ..humanize import format_bytes
from ..proto import GraphDef, MetaGraphDef, SavedModel
from ..proto_lite import GraphDefLite, MetaGraphDefLite, SavedModelLite
from . import fast_text, sniff
from .chunked import (CHUNKED_MIN_BYTES, ChunkedGraphDef, CorruptChunk, chunked_graph_def,
                      chunked_meta_graph, chunked_saved_model)
from .library import FunctionLibrary, split_saved_model

#: protobuf refuses messages over 2 GiB; checked by size before reading.
PROTOBUF_LIMIT = 2**31 - 1
#: protobuf's text parser is pure Python (~0.7 s per MiB here, ~20 s per 100k nodes; the
#: fast reader in ``fast_text.py`` handles the usual files ~10x faster): text models above
#: this size are refused unless the limit is raised (``--max-text-size``).
DEFAULT_MAX_TEXT_BYTES = 32 * 2**20
#: text_format has no depth cap by default and dies with RecursionError on deep nesting.
TEXT_MAX_DEPTH = 100

LFS_POINTER = b"version https://git-lfs.github.com/spec/"
CHUNKED_MESSAGE = ("unsupported format: chunked SavedModel (saved_model.cpb, written by "
                   "TensorFlow for models over 2 GiB) is not supported yet")

GRAPHDEF, METAGRAPH, SAVEDMODEL = "graphdef", "metagraph", "savedmodel"

_TEXT_KEYS = {
    GRAPHDEF: ("node", "library", "versions", "version"),
    METAGRAPH: ("meta_info_def", "graph_def", "saver_def", "collection_def", "signature_def",
                "asset_file_def", "object_graph_def"),
    SAVEDMODEL: ("saved_model_schema_version", "meta_graphs"),
}
_CLASSES = {GRAPHDEF: GraphDef, METAGRAPH: MetaGraphDef, SAVEDMODEL: SavedModel}
#: a binary model's classes: the top-level nodes' attrs left as wire bytes (``proto_lite``)
_LITE = {GRAPHDEF: GraphDefLite, METAGRAPH: MetaGraphDefLite, SAVEDMODEL: SavedModelLite}


class LoadError(Exception):
    """A model that cannot be read: ``rule`` is the loader rule class that reports it
    (UnreadableModel, UnsupportedFormat, EntryNotFound).

    ``not_a_model``: the file is a well-formed protobuf of another kind (a label map, a
    serving config, a tf.train.Example; see ``sniff.py``), skipped when a directory walk
    or pre-commit found it, an error when it was named on the command line."""

    def __init__(self, rule: type[LoaderRule], message: str, *, not_a_model: bool = False):
        super().__init__(message)
        self.rule = rule
        self.message = message
        self.not_a_model = not_a_model

    @property
    def code(self) -> str:
        return self.rule.code

    def diagnostic(self) -> Diagnostic:
        return self.rule.diag(self.message)


@dataclass
class ParsedFile:
    path: Path
    kind: str                   #: GRAPHDEF, METAGRAPH or SAVEDMODEL
    message: object             #: the parsed protobuf
    text: str | None = None     #: the file's text for text-format files (for line numbers)
    #: a binary SavedModel's function library per MetaGraph, read apart from ``message``
    #: (whose GraphDefs then hold no functions; see ``library.split_saved_model``)
    libraries: list[FunctionLibrary] | None = None
    #: a large binary MetaGraph's GraphDef, or a SavedModel's per MetaGraph (None where
    #: small), read apart from ``message`` (whose MetaGraph then has none) and parsed a
    #: chunk of nodes at a time (``chunked``)
    graphs: list[ChunkedGraphDef | None] | None = None


def read_model_file(path: Path, *, expect: str | None = None,
                    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES, lite: bool = True,
                    chunked: bool = True) -> ParsedFile:
    """Read and parse one model file; ``expect`` is the kind the name suggests; ``lite``: a
    binary model's top-level nodes keep their attrs as wire bytes (``proto_lite``);
    ``chunked``: a binary GraphDef from ``CHUNKED_MIN_BYTES`` on is read in chunks."""
    try:
        st = path.stat()
    except OSError as exc:
        raise LoadError(UnreadableModel, f"cannot read file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        # a FIFO or a device would block or never end
        raise LoadError(UnreadableModel, "not a regular file (a directory, FIFO, socket or device)")
    size = st.st_size
    if path.suffix.lower() == ".cpb":
        raise LoadError(UnsupportedFormat, CHUNKED_MESSAGE)
    if size > PROTOBUF_LIMIT:
        raise LoadError(UnreadableModel, f"file is {size / 2**30:.1f} GiB; protobuf cannot parse messages "
                                 "over 2 GiB, so TensorFlow cannot load it either")
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
            if head.startswith(LFS_POINTER):
                raise LoadError(UnreadableModel, "this is a Git LFS pointer file, not the model: run "
                                         "`git lfs pull` to fetch the real file")
            if _looks_like_text(head):
                if size > max_text_bytes:
                    raise LoadError(UnreadableModel, f"text model is {format_bytes(size)}, over the "
                                             f"{format_bytes(max_text_bytes)} limit for text parsing "
                                             "(protobuf's text parser is slow: raise the limit "
                                             "with --max-text-size, or convert the model to "
                                             "binary .pb)")
                fh.seek(0)      # (reading it whole again: no second copy of the file)
                data = fh.read()
                return _parse_text(path, data, expect)
            fh.seek(0)
            data = fh.read()
    except OSError as exc:
        raise LoadError(UnreadableModel, f"cannot read file: {exc.strerror or exc}") from None
    return _parse_binary(path, data, expect, lite, chunked)


def _printable_head(head: bytes) -> str | None:
    """The first bytes of a file as text when they are printable UTF-8 and not blank, else
    None."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        # a multi-byte character cut at the 4096-byte boundary
        try:
            text = head[:-4].decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not text.strip() or not all(c.isprintable() or c in "\n\r\t" for c in text):
        return None
    return text


def _looks_like_text(head: bytes) -> bool:
    """Printable text that starts with a text-format model's first key (or a comment)."""
    text = _printable_head(head)
    if text is None:
        return False
    stripped = text.lstrip()
    first = stripped.split(None, 1)[0].rstrip("{:")
    return any(first in keys for keys in _TEXT_KEYS.values()) or stripped.startswith("#")


def _text_kind(text: str) -> str | None:
    for line in _lines(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        key = s.split(None, 1)[0].rstrip("{:")
        for kind, keys in _TEXT_KEYS.items():
            if key in keys:
                return kind
        return None
    return None


#: what str.splitlines() splits at
_LINE = re.compile("[^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*")


def _lines(text: str):
    """The lines of ``text.splitlines()`` one at a time, with extra empty ones (only the
    first few are wanted; a text model can have millions)."""
    for m in _LINE.finditer(text):
        yield m.group()


def _parse_text(path: Path, data: bytes, expect: str | None) -> ParsedFile:
    text = data.decode("utf-8", errors="replace")
    kind = _text_kind(text)
    if kind is None:
        _refuse_other_text(text)
        kind = expect or GRAPHDEF
    msg = _CLASSES[kind]()
    if fast_text.parse(text, msg):      # ~10x faster; text_format reads (or refuses) the rest
        return ParsedFile(path, kind, msg, text)
    try:
        text_format.Parse(text, msg, allow_unknown_field=False,
                          max_recursion_depth=TEXT_MAX_DEPTH)
    except text_format.ParseError as exc:
        raise LoadError(UnreadableModel, f"not a valid text-format {_label(kind)}: {exc}") from None
    except RecursionError:
        raise LoadError(UnreadableModel, "text model is nested too deeply to parse") from None
    except (pb_message.Error, ValueError, UnicodeError) as exc:
        raise LoadError(UnreadableModel, f"not a valid text-format {_label(kind)}: {exc}") from None
    return ParsedFile(path, kind, msg, text)


def _parse_binary(path: Path, data: bytes, expect: str | None, lite: bool = True,
                  chunked: bool = True) -> ParsedFile:
    if not data:
        raise LoadError(UnreadableModel, "file is empty")
    order = [expect] if expect else []
    order += [k for k in (GRAPHDEF, METAGRAPH, SAVEDMODEL) if k not in order]
    first_error = None
    expected_problem = None
    for kind in order:
        try:
            msg, libraries, graphs, problem = _parse_kind(kind, data, expect, lite, chunked)
            if problem is not None and lite:
                raise _Implausible
        except (*_PARSE_ERRORS, _Implausible) as exc:
            if not lite:
                first_error = first_error or exc        # (a CorruptChunk too: a ValueError)
                continue
            # (what the real parse says: a lite one refuses less, names its class, and may
            # take a file the real one refuses before it could look implausible)
            try:
                msg, libraries, graphs, problem = _parse_kind(kind, data, expect, False,
                                                              chunked)
            except _PARSE_ERRORS as real:
                first_error = first_error or real
                continue
        if problem is None:
            return ParsedFile(path, kind, msg, libraries=libraries, graphs=graphs)
        if kind == expect and expect != GRAPHDEF:
            # e.g. a saved_model.pb whose MetaGraph has no graph: say so, not 'corrupt'
            expected_problem = expected_problem or problem
    if expected_problem:
        raise LoadError(UnreadableModel, f"{_label(expect)} {expected_problem}")
    if _is_text(data):
        _refuse_other_text(data.decode("utf-8", "replace"))
        first = data[:4096].decode("utf-8", "replace").split(None, 1)
        start = f" (it starts with '{first[0][:40]}')" if first else ""
        raise LoadError(UnreadableModel, "not a model: a text file that is not a text-format GraphDef, "
                                 f"MetaGraphDef or SavedModel{start}")
    if sniff.is_binary_of_other_message(data):
        raise LoadError(UnreadableModel, sniff.describe_binary(data), not_a_model=True)
    if isinstance(first_error, CorruptChunk):
        # (a chunk's parse names GraphDef and its own first error: the whole file's parse
        # says what protobuf says of the file)
        return _parse_binary(path, data, expect, lite, False)
    raise LoadError(UnreadableModel, UnreadableModel.unparsable(first_error))


_PARSE_ERRORS = (pb_message.DecodeError, pb_message.Error, RecursionError, ValueError)


class _Implausible(Exception):
    """A lite parse that does not look like a model of its kind (see ``_parse_binary``)."""


def _parse_kind(kind: str, data: bytes, expect: str | None, lite: bool, chunked: bool = True):
    """``data`` parsed as a ``kind`` message (``lite``: with ``proto_lite``'s classes; a
    GraphDef in chunks when ``chunked`` and large enough): (the
    message, the functions read apart or None, the MetaGraphs' GraphDefs read in chunks or
    None, what makes it implausible as that kind or None)."""
    msg = (_LITE if lite else _CLASSES)[kind]()
    libraries = graphs = None
    large = chunked and len(data) >= CHUNKED_MIN_BYTES
    # a SavedModel named as such: its functions are read apart (a TF2 model's library is
    # most of it, and many functions are never called)
    split = _split(data) if kind == expect == SAVEDMODEL else None
    # a large GraphDef, alone or a MetaGraph's: its nodes parsed a chunk at a time (see
    # ``chunked``)
    if large and kind == GRAPHDEF and (graph := chunked_graph_def(data, lite)) is not None:
        msg = graph
    elif (large and kind == METAGRAPH == expect                     # (a .meta file)
          and (apart := chunked_meta_graph(data, lite)) is not None):
        graph, msg = apart
        graphs = [graph]
    elif split is not None:
        stripped, libraries = split
        if len(stripped) >= CHUNKED_MIN_BYTES:      # (nodes, once functions are out)
            stripped, graphs = chunked_saved_model(stripped, lite) or (stripped, None)
        msg.ParseFromString(stripped)
        del stripped
    else:
        msg.ParseFromString(data)
    # a MetaGraph/SavedModel file named as such may hold an empty graph; anything tried as
    # a guess must look like a real model (garbage often parses)
    return (msg, libraries, graphs,
            _implausible(kind, msg, kind != expect or kind == GRAPHDEF, graphs))


def _split(data: bytes):
    """``split_saved_model(data)``; None for a corrupt function (the whole file's parse
    then fails with protobuf's own message)."""
    try:
        return split_saved_model(data)
    except (pb_message.DecodeError, pb_message.Error, RecursionError, ValueError):
        return None


def _refuse_other_text(text: str) -> None:
    """A not-a-model ``LoadError`` when ``text`` is text format of another message."""
    other, fields = sniff.is_text_of_other_message(text)
    if other:
        raise LoadError(UnreadableModel, sniff.describe_text(fields), not_a_model=True)


def _is_text(data: bytes) -> bool:
    return _printable_head(data[:4096]) is not None


#: the nodes whose name and op tell a binary GraphDef from another file parsed as one: the
#: first ones (a pass over every node cost 0.4 s at 10^6 nodes); a model's later node
#: without a name or an op is the build's to report (PL005, PL105), as in a text file
PLAUSIBLE_NODES = 1000


def _implausible(kind: str, msg, strict: bool = True, graphs=None) -> str | None:
    """Binary protobufs of other types often parse 'successfully' as garbage: what keeps
    ``msg`` from having the shape of its kind (None if it does). ``strict``: an empty graph
    is implausible too. ``graphs``: the MetaGraphs' GraphDefs where read apart (see
    ``ParsedFile.graphs``)."""
    if kind == GRAPHDEF:
        if strict and not (msg.node or msg.library.function):
            return "has no nodes and no functions"
        if not all(n.op and n.name for n in islice(msg.node, PLAUSIBLE_NODES)):
            return "has nodes without a name or an op"
        return None
    if kind == METAGRAPH:
        graph = graphs[0] if graphs else None
        if graph is None:
            if not msg.HasField("graph_def"):
                return "has no graph (graph_def is missing)"
            graph = msg.graph_def
        problem = _implausible(GRAPHDEF, graph, strict)
        return f"graph {problem}" if problem else None
    if not msg.meta_graphs:
        return "holds no MetaGraph"
    for i, meta in enumerate(msg.meta_graphs):
        problem = _implausible(METAGRAPH, meta, strict, graphs[i:i + 1] if graphs else None)
        if problem:
            return f"MetaGraph {i} {problem}"
    return None


def _label(kind: str) -> str:
    return {GRAPHDEF: "GraphDef", METAGRAPH: "MetaGraphDef", SAVEDMODEL: "SavedModel"}[kind]


def file_size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1
