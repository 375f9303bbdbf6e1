"""PL401 device-memory-exceeded: a device's variables plus the step's peak exceed its budget."""

from ..diagnostics import Severity
from .base import Rule
from .memory_usage import FIX, usages


class DeviceMemoryExceeded(Rule):
    code = "PL401"
    name = "device-memory-exceeded"
    severity = Severity.ERROR
    summary = "A device's resident bytes plus the step's peak exceed its memory budget."

    def check(self, ctx):
        for u in usages(ctx):
            if u.memory.total_bytes > u.budget:
                owners = [o.name for o in u.memory.largest]
                yield self.diag(f"{u.text()} The step would fail with TensorFlow's "
                                f"ResourceExhaustedError ('OOM when allocating tensor').",
                                fix=FIX, node=owners[0] if owners else None, related=owners[1:])


RULE = DeviceMemoryExceeded
