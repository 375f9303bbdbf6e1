"""TF's ``ColocationGraph`` (colocation_graph.cc), its first half: the members.

``InitializeMembers`` gives each node the device types with a kernel (from the shipped
kernel table, matched on attrs) and its requested device; a requested device on a
ref/resource *generator* (no inputs, one ref or resource output) is a resource device,
which consumers cannot override. ``ColocateResourceAndRefEdges`` unions the two ends of
every data edge into a ref- or resource-typed input (exempt consumers: PartitionedCall,
IdentityN, ...); if only the *requested* devices conflict, the consumer's request is
silently replaced by the source's. ``ColocateAllNodes`` unions each node with the groups
its ``_class`` attr names (``loc:@name``); failures are ignored under soft placement.
The candidate devices of a group are ``device_candidates.py``; the assignment ``placer.py``.
"""

from __future__ import annotations

from itertools import compress, count, repeat
from operator import attrgetter, is_

from ..dtypes import DT_RESOURCE, is_ref
from ..model.devices import Device, DeviceSet, DeviceSpec, MergeError
from ..model.graph import Graph, Node
from ..model.ops import FUNCTION_IO
from ..opdb import get_opdb
from .colocation_joins import class_joins, ref_edge_arrays, without_data_input
from .device_candidates import DeviceCandidates, Supported
from .group_state import EMPTY, State, ensure, merge_specs, merge_supported, ref_check
from .placer_events import PlacementResult, PlacerEvent, PlacerEventKind, placer_facts
from .processing_order import ordered

#: What ``_generator`` says of a node without data inputs and with one output.
_GENERATOR, _RESOURCE, _BOTH = "generator", "resource", "both"
#: The nodes' fields that decide their first state
_MEMBER_KEY = attrgetter("op", "op_signature", "device", "soft")

class ColocationGraph(DeviceCandidates):
    """The union-find of the nodes (flat lists by processing position) with each group's
    interned ``State``, and the colocation passes."""

    def __init__(self, graph: Graph, devices: DeviceSet, soft: bool):
        self.graph = graph
        self.devices = devices
        self.soft = soft
        self.opdb = get_opdb()
        facts = placer_facts()
        self.exempt = set(facts["colocation_exempt_ops"])
        self.device_types = devices.types            # prioritised type list
        self.order, self.idx = ordered(graph)
        n = len(self.order)
        self.parent = list(range(n))
        self.rank = [0] * n
        #: each node's state; a root's is its group's
        self.state: list[State] = []
        self._states: dict[tuple, State] = {}
        self._state_list: list[State] = []     # by id
        #: (state of the new root, state of the old root) -> the union's state, or the end
        #: of TF's error text when the two cannot merge (interned states: keyed by identity)
        self._unions: dict[tuple[State, State], State | str] = {}
        #: (source state, destination state) -> ``ref_check``
        self._ref_checks: dict[tuple[State, State], str | None] = {}
        self.result = PlacementResult(devices, soft, {})     # (the devices: ``assign``)
        self.failed_roots: set[int] = set()
        #: positions of the generator nodes (no data inputs, one non-ref output): they are
        #: placed in a second pass, after their consumers
        self.generators: list[int] = []
        #: positions of the nodes a union made children (every other node is a root)
        self.joined: list[int] = []
        #: root -> the joined positions under it, as of ``_groups_at`` unions (error texts)
        self._groups: dict[int, list[int]] = {}
        self._groups_at = -1
        # (device spec, supported types) -> candidate devices, best first
        self._candidates: dict[tuple[DeviceSpec, Supported], list[Device]] = {}
        #: (resource _Arg of a function body, its source): the body's group is placed after
        #: the rest, pinned to the source's device (multi-device function instantiation)
        self.pinned_args: list[tuple[int, int]] = []
        self.deferred: set[int] = set()
        #: unions that failed (under soft placement some would not)
        self.union_failures = 0

    def intern(self, assigned: DeviceSpec, resource: DeviceSpec, requested: DeviceSpec,
               supported: Supported, soft: bool) -> State:
        key = (assigned, resource, requested, supported, soft)
        found = self._states.get(key)
        if found is None:
            found = self._states[key] = State(*key)
            found.id = len(self._state_list)
            self._state_list.append(found)
        return found

    # -- union-find ----------------------------------------------------------------
    def find(self, i: int) -> int:
        parent = self.parent
        root = parent[i]
        if parent[root] == root:
            return root         # a root or a root's child: the usual case, nothing to compress
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    # -- step 1 ----------------------------------------------------------------------
    def initialize_members(self):
        # Nodes with the same op, attr signature (the op database's memo key), requested
        # device and soft flag start in the same state: it is made once per distinct key.
        # The nodes of a key that needs a closer look (an unknown op, no kernel, a
        # malformed device, attrs without a signature) and the nodes without a data input
        # (generators, resource devices) are then visited one by one, in order.
        order = self.order
        # each node's key as the position of its first node (a key is hashed once)
        first: dict[tuple, int] = {}
        keys = list(map(first.setdefault, map(_MEMBER_KEY, order), count()))
        kernels: dict[tuple, tuple] = {}
        base: dict[int, State | None] = {}
        infos: dict[int, object] = {}
        for key, at in first.items():
            op, signature, _, soft = key
            node = order[at]
            spec = node.spec
            if spec is None or (signature is None and self.opdb.op(op) is not None):
                base[at] = None
                continue
            info, supported = self._kernels(kernels, node, signature)
            if info is None or not supported:
                base[at] = None
                continue
            infos[at] = info
            base[at] = self.intern(EMPTY, EMPTY, EMPTY if spec.is_empty else spec,
                                   supported, soft)
        self.state = state = list(map(base.__getitem__, keys))
        generators: list[int] = []
        resource_states: dict[int, State] = {}
        kinds: dict[tuple, str | None] = {}     # (op, output dtypes) -> ``_generator``
        for i in without_data_input(self.graph):
            st = state[i]
            if st is None:
                continue
            node = order[i]
            od = node.output_dtypes
            if od is None:
                kind = self._generator(node, infos[keys[i]])
            else:       # (what ``_generator`` reads of a node without data inputs)
                kind = kinds.get((node.op, *od), 0)
                if kind == 0:
                    kind = kinds[(node.op, *od)] = self._generator(node, infos[keys[i]])
            if kind:
                if kind != _RESOURCE:
                    generators.append(i)
                if kind != _GENERATOR and st.requested is not EMPTY:
                    found = resource_states.get(st.id)
                    if found is None:
                        found = resource_states[st.id] = self.intern(
                            EMPTY, st.requested, st.requested, st.supported, st.soft)
                    state[i] = found
        looked_at = list(compress(count(), map(is_, state, repeat(None))))
        for i in looked_at:
            if self._member(order[i], i, kernels):
                generators.append(i)
        self.generators = sorted(generators) if looked_at else generators

    def _kernels(self, kernels: dict, node: Node, signature: tuple | None):
        key = (node.op, signature)
        hit = kernels.get(key)
        if hit is None:
            hit = kernels[key] = self._kernel_types(node, signature)
        return hit

    def _generator(self, node: Node, info) -> str | None:
        """Generators: no data inputs, one output. A ref or DT_RESOURCE one keeps its
        requested device as a resource device (``_RESOURCE``); any other waits for the
        second pass (``_GENERATOR``); a ref one does both (``_BOTH``)."""
        if _has_data_input(node) or self._num_outputs(node, info) != 1:
            return None
        t = node.output_dtypes[0] if node.output_dtypes else None
        if t is None or not is_ref(t):
            return _BOTH if t == DT_RESOURCE else _GENERATOR
        return _RESOURCE

    def _member(self, node: Node, i: int, kernels: dict) -> bool:
        """The state of a node that needs a closer look, its errors and unknown op; True
        when it is a generator."""
        op = node.op
        signature = node.op_signature
        if signature is None:
            signature = self._signature(node)
        info, supported = self._kernels(kernels, node, signature)
        if info is None:
            self.result.unknown_ops.setdefault(op, []).append(node.name)
        elif not supported and node.name in self.graph.invalid_nodes:
            # TF refuses the node at import (PL007: e.g. a missing T); placed as a node
            # supported everywhere, not reported again as "No OpKernel ... attrs: []"
            supported = tuple((t, 0) for t in self.device_types)
        kind = self._generator(node, info)
        spec = node.spec
        if not supported:
            self._fail_init(node, i, PlacerEventKind.NO_KERNEL, self._no_kernel_message(node))
            spec = EMPTY
        elif spec is None:
            self._fail_init(node, i, PlacerEventKind.MALFORMED,
                            f"Malformed device specification '{node.device}' in node: "
                            f"{{name:'{node.name}' op:'{op}'}}")
            spec = EMPTY
        elif spec.is_empty:
            spec = EMPTY
        self.state[i] = self.intern(EMPTY, spec if kind in (_RESOURCE, _BOTH) else EMPTY,
                                    spec, supported, node.soft)
        return kind in (_GENERATOR, _BOTH)

    def _signature(self, node: Node) -> tuple | None:
        """The op database's attr signature of a node the builder did not annotate."""
        info = self.opdb.op(node.op)
        return None if info is None else info.signature(node.attrs)

    def _kernel_types(self, node: Node, signature: tuple | None):
        """(OpInfo or None, [(device type, kernel priority)] by priority, stable in
        device-type order): TF's ``SupportedDeviceTypesForNode`` + its stable sort."""
        types = self.device_types
        info = self.opdb.op(node.op)
        if info is None:
            # Not a registered op (custom op, or a function call left unexpanded):
            # TF's SupportedDeviceTypesForNode assumes every device type supports it.
            return None, tuple((t, 0) for t in types)
        try:
            found = info.supported_device_types(node.attrs, types, signature)
        except ValueError:
            found = {}
        return info, tuple(sorted(((t, found[t]) for t in types if t in found),
                                  key=lambda tp: -tp[1]))

    @staticmethod
    def _num_outputs(node: Node, info) -> int | None:
        if info is not None and node.op in FUNCTION_IO:
            return 1        # inlined function arguments pass one tensor through
        if node.output_dtypes is not None:
            return len(node.output_dtypes)
        return None if info is None else info.num_outputs(node.attrs)

    def _no_kernel_message(self, node: Node) -> str:
        registered = ", ".join(sorted(self.device_types))
        return (f"No OpKernel was registered to support Op '{node.op}' used by "
                f"{{{{node {node.name}}}}} with these attrs: [{_attrs_text(node)}]\n"
                f"Registered devices: [{registered}]")

    def _fail_init(self, node, i, kind, message):
        self.result.errors.append(PlacerEvent(kind, node.name, message, requested=node.device))
        self.failed_roots.add(i)

    # -- colocation ------------------------------------------------------------------
    def colocate(self, xi: int, yi: int) -> str | None:
        """``ColocateNodes``: union two groups; returns TF's error text on failure."""
        parent = self.parent
        xr = parent[xi]
        if parent[xr] != xr:
            xr = self.find(xi)
        yr = parent[yi]
        if parent[yr] != yr:
            yr = self.find(yi)
        if xr == yr:
            return None
        return self._join(xi, yi, xr, yr)

    def _join(self, xi: int, yi: int, xr: int, yr: int) -> str | None:
        """``colocate(xi, yi)`` given their two roots ``xr`` != ``yr``."""
        rank = self.rank
        rx, ry = rank[xr], rank[yr]
        if rx < ry:
            new_r, old_r = yr, xr
        else:
            new_r, old_r = xr, yr
        state = self.state
        pair = (state[new_r], state[old_r])
        merged = self._unions.get(pair)
        if merged is None:
            merged = self._unions[pair] = self._union(*pair)
        if merged.__class__ is str:
            self.union_failures += 1
            return (f"Cannot colocate nodes {{{{colocation_node {self.order[xi].name}}}}} and "
                    f"{{{{colocation_node {self.order[yi].name}}}}}{merged}")
        state[new_r] = merged
        self.parent[old_r] = new_r
        self.joined.append(old_r)
        if rx == ry:
            rank[new_r] = rx + 1
        failed = self.failed_roots
        if failed and old_r in failed:
            failed.add(new_r)
        return None

    def _union(self, new: State, old: State) -> State | str:
        """``Member::Merge`` of two groups' states: the union's state, or what follows the
        two node names in TF's error text."""
        soft = new.soft and old.soft
        try:
            assigned, resource, requested = merge_specs(new, old, self.soft or soft)
        except MergeError as exc:
            return f": {exc}"
        supported = merge_supported(new.supported, old.supported)
        if supported is None:
            return (" because no device type supports both of those nodes and the other "
                    "nodes colocated with them.")
        return self.intern(assigned, resource, requested, supported, soft)

    def colocate_ref_edges(self):
        s_at, d_at, body = self.graph.derived("placer.ref_edges",
                                              lambda: ref_edge_arrays(self.graph, self.exempt))
        parent, state, checks, find = self.parent, self.state, self._ref_checks, self.find
        for si, di, into_body in zip(s_at.tolist(), d_at.tolist(), body.tolist()):
            if into_body:
                # into a function body: the call is colocation-exempt; the body is placed
                # with this _Arg pinned to the source's device (see ``Placer.assign``)
                self.pinned_args.append((di, si))
                continue
            # the usual case inline (``colocate_ref_edge``): compatible groups, a union
            sr = parent[si]
            if parent[sr] != sr:
                sr = find(si)
            dr = parent[di]
            if parent[dr] != dr:
                dr = find(di)
            if sr == dr:
                continue
            check = checks.get((state[sr], state[dr]), 0)
            if check is None:
                err = self._join(si, di, sr, dr)
                if err is not None:
                    self._ref_union_failed(si, di, err)
            else:
                self.colocate_ref_edge(si, di)

    def colocate_ref_edge(self, si: int, di: int):
        """A ref/resource edge ``ColocateResourceAndRefEdges`` follows: its two groups'
        devices checked, then a union."""
        find, state = self.find, self.state
        sr, dr = find(si), find(di)
        s, d = state[sr], state[dr]
        try:
            check = self._ref_checks[(s, d)]
        except KeyError:
            check = self._ref_checks[(s, d)] = ref_check(s, d)
        if check is None:       # the usual case: nothing to report, a union
            err = self.colocate(si, di)
            if err is not None:
                self._ref_union_failed(si, di, err)
            return
        src, dst = self.order[si], self.order[di]
        if check != "requested":
            a, b = (s.assigned, d.assigned) if check == "assigned" else (s.resource, d.resource)
            self.result.errors.append(PlacerEvent(
                PlacerEventKind.COLOCATION, dst.name,
                "Cannot place the graph because a reference or resource edge connects "
                f"colocation groups with incompatible {check} devices: {a} vs {b}. The edge "
                f"src node is {src.name} , and the dst node is {dst.name}",
                related=[src.name], requested=dst.device))
            self.failed_roots.update((sr, dr))
            return
        # "requested": the destination's request gives way to the source's
        self.result.events.append(PlacerEvent(
            PlacerEventKind.OVERRIDDEN_DEVICE_REQUEST, dst.name,
            f"Ignoring device specification {d.requested} for node '{dst.name}' because the "
            f"input edge from '{src.name}' is a reference connection and already has a "
            f"device field set to {s.requested}",
            related=[src.name], requested=str(d.requested),
            detail={"source_device": str(s.requested)}))
        state[dr] = self.intern(d.assigned, d.resource,
                                ensure(ensure(s.requested, d.assigned), d.resource),
                                d.supported, d.soft)
        err = self.colocate(si, di)
        if err is not None:
            self._ref_union_failed(si, di, err)

    def _ref_union_failed(self, si: int, di: int, err: str):
        src, dst = self.order[si], self.order[di]
        self.result.errors.append(PlacerEvent(
            PlacerEventKind.COLOCATION, dst.name,
            "Nodes were connected by a reference or resource connection (requiring them to be "
            f"on the same device), but the two nodes were assigned two different devices: {err}",
            related=[src.name], requested=dst.device))
        self.failed_roots.update((self.find(si), self.find(di)))

    def colocate_class_groups(self):
        at, roots, groups, names = self.graph.derived("placer.class_joins",
                                                      lambda: class_joins(self.graph))
        parent, find, join = self.parent, self.find, self._join
        # (kept with the graph as arrays: as lists ~100 MiB at 10^6 nodes)
        for i, root, group in zip(at.tolist(), roots.tolist(), groups.tolist()):
            xr = parent[i]              # (``colocate``, its look-ups inline)
            if parent[xr] != xr:
                xr = find(i)
            yr = parent[root]
            if parent[yr] != yr:
                yr = find(root)
            if xr != yr:
                err = join(i, root, xr, yr)
                if err is not None:
                    self._class_join_failed(i, names[group], root, err)

    def _class_join_failed(self, i: int, group: str, root: int, err: str):
        node, related = self.order[i], [self.order[root].name]
        if self.soft or (node.soft and self.order[root].soft):
            self.result.events.append(PlacerEvent(
                PlacerEventKind.IGNORED_COLOCATION, node.name,
                f"Ignoring request to colocate node '{node.name}' with nodes in "
                f"colocation group '{group}' because soft placement is on and an attempt "
                f"at doing so resulted in the following error: {err}",
                related=related, requested=node.device))
        else:
            self.result.errors.append(PlacerEvent(
                PlacerEventKind.COLOCATION, node.name, err, related=related,
                requested=node.device))
            self.failed_roots.update((self.find(i), self.find(root)))


def _has_data_input(node: Node) -> bool:
    # a loop that stops at the first data edge (in_edges list data edges first)
    for e in node.in_edges:
        if e.src_slot >= 0:
            return True
    return False


def _attrs_text(node: Node) -> str:
    parts = []
    for key in sorted(node.attrs):
        if key.startswith("_"):
            continue
        value = node.attrs[key]
        kind = value.WhichOneof("value")
        if kind == "type":
            from ..dtypes import dtype_name
            parts.append(f"{key}={dtype_name(value.type)}")
        elif kind in ("b", "i", "f", "s"):
            v = getattr(value, kind)
            parts.append(f"{key}={v.decode('utf-8', 'replace') if isinstance(v, bytes) else v}")
    return ", ".join(parts)

