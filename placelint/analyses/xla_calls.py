"""Function calls compiled by XLA, and the resources they read from another device.

XLA runs a compiled call (``tf.function(jit_compile=True)``) as one kernel on the call's
device (the builder keeps such a call as one node: ``model.expand``). Its launch refuses a
resource handle that lives on another device: xla_launch_util.cc
``GetVariableInfosFromInputs`` fails the step with "Trying to access resource <name>
located in device <where it lives> from device <the call's>" (TF's XLA known issue
"tf.Variable on a different device"). The placer does not bring them together: function
calls are exempt from resource-input colocation (colocation_graph.cc
``IsExemptFromResourceInputColocation``), so a call can land apart from its variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..dtypes import DT_RESOURCE
from ..model.expand import XLA_MARKS, compilation_mark
from ..model.graph import Graph, Node
from ..model.op_index import op_index
from ..model.ops import FUNCTION_IO, IDENTITY, PARTITIONED_CALL, VARIABLE_CREATORS

#: ops a resource handle passes through unchanged (its first data input): an expanded
#: call's ``_Arg``/``_Retval``, Identity
HANDLE_THROUGH = IDENTITY | FUNCTION_IO
#: how many such ops a walk back to the handle's maker follows at most
WALK_LIMIT = 64


@dataclass(frozen=True)
class ForeignResource:
    """A resource input of an XLA-compiled call that lives on another device."""

    call: str           #: the compiled call node
    call_device: str    #: where it runs
    src: str            #: the tensor the call takes the handle from: node ...
    src_slot: int       #: ... and output
    origin: str         #: the node that made the handle (VarHandleOp...), as far as traced
    name: str           #: the resource's name as TensorFlow prints it
    device: str         #: where the handle lives (its maker's device)
    variable: bool      #: the handle's maker makes a variable (VarHandleOp)

    @property
    def tf_message(self) -> str:
        """TensorFlow's words when the step runs."""
        return (f"Trying to access resource {self.name} located in device {self.device} "
                f"from device {self.call_device}")


def compiled_calls(graph: Graph) -> list[tuple[int, Node]]:
    """``graph``'s function calls compiled by XLA: (position in graph order, node)."""
    ops = op_index(graph)
    if not ops.any_of(PARTITIONED_CALL):
        return []       # (calls that are not compiled were expanded: most graphs have none)
    nodes = list(graph.nodes.values())
    return [(i, nodes[i]) for i in np.flatnonzero(ops.mask(PARTITIONED_CALL.__contains__)).tolist()
            if compilation_mark(nodes[i].attrs) in XLA_MARKS]


def foreign_resources(graph: Graph, device: Mapping[str, str | None]) -> list[ForeignResource]:
    """Every resource input of an XLA-compiled call of ``graph`` made on another device than
    the call's, by ``device`` (node -> the full name of its device, None when unplaced),
    in graph order."""
    nodes = graph.nodes
    found = []
    for _, call in compiled_calls(graph):
        where = device.get(call.name)
        if where is None:
            continue
        for e in call.in_edges:
            if e.dtype != DT_RESOURCE:
                continue
            origin = _origin(nodes, e.src)
            home = device.get(origin.name)
            if home is not None and str(home) != str(where):
                found.append(ForeignResource(call.name, str(where), e.src, e.src_slot,
                                             origin.name, _resource_name(origin), str(home),
                                             origin.op in VARIABLE_CREATORS))
    return found


def _origin(nodes: Mapping[str, Node], name: str) -> Node:
    """The node that made the resource handle ``name`` outputs: back through the ops it
    passes through unchanged."""
    node = nodes[name]
    for _ in range(WALK_LIMIT):
        if node.op not in HANDLE_THROUGH:
            break
        data = next((e for e in node.in_edges if e.src_slot >= 0), None)
        if data is None or data.src not in nodes:
            break
        node = nodes[data.src]
    return node


def _resource_name(node: Node) -> str:
    """The resource's name in its handle: the ``shared_name`` attr of the op that made it,
    else the op's name (resource_handle_op's default container and name)."""
    value = node.attrs.get("shared_name")
    shared = value.s.decode("utf-8", "replace") if value is not None else ""
    return shared or node.name
