"""Exact maximum antichain of a DAG restricted to a subset of its nodes.

The width of the partial order "u before v iff the DAG has a path u -> v" restricted to
the *members* (paths may run through any node, member or not). By Dilworth's theorem the
width equals the minimum number of chains covering the members, i.e. the minimum number
of (possibly overlapping) DAG paths that visit every member. That is a minimum flow with
lower bounds, computed without any transitive closure on an O(n + m) network:

* every member ``v`` is split into ``v_in -> v_out`` (lower bound 1, unbounded);
  other nodes stay one vertex; every DAG edge ``u -> v`` becomes ``u_out -> v_in``;
  a source feeds every ``v_in`` and every ``v_out`` drains into a sink (unbounded).
* The flow that sends one unit ``s -> v_in -> v_out -> t`` per member is feasible with
  value ``|members|``. The minimum flow is that value minus the maximum flow pushed back
  from ``t`` to ``s`` in its residual network, whose only finite arcs are
  ``t -> v_out`` and ``v_in -> s`` (capacity 1 per member); scipy's Dinic does that
  (``scipy.sparse.csgraph.maximum_flow``).
* With ``R`` the vertices reachable from ``t`` in the final residual network, no
  original arc leaves ``R`` (min-flow max-cut), so
  ``{v : v_out in R, v_in not in R}`` is an antichain, and it has exactly
  ``|members| - maxflow`` elements: a maximum antichain.

Inputs are integer arrays, so callers can build them once for large graphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

__all__ = ["Antichain", "max_antichain"]


@dataclass(frozen=True)
class Antichain:
    width: int
    nodes: np.ndarray  #: node indices of one maximum antichain (sorted)


def max_antichain(n: int, src: np.ndarray, dst: np.ndarray, members: np.ndarray) -> Antichain:
    """Maximum antichain among ``members`` (bool array of length ``n``) of the DAG with
    edges ``src[i] -> dst[i]`` (node indices in ``range(n)``). The edges must be acyclic;
    duplicates are fine.
    """
    members = np.asarray(members, dtype=bool)
    member_idx = np.flatnonzero(members)
    k = int(member_idx.size)
    if k <= 1:
        return Antichain(k, member_idx.astype(np.int64))
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)

    # Vertex ids: node v is v (its "in" side); members get an extra "out" vertex n + rank.
    out_id = np.arange(n, dtype=np.int64)
    out_id[member_idx] = n + np.arange(k, dtype=np.int64)
    s, t = n + k, n + k + 1
    n_vertices = n + k + 2
    big = k + 1  # > any flow value: effectively unbounded

    # DAG edges u_out -> v_in, deduplicated (parallel arcs would sum capacities).
    e_u = out_id[src]
    e_v = dst
    if e_u.size:
        key = np.sort(e_u * n_vertices + e_v)
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        e_u, e_v = key // n_vertices, key % n_vertices
    rows = np.concatenate([e_u, member_idx, np.full(k, t, np.int64), member_idx])
    cols = np.concatenate([e_v, out_id[member_idx], out_id[member_idx], np.full(k, s, np.int64)])
    caps = np.concatenate([
        np.full(e_u.size, big, np.int32),   # u_out -> v_in
        np.full(k, big, np.int32),          # v_in -> v_out (residual of the lower-bounded arc)
        np.ones(k, np.int32),               # t -> v_out (undo one unit leaving v to t)
        np.ones(k, np.int32),               # v_in -> s  (undo one unit entering v from s)
    ])
    cap = csr_array((caps, (rows, cols)), shape=(n_vertices, n_vertices))
    cap.sum_duplicates()
    result = maximum_flow(cap, t, s, method="dinic")
    width = k - int(result.flow_value)

    # Residual network: cap - flow (flow is antisymmetric, so reverse arcs appear).
    residual = (cap.astype(np.int64) - result.flow.astype(np.int64)).tocsr()
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = np.zeros(n_vertices, dtype=bool)
    reached[breadth_first_order(residual, t, directed=True, return_predecessors=False)] = True
    chosen = member_idx[reached[out_id[member_idx]] & ~reached[member_idx]]
    if chosen.size != width:  # cannot happen for a DAG; guards against cyclic input
        raise ValueError(f"antichain extraction found {chosen.size} nodes for width {width}; "
                         "are the edges acyclic?")
    return Antichain(width, np.sort(chosen))
