"""TensorFlow's protobuf classes, without TensorFlow.

``tensorboard.compat.proto`` ships TF's GraphDef, MetaGraphDef, FunctionDef and
friends and imports in ~0.1 s; importing ``tensorflow`` costs ~3.5 s. It has no
``saved_model.proto``, but a SavedModel is only
``int64 saved_model_schema_version = 1; repeated MetaGraphDef meta_graphs = 2;``,
so the message is declared here against tensorboard's MetaGraphDef.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.proto import (  # noqa: F401  (re-exported)
    attr_value_pb2,
    function_pb2,
    graph_debug_info_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
)

GraphDef = graph_pb2.GraphDef
NodeDef = node_def_pb2.NodeDef
FunctionDef = function_pb2.FunctionDef
MetaGraphDef = meta_graph_pb2.MetaGraphDef
AttrValue = attr_value_pb2.AttrValue
GraphDebugInfo = graph_debug_info_pb2.GraphDebugInfo


def _saved_model_class():
    pool = descriptor_pool.Default()
    name = "placelint/saved_model.proto"
    try:
        pool.FindFileByName(name)
    except KeyError:
        fd = descriptor_pb2.FileDescriptorProto(
            name=name,
            package="placelint",
            syntax="proto3",
            dependency=[meta_graph_pb2.DESCRIPTOR.name],
        )
        msg = fd.message_type.add(name="SavedModel")
        msg.field.add(
            name="saved_model_schema_version",
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
        msg.field.add(
            name="meta_graphs",
            number=2,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
            type_name="." + MetaGraphDef.DESCRIPTOR.full_name,
        )
        pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("placelint.SavedModel"))


SavedModel = _saved_model_class()


_NODE_SPANS = None


def node_spans_class():
    """A message declaring only GraphDef's ``repeated bytes node = 1``: parsed from a binary
    GraphDef, it gives each NodeDef's bytes without parsing them (``loaders.chunked``)."""
    global _NODE_SPANS
    if _NODE_SPANS is None:
        pool = descriptor_pool.DescriptorPool()     # (its own pool: nothing else sees it)
        fd = descriptor_pb2.FileDescriptorProto(name="placelint/node_spans.proto",
                                                package="placelint", syntax="proto3")
        msg = fd.message_type.add(name="NodeSpans")
        msg.field.add(name="node", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
        pool.Add(fd)
        _NODE_SPANS = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("placelint.NodeSpans"))
    return _NODE_SPANS
