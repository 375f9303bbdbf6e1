"""The candidate devices of a colocation group: ``ColocationGraph::GetDevicesForNode``
(``FindMatchingDevices``, ``FilterSupportedDevices``, soft placement's retries) and the
errors TF gives when none is left."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.devices import Device, DeviceSpec, device_type_priority
from ..model.graph import Node
from .placer_events import PlacerEvent, PlacerEventKind

if TYPE_CHECKING:
    from .group_state import State

#: A group's supported device types with their kernel priorities, TF's order.
Supported = tuple[tuple[str, int], ...]


class DeviceCandidates:
    """Mixed into ``ColocationGraph``: reads its devices, soft flag, members and order."""

    # -- candidate devices -------------------------------------------------------------
    def candidates(self, spec: DeviceSpec, supported: Supported) -> list[Device]:
        """The supported devices matching ``spec``, best first: ``FindMatchingDevices`` then
        ``FilterSupportedDevices`` (kernel priority, type priority, the session's own
        (local) task first, then name as strings).
        Cached per (spec, supported types): groups repeat a few of each."""
        key = (spec, supported)
        found = self._candidates.get(key)
        if found is None:
            prio = dict(supported)
            picked = [d for d in self.devices.matching(spec) if d.type in prio]
            found = self._candidates[key] = sorted(
                picked, key=lambda d: (-prio[d.type], -device_type_priority(d.type),
                                       not d.local, d.name))
        return found

    def devices_for(self, node: Node, m: State) -> tuple[list[Device] | None, PlacerEvent | None]:
        """The candidate devices of group ``m`` (``node``'s), or the error TF gives."""
        devices = self.state_devices(m)
        if devices:
            return devices, None
        if m.requested.is_empty:
            return None, PlacerEvent(
                PlacerEventKind.NO_KERNEL, node.name,
                "Node had no OpKernel registered to support this "
                f"operation: Operation was {node.op}", requested=node.device)
        return None, self.no_device_error(node, m)

    def state_devices(self, m: State) -> list[Device]:
        """The candidate devices of a group in state ``m`` (empty: TF fails on it), kept
        on the interned state: every group in that state has the same."""
        devices = m.possible
        if devices is None:
            # an empty request matches every device: the same candidates as no request
            devices = self.candidates(m.requested, m.supported)
            if not devices and not m.requested.is_empty and (self.soft or m.soft):
                devices = self.soft_candidates(m)
            m.possible = devices
        return devices

    def soft_candidates(self, m: State) -> list[Device]:
        keep_type = m.assigned.type is not None or m.resource.type is not None
        keep_id = m.assigned.id is not None or m.resource.id is not None
        spec = m.requested
        preferred = DeviceSpec(spec.job, spec.replica, spec.task,
                               spec.type if keep_type else None, spec.id if keep_id else None)
        found = self.candidates(preferred, m.supported)
        if found:
            return found
        softer = DeviceSpec(spec.job, spec.replica, spec.task,
                            spec.type if m.assigned.type is not None else None,
                            spec.id if m.assigned.id is not None else None)
        return self.candidates(softer, m.supported)

    def no_device_error(self, node: Node, m: State) -> PlacerEvent:
        spec = node.spec
        all_names = ", ".join(sorted(self.devices.names))
        if spec is not None and spec == m.requested:
            if not self.devices.matching(spec):
                return PlacerEvent(
                    PlacerEventKind.UNKNOWN_DEVICE, node.name,
                    f"{{{{node {node.name}}}}} was explicitly assigned to {node.device} but "
                    f"available devices are [ {all_names} ]. Make sure the device specification "
                    "refers to a valid device.", requested=node.device)
            if spec.type is not None:
                return PlacerEvent(
                    PlacerEventKind.NO_KERNEL, node.name,
                    f"Could not satisfy explicit device specification '{node.device}' because no "
                    f"supported kernel for {spec.type} devices is available.\nOp: {node.op}",
                    requested=node.device, detail={"device_type": spec.type})
            return PlacerEvent(
                PlacerEventKind.UNKNOWN_DEVICE, node.name,
                f"Could not satisfy explicit device specification '{node.device}'",
                requested=node.device)
        members = self.group_members(node)
        return PlacerEvent(
            PlacerEventKind.COLOCATION, node.name,
            f"Could not satisfy explicit device specification '{node.device}' because the node "
            f"{{{{colocation_node {node.name}}}}} was colocated with a group of nodes that required "
            f"incompatible device '{m.requested}'. All available devices "
            f"[{', '.join(self.devices.names)}].",
            related=[n for n in members if n != node.name], requested=node.device,
            detail={"group_device": str(m.requested)})

    def group_members(self, node: Node) -> list[str]:
        """The names of ``node``'s colocation group, in processing order. Every node that
        no union made a child is a root, so a group is its root and the joined nodes under
        it; the index is rebuilt only when a union happened since the last call."""
        joined = self.joined
        if self._groups_at != len(joined):
            find = self.find
            groups: dict[int, list[int]] = {}
            for j in joined:
                groups.setdefault(find(j), []).append(j)
            self._groups, self._groups_at = groups, len(joined)
        root = self.find(self.idx[node.name])
        order = self.order
        return [order[j].name for j in sorted([root, *self._groups.get(root, ())])]

