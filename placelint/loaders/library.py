"""A graph's function library: function name -> ``FunctionDef``.

Every reader of a graph's functions (the build's expansion, the import-time validation)
reads one ``FunctionLibrary``. Of a binary SavedModel, the library is not parsed with the
rest of the file: ``split_saved_model`` finds each FunctionDef's bytes and name on the wire
(SavedModel.meta_graphs -> MetaGraphDef.graph_def -> GraphDef.library ->
FunctionDefLibrary.function; each is parsed there once, for its name, and let go) and hands back the
file without them; a function is parsed when it is first read, and ``release`` lets the
parsed ones go once the build is done with them (a TF2 SavedModel's library is most of
its file, and about half of its functions are never called).
"""

from __future__ import annotations

from ..proto import FunctionDef
from ..wire import LENGTH_DELIMITED, fields, length_delimited

#: field numbers: SavedModel.meta_graphs, MetaGraphDef.graph_def, GraphDef.library,
#: FunctionDefLibrary.function
META_GRAPHS, GRAPH_DEF, _LIBRARY, _FUNCTION = 2, 2, 2, 1


class FunctionLibrary:
    """Function name -> ``FunctionDef`` (the last function of a name, as a dict made from
    ``library.function`` keeps it)."""

    def __init__(self, functions: dict | None = None, data: bytes | None = None,
                 spans: dict[str, tuple[int, int]] | None = None):
        self._parsed: dict = functions if functions is not None else {}
        self._data = data
        self._spans = spans
        self._names = tuple(spans if spans is not None else self._parsed)
        #: bytes of the functions parsed since the last ``release``
        self.parsed_bytes = 0

    @classmethod
    def of(cls, graph_def) -> "FunctionLibrary":
        """The library of a parsed GraphDef."""
        return cls({f.signature.name: f for f in graph_def.library.function})

    def __contains__(self, name) -> bool:
        return name in self.table()

    def table(self) -> dict:
        """A dict whose keys are the functions' names (for a caller testing many names:
        its ``in`` is the dict's, without a method call)."""
        return self._spans if self._spans is not None else self._parsed

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self):
        return iter(self._names)

    def get(self, name):
        fdef = self._parsed.get(name)
        if fdef is None and self._spans is not None:
            span = self._spans.get(name)
            if span is not None:
                fdef = self._parsed[name] = FunctionDef.FromString(self._data[span[0]:span[1]])
                self.parsed_bytes += span[1] - span[0]
        return fdef

    def __getitem__(self, name):
        fdef = self.get(name)
        if fdef is None:
            raise KeyError(name)
        return fdef

    @property
    def lazy(self) -> bool:
        """Functions are parsed when read (and can be let go)."""
        return self._spans is not None

    def forget(self, name: str) -> None:
        """Let function ``name`` go if parsed here (it is parsed again if read again)."""
        if self._spans is not None:
            self._parsed.pop(name, None)

    def release(self) -> None:
        """Let the functions parsed so far go (they are parsed again if read again); a
        library parsed with its GraphDef keeps them."""
        if self._spans is not None:
            self._parsed = {}
            self.parsed_bytes = 0


def split_saved_model(data: bytes) -> tuple[bytes, list[FunctionLibrary]] | None:
    """``data`` (a binary SavedModel) without its MetaGraphs' library functions, and each
    MetaGraph's ``FunctionLibrary`` (read from ``data``); None when the wire format is not
    the plain shape this reads (malformed, or a field repeated that protobuf would merge):
    then the file is parsed whole. A corrupt FunctionDef raises protobuf's DecodeError."""
    view = memoryview(data)
    libraries: list[FunctionLibrary] = []
    stripped = rewrite_field(view, 0, len(data), META_GRAPHS,
                             lambda s, e: _split_meta(view, s, e, libraries), repeated=True)
    if stripped is None or not libraries:
        return None
    return stripped, libraries


def _split_meta(view, start, end, libraries) -> bytes | None:
    library = FunctionLibrary(data=None, spans={})
    meta = rewrite_field(view, start, end, GRAPH_DEF,
                         lambda s, e: _split_graph(view, s, e, library))
    if meta is None:
        return None
    library._data = view.obj
    library._names = tuple(library._spans)
    libraries.append(library)
    return meta


def _split_graph(view, start, end, library) -> bytes | None:
    return rewrite_field(view, start, end, _LIBRARY,
                         lambda s, e: _split_library(view, s, e, library))


def _split_library(view, start, end, library) -> bytes | None:
    """The FunctionDefLibrary at ``view[start:end]`` without its functions, which go to
    ``library`` as spans."""
    found = fields(view, start, end)
    if found is None:
        return None
    rest = []
    for number, wt, head, s, e in found:
        if (number, wt) != (_FUNCTION, LENGTH_DELIMITED):
            rest.append(view[head:e])
            continue
        # parsed (as the whole file's parse would: a corrupt body refuses the file here,
        # not midway through the build) for its name, then let go
        name = FunctionDef.FromString(view[s:e]).signature.name
        library._spans[name] = (s, e)     # (a dict keeps the last of a name)
    return b"".join(rest)


def rewrite_field(view, start: int, end: int, number: int, split, repeated: bool = False
                  ) -> bytes | None:
    """The message at ``view[start:end]`` with each field ``number`` (a message; once
    unless ``repeated``: protobuf merges the repeats of a singular one) replaced by
    ``split(value start, value end)``; None when that gives None, the field repeats, or
    the message is not well formed."""
    found = fields(view, start, end)
    if found is None:
        return None
    parts, pos, seen = [], start, 0
    for num, wt, head, s, e in found:
        if (num, wt) != (number, LENGTH_DELIMITED):
            continue
        seen += 1
        value = split(s, e)
        if value is None or (seen > 1 and not repeated):
            return None
        parts.append(view[pos:head])
        parts.append(length_delimited(number, value))
        pos = e
    parts.append(view[pos:end])
    return b"".join(parts)
