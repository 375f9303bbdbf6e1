"""Loaders: model files -> ``RawModel`` (the GraphDef to analyse plus what locates its nodes).

Kept apart from analysis: nothing here knows about placement or rules. Supported:
GraphDef (binary ``.pb`` / text ``.pbtxt``), MetaGraphDef (``.meta``, binary or text),
SavedModel directories (``saved_model.pb`` / ``saved_model.pbtxt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..checks.pl001_unreadable_model import UnreadableModel
from ..checks.pl002_unsupported_format import UnsupportedFormat
from ..checks.pl006_entry_not_found import EntryNotFound
from ..checks.pl008_format_mismatch import FormatMismatch
from ..diagnostics import Diagnostic
from ..proto import GraphDef
from .debuginfo import DebugInfo
from .library import FunctionLibrary
from .discover import (CHUNKED_SAVED_MODEL, SAVED_MODEL_FILES, SPECIAL, ModelRef, PathError,
                       WalkOptions, discover)
from .steps import INIT_SIGNATURE, StepSpec, declared_steps
from .read import (CHUNKED_MESSAGE, DEFAULT_MAX_TEXT_BYTES, GRAPHDEF, METAGRAPH, SAVEDMODEL,
                   LoadError, read_model_file)

__all__ = ["LoadOptions", "RawModel", "LoadError", "ModelRef", "PathError", "WalkOptions",
           "discover", "load_raw"]

DEFAULT_TAG = "serve"
DEFAULT_SIGNATURE = "serving_default"


@dataclass
class LoadOptions:
    tag: str | None = None            #: MetaGraph tag (default: serve, or the only one)
    signature: str | None = None      #: signature entry point (default: serving_default)
    whole_graph: bool = False         #: analyse everything, incl. save/restore functions
    max_text_bytes: int = DEFAULT_MAX_TEXT_BYTES
    step: str | None = None           #: a named step the MetaGraph declares (``placelint steps``)
    fetch: list[str] = field(default_factory=list)   #: tensors/ops a Session.run fetches
    feed: list[str] = field(default_factory=list)    #: tensors it feeds
    place_pruned_graph: bool = False  #: GraphOptions.place_pruned_graph: place the step only


@dataclass
class RawModel:
    ref: ModelRef
    file: Path                        #: the file holding the graph
    format: str                       #: human-readable format, e.g. "GraphDef (text)"
    graph_def: GraphDef
    entry: str = "whole graph"        #: what part of the model is analysed
    #: the named steps the MetaGraph declares (``loaders.steps.declared_steps``)
    steps: dict[str, StepSpec] = field(default_factory=dict)
    step: str | None = None           #: the declared step analysed (None: see ``options``)
    loader: bool = False              #: analysed as a SavedModel loader runs it (phases)
    options: LoadOptions | None = None
    debug_info: DebugInfo | None = None
    node_lines: dict[str, int] = field(default_factory=dict)  #: node -> line (text files)
    #: notes about the file itself, e.g. PL008 text saved as ``.pb``
    notes: list[Diagnostic] = field(default_factory=list)
    #: the graph's functions when read apart from ``graph_def`` (a binary SavedModel), else
    #: None: those of ``graph_def.library``
    library: FunctionLibrary | None = None

    def functions(self) -> FunctionLibrary:
        """The graph's function library (the one object every reader of it reads)."""
        if self.library is None:
            self.library = FunctionLibrary.of(self.graph_def)
        return self.library


#: Suffixes TensorFlow's loaders read as binary / as text (``ReadBinaryProto`` /
#: ``ReadTextProto``, the SavedModel loader's saved_model.pb / saved_model.pbtxt).
#: ``.meta`` is absent: ``read_meta_graph_file`` falls back to text.
BINARY_SUFFIXES = (".pb",)
TEXT_SUFFIXES = (".pbtxt", ".pbtext")


def format_note(path: Path, text: bool, kind: str) -> Diagnostic | None:
    """PL008 when the file's content does not match what its suffix tells TensorFlow."""
    suffix = path.suffix.lower()
    label = {GRAPHDEF: "GraphDef", METAGRAPH: "MetaGraphDef", SAVEDMODEL: "SavedModel"}[kind]
    if text and suffix in BINARY_SUFFIXES:
        return FormatMismatch.diag(f"'{path.name}' holds a text-format {label} but is named '{suffix}': "
                         "TensorFlow's binary loaders will fail on this file "
                         f"({label}.ParseFromString: 'Error parsing message ...: Wire format "
                         "was corrupt'; tf.saved_model.load, ReadBinaryProto). placelint still "
                         "reads it.",
                         fix="rename it to .pbtxt, or write it in binary "
                             "(tf.io.write_graph(..., as_text=False)).")
    if not text and suffix in TEXT_SUFFIXES:
        return FormatMismatch.diag(f"'{path.name}' holds a binary {label} but is named '{suffix}': "
                         "TensorFlow's text loaders will fail on this file "
                         "(text_format.Parse, ReadTextProto, the SavedModel loader for "
                         "saved_model.pbtxt). placelint still reads it.",
                         fix="rename it to .pb, or write it as text "
                             "(tf.io.write_graph(..., as_text=True)).")
    return None


def load_raw(ref: ModelRef, options: LoadOptions | None = None, *, lite: bool = True,
             chunked: bool = True) -> RawModel:
    """Read one model. Raises ``LoadError`` with a rule code and a user-facing message.
    ``lite``: a binary model's top-level nodes keep their attrs as wire bytes (see
    ``proto_lite``: its reader reads the model again without when ``LiteRefused``);
    ``chunked``: a binary GraphDef of some size is read a chunk of nodes at a time (see
    ``chunked``: its reader reads the model again whole when a chunk is refused)."""
    options = options or LoadOptions()
    raw = _load_raw(ref, options, lite, chunked)
    raw.options = options
    return raw


def _load_raw(ref: ModelRef, options: LoadOptions, lite: bool, chunked: bool) -> RawModel:
    if ref.kind == SPECIAL:
        # it exists (discover refuses missing paths): a FIFO, socket or device
        raise LoadError(UnreadableModel, "not a regular file (a FIFO, socket or device)")
    if ref.kind == SAVEDMODEL:
        return _load_saved_model(ref, options, lite, chunked)
    parsed = read_model_file(ref.path, expect=ref.kind, max_text_bytes=options.max_text_bytes,
                             lite=lite, chunked=chunked)
    text = parsed.text is not None
    if parsed.kind == GRAPHDEF:
        raw = RawModel(ref, ref.path, f"GraphDef ({'text' if text else 'binary'})", parsed.message)
        if options.step is not None:
            raise LoadError(EntryNotFound, f"no step '{options.step}': a GraphDef declares no named "
                                     "steps (name what to run with --fetch and --feed)")
    elif parsed.kind == METAGRAPH:
        raw = _from_metagraph(ref, ref.path, parsed.message, options,
                              f"MetaGraphDef ({'text' if text else 'binary'})",
                              parsed.graphs[0] if parsed.graphs else None)
    else:
        raw = _from_saved_model_message(ref, ref.path, parsed.message, options,
                                        f"SavedModel ({'text' if text else 'binary'})",
                                        parsed.libraries, parsed.graphs)
    if text:
        raw.node_lines = node_lines(parsed.text)
    note = format_note(ref.path, text, parsed.kind)
    if note:
        raw.notes.append(note)
    return raw


def _load_saved_model(ref: ModelRef, options: LoadOptions, lite: bool, chunked: bool
                      ) -> RawModel:
    root = ref.path
    for fname in SAVED_MODEL_FILES:
        if (root / fname).is_file():
            break
    else:
        if (root / CHUNKED_SAVED_MODEL).is_file():
            raise LoadError(UnsupportedFormat, CHUNKED_MESSAGE)
        raise LoadError(UnreadableModel, "SavedModel directory has no graph: no saved_model.pb or "
                                 "saved_model.pbtxt (only variables or assets?)")
    path = root / fname
    parsed = read_model_file(path, expect=SAVEDMODEL, max_text_bytes=options.max_text_bytes,
                             lite=lite, chunked=chunked)
    if parsed.kind != SAVEDMODEL:
        raise LoadError(UnreadableModel, f"{fname} does not hold a SavedModel (it parses as a {parsed.kind})")
    raw = _from_saved_model_message(ref, path, parsed.message, options, "SavedModel",
                                    parsed.libraries, parsed.graphs)
    dbg = root / "debug" / "saved_model_debug_info.pb"
    if dbg.is_file():
        raw.debug_info = DebugInfo.read(dbg)
    if parsed.text is not None:
        raw.node_lines = node_lines(parsed.text)
    note = format_note(path, parsed.text is not None, parsed.kind)
    if note:
        raw.notes.append(note)
    return raw


def _from_saved_model_message(ref, path, saved_model, options, fmt,
                              libraries: list[FunctionLibrary] | None = None,
                              graphs: list | None = None) -> RawModel:
    """``libraries``, ``graphs``: per MetaGraph, its functions and its GraphDef where read
    apart from ``saved_model`` (``ParsedFile``)."""
    metas = list(saved_model.meta_graphs)
    if not metas:
        raise LoadError(UnreadableModel, "SavedModel holds no MetaGraph")
    tag = options.tag
    if tag is None:
        chosen = [m for m in metas if DEFAULT_TAG in m.meta_info_def.tags] or (
            metas if len(metas) == 1 else [])
    else:
        wanted = set(tag.split(","))
        chosen = [m for m in metas if wanted <= set(m.meta_info_def.tags)]
    if not chosen:
        tag_sets = "; ".join(",".join(m.meta_info_def.tags) or "(no tags)" for m in metas)
        raise LoadError(EntryNotFound, f"no MetaGraph with tag '{tag or DEFAULT_TAG}'; available tag "
                                 f"sets: {tag_sets} (choose one with --tag)")
    meta = chosen[0]
    at = next(i for i, m in enumerate(metas) if m is meta)
    tags = ",".join(meta.meta_info_def.tags)
    raw = _from_metagraph(ref, path, meta, options, f"{fmt}, tags {tags or '(none)'}",
                          graphs[at] if graphs else None)
    if libraries is not None:
        raw.library = libraries[at]
    return raw


def _from_metagraph(ref, path, meta, options, fmt, graph_def=None) -> RawModel:
    """``graph_def``: the MetaGraph's, when read apart from ``meta`` (``ParsedFile``)."""
    if graph_def is None:
        if not meta.HasField("graph_def"):
            raise LoadError(UnreadableModel, "the MetaGraph has no graph (graph_def is missing)")
        graph_def = meta.graph_def
    raw = RawModel(ref, path, fmt, graph_def)
    raw.steps = declared_steps(meta)
    if options.whole_graph:
        raw.entry = "whole graph (--whole-graph)"
        if options.step is not None:
            raise LoadError(EntryNotFound, "--step and --whole-graph exclude each other")
        return raw
    raw.loader = True
    name = options.step
    if name is not None:
        if name not in raw.steps:
            raise LoadError(EntryNotFound, f"no step '{name}' (available: "
                                     f"{', '.join(raw.steps) or 'none'}; list them with "
                                     "placelint steps)")
        raw.step = name
        raw.entry = raw.steps[name].name
        return raw
    sigs = {k for k in meta.signature_def if k != INIT_SIGNATURE}
    name = options.signature
    if name is None:
        if options.fetch or options.feed:
            return raw
        if DEFAULT_SIGNATURE in sigs:
            name = DEFAULT_SIGNATURE
        elif len(sigs) == 1:
            name = next(iter(sigs))
        elif "train_op" in raw.steps:
            raw.step = "train_op"
            raw.entry = raw.steps["train_op"].name
            return raw
        else:
            return raw   # no signature to serve: the whole graph, with its load phases
    if name not in sigs:
        available = ", ".join(sorted(sigs)) or "none"
        raise LoadError(EntryNotFound, f"no signature '{name}' (available: {available}; choose one "
                                 "with --signature, or analyse everything with --whole-graph)")
    raw.step = name
    raw.entry = f"signature '{name}'"
    return raw


# Linear-time on any input: no two adjacent quantifiers can match the same characters
# (``^\s*`` under re.M went quadratic on a million blank lines).
_NODE_NAME = re.compile(r'^[ \t]*node[ \t]*\{\s*name[ \t]*:[ \t]*"((?:[^"\\\n]|\\.)*)"', re.M)


def node_lines(text: str) -> dict[str, int]:
    """Line (1-based) of each top-level node's ``name:`` in a text-format model."""
    lines: dict[str, int] = {}
    line, pos = 1, 0
    for m in _NODE_NAME.finditer(text):
        line += text.count("\n", pos, m.start(1))
        pos = m.start(1)
        lines.setdefault(m.group(1), line)
    return lines
