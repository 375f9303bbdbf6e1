"""The graph as integer arrays: node ids, interned ops and requested devices, and CSR
in/out edges with their slots and kind (data, control, ref).

``Graph.arrays`` builds it on first use and keeps it until the graph changes (it is one of
``Graph.derived``'s indexes, dropped by the change hooks). Node ids are positions in graph
order (``Graph.positions``); node ``i``'s in-edges are ``in_*[in_ptr[i]:in_ptr[i + 1]]``
in ``Node.in_edges`` order (data edges by slot, then control), its out-edges likewise
from ``out_ptr`` in ``Node.out_edges`` order. The ``Node``/``Edge`` objects stay the view
for rules and messages; the arrays are for passes that are cheaper over integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .graph import Graph

#: ``GraphArrays.in_kind`` / ``out_kind`` values: a data edge, a control edge, a data
#: edge whose input is ref-typed or ``DT_RESOURCE`` (``Edge.ref``: the Placer colocates
#: its ends).
DATA, CONTROL, REF = 0, 1, 2


@dataclass(eq=False)
class GraphArrays:
    names: list[str]            #: node id -> name
    index: dict[str, int]       #: name -> node id (``Graph.positions``: do not modify)
    op_names: list[str]         #: op id -> op type, in order of first use
    op: np.ndarray              #: int32 op id per node
    device_names: list[str]     #: device id -> requested device as written ('' too)
    device: np.ndarray          #: int32 device id per node
    in_ptr: np.ndarray          #: int64, n + 1 offsets into the in_* arrays
    in_src: np.ndarray          #: int32 source node id per in-edge
    in_src_slot: np.ndarray     #: int32, -1 for control
    in_dst_slot: np.ndarray     #: int32, -1 for control
    in_kind: np.ndarray         #: int8 DATA / CONTROL / REF
    out_ptr: np.ndarray         #: int64, n + 1 offsets into the out_* arrays
    out_dst: np.ndarray         #: int32 destination node id per out-edge
    out_src_slot: np.ndarray
    out_dst_slot: np.ndarray
    out_kind: np.ndarray

    @property
    def n(self) -> int:
        return len(self.names)


def graph_arrays(graph: Graph) -> GraphArrays:
    """The arrays of ``graph`` (see module doc), built once until the graph changes."""
    nodes = list(graph.nodes.values())
    n = len(nodes)
    index = graph.positions()
    op_ids: dict[str, int] = {}
    ops = np.fromiter((op_ids.setdefault(node.op, len(op_ids)) for node in nodes),
                      dtype=np.int32, count=n)
    device_ids: dict[str, int] = {}
    devices = np.fromiter((device_ids.setdefault(node.device, len(device_ids))
                           for node in nodes), dtype=np.int32, count=n)
    in_ptr, in_edges = _csr([node.in_edges for node in nodes])
    out_ptr, out_edges = _csr([node.out_edges for node in nodes])
    in_src_slot, in_dst_slot, in_kind = _slots_and_kind(in_edges)
    out_src_slot, out_dst_slot, out_kind = _slots_and_kind(out_edges)
    return GraphArrays(
        names=list(graph.nodes), index=index,
        op_names=list(op_ids), op=ops, device_names=list(device_ids), device=devices,
        in_ptr=in_ptr,
        in_src=np.fromiter((index[e.src] for e in in_edges), dtype=np.int32,
                           count=len(in_edges)),
        in_src_slot=in_src_slot, in_dst_slot=in_dst_slot, in_kind=in_kind,
        out_ptr=out_ptr,
        out_dst=np.fromiter((index[e.dst] for e in out_edges), dtype=np.int32,
                            count=len(out_edges)),
        out_src_slot=out_src_slot, out_dst_slot=out_dst_slot, out_kind=out_kind)


def _csr(lists: list[list]) -> tuple[np.ndarray, list]:
    """(offsets, the lists' items concatenated)."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lists), dtype=np.int64, count=len(lists)), out=ptr[1:])
    return ptr, [e for edges in lists for e in edges]


def _slots_and_kind(edges: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = len(edges)
    src_slot = np.fromiter((e.src_slot for e in edges), dtype=np.int32, count=m)
    dst_slot = np.fromiter((e.dst_slot for e in edges), dtype=np.int32, count=m)
    ref = np.fromiter((e.ref for e in edges), dtype=bool, count=m)
    kind = np.where(src_slot < 0, CONTROL, np.where(ref, REF, DATA)).astype(np.int8)
    return src_slot, dst_slot, kind
