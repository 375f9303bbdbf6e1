"""Static shape inference: output shapes and dtypes of every node, without TensorFlow.

    info = infer_shapes(graph)
    info.shape(node, slot)   -> tuple[int, ...] | None   (-1 = unknown dim, None = unknown rank)
    info.dtype(node, slot)   -> int | None               (DataType enum, ref types as base)
    info.nbytes(node, slot)  -> int | None               (None unless every dim and the size are known)
    info.value(node, slot)   -> tuple[int | None, ...] | None   (small integer tensors, flattened)

``node`` is a ``Node`` or a node name. Shapes start from what the model records
(``_output_shapes``, Const tensors, Placeholder ``shape``; see ``model/shapes.py``) and from
variables (``VariableV2``'s ``shape``; ``VarHandleOp``'s ``shape``/``dtype`` reach
``ReadVariableOp`` through the resource handle), then propagate in topological order
through the common ops, following TensorFlow's shape functions
(``tensorflow/core/ops/*.cc``, ``framework/common_shape_fns.cc``). Small integer tensors
(Const, Shape of a known shape, and simple arithmetic on them) are tracked as values so
that Reshape, ConcatV2, Transpose, reductions and friends with constant arguments resolve.
An unknown value element is ``None``.

Where the model records a shape and inference finds one too, the recorded one wins and
inference only fills its unknown dims. Anything not derivable stays unknown: nothing is
guessed. TF1 loops: back edges are skipped on the first pass; a ``Merge`` whose
``NextIteration`` input turns out to have another shape is relaxed and the pass repeated
(at most a few times), so loop-variant dims come out unknown. Linear in nodes + edges.

This module is the engine (the passes, loop relaxation, resource handles, dtypes); the
shape functions themselves are in ``shape_fns/``, one module per op family, each with
its own table.
"""

from __future__ import annotations

import functools
import numpy as np

from .. import dtypes as _dt
from ..model.edge_index import graph_edges
from ..model.graph import Edge, Graph, Node
from ..model.ops import ENTER, EXIT, FUNCTION_IO, IDENTITY, MERGE, NEXT_ITERATION, SWITCH
from ..model.shapes import num_elements
from .numbering import unique_inverse
from .op_tables import cost_table
from .processing_order import ordered, processing_positions
from .shape_fns import array, control_flow, math_ops, nn, variables
from .shape_fns.base import Handler, Shape, Value, broadcast, common, first, refine
from .shape_fns.control_flow import merge_op
from .shape_fns.math_ops import elementwise_handlers
from .shape_fns.values import SOURCE_VALUE_OPS, VALUE_OPS

__all__ = ["ShapeInfo", "infer_shapes", "Shape", "broadcast", "num_elements"]

MAX_PASSES = 4


class ShapeInfo:
    """Inferred output shapes, dtypes and small integer values of a graph's nodes.

    The shapes and dtypes are lists over the graph's positions (``Graph.positions``), one
    entry per node and a last, empty one for names the graph does not have: a look-up is
    the shared positions dict, then a list index, and the inference fills them by position
    without a dict of its own per node (at 10^6 nodes such dicts no longer fit the cache)."""

    def __init__(self, positions: dict[str, int], shapes: list[list[Shape | None] | None],
                 dtypes: list[list[int | None] | None], values: dict[tuple[str, int], Value]):
        self._pos = positions
        self._none = len(shapes) - 1    # the position of a name not in the graph
        self._shapes = shapes
        self._dtypes = dtypes
        self._values = values
        self._sizes: dict[int, int | None] = {}

    @staticmethod
    def _name(node) -> str:
        return node if node.__class__ is str else node.name

    def _at(self, node) -> int:
        return self._pos.get(node if node.__class__ is str else node.name, self._none)

    def shape(self, node, slot: int = 0) -> Shape | None:
        outs = self._shapes[self._at(node)]
        return outs[slot] if outs is not None and 0 <= slot < len(outs) else None

    def dtype(self, node, slot: int = 0) -> int | None:
        outs = self._dtypes[self._at(node)]
        return outs[slot] if outs is not None and 0 <= slot < len(outs) else None

    def io_key(self, node: Node) -> tuple:
        """Everything known about ``node``'s data inputs (slot and tensor, in edge order)
        and outputs: equal keys, equal shapes and dtypes in and out (a hashable key)."""
        pos, none = self._pos.get, self._none
        return self._key(node, [pos(e.src, none) for e in node.in_edges], pos(node.name, none))

    def io_keys(self, graph: Graph, at: np.ndarray, nodes: list[Node]) -> list[tuple]:
        """``io_key`` of ``nodes``, the nodes of ``graph`` at positions ``at``, each distinct
        key made once: equal keys are one object, so a caller may group them by identity
        (thousands of nodes share a few dozen keys). When the shapes are of ``graph``, each
        input's source position comes from the graph's edge index rather than a look-up of
        its name (the expensive ops of a 10^6-node graph have ~10^6 inputs, and each
        look-up missed the cache), and a node's key is put together from small integers,
        one per distinct input entry and output signature, before any key tuple is made."""
        if self._pos is not graph.positions() or not at.size:
            made: dict[tuple, tuple] = {}
            return [made.setdefault(key, key) for key in map(self.io_key, nodes)]
        ge = graph_edges(graph)
        count = np.bincount(ge.dst, minlength=len(graph.nodes))
        first = np.cumsum(count) - count
        lo, k = first[at], count[at]
        rows = np.repeat(lo - (np.cumsum(k) - k), k) + np.arange(int(k.sum()))
        slot = ge.src_slot[rows]
        data = slot >= 0
        rows, slot = rows[data], slot[data]
        k = np.bincount(np.repeat(np.arange(at.size), k)[data], minlength=at.size).tolist()
        src = ge.src[rows]
        src = np.where(src >= 0, src, self._none)
        # each data input's (shape, dtype) read once per distinct tensor (source, slot): the
        # inputs an op type shares (an optimizer's scalars) and a tensor read twice; the
        # last input of each tensor reads it, by a table over the tensors' ids (numbered
        # anew when that table would be larger than a few times the inputs)
        width = int(slot.max(initial=0)) + 1
        tensor = src * width + slot
        if (self._none + 1) * width > 4 * tensor.size + 1024:
            tensor = np.unique(tensor, return_inverse=True)[1].reshape(-1)
        last = np.empty(int(tensor.max(initial=0)) + 1, dtype=np.int64)
        last[tensor] = np.arange(tensor.size)
        reader = last[tensor]                   # the input that reads each one's tensor
        reads = np.flatnonzero(reader == np.arange(tensor.size))
        shapes, dtypes = self._shapes, self._dtypes
        slot_r = slot[reads].tolist()
        src_r = src[reads].tolist()
        outs = [shapes[q] for q in src_r]
        s_in = [o[i] if o is not None and i < len(o) else None for o, i in zip(outs, slot_r)]
        outs = [dtypes[q] for q in src_r]
        d_in = [o[i] if o is not None and i < len(o) else None for o, i in zip(outs, slot_r)]
        values: dict[tuple, int] = {}
        number = values.setdefault
        kind = np.zeros(tensor.size, dtype=np.int64)    # (shape, dtype) number, by reader
        kind[reads] = [number(v, len(values)) for v in zip(s_in, d_in)]
        value = list(values)
        # each input's (slot, shape, dtype) as the number of its distinct value
        edges = ge.edges
        dst_slot = np.fromiter([edges[r].dst_slot for r in rows.tolist()], dtype=np.int64,
                               count=rows.size)
        slots = int(dst_slot.max(initial=0)) + 2
        entries, code = unique_inverse(kind[reader] * slots + (dst_slot + 1))
        code = code.tolist()
        entry = [(d - 1, *value[v]) for v, d in zip((entries // slots).tolist(),
                                                     (entries % slots).tolist())]
        # each node's outputs likewise, then its inputs' numbers: a key of small integers
        signatures: dict[tuple, int] = {}
        number = signatures.setdefault
        made: dict[tuple, int] = {}
        group = made.setdefault
        at_l = at.tolist()
        by_node = []
        j = 0
        for p, n_in in zip(at_l, k):
            s, d = shapes[p], dtypes[p]
            sig = (None if s is None else tuple(s), None if d is None else tuple(d))
            by_node.append(group((number(sig, len(signatures)), *code[j:j + n_in]), len(made)))
            j += n_in
        signature = list(signatures)
        keys = [(tuple(entry[c] for c in key[1:]), *signature[key[0]]) for key in made]
        return [keys[g] for g in by_node]

    def _key(self, node: Node, sources: list[int], p: int) -> tuple:
        """``io_key`` of ``node``, at position ``p``, whose in-edges come from the nodes at
        positions ``sources`` (in ``in_edges`` order; ``_none`` for a missing node)."""
        shapes, dtypes = self._shapes, self._dtypes
        ins = []
        for e, q in zip(node.in_edges, sources):
            slot = e.src_slot
            if slot >= 0:
                try:
                    s = shapes[q][slot]
                except (TypeError, IndexError):
                    s = None
                try:
                    d = dtypes[q][slot]
                except (TypeError, IndexError):
                    d = None
                ins.append((e.dst_slot, s, d))
        s, d = shapes[p], dtypes[p]
        return (tuple(ins), None if s is None else tuple(s), None if d is None else tuple(d))

    def input_shapes(self, node: Node) -> list[Shape | None]:
        """Shapes of ``node``'s data inputs by input slot (``shape()`` of each input edge's
        source; None for an unknown shape or a slot without an edge)."""
        shapes, pos, none = self._shapes, self._pos.get, self._none
        ins: list[Shape | None] = []
        for e in node.in_edges:
            slot = e.src_slot
            if slot >= 0:
                outs = shapes[pos(e.src, none)]
                shape = outs[slot] if outs is not None and slot < len(outs) else None
                if e.dst_slot == len(ins):      # the usual case: data edges in slot order
                    ins.append(shape)
                    continue
                while len(ins) <= e.dst_slot:
                    ins.append(None)
                ins[e.dst_slot] = shape
        return ins

    def tensor(self, node, slot: int = 0) -> tuple[Shape | None, int | None]:
        """``(shape(node, slot), dtype(node, slot))``."""
        p = self._at(node)
        shapes, dtypes = self._shapes[p], self._dtypes[p]
        return (shapes[slot] if shapes is not None and 0 <= slot < len(shapes) else None,
                dtypes[slot] if dtypes is not None and 0 <= slot < len(dtypes) else None)

    def value(self, node, slot: int = 0) -> Value | None:
        return self._values.get((self._name(node), slot))

    def num_elements(self, node, slot: int = 0) -> int | None:
        return num_elements(self.shape(node, slot))

    def nbytes(self, node, slot: int = 0) -> int | None:
        return self.dtype_nbytes(self._name(node), slot)[1]

    @property
    def positions(self) -> dict[str, int]:
        """The positions (``Graph.positions``) of the graph the shapes are of: a caller
        holding the same dict can ask by position (``dtype_nbytes_at``)."""
        return self._pos

    def dtype_nbytes(self, name: str, slot: int = 0) -> tuple[int | None, int | None]:
        """``(dtype(name, slot), nbytes(name, slot))`` with one look-up of the node."""
        return self.dtype_nbytes_at(self._pos.get(name, self._none), slot)

    def dtypes_at(self, at: list[int], slots: list[int]) -> list[int | None]:
        """``dtype`` of each output ``slots[j]`` of the node at position ``at[j]`` of
        ``positions`` (``-1``: a node the graph does not have): a list look-up per tensor,
        for a caller that has the positions from the graph's edge index."""
        dtypes, none = self._dtypes, self._none
        return [outs[slot] if outs is not None and 0 <= slot < len(outs) else None
                for outs, slot in zip([dtypes[q if q >= 0 else none] for q in at], slots)]

    def dtype_nbytes_at(self, p: int, slot: int = 0) -> tuple[int | None, int | None]:
        """``dtype_nbytes`` of the node at position ``p`` of ``positions``."""
        dtypes = self._dtypes[p]
        dtype = dtypes[slot] if dtypes is not None and 0 <= slot < len(dtypes) else None
        if dtype is None:
            return None, None
        shapes = self._shapes[p]
        count = num_elements(shapes[slot] if shapes is not None and 0 <= slot < len(shapes)
                             else None)
        if count is None:
            return dtype, None
        size = self._sizes.get(dtype, -1)
        if size == -1:
            size = self._sizes[dtype] = _dt.dtype_size(dtype)
        return dtype, None if size is None else count * size

    def output_shapes(self, node) -> list[Shape | None]:
        return list(self._shapes[self._at(node)] or [])


class _Inferencer:
    """The passes' state. Shapes and dtypes are lists over graph positions (the last entry
    stays None: an edge from a node not in the graph); each node's in-edges are read with
    their sources' positions from the shared edge index, so a pass indexes lists where it
    looked names up in dicts."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.positions = graph.positions()
        n = len(graph.nodes)
        self.shapes: list[list[Shape | None] | None] = [None] * (n + 1)
        self.dtypes: list[list[int | None] | None] = [None] * (n + 1)
        self.passes = 0
        ge = graph_edges(graph)
        #: each edge's source position (n: not in the graph), edge index order
        self.src_at: list[int] = np.where(ge.src >= 0, ge.src, n).tolist()
        #: where each node's in-edges start in the edge index (graph position -> offset)
        self.first_edge: list[int] = np.concatenate(
            ([0], np.cumsum(np.bincount(ge.dst, minlength=n)))).tolist()
        self.values: dict[tuple[str, int], Value] = {}
        #: (node, slot) -> (shape, dtype) of the variable a resource handle refers to
        self.handles: dict[tuple[str, int], tuple[Shape | None, int | None]] = {}
        self.merge_override: dict[str, Shape | None] = {}
        #: a variable's serialized shape attr -> attr_shape of it (shape_fns.variables)
        self.attr_shapes: dict[bytes, Shape | None] = {}
        #: id of such an attr -> (it, attr_shape of it)
        self.attr_objects: dict[int, tuple] = {}
        #: an integer Const's serialized value attr -> const_value of it (shape_fns.values)
        self.const_values: dict[bytes, Value | None] = {}
        self._base_dtypes: dict[tuple, list[int | None]] = {}
        self.merges: list[Node] = []     #: the Merge nodes, listed by the first pass
        #: op -> (shape function, value function, a source value op, passes a handle)
        self.kinds: dict[str, tuple] = {}

    # -- access helpers used by the handlers
    def shape(self, src: str, slot: int) -> Shape | None:
        outs = self.shapes[self.positions.get(src, -1)]
        return outs[slot] if outs is not None and 0 <= slot < len(outs) else None

    def value(self, edge: Edge | None) -> Value | None:
        """The tracked value of the tensor an input edge carries."""
        return None if edge is None else self.values.get((edge.src, edge.src_slot))

    def handle(self, edge: Edge | None):
        """(shape, dtype) of the variable a resource input refers to."""
        return None if edge is None else self.handles.get((edge.src, edge.src_slot))

    def run(self, order: list[Node], at: list[int] | range) -> bool:
        """One pass in topological order (``order``, and ``at``: each one's graph
        position); True when a loop Merge had to be relaxed."""
        relaxed = False
        shapes, dtypes, values, handles = self.shapes, self.dtypes, self.values, self.handles
        src_at, first_edge = self.src_at, self.first_edge
        kinds = self.kinds
        merge_override, merges = self.merge_override, self.merges
        first_pass = self.passes == 0
        self.passes += 1
        # dtype of a one-output node -> its dtypes list: every node's is a function of its
        # output dtypes alone (``_dtypes``), and most nodes have one output (shared, read only)
        one_output: dict[int, list[int | None]] = {}
        for node, p in zip(order, at):
            op = node.op
            name = node.name
            try:
                rule, value_op, source_value, handle_pass = kinds[op]
            except KeyError:
                rule, value_op, source_value, handle_pass = kinds[op] = _kind(op)
            od = node.output_dtypes
            recorded = node.output_shapes
            n_out = len(od) if od is not None else (len(recorded) if recorded is not None else 1)
            ins = None
            if value_op is None and od is not None and not (handle_pass and handles):
                # only the shape function reads the inputs (``_dtypes`` does not, given od)
                if rule is None:
                    ins = srcs = ()
                elif rule is first:     # input 0 alone
                    k = first_edge[p]
                    for e in node.in_edges:
                        if e.src_slot >= 0:
                            break
                        k += 1
                    else:
                        e = None
                    if e is None:
                        ins = srcs = ()
                    elif e.dst_slot == 0:
                        try:
                            ins = (shapes[src_at[k]][e.src_slot],)
                        except (TypeError, IndexError):
                            ins = (None,)
                        srcs = ()
            if ins is None:     # every data input by slot: shapes and edges
                ins = []
                srcs = []
                n_in = 0    # len(ins)
                k = first_edge[p] - 1
                for e in node.in_edges:
                    k += 1
                    slot = e.src_slot
                    if slot < 0:
                        continue
                    # (missing: an invalid graph, or a loop's back edge on the first pass)
                    try:
                        shape = shapes[src_at[k]][slot]
                    except (TypeError, IndexError):
                        shape = None
                    if e.dst_slot == n_in:
                        ins.append(shape)
                        srcs.append(e)
                        n_in += 1
                    else:  # edges out of slot order
                        while n_in <= e.dst_slot:
                            ins.append(None)
                            srcs.append(None)
                            n_in += 1
                        ins[e.dst_slot] = shape
                        srcs[e.dst_slot] = e
            if rule is first:       # the most common rule, inline
                out = [ins[0] if ins else None]
            elif rule is not None:
                out = rule(self, node, ins, srcs)
                if rule is merge_op:    # Merge, RefMerge
                    if first_pass:
                        merges.append(node)
                    elif name in merge_override:
                        out = [merge_override[name], ()]
            else:
                out = None
            if out is None:
                if recorded:    # nothing inferred: the recorded shapes as they are
                    out = (recorded[:n_out] if len(recorded) >= n_out
                           else recorded + [None] * (n_out - len(recorded)))
                else:
                    out = [None] * n_out
            else:
                if len(out) < n_out:
                    out = list(out) + [None] * (n_out - len(out))
                if recorded:
                    out = ([refine(recorded[0], out[0])] if len(out) == 1 else
                           [refine(recorded[i] if i < len(recorded) else None, sh)
                            for i, sh in enumerate(out)])
            shapes[p] = out
            if first_pass:
                if od is not None and len(od) == 1:
                    try:
                        dtypes[p] = one_output[od[0]]
                    except KeyError:
                        dtypes[p] = one_output[od[0]] = self._dtypes(node, srcs, n_out)
                else:
                    dtypes[p] = self._dtypes(node, srcs, n_out)
            if value_op is not None:
                if source_value:
                    value_op(self, node, ins, srcs)
                elif values:    # (none yet: no input can have one, and nothing to pop)
                    for e in srcs:
                        if e is not None and (e.src, e.src_slot) in values:
                            value_op(self, node, ins, srcs)
                            break
                    else:
                        if not first_pass:
                            values.pop((name, 0), None)  # an input lost its value in this pass
            if handle_pass and handles and srcs and srcs[0] is not None \
                    and (h := handles.get((srcs[0].src, srcs[0].src_slot))) is not None:
                for slot in range(max(1, n_out)):
                    handles[(name, slot)] = h
        # Loop merges: compare with the NextIteration inputs computed later in the pass.
        for node in merges:
            back = [e for e in node.in_edges if e.src_slot >= 0
                    and self.graph.nodes[e.src].op in NEXT_ITERATION]
            if not back:
                continue
            current = self.shapes[self.positions[node.name]][0]
            relaxed_shape = current
            for e in back:
                relaxed_shape = common(relaxed_shape, self.shape(e.src, e.src_slot))
            if relaxed_shape != current:
                self.merge_override[node.name] = relaxed_shape
                relaxed = True
        return relaxed

    def _dtypes(self, node: Node, srcs, n_out: int) -> list[int | None]:
        od = node.output_dtypes
        if od is not None:
            if not od or (min(od) > 0 and max(od) <= _dt.REF_OFFSET):
                return od  # shared, not copied: read only
            key = tuple(od)     # ref types: converted once per kind
            base = self._base_dtypes.get(key)
            if base is None:
                base = self._base_dtypes[key] = [_dt.base_type(t) if t else None for t in od]
            return base     # shared too: read only
        # _Arg/_Retval and unknown ops: pass the input dtype through where it is 1:1.
        if srcs and srcs[0] is not None and n_out == 1:
            src_types = self.dtypes[self.positions.get(srcs[0].src, -1)]
            if src_types and srcs[0].src_slot < len(src_types):
                return [src_types[srcs[0].src_slot]]
        return [None] * n_out


def infer_shapes(graph: Graph) -> ShapeInfo:
    """Propagate static shapes through ``graph`` (see the module docstring)."""
    order = ordered(graph)[0]   # TF's processing order (the placer's, computed once)
    at = processing_positions(graph)    # graph position -> position in ``order``
    if at is None:
        at = range(len(order))
    else:
        inverse = np.empty_like(at)
        inverse[at] = np.arange(at.size)
        at = inverse.tolist()
    inf = _Inferencer(graph)
    for _ in range(MAX_PASSES):
        if not inf.run(order, at):
            break
    return ShapeInfo(inf.positions, inf.shapes, inf.dtypes, inf.values)


def _kind(op: str) -> tuple:
    """What a pass does for a node of ``op``, looked up once per op type."""
    return (_rules().get(op), VALUE_OPS.get(op), op in SOURCE_VALUE_OPS, op in HANDLE_PASS)


@functools.lru_cache(maxsize=1)
def _rules() -> dict[str, Handler]:
    """op -> its shape function: the cost table's element-wise ops by arity and its
    reductions, then every family's ``HANDLERS``. One dict, so that each node costs one
    look-up."""
    table = cost_table()
    rules = elementwise_handlers(table.elementwise, table.reductions)
    for family in (control_flow, variables, nn, array, math_ops):
        rules.update(family.HANDLERS)
    return rules


#: ops whose resource-handle input passes through to their outputs
HANDLE_PASS = IDENTITY | FUNCTION_IO | ENTER | EXIT | SWITCH | MERGE | NEXT_ITERATION | {"IdentityN"}
