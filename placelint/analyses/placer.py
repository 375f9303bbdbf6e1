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

from ..model.devices import DeviceSet
from ..model.graph import Graph, Node
from ..model.ops import IDENTITY, METADATA
from .colocation_graph import _EMPTY, ColocationGraph
from .placer_events import PlacementResult, PlacerEvent, PlacerEventKind, placer_facts
from .processing_order import ordered, processing_order

__all__ = ["PlacementResult", "PlacerEvent", "PlacerEventKind", "place", "placer_facts",
           "ordered", "processing_order"]


class _Placer(ColocationGraph):
    """``Placer::Run``: the colocation graph, then the two assignment passes."""

    # -- assignment ------------------------------------------------------------------------
    def place_node(self, node: Node, i: int, second_pass: bool):
        root = self.find(i)
        if root in self.failed_roots:
            return
        m = self.members[root]
        devices = m.possible
        if devices is None:
            devices, err = self.devices_for(node, m)
            if err is not None:
                err.message = f"Cannot assign a device for operation {node.name}: {err.message}"
                self.result.errors.append(err)
                self.failed_roots.add(root)
                return
        chosen = None
        dev_of = self.result.device
        if second_pass:
            outs = node.out_edges
            if outs and self.deferred:
                outs = [e for e in outs if self.find(self.idx[e.dst]) not in self.deferred
                        or dev_of.get(e.dst) is not None]
            if outs:
                first = dev_of.get(outs[0].dst)
                if first is not None and all(dev_of.get(e.dst) == first for e in outs):
                    chosen = next((d for d in devices if d.name == first), None)
        elif node.op in METADATA or (node.op in IDENTITY and self.identity_follows_input(node)):
            data_in = [e for e in node.in_edges if not e.control] or node.in_edges
            if data_in:
                src_dev = dev_of.get(data_in[0].src)
                chosen = next((d for d in devices if d.name == src_dev), None)
        device = chosen or devices[0]
        # ``AssignAndLog`` + ``Member::AssignDevice``: the whole group is pinned. The device
        # is a full name that matched the group's request, so TF's merges (``MergeDevNames``
        # into assigned, ``MergeOverrideDevNames`` into resource and requested) all come out
        # as exactly that device.
        dev_of[node.name] = device.name
        spec = device.spec
        assigned = m.assigned
        if assigned is _EMPTY or (assigned is not spec and assigned != spec):
            m.assigned = m.resource = m.requested = spec
            m.possible = None

    def place_function_bodies(self, generators: set[int]):
        """The groups of function-body nodes reached through a resource ``_Arg``, in node
        order: each is pinned to the device its ``_Arg``'s input got (TF instantiates the
        body with ``_Arg`` nodes assigned to their inputs' devices; a body node's own request
        on the resource is then ignored, as across any resource edge)."""
        find, members, order = self.find, self.members, self.order
        dev_of = self.result.device
        source_of: dict[int, int] = {}
        for arg, src in self.pinned_args:
            source_of.setdefault(find(arg), src)
        pending: dict[int, list[int]] = {}
        for i in range(len(order)):
            root = find(i)
            if root in self.deferred:
                pending.setdefault(root, []).append(i)
        for root, nodes in pending.items():     # (in node order: outer bodies first)
            src = source_of.get(root)
            device = dev_of.get(order[src].name) if src is not None else None
            if device is not None and root not in self.failed_roots:
                spec = self.devices.get(device).spec
                m = members[root]
                m.assigned = m.resource = m.requested = spec
                m.possible = None
            for i in nodes:
                self.place_node(order[i], i, i in generators)

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

    def run(self) -> PlacementResult:
        if not self.devices.devices:
            self.result.errors.append(PlacerEvent(PlacerEventKind.UNKNOWN_DEVICE, "",
                                                  "No devices are registered"))
            return self.result
        self.initialize_members()
        self.colocate_ref_edges()
        self.colocate_class_groups()
        generators = set(self.generators)
        place_node = self.place_node
        find = self.find
        deferred = self.deferred = {find(a) for a, _ in self.pinned_args}
        if deferred:
            for i, node in enumerate(self.order):
                if i not in generators and find(i) not in deferred:
                    place_node(node, i, False)
            for i in self.generators:
                if find(i) not in deferred:
                    place_node(self.order[i], i, True)
            self.place_function_bodies(generators)
        else:
            for i, node in enumerate(self.order):
                if i not in generators:
                    place_node(node, i, False)
            for i in self.generators:
                place_node(self.order[i], i, True)
        # Each node's group root. A node is its own root unless a union made it a child,
        # so every node maps to itself and only the joined ones are looked up.
        names = list(self.idx)      # (``idx`` lists the nodes in processing order)
        group_of = dict(zip(names, names))
        for i in self.joined:
            group_of[names[i]] = names[find(i)]
        self.result.group_of = group_of
        return self.result



def place(graph: Graph, devices: DeviceSet, *, allow_soft_placement: bool = False) -> PlacementResult:
    """Predict TF's placement of every node of ``graph`` on ``devices``."""
    return _Placer(graph, devices, allow_soft_placement).run()
