"""PL108 soft-placed-function-device: a device request in a function body TF will move."""

from operator import attrgetter

from ..analyses.placed import placed_devices
from ..diagnostics import Severity
from .base import Rule
from ..model.devices import display
from ..opdb import get_opdb
from .common import Groups, in_tf_order

_SOFT = attrgetter("soft")


class SoftPlacedFunctionDevice(Rule):
    code = "PL108"
    name = "soft-placed-function-device"
    severity = Severity.INFO
    summary = ("A device requested inside a function body (tf.function) that the target does "
               "not offer: the call's config_proto turns soft placement on, so TensorFlow "
               "moves the op instead of failing.")

    def check(self, ctx):
        if ctx.allow_soft_placement:
            return      # PL101/PL104 warn about every soft-placement move then
        devices = ctx.devices
        graph = ctx.placement_graph
        nodes = graph.nodes.values()
        if not any(map(_SOFT, nodes)):
            return      # no function body placed with soft placement (a TF1 graph)
        # each node's device in graph order, without a look-up by name per node
        placed_at = placed_devices(graph.nodes, ctx.placement.device, graph)
        # a requested spec (shared by the nodes of one device string) -> the names of the
        # devices it matches, None for an empty spec; keyed by identity: a spec's own hash
        # is worked out field by field at every look-up
        matching: dict[int, tuple] = {}
        kernels: dict[tuple, bool] = {}     # (op, signature, device type) -> has a kernel
        groups = Groups()   # one finding per function, request and device TF picks
        for node, placed in zip(nodes, placed_at):
            if not node.soft:
                continue
            spec = node.spec
            if spec is None:
                continue
            hit = matching.get(id(spec))
            if hit is None:
                hit = matching[id(spec)] = (spec, None if spec.is_empty else
                                            {d.name for d in devices.matching(spec)})
            names = hit[1]
            if names is None or placed is None or placed in names:
                continue
            if names:
                # the device exists: moved only if it has no kernel for the node (else a
                # resource or colocation edge moved it, which is not soft placement's doing)
                if spec.type is None or self._has_kernel(node, spec.type, kernels):
                    continue
                why = f"which has no kernel for {node.op} on {spec.type}"
            else:
                why = "which the target does not have"
            groups.add((node.function, node.device, why, placed), node.name, node)
        for (function, device, why, placed), nodes, items in groups:
            if len(nodes) == 1:
                who, verb, it = f"{items[0].name} ({items[0].op})", "requests", "it"
            else:
                who, verb, it = f"{len(nodes)} ops", "request", "them"
            yield self.diag(
                f"{who} in function '{function}' {verb} {device}, {why}; the call's "
                f"config_proto sets allow_soft_placement, so TensorFlow runs {it} on "
                f"{display(placed)} instead of failing.",
                fix="drop the device scope inside the tf.function, or target a machine that "
                    "has the device (--devices).",
                nodes=in_tf_order(ctx, nodes))

    @staticmethod
    def _has_kernel(node, device_type: str, memo: dict) -> bool:
        """Does ``device_type`` have a kernel for ``node``: once per op, attr signature
        (``Node.op_signature``, which decides the answer) and device type."""
        sig = node.op_signature
        key = None if sig is None else (node.op, sig, device_type)
        if key is not None:
            hit = memo.get(key)
            if hit is not None:
                return hit
        info = get_opdb().op(node.op)
        if info is None:
            found = True
        else:
            try:
                found = bool(info.supported_device_types(node.attrs, [device_type], sig))
            except ValueError:
                found = True
        if key is not None:
            memo[key] = found
        return found


RULE = SoftPlacedFunctionDevice
