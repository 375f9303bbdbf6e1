"""Static output shapes recorded in the model itself.

``_output_shapes`` (written by ``add_shapes=True`` / TF1 exports), a Const's tensor shape,
a Placeholder's ``shape`` attr. A shape is a tuple of dims with -1 for an unknown dim;
``None`` means unknown rank. Shape *propagation* through ops is an analysis
(``analyses/shape_inference.py``), not part of loading.
"""

from __future__ import annotations

from functools import lru_cache

from ..proto import AttrValue
from .graph import Node
from .ops import CONSTANT, PLACEHOLDER

Shape = tuple[int, ...]

#: TensorFlow's limits (tensor_shape.h): at most 254 dimensions and 2**63 - 1 elements.
MAX_RANK = 254
MAX_ELEMENTS = 2**63 - 1


def shape_from_proto(proto) -> Shape | None:
    """A ``TensorShapeProto`` as a tuple; dims below -1 count as unknown (-1). A shape TF
    itself refuses (rank over 254, or more than 2**63 - 1 elements: ``Shape ... would have
    more than 2**63 - 1 elements``) counts as unknown, so hostile shapes (twenty dims of
    2**62) cannot blow up the byte estimates of the analyses."""
    if proto.unknown_rank or len(proto.dim) > MAX_RANK:
        return None
    shape = tuple(int(d.size) if d.size >= 0 else -1 for d in proto.dim)
    known = 1
    for d in shape:
        if d > 0:
            known *= d
            if known > MAX_ELEMENTS:
                return None
    return shape


def num_elements(shape: Shape | None) -> int | None:
    """Elements of a fully known shape; None if the rank or a dim is unknown, or if the
    count is over ``MAX_ELEMENTS`` (TF refuses such a shape, so no such tensor exists and
    hostile dims of 2**62 cannot give absurd byte counts)."""
    if shape is None or any(d < 0 for d in shape):
        return None
    if 0 in shape:
        return 0
    n = 1
    for d in shape:
        n *= d
        if n > MAX_ELEMENTS:
            return None
    return n


#: Ops whose output shape an attr other than ``_output_shapes`` may state: constants (in
#: ``value``) and placeholders (in ``shape``).
SHAPE_ATTR_OPS = CONSTANT | PLACEHOLDER


def static_output_shapes(node: Node) -> list[Shape | None] | None:
    """The output shapes the model states for ``node`` (``None``: it states none)."""
    attrs = node.attrs
    if "_output_shapes" in attrs:
        shapes = list(_listed_shapes(attrs["_output_shapes"].SerializeToString()))
        if shapes:
            return shapes
    if node.op in CONSTANT and "value" in attrs:
        return [shape_from_proto(attrs["value"].tensor.tensor_shape)]
    if node.op in PLACEHOLDER and "shape" in attrs:
        return [shape_from_proto(attrs["shape"].shape)]
    return None


@lru_cache(maxsize=1024)
def _listed_shapes(data: bytes) -> tuple[Shape | None, ...]:
    """The shapes of a serialized ``_output_shapes`` attr: a model repeats a few lists over
    many nodes (a dozen distinct ones over 50k nodes of a SavedModel's functions)."""
    return tuple(shape_from_proto(s) for s in AttrValue.FromString(data).list.shape)
