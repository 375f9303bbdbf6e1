"""The flow networks of the parallelism widths over the nodes a path between members can
visit.

The widths are antichains among a set of members (the step's expensive ops, or part of
them), and a path between two members runs only through nodes that are both a member's
descendant and a member's ancestor. Most of a graph is neither: its init/restore/save part
(``parallelism_scope.step_mask``), the cheap ops that feed the first expensive ops
(constants, variables, reads) and those after the last. ``MemberNetwork`` keeps the nodes
between members, numbered anew in node order, and every max-flow among those members or
a subset of them runs on that network (at tf1_train 10^5 nodes 27% of the nodes:
small enough for ``chain_cover.py``, sparing the import of scipy). The critical path
runs on the members' descendants (``paths``). Members, widths and
antichains are given and returned over the DAG's own node indices."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .antichain import Antichain, Solved, solve_antichain
from .dag import IndexedDag
from .waves import Grouped

__all__ = ["MemberNetwork", "Between"]


class Between:
    """Which nodes of ``dag`` lie on paths between members: ``between(members)``, the
    members' descendants among their ancestors (a wave per edge of the longest run of
    non-members hanging off a member)."""

    def __init__(self, dag: IndexedDag, pred: Grouped | None = None):
        self.dag = dag
        #: each node's predecessors
        self.pred = Grouped(dag.n, dag.dst, dag.src) if pred is None else pred
        self._succ: Grouped | None = None

    def descendants(self, members: np.ndarray) -> np.ndarray:
        """``members`` and every node a path leads to from one."""
        if self._succ is None:
            self._succ = Grouped(self.dag.n, self.dag.src, self.dag.dst)
        return self._succ.closure(members)

    def __call__(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the nodes between ``members``, the members' descendants)."""
        after = self.descendants(members)
        return self.pred.closure(members) & after, after


class _NodesAt(Sequence):
    """``nodes[idx[i]]`` by ``i``, without a list of them: the heaviest path's DAG counts its
    nodes and names a few (a list of the ~5*10^5 descendants of a 10^6-node graph's members
    cost 0.05 s, each ``Node``'s reference count written, a cache miss each)."""

    __slots__ = ("_nodes", "_idx")

    def __init__(self, nodes, idx: np.ndarray):
        self._nodes, self._idx = nodes, idx

    def __len__(self) -> int:
        return int(self._idx.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._nodes[j] for j in self._idx[i].tolist()]
        return self._nodes[int(self._idx[i])]


class Found:
    """A ``Solved`` over the DAG's own node indices."""

    __slots__ = ("width", "_solved", "_idx")

    def __init__(self, solved: Solved, idx: np.ndarray | None):
        self.width = solved.width
        self._solved, self._idx = solved, idx

    def antichain(self) -> Antichain:
        found = self._solved.antichain()
        return found if self._idx is None else Antichain(found.width, self._idx[found.nodes])


class MemberNetwork:
    """The nodes on paths between ``members`` (bool per node), with the DAG's edges among
    them (all of them, and without the ``dropped`` ones: the model's control edges); the
    widths among any subset of the members."""

    def __init__(self, between: Between, members: np.ndarray, dropped: np.ndarray):
        dag = between.dag
        n = dag.n
        src, dst = dag.unique_edges
        keep_edges = ~dropped
        keep, after = between(members)
        self._dag, self._pred, self._after = dag, between.pred, after
        if keep.all():
            self.idx = None
            self.n, self.order, self.position = n, dag.order, dag.position
            self.edges = (src, dst)
            self.no_dropped = (dag.src[keep_edges], dag.dst[keep_edges])
            return
        idx = np.flatnonzero(keep)
        renumber = np.full(n, -1, dtype=np.int64)
        renumber[idx] = np.arange(idx.size, dtype=np.int64)
        inside = keep[src] & keep[dst]
        self.edges = (renumber[src[inside]], renumber[dst[inside]])
        inside = keep_edges & keep[dag.src] & keep[dag.dst]
        self.no_dropped = (renumber[dag.src[inside]], renumber[dag.dst[inside]])
        order = np.argsort(dag.position[idx], kind="stable")
        position = np.empty(idx.size, dtype=np.int64)
        position[order] = np.arange(idx.size, dtype=np.int64)
        self.idx, self.n, self.order, self.position = idx, int(idx.size), order, position

    def paths(self) -> tuple[IndexedDag, np.ndarray, Grouped]:
        """The part of the DAG a heaviest path whose weights are on members needs: the
        members' descendants (every node a positive weight reaches) as an ``IndexedDag``
        with the DAG's edges between them in the DAG's order; their indices in the DAG;
        and each DAG node's predecessors, for the path's zero-weight start
        (``threads.ThreadModel.critical_path``)."""
        dag, after = self._dag, self._after
        idx = np.flatnonzero(after)
        renumber = np.full(dag.n, -1, dtype=np.int64)
        renumber[idx] = np.arange(idx.size, dtype=np.int64)
        inside = after[dag.src] & after[dag.dst]
        order = np.argsort(dag.position[idx], kind="stable")
        position = np.empty(idx.size, dtype=np.int64)
        position[order] = np.arange(idx.size, dtype=np.int64)
        return IndexedDag(_NodesAt(dag.nodes, idx), {}, order, position,
                          renumber[dag.src[inside]], renumber[dag.dst[inside]],
                          dag.control[inside]), idx, self._pred

    def _here(self, values: np.ndarray | None) -> np.ndarray | None:
        return values if values is None or self.idx is None else values[self.idx]

    def solve(self, members: np.ndarray, weights: np.ndarray | None = None) -> Found:
        """The antichain problem among ``members`` (bool per DAG node, some of the
        network's members)."""
        return Found(solve_antichain(self.n, *self.edges, self._here(members), self._here(weights),
                                     unique=True, position=self.position), self.idx)

    def solve_without_dropped(self, members: np.ndarray) -> Found:
        """The same over the edges but the dropped ones (not deduplicated)."""
        return Found(solve_antichain(self.n, *self.no_dropped, self._here(members),
                                     position=self.position), self.idx)
