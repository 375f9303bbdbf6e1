"""A colocation group's state (TF's ``ColocationGraph::Member`` fields: the assigned,
resource and requested device specs, the supported device types, the soft flag) and how
two states merge (``Member::Merge``, ``MergeDevNames``, ``MergeSupportedDevices``).

States are interned by the placer (``ColocationGraph.intern``): groups share one object
per distinct value, so a union, a compatibility check or a group's candidate devices is
worked out once per distinct pair or state.
"""

from __future__ import annotations

from ..model.devices import Device, DeviceSpec, device_type_priority, parse_device
from .device_candidates import Supported


class State:
    """A colocation group's device specs, supported types and soft flag (TF's ``Member``
    fields), interned: groups share one object per distinct value, and the union of two
    groups, their candidate devices and a pinning are looked up per distinct state."""

    __slots__ = ("assigned", "resource", "requested", "supported", "soft", "possible", "id")

    def __init__(self, assigned, resource, requested, supported: Supported, soft: bool):
        self.assigned = assigned
        self.resource = resource
        self.requested = requested
        self.supported = supported
        self.soft = soft        # soft-placed (a node of a function body under config_proto)
        #: the candidate devices (``DeviceCandidates.devices_for``), once asked
        self.possible: list[Device] | None = None
        self.id = -1


#: The empty spec, the very object every node without a device request carries.
EMPTY = parse_device("")


def _merge(a: DeviceSpec, b: DeviceSpec, soft: bool = False) -> DeviceSpec:
    """``a.merge(b, soft)`` (TF's ``MergeDevNames``), returning a side as it is when the
    other adds nothing."""
    if b is EMPTY or b is a:
        return a
    if a is EMPTY:
        return b
    if a == b:
        return a
    return a.merge(b, soft)


def compatible(a: DeviceSpec, b: DeviceSpec) -> bool:
    """TF's ``AreCompatibleDevNames``."""
    if a is b or a is EMPTY or b is EMPTY:
        return True
    for x, y in ((a.job, b.job), (a.replica, b.replica), (a.task, b.task), (a.type, b.type),
                 (a.id, b.id)):
        if x is not None and y is not None and x != y:
            return False
    return True


def merge_specs(new: State, old: State, soft: bool
                 ) -> tuple[DeviceSpec, DeviceSpec, DeviceSpec]:
    """The assigned, resource and requested specs of the union of two members
    (``Member::Merge``); raises ``MergeError``. A member's requested spec already has its
    assigned and resource fields ensured (every update of it does so), so a member whose
    three specs are empty adds nothing and the other's specs are the union's."""
    if old.requested is EMPTY and old.assigned is EMPTY and old.resource is EMPTY:
        return new.assigned, new.resource, new.requested
    if new.requested is EMPTY and new.assigned is EMPTY and new.resource is EMPTY:
        return old.assigned, old.resource, old.requested
    assigned = _merge(new.assigned, old.assigned)
    resource = _merge(new.resource, old.resource)
    requested = _merge(new.requested, old.requested, soft)
    return assigned, resource, ensure(ensure(requested, assigned), resource)


def ensure(more: DeviceSpec, less: DeviceSpec) -> DeviceSpec:
    """TF's ``EnsureSpecification(more, less)``: fields set in ``less`` are copied over."""
    if less is EMPTY or less is more or less == EMPTY:
        return more
    return DeviceSpec(less.job if less.job is not None else more.job,
                      less.replica if less.replica is not None else more.replica,
                      less.task if less.task is not None else more.task,
                      less.type if less.type is not None else more.type,
                      less.id if less.id is not None else more.id)


def sort_types(types: list[tuple[str, int]]) -> Supported:
    """``SortPrioritizedDeviceTypeVector``: kernel priority, then device-type priority."""
    return tuple(sorted(types, key=lambda t: (-t[1], -device_type_priority(t[0]), t[0])))


def merge_supported(a: Supported, b: Supported) -> Supported | None:
    """``Member::MergeSupportedDevices``: intersection, keeping the prioritised side's order."""
    b_map = dict(b)
    target = [(t, p) for t, p in a if t in b_map]
    other = [(t, b_map[t]) for t, _ in target]
    target, other = sort_types(target), sort_types(other)
    t_prio = any(p for _, p in target)
    o_prio = any(p for _, p in other)
    if not t_prio and not o_prio:
        result = target
    elif t_prio and not o_prio:
        result = target
    elif o_prio and not t_prio:
        result = other
    elif [t for t, _ in target] == [t for t, _ in other]:
        result = target
    else:
        result = sort_types([(t, 0) for t, _ in target])
    return result or None



def ref_check(s: State, d: State) -> str | None:
    """What ``ColocateResourceAndRefEdges`` finds incompatible between the source's group
    (state ``s``) and the destination's (``d``): "assigned" or "resource" (an error),
    "requested" (the destination's request is overridden), or None."""
    if not compatible(s.assigned, d.assigned):
        return "assigned"
    if not compatible(s.resource, d.resource):
        return "resource"
    if not compatible(s.requested, d.requested):
        return "requested"
    return None
