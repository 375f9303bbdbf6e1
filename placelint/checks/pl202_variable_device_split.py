"""PL202 variable-device-split: a variable read every step by ops on another device.

Grouping: one finding per (variable device, the other devices that read it, over the network
or not): the variables in ``nodes``, their readers on other devices in ``related_nodes``.
"""

from ..diagnostics import Severity
from ..humanize import format_bytes, list_names, plural
from ..model.ops import FUNCTION_IO, IDENTITY, VARIABLE_CREATORS
from .base import Rule
from .common import Groups
from ..model.devices import display

VARIABLE_OPS = VARIABLE_CREATORS
READ_THROUGH = IDENTITY | FUNCTION_IO | {"ReadVariableOp"}
#: consumers that only initialise, save or restore a variable: not every step
NOT_PER_STEP = ("Assign", "AssignVariableOp", "SaveV2", "Save", "SaveSlices", "RestoreV2",
                "VarIsInitializedOp", "IsVariableInitialized", "MergeV2Checkpoints")


def variable_source(graph, name: str, limit: int = 8) -> str | None:
    """The variable a tensor is read from (through Identity/ReadVariableOp), if any."""
    for _ in range(limit):
        node = graph.nodes[name]
        if node.op in VARIABLE_OPS:
            return name
        if node.op not in READ_THROUGH:
            return None
        data = [e for e in node.in_edges if not e.control]
        if not data:
            return None
        name = data[0].src
    return None


class VariableDeviceSplit(Rule):
    code = "PL202"
    name = "variable-device-split"
    severity = Severity.WARNING
    summary = "A variable lives on one device and is read every step by ops on another."
    per_step = True

    def check(self, ctx):
        graph = ctx.graph
        placement = ctx.placement.device
        by_var: dict[str, list] = {}
        for t in ctx.transfers:
            if t.control:
                continue
            consumers = [c for c in t.consumers if graph.nodes[c].op not in NOT_PER_STEP]
            if not consumers:
                continue
            var = variable_source(graph, t.src)
            if var is not None:
                by_var.setdefault(var, []).append((t, consumers))
        # one cause: the variables of one device read on the same other devices (a model
        # whose variables were made outside its ops' ``tf.device`` has hundreds of them)
        groups = Groups()
        for var, items in by_var.items():
            devices = tuple(sorted({t.dst_device.display for t, _ in items}))
            network = all(t.network for t, _ in items)
            groups.add((display(placement.get(var)), devices, network), var, items)
        for (home, devices, network), variables, per_var in groups:
            yield self._finding(home, ", ".join(devices), network, variables, per_var)

    def _finding(self, home: str, devices: str, network: bool, variables: list[str],
                 per_var: list[list]):
        items = [item for items in per_var for item in items]
        readers = sorted({c for _, cs in items for c in cs})
        known = [t.bytes for t, _ in items if t.bytes is not None]
        size = format_bytes(sum(known)) if len(known) == len(items) else "unknown size"
        copies = plural(len(items), "copy", "copies")
        # variables on ps tasks read by workers: the parameter-server layout
        link, over = ("and", " over the network") if network else ("but", "")
        if len(variables) == 1:
            subject = f"variable '{variables[0]}' lives on {home} {link} is read every step{over}"
            detail = f"{subject} by {list_names(readers)} on {devices}."
        else:
            subject = (f"{len(variables)} variables live on {home} {link} are read every "
                       f"step{over}")
            shown = "; ".join(f"'{v}' by {list_names(sorted({c for _, cs in its for c in cs}), 3)}"
                              for v, its in zip(variables[:10], per_var))
            more = f"; and {len(variables) - 10} more" if len(variables) > 10 else ""
            detail = f"{subject} on {devices}: {shown}{more}."
        message = f"{subject} on {devices} ({copies}, {size} per step)"
        if network:
            return self.diag(
                f"{message}: the parameter-server layout pays "
                f"{'this copy' if len(items) == 1 else 'these copies'} by design",
                nodes=variables, related=readers, severity=Severity.INFO, detail=detail,
                fix="(to make it cheaper) read each variable once per step per worker, and "
                    "spread large variables over the ps tasks (replica_device_setter's "
                    "ps_strategy, variable partitioners).")
        return self.diag(
            message, nodes=variables, related=readers, detail=detail,
            fix="keep a variable and the ops that use it on one device (place the variable "
                "where it is used), or pay a copy each step.")


RULE = VariableDeviceSplit
