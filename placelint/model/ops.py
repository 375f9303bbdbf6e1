"""Op families: which ops TensorFlow's runtime treats as a Switch, an Enter, a constant...

This is ``Node::GetNodeClassForOp``'s table (tensorflow/core/graph/graph.cc,
``kNodeClassTable``; ``REF_CLASS(x)`` lists both ``x`` and ``Ref`` + ``x``), which
``Node::IsSwitch()``, ``IsEnter()``, ``IsConstant()``... read, plus the few families TF
names in other places (cited on each). Every module asks these sets, never its own copy.
"""

from __future__ import annotations

from enum import Enum


class NodeClass(Enum):
    """graph.h ``Node::NodeClass`` (the classes placelint uses)."""

    SWITCH = "switch"
    MERGE = "merge"
    ENTER = "enter"
    EXIT = "exit"
    NEXT_ITERATION = "next_iteration"
    LOOP_COND = "loop_cond"
    CONTROL_TRIGGER = "control_trigger"
    SEND = "send"
    HOST_SEND = "host_send"
    RECV = "recv"
    HOST_RECV = "host_recv"
    CONSTANT = "constant"
    VARIABLE = "variable"
    IDENTITY = "identity"
    METADATA = "metadata"
    PARTITIONED_CALL = "partitioned_call"
    IF = "if"
    WHILE = "while"
    CASE = "case"
    ARG = "arg"
    RETVAL = "retval"
    OTHER = "other"


def _ref(*ops: str) -> tuple[str, ...]:
    return tuple(o for op in ops for o in (op, "Ref" + op))


#: graph.cc kNodeClassTable (the entries for the classes above).
NODE_CLASS: dict[str, NodeClass] = {
    **dict.fromkeys(_ref("Switch", "_SwitchN"), NodeClass.SWITCH),
    **dict.fromkeys(_ref("Merge") + ("_XlaMerge",), NodeClass.MERGE),
    **dict.fromkeys(_ref("Enter"), NodeClass.ENTER),
    **dict.fromkeys(_ref("Exit"), NodeClass.EXIT),
    **dict.fromkeys(_ref("NextIteration"), NodeClass.NEXT_ITERATION),
    "LoopCond": NodeClass.LOOP_COND,
    "ControlTrigger": NodeClass.CONTROL_TRIGGER,
    "_Send": NodeClass.SEND,
    "_HostSend": NodeClass.HOST_SEND,
    "_Recv": NodeClass.RECV,
    "_HostRecv": NodeClass.HOST_RECV,
    "Const": NodeClass.CONSTANT,
    "HostConst": NodeClass.CONSTANT,
    "Variable": NodeClass.VARIABLE,
    "VariableV2": NodeClass.VARIABLE,
    **dict.fromkeys(_ref("Identity"), NodeClass.IDENTITY),
    "Size": NodeClass.METADATA,
    "Shape": NodeClass.METADATA,
    "Rank": NodeClass.METADATA,
    "PartitionedCall": NodeClass.PARTITIONED_CALL,
    "StatefulPartitionedCall": NodeClass.PARTITIONED_CALL,
    "If": NodeClass.IF,
    "StatelessIf": NodeClass.IF,
    "While": NodeClass.WHILE,
    "StatelessWhile": NodeClass.WHILE,
    "Case": NodeClass.CASE,
    "StatelessCase": NodeClass.CASE,
    "_Arg": NodeClass.ARG,
    "_DeviceArg": NodeClass.ARG,
    "_Retval": NodeClass.RETVAL,
    "_DeviceRetval": NodeClass.RETVAL,
}


def node_class(op: str) -> NodeClass:
    """``Node::GetNodeClassForOp``: the op's class, ``OTHER`` when it has none."""
    return NODE_CLASS.get(op, NodeClass.OTHER)


def _family(cls: NodeClass) -> frozenset[str]:
    return frozenset(op for op, c in NODE_CLASS.items() if c is cls)


SWITCH = _family(NodeClass.SWITCH)                   #: IsSwitch
MERGE = _family(NodeClass.MERGE)                     #: IsMerge
ENTER = _family(NodeClass.ENTER)                     #: IsEnter
EXIT = _family(NodeClass.EXIT)                       #: IsExit
NEXT_ITERATION = _family(NodeClass.NEXT_ITERATION)   #: IsNextIteration: the loop back edges
CONSTANT = _family(NodeClass.CONSTANT)               #: IsConstant
VARIABLE = _family(NodeClass.VARIABLE)               #: IsVariable (ref variables)
IDENTITY = _family(NodeClass.IDENTITY)               #: IsIdentity
METADATA = _family(NodeClass.METADATA)               #: IsMetadata: read only the shape
PARTITIONED_CALL = _family(NodeClass.PARTITIONED_CALL)  #: IsPartitionedCall
IF = _family(NodeClass.IF)                           #: IsIfNode (functional If)
CASE = _family(NodeClass.CASE)                       #: IsCaseNode (functional Case)
WHILE = _family(NodeClass.WHILE)                     #: IsWhileNode (functional While)
ARG = _family(NodeClass.ARG)                         #: IsArg
RETVAL = _family(NodeClass.RETVAL)                   #: IsRetval

#: The nodes a function body's arguments and results become (function_body.cc: ``_Arg``
#: and ``_Retval``; the ``_Device*`` forms are only made by the runtime).
FUNCTION_IO = frozenset({"_Arg", "_Retval"})
#: Ops that create a variable (VariableV2 and friends hold a ref buffer, VarHandleOp a
#: resource handle; resource_variable_ops.cc, state_ops.cc).
VARIABLE_CREATORS = frozenset({"VariableV2", "Variable", "TemporaryVariable", "VarHandleOp"})
#: Placeholders: their shape is in the ``shape`` attr (array_ops.cc).
PLACEHOLDER = frozenset({"Placeholder", "PlaceholderV2", "PlaceholderWithDefault"})
#: Fed nodes whose outgoing control edges move to the feed's replacement (subgraph.cc
#: FeedInputs: ``Placeholder`` and ``PlaceholderV2`` only).
FED_PLACEHOLDER = frozenset({"Placeholder", "PlaceholderV2"})
#: graph_constructor.cc's own ``IsMerge`` on NodeDefs (no ``_XlaMerge``, unlike ``MERGE``):
#: the importer's loop back edges are NextIteration -> one of these.
NODEDEF_MERGE = frozenset({"Merge", "RefMerge"})
#: Ops whose outputs share their input's buffer instead of allocating one (the kernels call
#: ``set_output(i, input(i))`` or ``Tensor::CopyFrom``, which shares the buffer):
#: identity_op.cc (Identity, RefIdentity, StopGradient, PreventGradient, Snapshot is *not*
#: here: it copies unless it may forward), identity_n_op.cc, reshape_op.h (Reshape),
#: squeeze_op.h / shape_ops.h (Squeeze, ExpandDims), control_flow_ops.cc (Switch, Merge,
#: Enter, Exit, NextIteration), resource_variable_ops.cc (ReadVariableOp outside
#: copy-on-read mode), check_numerics_op.cc (CPU), shape_ops.cc (EnsureShape),
#: bitcast_op.cc, function_ops.cc (_Arg, _Retval).
FORWARDING = (IDENTITY | SWITCH | MERGE | ENTER | EXIT | NEXT_ITERATION | FUNCTION_IO
              | frozenset({"IdentityN", "StopGradient", "PreventGradient", "Reshape", "Squeeze",
                           "ExpandDims", "ReadVariableOp", "CheckNumerics", "EnsureShape",
                           "Bitcast"}))
#: Ops besides the element-wise ones (the cost table's, cwise_ops_common.h) whose kernels
#: write their output into their input's buffer when they are its last reader
#: (``forward_input_or_allocate_output``): softmax_op.cc (Softmax, LogSoftmax).
FORWARDS_INPUT = frozenset({"Softmax", "LogSoftmax"})
