"""Binary models parsed with their top-level nodes' attrs left as wire bytes.

A GraphDef's attr maps are most of what parsing it costs (each NodeDef's map of
``AttrValue`` messages: a 10^5-node training graph parses in 0.094 s with them, 0.051 s
without), yet the graph builder keys each node's attrs by their wire bytes and parses the
``AttrValue``s once per distinct set (``model.attr_records``); a lite node's key is its
attrs' bytes in the file's order. The classes here are
TensorFlow's GraphDef, MetaGraphDef and SavedModel (``proto.py``) but for one field:
``NodeDef.attr`` (field 5) is ``repeated bytes attr_wire``, each map entry's own bytes.
The wire format is the same (a lite message serializes to the bytes of the real one, with
its map entries in the file's order); every other field keeps its real type (a
GraphDef's ``library``, ``versions``, a MetaGraphDef's signatures and collections...).
The field is named apart so that a reader of ``nd.attr`` fails loudly on a lite node:
such readers (a call, functional control flow, a node the import-time validation judges)
take ``real_node(nd)``.

A lite parse accepts attrs the real one refuses (a malformed ``AttrValue``, a map key
that is not UTF-8, nesting past protobuf's depth limit): the attrs are parsed for real
where the builder first meets their bytes (``AttrRecords.miss``: ``parse_real``) or the
node is converted (``real_node``), at the depth the file nests them; a refusal raises
``LiteRefused``, and the caller reads the file again with the real classes
(``pipeline.load_model``), which then refuse it with protobuf's own message.

Of a GraphDef inside a MetaGraphDef (inside a SavedModel) the classes are copies of their
own (``GraphDef2``/``GraphDef3``, ``MetaGraphDef3``): the class of a lite graph tells how
deep its nodes sit in their file.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf import message as pb_message

from .proto import GraphDef, MetaGraphDef, NodeDef, SavedModel
from .wire import length_delimited

__all__ = ["LiteRefused", "PARSE_ERRORS", "SHALLOW", "node_depth", "parse_real", "real_node",
           "GraphDefLite", "MetaGraphDefLite", "NodeDefLite", "SavedModelLite"]

_FILE = "placelint/lite.proto"
_PACKAGE = "placelint.lite"
#: NodeDef's attr field, and what it is called here
ATTR_FIELD, ATTR_WIRE = 5, "attr_wire"
#: what protobuf's parse raises on a malformed message (see ``loaders.read``)
PARSE_ERRORS = (pb_message.DecodeError, pb_message.Error, RecursionError, ValueError)
#: NodeDef bytes this long or shorter cannot nest messages 100 deep (each level takes two
#: bytes at least: its tag and length): parsed alone, they meet no depth limit that their
#: file's nesting would meet
SHALLOW = 160


class LiteRefused(Exception):
    """A lite-parsed node whose attrs the real parse refuses: the model must be read again
    with the real classes (which refuse the file)."""


def _copy(pool_file, real, name: str, retarget: dict[str, str]) -> None:
    """Add to ``pool_file`` a copy of ``real``'s message named ``name``: its nested map
    entries copied along (protobuf wants them nested), its other nested messages and field
    types the real ones, the fields of ``retarget`` (field -> type name in this file)
    retargeted."""
    msg = pool_file.message_type.add()
    real.CopyToProto(msg)
    msg.name = name
    own = "." + real.full_name + "."
    kept = [n for n in msg.nested_type if n.options.map_entry]
    del msg.nested_type[:]
    msg.nested_type.extend(kept)
    entries = {own + n.name for n in kept}
    for f in msg.field:
        if f.type_name in entries:
            f.type_name = f".{_PACKAGE}.{name}.{f.type_name[len(own):]}"
        if f.name in retarget:
            f.type_name = f".{_PACKAGE}.{retarget[f.name]}"


def _classes():
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_FILE)
    except KeyError:
        F = descriptor_pb2.FieldDescriptorProto
        fd = descriptor_pb2.FileDescriptorProto(
            name=_FILE, package=_PACKAGE, syntax="proto3",
            dependency=sorted({NodeDef.DESCRIPTOR.file.name, GraphDef.DESCRIPTOR.file.name,
                               MetaGraphDef.DESCRIPTOR.file.name,
                               SavedModel.DESCRIPTOR.file.name}
                              | {d.name for d in NodeDef.DESCRIPTOR.file.dependencies}))
        _copy(fd, NodeDef.DESCRIPTOR, "NodeDef", {})
        node = fd.message_type[-1]
        attr = next(f for f in node.field if f.number == ATTR_FIELD)
        del node.nested_type[:]     # (the attr map's entry)
        attr.name, attr.json_name, attr.type = ATTR_WIRE, "attrWire", F.TYPE_BYTES
        attr.ClearField("type_name")
        for suffix in ("", "2", "3"):
            _copy(fd, GraphDef.DESCRIPTOR, "GraphDef" + suffix, {"node": "NodeDef"})
        _copy(fd, MetaGraphDef.DESCRIPTOR, "MetaGraphDef", {"graph_def": "GraphDef2"})
        _copy(fd, MetaGraphDef.DESCRIPTOR, "MetaGraphDef3", {"graph_def": "GraphDef3"})
        _copy(fd, SavedModel.DESCRIPTOR, "SavedModel", {"meta_graphs": "MetaGraphDef3"})
        pool.Add(fd)
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{n}"))
            for n in ("NodeDef", "GraphDef", "GraphDef2", "GraphDef3", "MetaGraphDef",
                      "SavedModel")]


NodeDefLite, GraphDefLite, _GraphDef2, _GraphDef3, MetaGraphDefLite, SavedModelLite = _classes()

#: a lite graph's class -> how deep its nodes sit in their file (1: a GraphDef's nodes)
_DEPTH = {GraphDefLite: 1, _GraphDef2: 2, _GraphDef3: 3}
_NODE_FIELD, _GRAPH_FIELD, _META_FIELD = 1, 2, 2   # GraphDef.node, MetaGraphDef.graph_def,
#                                                   # SavedModel.meta_graphs


def node_depth(graph_def) -> int:
    """How deep the nodes of ``graph_def`` sit in their file when they are lite (1: a
    GraphDef's; 2: a MetaGraphDef's; 3: a SavedModel's; a GraphDef read in chunks says
    so itself: ``lite_depth``); 0 for a real GraphDef."""
    return _DEPTH.get(type(graph_def)) or getattr(graph_def, "lite_depth", 0)


def parse_real(data: bytes, depth: int):
    """The real NodeDef of wire bytes ``data``, parsed as deep as ``depth`` nests it (see
    ``node_depth``): what the file's parse with the real classes would make of it, or
    ``LiteRefused`` when that parse refuses it."""
    try:
        if len(data) <= SHALLOW:
            return NodeDef.FromString(data)
        wrapped = length_delimited(_NODE_FIELD, data)
        if depth == 1:
            return GraphDef.FromString(wrapped).node[0]
        wrapped = length_delimited(_GRAPH_FIELD, wrapped)
        if depth == 2:
            return MetaGraphDef.FromString(wrapped).graph_def.node[0]
        return SavedModel.FromString(length_delimited(_META_FIELD, wrapped)
                                     ).meta_graphs[0].graph_def.node[0]
    except PARSE_ERRORS as exc:
        raise LiteRefused(str(exc)) from None


def real_node(nd, depth: int = 1):
    """``nd`` as a real NodeDef (itself when it is one; ``depth``: see ``node_depth``)."""
    if type(nd) is not NodeDefLite:
        return nd
    return parse_real(nd.SerializeToString(), depth)
