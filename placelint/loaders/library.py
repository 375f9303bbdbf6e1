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

#: wire tags (field number << 3 | 2: length-delimited)
_META_GRAPHS, _GRAPH_DEF, _LIBRARY, _FUNCTION = 18, 18, 18, 10


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
        return name in (self._spans if self._spans is not None else self._parsed)

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
    out: list = []
    libraries: list[FunctionLibrary] = []
    top = _fields(view, 0, len(data))
    if top is None:
        return None
    pos = 0
    for tag, head, start, end in top:
        if tag != _META_GRAPHS:
            continue
        meta = _split_meta(view, start, end, libraries)
        if meta is None:
            return None
        out.append(view[pos:head])
        out.append(_field(tag, meta))
        pos = end
    if not libraries:
        return None
    out.append(view[pos:])
    return b"".join(out), libraries


def _split_meta(view, start, end, libraries) -> bytes | None:
    fields = _fields(view, start, end)
    if fields is None or [f[0] for f in fields].count(_GRAPH_DEF) > 1:
        return None
    parts, pos = [], start
    library = FunctionLibrary(data=None, spans={})
    for tag, head, s, e in fields:
        if tag != _GRAPH_DEF:
            continue
        graph = _split_graph(view, s, e, library)
        if graph is None:
            return None
        parts.append(view[pos:head])
        parts.append(_field(tag, graph))
        pos = e
    parts.append(view[pos:end])
    library._data = view.obj
    library._names = tuple(library._spans)
    libraries.append(library)
    return b"".join(parts)


def _split_graph(view, start, end, library) -> bytes | None:
    fields = _fields(view, start, end)
    if fields is None or [f[0] for f in fields].count(_LIBRARY) > 1:
        return None
    parts, pos = [], start
    for tag, head, s, e in fields:
        if tag != _LIBRARY:
            continue
        lib = _fields(view, s, e)
        if lib is None:
            return None
        rest = []
        for ftag, fhead, fs, fe in lib:
            if ftag != _FUNCTION:
                rest.append(view[fhead:fe])
                continue
            # parsed (as the whole file's parse would: a corrupt body refuses the file
            # here, not midway through the build) for its name, then let go
            name = FunctionDef.FromString(view[fs:fe]).signature.name
            library._spans[name] = (fs, fe)     # (a dict keeps the last of a name)
        parts.append(view[pos:head])
        parts.append(_field(tag, b"".join(rest)))
        pos = e
    parts.append(view[pos:end])
    return b"".join(parts)


def _fields(view, i: int, end: int) -> list[tuple[int, int, int, int]] | None:
    """``(tag, field start, value start, value end)`` of each field of the message at
    ``view[i:end]`` (for varint and fixed-size values, the span of the value); None unless
    well formed."""
    out = []
    while i < end:
        head = i
        tag, i = _varint(view, i, end)
        if tag is None or tag >> 3 == 0:
            return None
        wt = tag & 7
        start = i
        if wt == 0:
            value, i = _varint(view, i, end)
            if value is None:
                return None
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            size, start = _varint(view, i, end)
            if size is None:
                return None
            i = start + size
        else:
            return None
        if i > end:
            return None
        out.append((tag, head, start, i))
    return out


def _varint(view, i: int, end: int):
    value = shift = 0
    while i < end and shift < 64:
        b = view[i]
        value |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return value, i
        shift += 7
    return None, i


def _field(tag: int, value: bytes) -> bytes:
    n = len(value)
    head = bytearray([tag])
    while n >= 0x80:
        head.append(n & 0x7F | 0x80)
        n >>= 7
    head.append(n)
    return bytes(head) + value
