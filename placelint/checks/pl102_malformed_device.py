"""PL102 malformed-device: a device string TensorFlow cannot parse."""

from ..diagnostics import Severity
from .base import Rule as _Rule


class MalformedDevice(_Rule):
    code = "PL102"
    name = "malformed-device"
    severity = Severity.ERROR
    summary = "A node's device string is not a valid TensorFlow device specification."

    def check(self, ctx):
        for node in ctx.graph:
            if node.spec is None:
                yield self.diag(
                    f"Malformed device specification '{node.device}' in node '{node.name}' "
                    f"({node.op}). Use a name such as '/device:GPU:0', '/cpu:0' or "
                    "'/job:worker/task:1/device:CPU:0'.",
                    node=node.name)


RULE = MalformedDevice
