"""Shape functions of array ops: reshaping, joining and splitting, slicing, gathering,
padding and tiling, shape metadata, fills and random tensors (array_ops.cc)."""

from __future__ import annotations

from math import prod

from ...model.attrs import attr_i, attr_ints, attr_shape
from ...model.shapes import num_elements
from .base import as_shape, attr_count, first, merge, norm_axis, scalar, table


def _with_attr_shape(inf, node, ins, srcs):
    return [merge(attr_shape(node, "shape"), ins[0] if ins else None)]


def _reshape(inf, node, ins, srcs):
    target = inf.value(srcs[1] if len(srcs) > 1 else None)
    if target is None:
        t = ins[1] if len(ins) > 1 else None
        if t is not None and len(t) == 1 and t[0] >= 0:
            return [(-1,) * t[0]]
        return None
    dims = [-2 if v is None else int(v) for v in target]  # -2: unknown element
    total = num_elements(ins[0]) if ins else None
    infer_at = [i for i, d in enumerate(dims) if d == -1]
    if len(infer_at) == 1 and total is not None and all(d >= 0 for i, d in enumerate(dims) if i != infer_at[0]):
        rest = prod(d for i, d in enumerate(dims) if i != infer_at[0])
        dims[infer_at[0]] = total // rest if rest > 0 and total % rest == 0 else -1
    return [tuple(d if d >= 0 else -1 for d in dims)]


def _concat(inf, node, ins, srcs):
    if node.op == "ConcatV2":
        axis_ref, parts = (srcs[-1] if srcs else None), ins[:-1]
    else:  # Concat: axis first
        axis_ref, parts = (srcs[0] if srcs else None), ins[1:]
    axis_v = inf.value(axis_ref)
    ranks = {len(p) for p in parts if p is not None}
    if len(ranks) != 1:
        return None
    rank = ranks.pop()
    if axis_v is None or len(axis_v) != 1 or axis_v[0] is None:
        return [(-1,) * rank]
    axis = norm_axis(axis_v[0], rank)
    if axis is None:
        return None
    out = [-1] * rank
    for i in range(rank):
        if i == axis:
            sizes = [p[i] if p is not None else -1 for p in parts]
            out[i] = sum(sizes) if all(s >= 0 for s in sizes) else -1
        else:
            known = [p[i] for p in parts if p is not None and p[i] >= 0]
            out[i] = known[0] if known else -1
    return [tuple(out)]


def _concat_offset(inf, node, ins, srcs):
    return [merge(s, None) for s in ins[1:]]


def _pack(inf, node, ins, srcs):
    if not ins:
        return None
    base = None
    for s in ins:
        base = merge(base, s) if base is not None else s
    if base is None:
        return None
    axis = norm_axis(attr_i(node, "axis", 0), len(base) + 1)
    if axis is None:
        return None
    return [base[:axis] + (len(ins),) + base[axis:]]


def _unpack(inf, node, ins, srcs):
    x = ins[0] if ins else None
    num = attr_count(node, "num", 0)
    if num is None:
        return None
    if x is None:
        return [None] * num
    axis = norm_axis(attr_i(node, "axis", 0), len(x))
    if axis is None:
        return None
    return [x[:axis] + x[axis + 1:]] * num


def _transpose(inf, node, ins, srcs):
    x = ins[0] if ins else None
    perm = inf.value(srcs[1] if len(srcs) > 1 else None)
    if perm is None or None in perm:
        return [(-1,) * len(x)] if x is not None else None
    if x is None:
        return [(-1,) * len(perm)]
    if sorted(perm) != list(range(len(x))):
        return None
    return [tuple(x[p] for p in perm)]


def _squeeze(inf, node, ins, srcs):
    x = ins[0] if ins else None
    if x is None:
        return None
    dims = attr_ints(node, "squeeze_dims") or attr_ints(node, "axis") or []
    if dims:
        drop = {norm_axis(d, len(x)) for d in dims}
        if None in drop:
            return None
        return [tuple(d for i, d in enumerate(x) if i not in drop)]
    if any(d < 0 for d in x):
        return None  # which dims are 1 is unknown
    return [tuple(d for d in x if d != 1)]


def _expand_dims(inf, node, ins, srcs):
    x = ins[0] if ins else None
    dim = inf.value(srcs[1] if len(srcs) > 1 else None)
    if x is None:
        return None
    if dim is None or len(dim) != 1 or dim[0] is None:
        return [(-1,) * (len(x) + 1)]
    a = norm_axis(dim[0], len(x) + 1)
    return None if a is None else [x[:a] + (1,) + x[a:]]


def _shape_op(inf, node, ins, srcs):
    return [(len(s),) if s is not None else (-1,) for s in ins] if node.op == "ShapeN" else \
        [(len(ins[0]),) if ins and ins[0] is not None else (-1,)]


def _fill(inf, node, ins, srcs):
    dims = inf.value(srcs[0] if srcs else None)
    if dims is not None:
        return [as_shape(dims)]
    d = ins[0] if ins else None
    return [(-1,) * d[0]] if d is not None and len(d) == 1 and d[0] >= 0 else None


def _pad(inf, node, ins, srcs):
    x = ins[0] if ins else None
    pads = inf.value(srcs[1] if len(srcs) > 1 else None)
    if x is None:
        return None
    if pads is None or len(pads) != 2 * len(x):
        return [(-1,) * len(x)]
    out = []
    for i, d in enumerate(x):
        a, b = pads[2 * i], pads[2 * i + 1]
        out.append(d + a + b if d >= 0 and a is not None and b is not None else -1)
    return [tuple(out)]


def _tile(inf, node, ins, srcs):
    x = ins[0] if ins else None
    mult = inf.value(srcs[1] if len(srcs) > 1 else None)
    if x is None:
        return None
    if mult is None or len(mult) != len(x):
        return [(-1,) * len(x)]
    return [tuple(d * m if d >= 0 and m is not None else -1 for d, m in zip(x, mult))]


def _slice(inf, node, ins, srcs):
    x = ins[0] if ins else None
    begin = inf.value(srcs[1] if len(srcs) > 1 else None)
    size = inf.value(srcs[2] if len(srcs) > 2 else None)
    if x is None:
        return [(-1,) * len(size)] if size is not None else None
    if size is None or len(size) != len(x):
        return [(-1,) * len(x)]
    out = []
    for i, (d, s) in enumerate(zip(x, size)):
        if s is None:
            out.append(-1)
        elif s >= 0:
            out.append(s)
        else:
            b = begin[i] if begin is not None and len(begin) == len(x) else None
            out.append(d - b if d >= 0 and b is not None else -1)
    return [tuple(out)]


def _strided_slice(inf, node, ins, srcs):
    """Common cases: constant begin/end/strides, begin/end/shrink/new-axis masks, no ellipsis."""
    x = ins[0] if ins else None
    begin, end, strides = (inf.value(srcs[i] if len(srcs) > i else None) for i in (1, 2, 3))
    if x is None or begin is None or end is None or strides is None:
        return None
    if attr_i(node, "ellipsis_mask", 0):
        return None
    bm, em = attr_i(node, "begin_mask", 0), attr_i(node, "end_mask", 0)
    sm, nm = attr_i(node, "shrink_axis_mask", 0), attr_i(node, "new_axis_mask", 0)
    out: list[int] = []
    dim = 0
    for i in range(len(begin)):
        if nm >> i & 1:
            out.append(1)
            continue
        if dim >= len(x):
            return None
        d = x[dim]
        dim += 1
        if sm >> i & 1:
            continue
        b, e, s = begin[i], end[i], strides[i]
        if d < 0 or s is None or s == 0 or (b is None and not bm >> i & 1) or (e is None and not em >> i & 1):
            out.append(-1)
            continue
        out.append(len(range(d)[slice(None if bm >> i & 1 else b, None if em >> i & 1 else e, s)]))
    out.extend(x[dim:])
    return [tuple(out)]


def _gather(inf, node, ins, srcs):
    params = ins[0] if ins else None
    indices = ins[1] if len(ins) > 1 else None
    if params is None or indices is None:
        return None
    if node.op == "GatherV2":
        axis_v = inf.value(srcs[2] if len(srcs) > 2 else None)
        if axis_v is None or len(axis_v) != 1 or axis_v[0] is None:
            return None
        axis = norm_axis(axis_v[0], len(params))
        batch_dims = attr_i(node, "batch_dims", 0) or 0
    else:
        axis, batch_dims = 0, 0
    if axis is None or batch_dims < 0:
        return None
    return [params[:axis] + indices[batch_dims:] + params[axis + 1:]]


def _one_hot(inf, node, ins, srcs):
    idx = ins[0] if ins else None
    depth = inf.value(srcs[1] if len(srcs) > 1 else None)
    if idx is None:
        return None
    d = depth[0] if depth is not None and len(depth) == 1 and depth[0] is not None else -1
    axis = attr_i(node, "axis", -1)
    axis = len(idx) if axis == -1 else axis
    if not 0 <= axis <= len(idx):
        return None
    return [idx[:axis] + (d,) + idx[axis:]]


def _split(inf, node, ins, srcs):
    num = attr_count(node, "num_split", 1)
    if num is None:
        return None
    if node.op == "Split":
        axis_v, x = inf.value(srcs[0] if srcs else None), (ins[1] if len(ins) > 1 else None)
    else:  # SplitV: value, size_splits, axis
        axis_v, x = inf.value(srcs[2] if len(srcs) > 2 else None), (ins[0] if ins else None)
    if x is None:
        return [None] * num
    if axis_v is None or len(axis_v) != 1 or axis_v[0] is None:
        return [(-1,) * len(x)] * num
    axis = norm_axis(axis_v[0], len(x))
    if axis is None:
        return None
    if node.op == "Split":
        d = x[axis] // num if x[axis] >= 0 and num > 0 and x[axis] % num == 0 else -1
        return [x[:axis] + (d,) + x[axis + 1:]] * num
    sizes = inf.value(srcs[1] if len(srcs) > 1 else None)
    if sizes is None or len(sizes) != num:
        return [x[:axis] + (-1,) + x[axis + 1:]] * num
    sizes = list(sizes)
    if sizes.count(-1) == 1 and x[axis] >= 0 and all(s is not None for s in sizes):
        sizes[sizes.index(-1)] = x[axis] - sum(s for s in sizes if s != -1)
    return [x[:axis] + (s if s is not None and s >= 0 else -1,) + x[axis + 1:] for s in sizes]


def _space_to_batch(inf, node, ins, srcs):
    x = ins[0] if ins else None
    block = inf.value(srcs[1] if len(srcs) > 1 else None)
    pads = inf.value(srcs[2] if len(srcs) > 2 else None)
    if x is None or block is None or pads is None or None in block or len(pads) != 2 * len(block) \
            or len(x) < 1 + len(block):
        return [(-1,) * len(x)] if x is not None else None
    to_batch = node.op == "SpaceToBatchND"
    n = x[0] * prod(block) if to_batch else (x[0] // prod(block) if x[0] >= 0 and prod(block) else -1)
    spatial = []
    for i, b in enumerate(block):
        d, p0, p1 = x[1 + i], pads[2 * i], pads[2 * i + 1]
        if d < 0 or p0 is None or p1 is None or b <= 0:
            spatial.append(-1)
        elif to_batch:
            spatial.append((d + p0 + p1) // b if (d + p0 + p1) % b == 0 else -1)
        else:
            spatial.append(d * b - p0 - p1)
    return [(n if x[0] >= 0 else -1, *spatial, *x[1 + len(block):])]


def _matrix_diag(inf, node, ins, srcs):
    """MatrixDiag (V1) and the main-diagonal case of MatrixDiagV2/V3 (k = 0)."""
    d = ins[0] if ins else None
    if d is None or not d:
        return None
    if node.op != "MatrixDiag":
        k = inf.value(srcs[1] if len(srcs) > 1 else None)
        rows = inf.value(srcs[2] if len(srcs) > 2 else None)
        cols = inf.value(srcs[3] if len(srcs) > 3 else None)
        if k is None or tuple(k) != (0,):
            return [(-1,) * (len(d) + 1)]
        n = d[-1]
        r = rows[0] if rows and rows[0] is not None and rows[0] >= 0 else n
        c = cols[0] if cols and cols[0] is not None and cols[0] >= 0 else n
        return [d[:-1] + (r, c)]
    return [d + (d[-1],)]


HANDLERS = table(
    (first, "ZerosLike OnesLike Cast Bitcast ReverseV2 Reverse RandomShuffle MirrorPadGrad"),
    (first, "MatrixInverse Cholesky MatrixExponential MatrixLogarithm MatrixSetDiag MatrixBandPart"),
    (_with_attr_shape, "EnsureShape PlaceholderWithDefault"),
    (_reshape, "Reshape"),
    (_concat, "ConcatV2 Concat"),
    (_concat_offset, "ConcatOffset"),
    (_pack, "Pack"),
    (_unpack, "Unpack"),
    (_transpose, "Transpose ConjugateTranspose"),
    (_squeeze, "Squeeze"),
    (_expand_dims, "ExpandDims"),
    (_shape_op, "Shape ShapeN"),
    (scalar, "Size Rank"),
    (_fill, "Fill RandomUniform RandomStandardNormal TruncatedNormal RandomUniformInt "
            "StatelessRandomUniform StatelessRandomNormal StatelessTruncatedNormal "
            "StatelessRandomUniformV2 StatelessRandomNormalV2 StatelessRandomUniformInt Empty"),
    (_pad, "Pad PadV2 MirrorPad"),
    (_tile, "Tile"),
    (_slice, "Slice"),
    (_strided_slice, "StridedSlice"),
    (_gather, "GatherV2 Gather"),
    (_one_hot, "OneHot"),
    (_split, "Split SplitV"),
    (_space_to_batch, "SpaceToBatchND BatchToSpaceND"),
    (_matrix_diag, "MatrixDiag MatrixDiagV2 MatrixDiagV3"),
)
