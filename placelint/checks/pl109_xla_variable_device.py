"""PL109 xla-variable-device: a function compiled by XLA reads a variable on another device.

Grouping: one finding per compiled call and device its resources live on: the call in
``node``, the variables (the ops that made the handles) in ``related_nodes``.
"""

from ..diagnostics import Severity
from ..humanize import list_names
from ..model.devices import display
from .base import Rule
from .common import Groups


class XlaVariableDevice(Rule):
    code = "PL109"
    name = "xla-variable-device"
    severity = Severity.ERROR
    summary = ("A function compiled by XLA (jit_compile=True) reads a variable that lives on "
               "another device: XLA refuses it, and the step fails.")

    def check(self, ctx):
        groups = Groups()
        for f in ctx.foreign_resources:
            groups.add((f.call, f.call_device, f.device), f.origin, f)
        graph = ctx.step.graph
        for (call, call_device, home), origins, items in groups:
            node = graph.nodes[call]
            function = node.attrs["f"].func.name if "f" in node.attrs else ""
            names = list(dict.fromkeys(f.name for f in items))
            kind = "variable" if all(f.variable for f in items) else "resource"
            if len(names) == 1:
                what, lives = f"{kind} '{names[0]}'", "lives"
            else:
                what, lives = f"{len(names)} {kind}s ({list_names(names)})", "live"
            yield self.diag(
                f"function '{function}' is compiled by XLA (jit_compile=True) and runs on "
                f"{display(call_device)}, but reads {what} that {lives} on {display(home)}: "
                "XLA refuses a resource from another device, and the step fails",
                node=call, related=origins,
                detail="; ".join(f.tf_message for f in items) + " (Cf. "
                       "https://www.tensorflow.org/xla/known_issues"
                       "#tfvariable_on_a_different_device)",
                fix="create the variables under the same tf.device as the call of the "
                    "jit_compile function (or call it where the variables live), or drop "
                    "jit_compile=True for this function.")


RULE = XlaVariableDevice
