"""TensorFlow's Placer, predicted without TensorFlow.

Follows ``tensorflow/core/common_runtime/placer.cc`` and ``colocation_graph.cc``
(steps 1-3 are ``colocation_graph.py``, the candidate devices ``device_candidates.py``,
step 4 here):

1. ``InitializeMembers``: per node, the device types with a kernel (from the shipped
   kernel table, matched on attrs), and its requested device; a requested device on a
   ref/resource *generator* (no inputs, one ref or resource output) is a resource device,
   which consumers cannot override.
2. ``ColocateResourceAndRefEdges``: every data edge into a ref- or resource-typed input
   unions source and destination (exempt consumers: PartitionedCall, IdentityN, ...). If
   only the *requested* devices conflict, the consumer's request is silently replaced by
   the source's.
3. ``ColocateAllNodes``: the ``_class`` attr (``loc:@name``) unions a node with the
   group named ``name``; failures are ignored under soft placement.
4. Assignment in two passes in node order: generator nodes (no inputs, one non-ref
   output) wait for the second pass and follow their consumers when all of them sit on
   one device; metadata ops (Shape, Size, Rank) and lone Identities follow their input
   (``MatchIdentityOperation``); otherwise the first
   candidate device of the group, after which the whole group is pinned there.

TF stops at the first error; the placer here records each error, leaves that group
unplaced and goes on, so a user sees every problem at once. Placement facts that the
kernel table cannot give (colocation-exempt ops) are data in
``placelint/data/placer_facts.json``; the node classes placer.cc asks (IsMetadata,
IsIdentity, IsMerge) are ``model/ops.py``.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from ..model.devices import DeviceSet
from ..model.graph import Graph, Node
from ..model.op_index import op_index
from ..model.ops import IDENTITY, METADATA
from .colocation_graph import ColocationGraph
from .group_state import State
from .placer_events import DeviceOf, GroupOf, PlacementResult, PlacerEvent, PlacerEventKind, placer_facts
from .processing_order import ordered, processing_order, processing_positions

__all__ = ["PlacementResult", "PlacerEvent", "PlacerEventKind", "place", "placer_facts",
           "ordered", "processing_order"]


class _Placer(ColocationGraph):
    """``Placer::Run``: the colocation graph, then the two assignment passes."""

    # -- assignment ------------------------------------------------------------------------
    # TF assigns node by node: op nodes in node order, then the generators; the function
    # bodies reached through a resource ``_Arg`` last, a group at a time. The first node of
    # a group that it assigns pins the whole group to its device (``Member::AssignDevice``:
    # the device is a full name of a supported type, so the group's only candidate from
    # then on), and no union happens any more: every other node of the group gets the same
    # device, and a group TF cannot place fails at that first node. So each group is
    # decided by its first node in that sequence, its *leader*, and a node placed before a
    # leader is one earlier in the sequence. A leader that is an op node, not a metadata op
    # or an Identity, takes its group's first candidate: those are filled in at once; the
    # others (generators, metadata ops, Identities, function bodies, groups without a
    # candidate, which fail) are visited in the sequence's order.
    def assign(self):
        n = len(self.order)
        order, state = self.order, self.state
        roots = _roots(self.parent)
        is_gen = np.zeros(n, dtype=bool)
        is_gen[self.generators] = True
        # the (``_Arg``, source) pairs of the function bodies, as an array of two columns
        pinned = np.fromiter(chain.from_iterable(self.pinned_args), dtype=np.int64,
                             count=2 * len(self.pinned_args)).reshape(-1, 2)
        deferred_roots = roots[pinned[:, 0]]
        self.deferred = deferred = set(deferred_roots.tolist())
        if deferred:
            in_body = np.isin(roots, deferred_roots)
            body = np.flatnonzero(in_body)      # a group at a time, in order of first node
            body_roots = roots[body]
            _, first = np.unique(body_roots, return_index=True)
            group_rank = np.empty(n, dtype=np.int64)
            group_rank[body_roots[first]] = np.argsort(np.argsort(first))
            body = body[np.argsort(group_rank[body_roots], kind="stable")]
            seq = np.concatenate([np.flatnonzero(~is_gen & ~in_body),
                                  np.flatnonzero(is_gen & ~in_body), body])
        else:
            seq = np.concatenate([np.flatnonzero(~is_gen), np.flatnonzero(is_gen)])
        leaders = _firsts(seq, roots, n)
        leader_roots = roots[leaders]
        # the devices: their names, then None (a group TF cannot place)
        devices = self.devices.devices
        self._table = [d.name for d in devices] + [None]
        slot = {d.name: k for k, d in enumerate(devices)}
        state_ids = np.fromiter(map(_ID, map(state.__getitem__, leader_roots.tolist())),
                                dtype=np.int64, count=leader_roots.size)
        first_device, single = self._first_devices(slot, state_ids)
        device = first_device[state_ids]
        # A leader's group with one candidate device gets it whatever the leader is: TF
        # picks among the candidates. Only the others need a visit to choose.
        choose = ~single[state_ids]
        maybe = np.flatnonzero(self._following()[leaders] & choose)
        follows = np.zeros(len(leaders), dtype=bool)
        follows[maybe] = list(map(self.follows_input, map(order.__getitem__,
                                                          leaders[maybe].tolist())))
        visit = ((is_gen[leaders] | follows) & choose) | (device < 0)
        if deferred:
            body = np.isin(leader_roots, deferred_roots)
            visit |= body
        if self.failed_roots:
            failed = np.isin(leader_roots, np.fromiter(self.failed_roots, dtype=np.int64))
            visit &= ~failed
            device[failed] = -1
        by_root = np.full(n, -1, dtype=np.int64)
        by_root[leader_roots] = np.where(visit, -1, device)
        at = np.empty(n, dtype=np.int64)
        at[seq] = np.arange(n)
        # (arrays, read an item at a time by the few visits: a graph of 10^5 nodes has a
        # handful, and three lists of every node cost 0.1 s at 10^6)
        self._at, self._roots, self._by_root = at, roots, by_root
        self._pinned: dict[tuple[int, str], State] = {}
        for i in leaders[visit & ~body if deferred else visit].tolist():
            self.place_group(order[i], i, int(roots[i]), bool(is_gen[i]))
        if deferred:        # (the function bodies come last in the sequence)
            self._place_bodies(leaders[visit & body], roots, at, pinned, is_gen, slot)
        # every node: its group's device, as a code (a view: no dict of every node)
        codes = by_root[roots]
        codes[codes < 0] = len(self._table) - 1         # (a failed group: None, the last)
        at = processing_positions(self.graph)
        self.result.device = DeviceOf(self.graph, order, codes if at is None else codes[at],
                                      self._table, codes)
        # the group root of each node in a group of several (``PlacementResult.group_of``)
        grouped = np.bincount(roots, minlength=n)[roots] > 1
        self.result.group_of = GroupOf(order, self.idx, roots, grouped)

    def _following(self) -> np.ndarray:
        """Bool per processing position: the node's op is one whose device may follow its
        input's (``_FOLLOWING``), asked once per op type (``model.op_index``)."""
        by_graph = op_index(self.graph).mask(_FOLLOWING.__contains__)
        at = processing_positions(self.graph)
        if at is None:
            return by_graph
        by_order = np.empty_like(by_graph)
        by_order[at] = by_graph
        return by_order

    def _first_devices(self, slot: dict, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per state id (of those in ``ids``): the slot of its first candidate device (-1:
        none), and whether it is its only one."""
        first = np.full(len(self._state_list), -1, dtype=np.int64)
        single = np.zeros(len(self._state_list), dtype=bool)
        for k in np.flatnonzero(np.bincount(ids)).tolist():
            found = self.state_devices(self._state_list[k])
            if found:
                first[k] = slot[found[0].name]
                single[k] = len(found) == 1
        return first, single

    def _place_bodies(self, leaders: np.ndarray, roots: np.ndarray, at: np.ndarray,
                      pinned: np.ndarray, is_gen: np.ndarray, slot: dict):
        """The function bodies' leaders, in order (``roots``, ``at``: each node's group root
        and place in the sequence; ``pinned``: ``pinned_args`` as rows). A body's group reached through a resource ``_Arg`` is
        pinned to the device its ``_Arg``'s input got (TF instantiates the body with
        ``_Arg`` nodes assigned to their inputs' devices; a body node's own request on the
        resource is then ignored, as across any resource edge), then placed: a group whose
        state then has one candidate device gets it without a visit (``place_group`` would
        choose it)."""
        # each group's source: that of its first pinned ``_Arg``, when it comes before the
        # leader (its device is known then); as the source's group root, -1 for none
        arg_roots, first = np.unique(roots[pinned[:, 0]], return_index=True)
        source = np.full(len(roots), -1, dtype=np.int64)
        source[arg_roots] = pinned[first, 1]
        leader_roots = roots[leaders]
        src = source[leader_roots]
        known_src = src >= 0
        src = np.where(known_src, src, 0)
        src_root = np.where(known_src & (at[src] < at[leaders]), roots[src], -1)
        by_root, state, order, failed = self._by_root, self.state, self.order, self.failed_roots
        known: dict[tuple[int, int], tuple[State, int]] = {}
        for i, root, sr in zip(leaders.tolist(), leader_roots.tolist(), src_root.tolist()):
            code = int(by_root[sr]) if sr >= 0 else -1
            st = state[root]
            hit = known.get((st.id, code))
            if hit is None:
                pinned = st if code < 0 else self._pinned_state(st, self._table[code])
                found = self.state_devices(pinned)
                hit = known[(st.id, code)] = (pinned, slot[found[0].name]
                                              if len(found) == 1 else -1)
            state[root] = hit[0]
            if hit[1] >= 0:
                by_root[root] = hit[1]
            elif root not in failed:
                self.place_group(order[i], i, root, bool(is_gen[i]))

    def placed(self, j: int, before: int) -> str | None:
        """The device of node ``j`` as TF sees it when it assigns the node at sequence
        position ``before``: None when ``j`` comes later (or its group failed)."""
        if self._at[j] < before:
            return self._table[self._by_root[self._roots[j]]]
        return None

    def _pinned_state(self, st: State, device: str) -> State:
        pinned = self._pinned.get((st.id, device))
        if pinned is None:
            spec = self.devices.get(device).spec
            pinned = self._pinned[(st.id, device)] = self.intern(spec, spec, spec,
                                                                 st.supported, st.soft)
        return pinned

    def place_group(self, node: Node, i: int, root: int, second_pass: bool):
        """The leader ``node`` (position ``i``) of group ``root`` chooses the group's device."""
        if root in self.failed_roots:
            return
        devices, err = self.devices_for(node, self.state[root])
        if err is not None:
            err.message = f"Cannot assign a device for operation {node.name}: {err.message}"
            self.result.errors.append(err)
            self.failed_roots.add(root)
            return
        chosen = None
        idx, before, placed = self.idx, self._at[i], self.placed
        if second_pass:
            outs = node.out_edges
            if outs and self.deferred:
                outs = [e for e in outs if self._roots[idx[e.dst]] not in self.deferred
                        or placed(idx[e.dst], before) is not None]
            if outs:
                first = placed(idx[outs[0].dst], before)
                if first is not None and all(placed(idx[e.dst], before) == first for e in outs):
                    chosen = next((d for d in devices if d.name == first), None)
        elif self.follows_input(node):
            data_in = [e for e in node.in_edges if not e.control] or node.in_edges
            if data_in:
                src_dev = placed(idx[data_in[0].src], before)
                chosen = next((d for d in devices if d.name == src_dev), None)
        self._by_root[root] = self._table.index((chosen or devices[0]).name)

    def follows_input(self, node: Node) -> bool:
        """A metadata op, or an Identity that ``identity_follows_input``: placed on its
        input's device when that is a candidate."""
        op = node.op
        return op in METADATA or (op in IDENTITY and self.identity_follows_input(node))

    def identity_follows_input(self, node: Node) -> bool:
        """placer.cc ``MatchIdentityOperation``: an Identity with no device request, one
        in-edge and one out-edge (control edges count; no out-edge means the implicit
        edge to the sink, whose request is empty) follows its input when its input and
        its consumer request the same device string."""
        if node.device or len(node.in_edges) != 1:     # (the caller checked the op)
            return False
        if len(node.out_edges) > 1:
            return False
        nodes = self.graph.nodes
        consumer_request = nodes[node.out_edges[0].dst].device if node.out_edges else ""
        return nodes[node.in_edges[0].src].device == consumer_request

    def run(self, like: PlacementResult | None = None) -> PlacementResult:
        if not self.devices.devices:
            self.result.device = dict.fromkeys(self.idx)
            self.result.errors.append(PlacerEvent(PlacerEventKind.UNKNOWN_DEVICE, "",
                                                  "No devices are registered"))
            return self.result
        kept = like._colocation if like is not None else None
        if kept is not None and kept.graph is self.graph and kept.devices is self.devices:
            self.restore(kept)
        else:
            self.initialize_members()
            self.colocate_ref_edges()
            self.colocate_class_groups()
            if not self.soft and not self.union_failures:
                self.result._colocation = self.keep()
        self.assign()
        if not self.result.errors:      # only a refused graph asks for a soft placement
            self.result._colocation = None  # (PL101, PL104): nothing to start it from
        return self.result

    # Soft placement changes the colocation graph only where a union fails without it
    # (a conflicting request is then merged softly, a failing ``_class`` ignored): after
    # a placement in which every union succeeded, the soft placement of the same graph
    # starts from its groups and only assigns again.
    def keep(self) -> "_Colocation":
        r = self.result
        return _Colocation(self.graph, self.devices, list(self.parent), list(self.state),
                           list(self.joined), set(self.failed_roots), list(self.generators),
                           list(self.pinned_args), list(r.errors), list(r.events),
                           {op: list(nodes) for op, nodes in r.unknown_ops.items()})

    def restore(self, kept: "_Colocation"):
        again = {st: self.intern(st.assigned, st.resource, st.requested, st.supported, st.soft)
                 for st in set(kept.state)}     # (fresh states: candidates depend on soft)
        self.state = list(map(again.__getitem__, kept.state))
        self.parent, self.joined = list(kept.parent), list(kept.joined)
        self.failed_roots, self.generators = set(kept.failed_roots), list(kept.generators)
        self.pinned_args = list(kept.pinned_args)
        r = self.result
        r.errors, r.events = list(kept.errors), list(kept.events)
        r.unknown_ops = {op: list(nodes) for op, nodes in kept.unknown_ops.items()}


class _Colocation(NamedTuple):
    """The colocation graph of a placement, before assignment (``_Placer.keep``)."""
    graph: Graph
    devices: DeviceSet
    parent: list[int]
    state: list[State]
    joined: list[int]
    failed_roots: set[int]
    generators: list[int]
    pinned_args: list[tuple[int, int]]
    errors: list[PlacerEvent]
    events: list[PlacerEvent]
    unknown_ops: dict[str, list[str]]


_ID = attrgetter("id")

#: ops whose device may follow their input's (placer.cc ``IsMetadata``, ``IsIdentity``)
_FOLLOWING = METADATA | IDENTITY


def _firsts(seq: np.ndarray, roots: np.ndarray, n: int) -> np.ndarray:
    """The items of ``seq`` (positions) that are the first of their group (``roots``: each
    position's group root, below ``n``) in it, in ``seq``'s order: a table over the roots
    rather than ``np.unique``'s sort."""
    first = np.full(n, seq.size, dtype=np.int64)
    np.minimum.at(first, roots[seq], np.arange(seq.size, dtype=np.int64))
    return seq[np.sort(first[first < seq.size])]


def _roots(parent: list[int]) -> np.ndarray:
    """Every node's union-find root, by pointer jumping over the whole array at once."""
    p = np.array(parent, dtype=np.int64)
    while True:
        pp = p[p]
        if np.array_equal(pp, p):
            return p
        p = pp


def place(graph: Graph, devices: DeviceSet, *, allow_soft_placement: bool = False,
          like: PlacementResult | None = None) -> PlacementResult:
    """Predict TF's placement of every node of ``graph`` on ``devices``. ``like``: a
    placement of the same graph on the same devices without soft placement, whose
    colocation groups a soft placement may start from."""
    return _Placer(graph, devices, allow_soft_placement).run(like)
