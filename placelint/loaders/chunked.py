"""A binary GraphDef of some size parsed a chunk of nodes at a time, with each node's
attrs key cut from the file's bytes.

At 10^6 nodes the parsed GraphDef of a TF1 training graph holds ~1 GB, and the end of the
graph build, where it is still alive beside the analysed graph, is ``placelint check``'s
peak memory (~1.9 GiB). The build reads each top-level NodeDef once, in order, and keeps
nothing of it; so a GraphDef file over ``CHUNKED_MIN_BYTES`` is read as the file's bytes
(~235 MB at 10^6 nodes), the nodes' boundaries in them, and the rest of the message (its
library, versions), and its ``node`` field parses ``CHUNK_NODES`` nodes at a time each
time it is iterated: the build's end then holds one chunk (tf1_train at 10^6 nodes: the
build's end 1.89 -> 1.25 GiB, the check's peak 1.90 -> 1.54 GiB, now in a later phase,
for about the same time: 0.3 s of boundaries, 0.3 s less system time). A ``.meta``
file (a TF1 training graph's MetaGraphDef) over that size has its graph read so, and the
rest of it (collections, signatures, saver) parsed apart; so has a SavedModel's MetaGraph
whose GraphDef, without its functions (read apart already), is that large (a TF1
SavedModel's).

The boundaries come from a message declaring only ``repeated bytes node = 1``
(``proto.node_spans_class``: protobuf's parser gives each node's bytes, 0.2-0.3 s at 10^6
nodes) and the layout every writer of GraphDefs uses: the node fields first, each its tag,
its length as a shortest varint and its bytes. A file laid out otherwise (a node field
after another field, a padded varint) is parsed whole, as before. A chunk that protobuf
refuses, which the whole file's parse would have refused, is a ``CorruptChunk`` when the
chunk is read (during the build: the model is then read again whole, and PL001 quotes
that parse's refusal: its message type and its error, not the chunk's).

The boundaries also give each node's attrs key (``ChunkedNodes.attr_keys``): the graph
builder keys the attrs it copies and types by their wire bytes, which it otherwise cuts
from each node serialized again (``model.attr_wire.attrs_key``, ~1 us a node). Here the
fields before the attrs (name, op, inputs, device) are read for every node at once
(``attr_offsets``) and each key is a slice of the file's bytes: with it, reading a file in
chunks costs less than one parse at every size measured (a 10^5-node training graph's
parse and build 0.70 -> 0.645 s, 10^4 nodes 0.061 -> 0.056 s), so files from
``CHUNKED_MIN_BYTES`` on (1 MiB, ~4000 nodes) are read so; smaller ones, the samples
among them, are parsed whole, and the loaders need not import numpy for them.
"""

from __future__ import annotations

from google.protobuf import message as pb_message

from ..proto import GraphDef, MetaGraphDef, node_spans_class
from ..proto_lite import GraphDefLite
from ..wire import LENGTH_DELIMITED, fields, read_varint
from .library import GRAPH_DEF, META_GRAPHS, rewrite_field

__all__ = ["CHUNKED_MIN_BYTES", "CHUNK_NODES", "ChunkedGraphDef", "CorruptChunk",
           "chunked_graph_def", "chunked_meta_graph", "chunked_saved_model"]

#: what protobuf's parser raises for bytes it refuses
_PARSE_ERRORS = (pb_message.DecodeError, pb_message.Error, RecursionError, ValueError)

#: binary GraphDef files from this size on are parsed in chunks (a TF1 training graph
#: has ~235 bytes per node: ~4500 nodes; see above)
CHUNKED_MIN_BYTES = 2**20
#: nodes per chunk (the first chunk is the first ``FIRST_CHUNK``, which the loader's
#: plausibility test reads: see ``read.PLAUSIBLE_NODES``)
CHUNK_NODES = 50_000
FIRST_CHUNK = 1_000

_NODE_TAG = 0x0A        # field 1, length-delimited


class ChunkedNodes:
    """A GraphDef's ``node`` field read from the file's bytes a chunk at a time: its
    length, and its NodeDefs in order each time it is iterated (each chunk parsed then,
    and let go once its nodes are no longer referenced); and each node's attrs as the
    file's bytes (``attr_keys``)."""

    __slots__ = ("_data", "_chunks", "_count", "_class", "_attrs")

    def __init__(self, data: bytes, chunks: list[tuple[int, int, int]], count: int,
                 graph_class, attrs):
        self._data = data
        self._chunks = chunks       # (start, end, number of nodes) per chunk, in order
        self._count = count
        self._class = graph_class   # (what a chunk is parsed as: see ``proto_lite``)
        #: (where each node's fields from its attrs on start, where it ends) as arrays;
        #: a start of -1 for a node not read so (see ``attr_offsets``)
        self._attrs = attrs

    def attr_keys(self):
        """Per node, in order, its bytes from its first field after ``device`` on (its attrs'
        map entries, then any later fields), as ``model.attr_wire.attrs_key`` cuts them from
        the node serialized again (the same bytes, for a file laid out as writers lay it
        out; for any other, still the node's attrs and nothing but its fields 5 on): None
        for a node whose fields were not read (the builder then cuts them itself)."""
        data, (starts, ends) = self._data, (a.tolist() for a in self._attrs)
        if isinstance(data, bytes):
            return (data[s:e] if s >= 0 else None for s, e in zip(starts, ends))
        return (bytes(data[s:e]) if s >= 0 else None for s, e in zip(starts, ends))

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        view = memoryview(self._data)
        for start, end, count in self._chunks:
            try:
                part = self._class.FromString(view[start:end])
            except _PARSE_ERRORS as exc:
                raise CorruptChunk(str(exc)) from None
            nodes = part.node
            del part
            if len(nodes) != count:     # (not with the boundaries checked: defensive)
                raise CorruptChunk("a chunk of nodes does not parse as its bytes say")
            yield from nodes


class CorruptChunk(ValueError):
    """A chunk of nodes protobuf refuses, as it would have refused the whole file (whose
    reader then reads it whole: ``pipeline.load_model``)."""


class ChunkedGraphDef:
    """What the analysis reads of a GraphDef (``node``, ``library``, ``versions``), its
    nodes parsed a chunk at a time (``ChunkedNodes``). ``lite_depth``: how deep its nodes
    sit in their file when they are ``proto_lite``'s (``proto_lite.node_depth``), else 0."""

    __slots__ = ("node", "library", "versions", "lite_depth")

    def __init__(self, node: ChunkedNodes, rest: GraphDef, lite_depth: int = 0):
        self.node = node
        self.library, self.versions = rest.library, rest.versions
        self.lite_depth = lite_depth


def chunked_graph_def(data, lite: bool = False, depth: int = 1) -> ChunkedGraphDef | None:
    """``data`` (a binary GraphDef: bytes, or a memoryview of a file's bytes) as a
    ``ChunkedGraphDef``; None when it is not laid out as GraphDef writers lay it out (or
    not a GraphDef at all: the whole parse then says what it is). ``lite``: its nodes are
    ``proto_lite``'s, ``depth`` deep in their file (1: a GraphDef file's)."""
    import numpy as np      # (here: the loaders import without numpy, e.g. for ``steps``)

    try:
        spans = node_spans_class().FromString(data)
    except _PARSE_ERRORS:
        return None
    count = len(spans.node)
    lengths = np.fromiter(map(len, spans.node), dtype=np.int64, count=count)
    del spans
    n_bytes = np.ones(count, dtype=np.int64)            # each length's shortest varint
    for k in range(1, 5):
        n_bytes += lengths >= 1 << (7 * k)
    ends = np.cumsum(1 + n_bytes + lengths)
    starts = ends - (1 + n_bytes + lengths)
    nodes_end = int(ends[-1]) if count else 0
    if nodes_end > len(data):
        return None
    wire = np.frombuffer(data, dtype=np.uint8, count=nodes_end)
    if count and (wire[starts] != _NODE_TAG).any():
        return None
    for k in range(5):          # each length as written: its shortest varint
        at = np.flatnonzero(n_bytes > k)
        if not at.size:
            break
        byte = (lengths[at] >> (7 * k)) & 0x7F | np.where(n_bytes[at] > k + 1, 0x80, 0)
        if (wire[starts[at] + 1 + k] != byte).any():
            return None
    try:
        rest = GraphDef.FromString(memoryview(data)[nodes_end:])
    except _PARSE_ERRORS:
        return None
    if rest.node:       # (a node field after another field)
        return None
    cuts = [0, *range(min(FIRST_CHUNK, count), count, CHUNK_NODES), count] if count else [0]
    chunks = [(int(starts[a]), int(ends[b - 1]), b - a) for a, b in zip(cuts, cuts[1:]) if b > a]
    attrs = (attr_offsets(wire, starts + 1 + n_bytes, ends), ends)
    nodes = ChunkedNodes(data, chunks, count, GraphDefLite if lite else GraphDef, attrs)
    return ChunkedGraphDef(nodes, rest, depth if lite else 0)


#: the tags of NodeDef's fields 1-4 (name, op, input, device: length-delimited)
_HEAD_TAGS = (0x0A, 0x12, 0x1A, 0x22)


def attr_offsets(wire, body, end, max_fields: int = 64):
    """Per node (its fields at ``wire[body:end]``, numpy arrays of offsets): where its
    first field that is not one of fields 1-4 starts (``end`` when it has none), read
    field by field over every node at once; -1 for a node with more than ``max_fields``
    of fields 1-4 (a node with many inputs: its key is cut as before) or whose fields do
    not end at ``end``. A field 1-4 after the first other field (no writer lays a node out
    so) stays in that node's bytes: they are still its attrs' bytes with what follows."""
    import numpy as np

    head = np.zeros(256, dtype=bool)
    head[list(_HEAD_TAGS)] = True
    out = np.full(body.size, -1, dtype=np.int64)
    idx = np.arange(body.size, dtype=np.int64)
    pos, lim = body.astype(np.int64), end.astype(np.int64)
    top, raw = wire.size - 1, memoryview(wire)     # (``raw``: its bytes as ints)
    for _ in range(max_fields + 1):
        if not idx.size:
            break
        inside = pos < lim
        stop = ~inside
        stop[inside] = ~head[wire[pos[inside]]]
        if stop.any():
            out[idx[stop]] = pos[stop]
            keep = ~stop
            idx, pos, lim = idx[keep], pos[keep], lim[keep]
        # the field's length: one byte, but for a field of 128 bytes or more
        size = wire[np.minimum(pos + 1, top)].astype(np.int64)
        nxt = pos + 2 + size
        ok = pos + 1 < lim
        for j in np.flatnonzero(size >= 0x80).tolist():
            read = read_varint(raw, int(pos[j]) + 1, int(lim[j]))
            ok[j] = read is not None
            nxt[j] = -1 if read is None else read[1] + read[0]
        ok &= nxt <= lim
        if not ok.all():
            idx, nxt, lim = idx[ok], nxt[ok], lim[ok]
        pos = nxt
    return out


def chunked_meta_graph(data: bytes, lite: bool = False
                       ) -> tuple[ChunkedGraphDef, MetaGraphDef] | None:
    """``data`` (a binary MetaGraphDef, e.g. a TF1 training graph's ``.meta``) as its
    GraphDef in chunks (``chunked_graph_def``) and the rest of the MetaGraph (collections,
    signatures, saver) parsed without it; None when its graph is not one field laid out
    as ``chunked_graph_def`` reads it (``lite``: see there)."""
    apart = _graph_apart(memoryview(data), 0, len(data), 0, lite, 2)
    if apart is None:
        return None
    rest, chunked = apart
    try:
        return chunked, MetaGraphDef.FromString(rest)
    except _PARSE_ERRORS:
        return None


def chunked_saved_model(data: bytes, lite: bool = False
                        ) -> tuple[bytes, list[ChunkedGraphDef | None]] | None:
    """``data`` (a binary SavedModel, its functions already read apart:
    ``library.split_saved_model``) without the GraphDef of each MetaGraph whose GraphDef
    is ``CHUNKED_MIN_BYTES`` or more (a TF1 SavedModel's graph), and those GraphDefs in
    chunks, per MetaGraph (None for the others, parsed with the rest); None when there is
    no such GraphDef, or the file is not laid out as this reads it (``lite``: see
    ``chunked_graph_def``)."""
    view = memoryview(data)
    graphs: list[ChunkedGraphDef | None] = []

    def apart(start: int, end: int) -> bytes:
        found = _graph_apart(view, start, end, CHUNKED_MIN_BYTES, lite, 3)
        graphs.append(None if found is None else found[1])
        return bytes(view[start:end]) if found is None else found[0]

    rest = rewrite_field(view, 0, len(data), META_GRAPHS, apart, repeated=True)
    if rest is None or not any(g is not None for g in graphs):
        return None
    return rest, graphs


def _graph_apart(view, start: int, end: int, min_bytes: int, lite: bool, depth: int
                 ) -> tuple[bytes, ChunkedGraphDef] | None:
    """The MetaGraphDef at ``view[start:end]`` without its ``graph_def``, and that GraphDef
    in chunks; None unless it is one field of ``min_bytes`` or more that
    ``chunked_graph_def`` reads (``lite``, ``depth``: see there)."""
    graph = [f for f in fields(view, start, end) or () if f[0] == GRAPH_DEF]
    if len(graph) != 1 or graph[0][1] != LENGTH_DELIMITED:
        return None
    _, _, head, s, e = graph[0]
    chunked = chunked_graph_def(view[s:e], lite, depth) if e - s >= min_bytes else None
    if chunked is None:
        return None
    return bytes(view[start:head]) + bytes(view[e:end]), chunked
