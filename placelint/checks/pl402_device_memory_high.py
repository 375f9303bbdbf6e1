"""PL402 device-memory-high: a device's need is above the configured share of its budget."""

from ..diagnostics import Severity
from .base import Rule
from .memory_usage import FIX, usages


class DeviceMemoryHigh(Rule):
    code = "PL402"
    name = "device-memory-high"
    severity = Severity.WARNING
    summary = "A device's resident bytes plus the step's peak are above memory-high-share of its budget."

    def check(self, ctx):
        share = ctx.settings.memory_high_share
        for u in usages(ctx):
            if share * u.budget < u.memory.total_bytes <= u.budget:
                owners = [o.name for o in u.memory.largest]
                yield self.diag(f"{u.share:.0%} of the budget (memory-high-share {share:g}): "
                                f"{u.text()}",
                                fix=FIX, node=owners[0] if owners else None, related=owners[1:])


RULE = DeviceMemoryHigh
