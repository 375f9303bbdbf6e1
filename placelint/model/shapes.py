"""Static output shapes recorded in the model itself.

``_output_shapes`` (written by ``add_shapes=True`` / TF1 exports), a Const's tensor shape,
a Placeholder's ``shape`` attr. A shape is a tuple of dims with -1 for an unknown dim;
``None`` means unknown rank. Shape *propagation* through ops is an analysis
(``analyses/shape_inference.py``), not part of loading.
"""

from __future__ import annotations

from .graph import Node

Shape = tuple[int, ...]


def shape_from_proto(proto) -> Shape | None:
    if proto.unknown_rank:
        return None
    return tuple(int(d.size) if d.size >= 0 else -1 for d in proto.dim)


def static_output_shapes(node: Node) -> list[Shape | None] | None:
    attrs = node.attrs
    if "_output_shapes" in attrs:
        shapes = [shape_from_proto(s) for s in attrs["_output_shapes"].list.shape]
        if shapes:
            return shapes
    if node.op in ("Const", "HostConst") and "value" in attrs:
        return [shape_from_proto(attrs["value"].tensor.tensor_shape)]
    if node.op in ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault") and "shape" in attrs:
        return [shape_from_proto(attrs["shape"].shape)]
    return None
