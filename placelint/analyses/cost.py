"""Per-op work from static shapes, following Grappler's ``OpLevelCostEstimator``.

``op_cost(node, shapes)`` returns the op count Grappler would predict
(tensorflow/core/grappler/costs/op_level_cost_estimator.cc): ``2mnk`` for MatMul,
``batch * 2mnk`` for BatchMatMul, ``2*N*Ho*Wo*Kh*Kw*Cin*Cout`` for Conv2D,
``2*N*Ho*Wo*Kh*Kw*Cin*multiplier`` for DepthwiseConv2dNative, pooling, batch norm,
softmax and AddN formulas, and element-wise ops and reductions as element count times
the Eigen functor cost (``placelint/data/op_costs.json``). Ops without a formula count
the elements of their largest input or output (what Grappler's cwise fallback did).

Where a needed shape is unknown the op gets *unit cost* (1) and ``known=False``; the
reports say how many ops that affected. Grappler instead treats unknown dims as 1 and
flags the estimate inaccurate; a unit cost is the same idea made explicit.
Counts are Python ints, so huge shapes do not overflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..dtypes import dtype_size
from ..model.attrs import attr_b
from ..model.graph import Node
from .op_tables import cost_table
from .shape_inference import Shape, ShapeInfo, num_elements

__all__ = ["AssumedSizes", "OpCost", "cost_key", "formula_attrs", "has_unknown_dims", "op_cost", "UNIT"]

UNIT = 1
OPS_PER_MAC = 2  # kOpsPerMac


@dataclass(frozen=True, slots=True)
class OpCost:
    ops: int            #: Grappler-style operation count (unit cost when not known)
    known: bool         #: False: a needed shape was unknown and ``ops`` is the unit cost
    formula: str        #: which formula produced it


def _unknown(formula: str) -> OpCost:
    return OpCost(UNIT, False, formula)


def _inputs(node: Node, shapes: ShapeInfo) -> list[Shape | None]:
    """Input shapes by input slot."""
    return shapes.input_shapes(node)


def _known(*shapes: Shape | None) -> bool:
    for s in shapes:    # loops, not all(...) of generators: called for every formula op
        if s is None:
            return False
        for d in s:
            if d < 0:
                return False
    return True


def _nchw(node: Node) -> bool:
    a = node.attrs["data_format"] if "data_format" in node.attrs else None
    return a is not None and a.WhichOneof("value") == "s" and a.s.startswith(b"NCHW")


def _nhwc(node: Node, shape: Shape) -> tuple[int, int, int, int]:
    if _nchw(node):
        return shape[0], shape[2], shape[3], shape[1]
    return shape[0], shape[1], shape[2], shape[3]


def _window(node: Node, key: str) -> tuple[int, int]:
    if key not in node.attrs:
        return 1, 1
    v = list(node.attrs[key].list.i)
    if len(v) != 4:
        return 1, 1
    return (v[2], v[3]) if _nchw(node) else (v[1], v[2])


def op_cost(node: Node, shapes: ShapeInfo) -> OpCost:
    """Grappler's op count for ``node`` (see the module docstring)."""
    op = node.op
    formula = _FORMULAS.get(op)
    if formula is not None:
        return formula[0](node, shapes, _inputs(node, shapes))
    table = cost_table()
    ins = _inputs(node, shapes)
    out = shapes.shape(node, 0)
    if op in table.elementwise:
        per = table.elementwise[op][1]
        count = _cwise_count(ins, out)
        return _unknown("elementwise") if count is None else OpCost(count * per, True, "elementwise")
    if op in table.reductions:
        x = ins[0] if ins else None
        n = num_elements(x)
        return _unknown("reduction") if n is None else OpCost(n * table.reductions[op], True, "reduction")
    return _largest(ins, [shapes.shape(node, i) for i in range(max(1, len(node.output_dtypes or ())))])


def _cwise_count(ins: list[Shape | None], out: Shape | None) -> int | None:
    """PredictCwiseOp: the largest of the inputs', the output's and the broadcast element count."""
    counts = [num_elements(s) for s in ins[:3]] + [num_elements(out)]
    known = [c for c in counts if c is not None]
    if not known or (out is None and any(c is None for c in counts[:-1])):
        return None
    return max(known)


def _largest(ins, outs) -> OpCost:
    counts = [num_elements(s) for s in (*ins, *outs)]
    if not counts or any(c is None for c in counts):
        return _unknown("elements")
    return OpCost(max(counts), True, "elements")


def _matmul(node, shapes, ins):
    if len(ins) < 2 or not _known(ins[0], ins[1]) or len(ins[0]) != 2 or len(ins[1]) != 2:
        return _unknown("matmul")
    a, b = ins[0], ins[1]
    m, k = (a[1], a[0]) if attr_b(node, "transpose_a", False) else (a[0], a[1])
    n = b[0] if attr_b(node, "transpose_b", False) else b[1]
    return OpCost(OPS_PER_MAC * m * n * k, True, "matmul")


def _batch_matmul(node, shapes, ins):
    out = shapes.shape(node, 0)
    if len(ins) < 2 or not _known(ins[0], ins[1], out) or len(ins[0]) < 2 or len(ins[1]) < 2:
        return _unknown("batch_matmul")
    a = ins[0]
    k = a[-2] if attr_b(node, "adj_x", False) else a[-1]
    return OpCost(OPS_PER_MAC * prod(out) * k, True, "batch_matmul")


def _conv2d(node, shapes, ins):
    out = shapes.shape(node, 0)
    if len(ins) < 2 or not _known(ins[1], out) or len(ins[1]) != 4 or len(out) != 4:
        return _unknown("conv2d")
    kh, kw, cin, cout = ins[1]
    n, ho, wo, _ = _nhwc(node, out)
    if node.op == "DepthwiseConv2dNative":  # cout is the channel multiplier
        return OpCost(OPS_PER_MAC * n * ho * wo * kh * kw * cin * cout, True, "depthwise_conv2d")
    return OpCost(OPS_PER_MAC * n * ho * wo * kh * kw * cin * cout, True, "conv2d")


def _conv2d_backprop(node, shapes, ins):
    """Conv2DBackpropInput/Filter (and depthwise): the forward convolution's count."""
    filt = ins[1] if node.op.endswith("BackpropInput") else shapes.shape(node, 0)
    grad = ins[2] if len(ins) > 2 else None
    if not _known(filt, grad) or len(filt) != 4 or len(grad) != 4:
        return _unknown("conv2d_backprop")
    kh, kw, cin, cout = filt
    n, ho, wo, c = _nhwc(node, grad)
    return OpCost(OPS_PER_MAC * n * ho * wo * c * kh * kw * cin, True, "conv2d_backprop")


def _pool(node, shapes, ins):
    out = shapes.shape(node, 0)
    if not _known(out) or len(out) != 4:
        return _unknown("pool")
    kh, kw = _window(node, "ksize")
    count = prod(out)
    if node.op.startswith("MaxPool"):
        return OpCost(count * (1 if kh * kw == 1 else kh * kw - 1), True, "max_pool")
    return OpCost(count * kh * kw, True, "avg_pool")


def _batch_norm(node, shapes, ins):
    x = ins[0] if ins else None
    if not _known(x) or len(x) != 4:
        return _unknown("fused_batch_norm")
    n, h, w, c = _nhwc(node, x)
    if attr_b(node, "is_training", True):
        rsqrt = cost_table().functor_costs["scalar_rsqrt_op"]
        return OpCost(c * (n * h * w * 4 + 6 + rsqrt), True, "fused_batch_norm")
    return OpCost(n * h * w * c * 2, True, "fused_batch_norm")


def _softmax(node, shapes, ins):
    x = ins[0] if ins else None
    if not _known(x) or not x:
        return _unknown("softmax")
    f = cost_table().functor_costs
    per = f["scalar_exp_op"] + f["scalar_sum_op"] + f["scalar_product_op"]
    return OpCost(per * prod(x) + f["scalar_inverse_op"] * x[0], True, "softmax")


def _add_n(node, shapes, ins):
    count = _cwise_count(ins, shapes.shape(node, 0))
    if count is None:
        return _unknown("add_n")
    return OpCost(count * max(0, len(ins) - 1) * cost_table().functor_costs["scalar_sum_op"], True, "add_n")


def _einsum(node, shapes, ins):
    eq = node.attrs["equation"].s.decode() if "equation" in node.attrs else ""
    lhs = eq.split("->")[0].split(",") if "->" in eq else []
    if len(lhs) != len(ins) or "." in eq or not _known(*ins):
        return _unknown("einsum")
    sizes: dict[str, int] = {}
    for sub, shape in zip(lhs, ins):
        if len(sub) != len(shape):
            return _unknown("einsum")
        sizes.update(zip(sub, shape))
    return OpCost(OPS_PER_MAC * prod(sizes.values()), True, "einsum")


def _linalg(node, shapes, ins):
    """Per-matrix O(n^3) kernels (inverse, Cholesky, LU, QR, SVD, eig, solve): batch * n^3.
    Grappler has no formula for them (it counts memory only); n^3 keeps their weight right."""
    x = ins[0] if ins else None
    if not _known(x) or len(x) < 2:
        return _unknown("linalg")
    return OpCost(prod(x[:-2]) * max(x[-2:]) ** 3, True, "linalg")


#: op -> (formula, the attrs the formula reads). Attrs are listed beside each formula
#: because ``cost_key`` puts their values in the key under which callers share a cost:
#: a formula that starts reading another attr must list it here.
_FORMULAS: dict[str, tuple] = {}
for _ops, _fn, _attrs in (
        ("MatMul _FusedMatMul SparseMatMul", _matmul, ("transpose_a", "transpose_b")),
        ("BatchMatMul BatchMatMulV2 BatchMatMulV3", _batch_matmul, ("adj_x",)),
        ("Conv2D _FusedConv2D DepthwiseConv2dNative", _conv2d, ("data_format",)),
        ("Conv2DBackpropInput Conv2DBackpropFilter DepthwiseConv2dNativeBackpropInput "
         "DepthwiseConv2dNativeBackpropFilter", _conv2d_backprop, ("data_format",)),
        ("MaxPool MaxPoolV2 AvgPool", _pool, ("ksize", "data_format")),
        ("FusedBatchNorm FusedBatchNormV2 FusedBatchNormV3", _batch_norm, ("data_format", "is_training")),
        ("Softmax LogSoftmax", _softmax, ()),
        ("AddN", _add_n, ()),
        ("Einsum", _einsum, ("equation",)),
        ("MatrixInverse Cholesky MatrixDeterminant LogMatrixDeterminant MatrixSolve "
         "MatrixSolveLs Qr Svd SelfAdjointEigV2 MatrixExponential MatrixLogarithm Lu", _linalg, ())):
    for _op in _ops.split():
        _FORMULAS[_op] = (_fn, _attrs)

#: Ops with a formula of their own.
FORMULA_OPS = frozenset(_FORMULAS)


def cost_key(node: Node, shapes: ShapeInfo, io_key: tuple | None = None) -> tuple:
    """Everything ``op_cost`` and ``intra_op_use`` read of ``node``: its op, how many
    outputs it has, the shapes and dtypes of its data inputs and outputs, and the values
    of the attrs its formula reads (no attrs for ops without one). Nodes with equal keys
    have equal costs and intra-op uses, and layers repeat: callers compute them once per key.
    ``io_key``: ``shapes.io_key(node)`` when the caller has it (``ShapeInfo.io_keys``)."""
    return (node.op, len(node.output_dtypes or ()), shapes.io_key(node) if io_key is None else io_key,
            *formula_attrs(node))


def formula_attrs(node: Node) -> tuple:
    """The values (serialized) of the attrs ``node``'s cost formula reads, in ``cost_key``
    (empty for an op without a formula or whose formula reads none)."""
    formula = _FORMULAS.get(node.op)
    if formula is None or not formula[1]:
        return ()
    attrs = node.attrs
    values = []
    for name in formula[1]:
        a = attrs.get(name)
        values.append(None if a is None else a.SerializeToString())
    return tuple(values)


# --------------------------------------------------------------------------- assumed sizes


def _filled(shape: Shape | None, batch: int) -> Shape | None:
    """``shape`` with an unknown leading (batch) dim set to ``batch`` and other unknown
    dims to 1 (Grappler's convention for unknown dims)."""
    if shape is None:
        return None
    for d in shape:
        if d < 0:
            return tuple((batch if i == 0 else 1) if d < 0 else d for i, d in enumerate(shape))
    return shape


def has_unknown_dims(shapes: ShapeInfo, node: Node) -> bool:
    """Does a data input or an output of ``node`` have an unknown dim (known rank)?"""
    for s in shapes.input_shapes(node):
        if s is not None and any(d < 0 for d in s):
            return True
    for slot in range(max(1, len(node.output_dtypes or ()))):
        s = shapes.shape(node, slot)
        if s is not None and any(d < 0 for d in s):
            return True
    return False


class AssumedSizes:
    """A ``ShapeInfo`` view whose unknown dims take assumed sizes: the batch dim (dim 0)
    ``batch``, others 1. Costs computed through it are estimates at that batch size; the
    report says how much of the work rests on such assumptions."""

    def __init__(self, shapes: ShapeInfo, batch: int = 1):
        self._s = shapes
        self.batch = max(1, int(batch))

    def shape(self, node, slot: int = 0):
        return _filled(self._s.shape(node, slot), self.batch)

    def dtype(self, node, slot: int = 0):
        return self._s.dtype(node, slot)

    def input_shapes(self, node: Node):
        b = self.batch
        return [_filled(s, b) for s in self._s.input_shapes(node)]

    def io_key(self, node: Node) -> tuple:
        return self._s.io_key(node)

    def num_elements(self, node, slot: int = 0):
        return num_elements(self.shape(node, slot))

    def nbytes(self, node, slot: int = 0):
        count = num_elements(self.shape(node, slot))
        dtype = self._s.dtype(node, slot)
        if count is None or dtype is None:
            return None
        one = dtype_size(dtype)
        return None if one is None else count * one

    def value(self, node, slot: int = 0):
        return self._s.value(node, slot)

