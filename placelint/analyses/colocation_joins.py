"""The unions of TF's ``ColocationGraph`` as integer arrays, worked out once per graph
(``Graph.derived``): the ref/resource edges ``ColocateResourceAndRefEdges`` follows and the
``_class`` joins of ``ColocateAllNodes``, each in the order TF makes them (processing
order). ``colocation_graph.py`` replays them on its union-find.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, methodcaller

import numpy as np

from ..dtypes import DT_VARIANT
from ..model.expand import CALL_ARG_ATTR
from ..model.edge_index import graph_edges
from ..model.graph import Graph
from ..model.op_index import op_index
from .processing_order import ordered, processing_positions

_REF = attrgetter("ref")
_ATTRS = attrgetter("attrs")
_CLASS = methodcaller("get", "_class")


def ref_edge_arrays(graph: Graph, exempt: set[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, destination, into a function body's ``_Arg``) as processing positions, of
    the data edges into a ref- or resource-typed input and of the DT_VARIANT edges between
    dataset ops, in processing order (destination by destination, each one's in-edges in
    order); not into a colocation-exempt op. Picked by numpy over the shared edge index
    (``model.edge_index``); only the picked edges are read as objects. Three arrays (int64,
    int64, bool): the placer keeps them with the graph for a later soft placement."""
    ge = graph_edges(graph)
    kind = op_index(graph).per_node(
        lambda op: (op in exempt) + 2 * _is_dataset_op(op) + 4 * (op == "_Arg"), np.int8)
    src, dst, edges = ge.src, ge.dst, ge.edges
    into = ((ge.src_slot >= 0) & (src >= 0)) & (kind[dst] & 1 == 0)
    ref = np.fromiter(map(_REF, edges), dtype=bool, count=len(edges))
    picked = into & ref
    # DT_VARIANT edges between dataset ops: rare, their dtypes read one by one
    variant = np.flatnonzero(into & ~ref & (kind[np.maximum(src, 0)] & kind[dst] & 2 > 0))
    for k in variant.tolist():
        picked[k] = edges[k].dtype == DT_VARIANT
    picked = np.flatnonzero(picked)
    s_at, d_at = src[picked], dst[picked]
    is_arg = kind[d_at] & 4 > 0
    order = ordered(graph)[0]
    pos = processing_positions(graph)
    if pos is not None:     # (else processing order is graph order)
        s_at, d_at = pos[s_at], pos[d_at]
        by = np.argsort(d_at, kind="stable")
        s_at, d_at, is_arg = s_at[by], d_at[by], is_arg[by]
    body = np.zeros(len(d_at), dtype=bool)
    for k in np.flatnonzero(is_arg).tolist():
        body[k] = CALL_ARG_ATTR in order[int(d_at[k])].attrs
    return s_at, d_at, body


def without_data_input(graph: Graph) -> list[int]:
    """The processing positions of the nodes without a data in-edge, in order (from the
    shared edge index)."""
    ge = graph_edges(graph)
    n = len(graph.nodes)
    has_data = np.zeros(n, dtype=bool)
    has_data[ge.dst[ge.src_slot >= 0]] = True
    pos = processing_positions(graph)
    if pos is not None:
        by_position = np.zeros(n, dtype=bool)
        by_position[pos] = has_data
        has_data = by_position
    return np.flatnonzero(~has_data).tolist()


def class_joins(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``ColocateAllNodes``'s unions, in visit order: the positions of the nodes that join a
    group another node started, the position of that group's first node (the union's other
    side), and the group (an index into the group names, the fourth item), as int64 arrays. TF visits the
    nodes in processing order, each joining the groups its ``_class`` names, then the group
    of its own name; a node joins a group at its first visitor. Only the nodes with a
    ``_class`` and the nodes a ``_class`` names take part: any other node is alone in the
    group of its own name, which no node asks for. Worked out on arrays of (node, group)
    visits: a group's first visitor is its smallest position."""
    # (no pass over every node's attrs when the builder saw no ``_class``)
    at, value_of, by_value = (_class_groups(graph) if graph.may_have_class_attrs()
                              else (np.empty(0, dtype=np.int64), None, []))
    if not at.size:
        none = np.empty(0, dtype=np.int64)
        return none, none, none, []
    group_names = sorted({group for groups in by_value for group in groups})
    gid = {group: k for k, group in enumerate(group_names)}
    # each distinct value's groups as ids, flat, with where each value's run starts
    lens = np.fromiter(map(len, by_value), dtype=np.int64, count=len(by_value))
    flat = np.fromiter((gid[group] for groups in by_value for group in groups), dtype=np.int64,
                       count=int(lens.sum()))
    flat = np.append(flat, 0)       # (read, then discarded, where a visit is no _class group)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    # the nodes a group names (by graph position) and each node's own group (-1: none)
    positions = graph.positions()
    # (one look-up per name: at 10^6 nodes each is a cache miss in the names' table)
    found = np.fromiter(map(positions.get, group_names, repeat(-1)), dtype=np.int64,
                        count=len(group_names))
    named = np.flatnonzero(found >= 0)
    named_at = found[named]
    own_of = np.full(len(positions), -1, dtype=np.int64)
    own_of[named_at] = named
    # the visiting nodes: those with a ``_class``, then the named ones without one
    classed = np.zeros(len(positions), dtype=bool)
    classed[at] = True
    visitors = np.concatenate((at, named_at[~classed[named_at]]))
    own = own_of[visitors]
    value = np.concatenate((np.asarray(value_of, dtype=np.int64),
                            np.full(visitors.size - at.size, -1, dtype=np.int64)))
    # processing positions (the same as graph positions when ``ordered`` kept graph order)
    pos = processing_positions(graph)
    pos = visitors if pos is None else pos[visitors]
    n_class = np.where(value >= 0, lens[value], 0)
    by_pos = np.argsort(pos, kind="stable")
    pos, own, value, n_class = pos[by_pos], own[by_pos], value[by_pos], n_class[by_pos]
    # every visit in order: a node's ``_class`` groups, then its own name's (when named)
    count = n_class + (own >= 0)
    visitor = np.repeat(np.arange(pos.size, dtype=np.int64), count)
    k = np.arange(visitor.size, dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    in_class = k < n_class[visitor]
    group = np.where(in_class, flat[np.where(in_class, starts[value[visitor]] + k, 0)],
                     own[visitor])
    at = pos[visitor]
    first = np.full(len(group_names), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, group, at)
    root = first[group]
    joins = root != at
    return at[joins], root[joins], group[joins], group_names


def _class_groups(graph: Graph) -> tuple[np.ndarray, np.ndarray, list[tuple[str, ...]]]:
    """The graph positions of the nodes that have a ``_class`` attr, the index of each one's
    value among the distinct values, and the group names (``loc:@NAME`` entries) of each
    distinct value. Many nodes carry the same attr value (the initializer ops of one
    variable), and the builder gives them one shared ``AttrValue``: the objects are told
    apart by their ids (``np.unique``: a dict of 10^6 ids cost twice its sort), each object
    is looked at once, and each distinct value (by its bytes: objects of equal values are
    not always shared) read once. The values are numbered in no particular order."""
    values = list(map(_CLASS, map(_ATTRS, graph.nodes.values())))
    ids = np.fromiter(map(id, values), dtype=np.int64, count=len(values))
    at = np.flatnonzero(ids != id(None))
    _, firsts, object_of = np.unique(ids[at], return_index=True, return_inverse=True)
    distinct: dict[bytes, int] = {}
    by_value = []
    value_by_object = []
    for k in at[firsts].tolist():
        value = values[k]
        raw = value.SerializeToString()
        n = distinct.setdefault(raw, len(distinct))
        if n == len(by_value):
            by_value.append(_class_names(raw, value))
        value_by_object.append(n)
    value_of = np.array(value_by_object, dtype=np.int64)[object_of]
    return at, value_of, by_value


def _class_names(raw: bytes, value) -> tuple[str, ...]:
    """The group names (``loc:@NAME`` entries) of a ``_class`` AttrValue, ``raw`` its wire
    bytes. The usual value, a list of strings each shorter than 128 bytes, is read off its
    bytes (field 1, the list, holding fields 2, the strings, each with a one-byte length),
    a third of the cost of reading the message's repeated field; any other through it."""
    n = len(raw)
    if 2 <= n < 130 and raw[0] == 10 and raw[1] == n - 2:
        names = []
        j = 2
        while j < n:
            size = raw[j + 1] if j + 1 < n else 128
            if raw[j] != 18 or size > 127:
                break
            entry = raw[j + 2:j + 2 + size]
            if entry[:5] == b"loc:@":
                names.append(entry[5:].decode("utf-8", "replace"))
            j += 2 + size
        else:
            if j == n:
                return tuple(names)
    return tuple(s[5:].decode("utf-8", "replace") for s in value.list.s if s[:5] == b"loc:@")


def _is_dataset_op(op: str) -> bool:
    return op.endswith("Dataset") or op.endswith("DatasetV2") or op.endswith("DatasetV3")
