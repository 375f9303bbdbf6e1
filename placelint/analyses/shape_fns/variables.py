"""Shape functions of variables and their updates: ref variables (``shape`` attr),
resource handles (``VarHandleOp``'s shape and dtype reach ``ReadVariableOp`` and
``ResourceGather`` through the handle), Assign and the Apply* optimizers."""

from __future__ import annotations

from ...model.attrs import attr_i, attr_shape, attr_type
from .base import first, merge, scalar, table


def _variable(inf, node, ins, srcs):
    # attr_shape, memoized on the attr object (variables with equal attrs share it), then
    # on its serialized bytes (a model's variables share few shapes)
    a = node.attrs.get("shape")
    if a is None:
        return [None]
    hit = inf.attr_objects.get(id(a))
    if hit is not None:
        return [hit[1]]
    raw = a.SerializeToString()
    try:
        shape = inf.attr_shapes[raw]
    except KeyError:
        shape = inf.attr_shapes[raw] = attr_shape(node, "shape")
    inf.attr_objects[id(a)] = (a, shape)      # (holds ``a``: its id stays its own)
    return [shape]


def _var_handle(inf, node, ins, srcs):
    inf.handles[(node.name, 0)] = (attr_shape(node, "shape"), attr_type(node, "dtype"))
    return [()]


def _read_variable(inf, node, ins, srcs):
    h = inf.handle(srcs[0]) if srcs else None
    return [h[0] if h else None]


def _resource_gather(inf, node, ins, srcs):
    h = inf.handle(srcs[0]) if srcs else None
    indices = ins[1] if len(ins) > 1 else None
    if h is None or h[0] is None or indices is None:
        return None
    bd = attr_i(node, "batch_dims", 0) or 0
    return [h[0][:bd] + indices[bd:] + h[0][bd + 1:]]


def _assign(inf, node, ins, srcs):
    return [merge(ins[0] if ins else None, ins[1] if len(ins) > 1 else None)]


HANDLERS = table(
    (_variable, "VariableV2 Variable"),
    (_var_handle, "VarHandleOp"),
    (_read_variable, "ReadVariableOp"),
    (_resource_gather, "ResourceGather"),
    (_assign, "Assign AssignAdd AssignSub"),
    (scalar, "VarIsInitializedOp IsVariableInitialized"),
    (first, "ApplyGradientDescent ApplyMomentum ApplyAdam ApplyRMSProp ApplyAdagrad "
            "ResourceApplyGradientDescent"),
)
