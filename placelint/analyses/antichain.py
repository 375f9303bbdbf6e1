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

``R`` is the same for every maximum flow (the vertices reachable from the source in the
residual network of *any* maximum flow form the one minimum cut closest to the source), so
the antichain does not depend on the max-flow algorithm. Graphs of up to ``SMALL_NETWORK``
nodes + edges (~7 * 10^4 nodes) are solved in pure Python from a greedy chain cover
(``chain_cover.py``), which spares them the import of scipy (~0.25 s, the largest part of a
cold ``placelint check`` on a sample; see benchmarks/README.md for the threshold); larger
ones, and flows the greedy start leaves far from maximum, use scipy's Dinic.
Members that form one chain (a serial graph: width 1) are recognised without a flow when
the caller gives a topological order (``solve_antichain``); the flow then runs only if
the antichain itself is asked for.

Inputs are integer arrays, so callers can build them once for large graphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .chain_cover import greedy_max_flow
from .dag import topological_order

__all__ = ["Antichain", "Solved", "antichain_width", "max_antichain", "solve_antichain"]

#: Largest graph (nodes + edges) whose flow is solved without scipy (``chain_cover.py``).
SMALL_NETWORK = 200_000
#: Edges the searches that finish the greedy flow may visit, per edge of the graph, before
#: the network goes to scipy.
SEARCH_BUDGET = 8
#: ``Solved``'s network when ``chain_cover.py`` solved the flow.
_PURE = object()


@dataclass(frozen=True)
class Antichain:
    width: int
    nodes: np.ndarray  #: node indices of one maximum antichain (sorted)


class Solved:
    """The maximum flow of one network: ``width`` now, the maximum antichain itself on
    first use of ``antichain()`` (a residual network and a search through it, about a third
    of the work, which most callers of the width never ask for)."""

    __slots__ = ("width", "_net", "_members", "_weights", "_flow", "_found", "_later")

    def __init__(self, width: int, net, members, weights, flow, later=None):
        self.width = width
        self._net, self._members, self._weights, self._flow = net, members, weights, flow
        self._found = None
        self._later = later     #: solves the flow when the width came without one

    def antichain(self) -> Antichain:
        if self._found is None and self._later is not None:
            self._found = self._later()
        if self._found is None:
            net, member_idx, w = self._net, self._members, self._weights
            if net is None:         # at most one member
                self._found = Antichain(self.width, member_idx.astype(np.int64))
            else:
                flow = self._flow
                if net is _PURE:
                    reached_in, reached_out = flow()
                    picked = reached_out & ~reached_in
                else:
                    reached = _residual_reach(flow.cap, flow.result.flow, net.t)
                    picked = reached[net.out_id[member_idx]] & ~reached[member_idx]
                chosen = member_idx[picked]
                # cannot happen for a DAG; guards against cyclic input
                if (chosen.size if w is None else int(w[picked].sum())) != self.width:
                    raise ValueError(f"antichain extraction found {chosen.size} nodes for width "
                                     f"{self.width}; are the edges acyclic?")
                self._found = Antichain(self.width, np.sort(chosen))
            self._net = self._flow = None
        return self._found


class _ScipyFlow:
    __slots__ = ("cap", "result")

    def __init__(self, cap, result):
        self.cap, self.result = cap, result


def solve_antichain(n: int, src: np.ndarray, dst: np.ndarray, members: np.ndarray,
                    weights: np.ndarray | None = None, *, unique: bool = False,
                    position: np.ndarray | None = None) -> Solved:
    """The maximum (weight) antichain problem of ``max_antichain``, solved up to the width;
    ``unique``: the caller knows the edges have no duplicates (they are then not sorted
    out again). With ``position`` (each node's place in a topological order of the
    edges) members that form one chain are recognised in a pass over the edges: the width
    is then the heaviest member's weight, and the flow waits until the antichain is asked
    for (a serial graph needs no max-flow, nor scipy)."""
    member_idx = np.flatnonzero(np.asarray(members, dtype=bool))
    k = int(member_idx.size)
    w = None if weights is None else np.asarray(weights, dtype=np.int64)[member_idx]
    if w is not None and bool((w == 1).all()):
        w = None
    total = k if w is None else int(w.sum())
    if k <= 1:
        return Solved(total, None, member_idx, w, None)
    if position is not None and _is_chain(n, src, dst, member_idx, position):
        return Solved(1 if w is None else int(w.max()), None, member_idx, w, None,
                      later=lambda: solve_antichain(n, src, dst, members, weights,
                                                    unique=unique).antichain())
    if n + len(src) <= SMALL_NETWORK:
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        if position is None:
            order = topological_order(n, src, dst)
        else:
            order = np.empty(n, dtype=np.int64)
            order[position] = np.arange(n, dtype=np.int64)
        found = greedy_max_flow(n, src, dst, member_idx, w, order,
                                SEARCH_BUDGET * (n + src.size))
        if found is not None:
            value, reach = found
            return Solved(total - value, _PURE, member_idx, w, reach)
    net = _Network(n, src, dst, member_idx, w, unique)
    cap, result = net.scipy_max_flow()
    return Solved(total - int(result.flow_value), net, member_idx, w, _ScipyFlow(cap, result))


def max_antichain(n: int, src: np.ndarray, dst: np.ndarray, members: np.ndarray,
                  weights: np.ndarray | None = None) -> Antichain:
    """Maximum antichain among ``members`` (bool array of length ``n``) of the DAG with
    edges ``src[i] -> dst[i]`` (node indices in ``range(n)``). The edges must be acyclic;
    duplicates are fine. With ``weights`` (positive integers per node) it is a maximum
    *weight* antichain and ``width`` its weight: the same min flow with lower bound
    ``w(v)`` on each member's arc (a member counts as ``w(v)`` parallel copies).
    """
    return solve_antichain(n, src, dst, members, weights).antichain()


def antichain_width(n: int, src: np.ndarray, dst: np.ndarray, members: np.ndarray,
                    weights: np.ndarray | None = None) -> int:
    """``max_antichain(n, src, dst, members, weights).width``, without finding the
    antichain. The edges must be acyclic: without the extraction nothing checks it."""
    return solve_antichain(n, src, dst, members, weights).width


def _is_chain(n: int, src: np.ndarray, dst: np.ndarray, member_idx: np.ndarray,
              position: np.ndarray) -> bool:
    """Do the members form one chain? They do iff each reaches the next in topological
    order, i.e. iff the latest member among each member's ancestors is the one before it:
    one pass over the edges in topological order of their destinations, keeping per node
    the rank of the latest member among its ancestors (or itself). Stops at the first
    member that breaks the chain, which in a wide graph comes early."""
    ranked = member_idx[np.argsort(position[member_idx], kind="stable")]
    rank = np.full(n, -1, dtype=np.int64)
    rank[ranked] = np.arange(ranked.size, dtype=np.int64)
    at = position[dst]
    if at.size > 1 and not bool((at[1:] >= at[:-1]).all()):
        by = np.argsort(at, kind="stable")
        src, dst, at = src[by], dst[by], at[by]
    # only edges into the span from the first member (exclusive) to the last matter: before
    # it no node has a member among its ancestors
    a, end = np.searchsorted(at, [position[ranked[0]], position[ranked[-1]]], side="right").tolist()
    best = [-1] * n
    best[int(ranked[0])] = 0
    checked = 0
    step = 1024
    while a < end:      # in slices that end between two destinations, growing: most wide
        b = min(end, a + step)      # graphs are told apart within the first
        if b < end:
            b = int(np.searchsorted(at, at[b - 1], side="right"))
        s_l, d_l, r_l = src[a:b].tolist(), dst[a:b].tolist(), rank[dst[a:b]].tolist()
        a, step = b, step * 4
        j, m = 0, len(d_l)
        while j < m:
            v = d_l[j]
            r = r_l[j]      # the destination's rank among the members, -1 for others
            top = -1
            while j < m and d_l[j] == v:
                u = best[s_l[j]]
                if u > top:
                    top = u
                j += 1
            if r < 0:
                best[v] = top
            else:
                if top != r - 1:
                    return False
                best[v] = r
                checked += 1
    return checked == ranked.size - 1     # (a member without an edge into it breaks it too)


class _Network:
    """The residual network of the feasible flow (see the module docstring), as arcs."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray, member_idx: np.ndarray,
                 weights: np.ndarray | None = None, unique: bool = False):
        k = int(member_idx.size)
        s, t = n + k, n + k + 1
        n_vertices = n + k + 2
        # vertex ids as scipy's sparse matrices index them (int32 when they fit: no copies)
        idx = np.int32 if n_vertices < np.iinfo(np.int32).max else np.int64
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst).astype(idx, copy=False)
        # Vertex ids: node v is v (its "in" side); members get an extra "out" vertex n + rank.
        out_id = np.arange(n, dtype=idx)
        out_id[member_idx] = n + np.arange(k, dtype=idx)
        member_idx = member_idx.astype(idx)
        total = k if weights is None else int(weights.sum())
        big = total + 1  # > any flow value: effectively unbounded
        lower = np.ones(k, np.int32) if weights is None else weights.astype(np.int32)

        # DAG edges u_out -> v_in, deduplicated (parallel arcs would sum capacities).
        e_u = out_id[src]
        e_v = dst
        if e_u.size and not unique:
            key = np.sort(e_u.astype(np.int64) * n_vertices + e_v)
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
            e_u, e_v = (key // n_vertices).astype(idx), (key % n_vertices).astype(idx)
        self.rows = np.concatenate([e_u, member_idx, np.full(k, t, idx), member_idx])
        self.cols = np.concatenate([e_v, out_id[member_idx], out_id[member_idx], np.full(k, s, idx)])
        self.caps = np.concatenate([
            np.full(e_u.size, big, np.int32),   # u_out -> v_in
            np.full(k, big, np.int32),          # v_in -> v_out (residual of the lower-bounded arc)
            lower,                              # t -> v_out (undo the units leaving v to t)
            lower,                              # v_in -> s  (undo the units entering v from s)
        ])
        self.out_id, self.s, self.t, self.size = out_id, s, t, n_vertices

    def scipy_max_flow(self):
        """(capacity matrix, scipy's ``MaximumFlowResult``) of that flow, by scipy's Dinic."""
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import maximum_flow

        cap = csr_array((self.caps, (self.rows, self.cols)), shape=(self.size, self.size))
        self.rows = self.cols = self.caps = None     # the matrix holds them now (kept for the
        cap.sum_duplicates()                         # antichain: the arcs need not be)
        return cap, maximum_flow(cap, self.t, self.s, method="dinic")


def _residual_reach(cap, flow, t: int) -> np.ndarray:
    """Bool mask of the vertices reachable from ``t`` in the residual network of ``flow``."""
    from scipy.sparse.csgraph import breadth_first_order

    # Residual network: cap - flow (flow is antisymmetric, so reverse arcs appear).
    residual = (cap.astype(np.int64) - flow.astype(np.int64)).tocsr()
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = np.zeros(cap.shape[0], dtype=bool)
    reached[breadth_first_order(residual, t, directed=True, return_predecessors=False)] = True
    return reached
