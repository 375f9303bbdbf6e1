"""PL108 soft-placed-function-device: a device request in a function body TF will move."""

from ..diagnostics import Severity
from .base import Rule
from ..model.devices import display
from .common import Groups, in_tf_order


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
        placed_on = ctx.placement.device
        matching: dict = {}
        groups = Groups()   # one finding per function, request and device TF picks
        for node in ctx.placement_graph:
            if not node.soft:
                continue
            spec = node.spec
            if spec is None or spec.is_empty:
                continue
            placed = placed_on.get(node.name)
            if placed is None:
                continue
            names = matching.get(spec)
            if names is None:
                names = matching[spec] = {d.name for d in devices.matching(spec)}
            if placed in names:
                continue
            if names:
                # the device exists: moved only if it has no kernel for the node (else a
                # resource or colocation edge moved it, which is not soft placement's doing)
                if spec.type is None or self._has_kernel(node, spec.type):
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
    def _has_kernel(node, device_type: str) -> bool:
        from ..opdb import get_opdb
        info = get_opdb().op(node.op)
        if info is None:
            return True
        try:
            return bool(info.supported_device_types(node.attrs, [device_type]))
        except ValueError:
            return True


RULE = SoftPlacedFunctionDevice
