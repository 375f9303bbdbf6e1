"""What the memory rules (PL401, PL402) share: each device's need against its budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analyses.memory_budget import budget_for
from ..humanize import format_bytes

if TYPE_CHECKING:   # the analysis itself runs only with a budget (--memory)
    from ..analyses.memory import DeviceMemory

#: The fix both rules give.
FIX = ("move variables to another device (tf.device), split the model over devices, or "
       "reduce the batch size; allow_growth does not create memory, it only reserves it later.")


@dataclass
class Usage:
    memory: DeviceMemory
    budget: int
    how: str                    #: how the budget was set (``GPU=4GiB``)

    @property
    def share(self) -> float:
        return self.memory.total_bytes / self.budget

    def text(self) -> str:
        m = self.memory
        unknown = (f"; at least: {len(m.unknown_ops)} op(s) of unknown size not counted"
                   if m.unknown_ops else "")
        largest = ", ".join(f"{o.name} ({o.kind}, {format_bytes(o.bytes)})" for o in m.largest)
        return (f"{m.device.display} needs {format_bytes(m.total_bytes)} ({format_bytes(m.resident_bytes)} "
                f"resident: variables and constants; {format_bytes(m.peak_bytes)} peak of one step) "
                f"of its {format_bytes(self.budget)} budget ({self.how}){unknown}. "
                f"Largest: {largest or 'none'}.")


def usages(ctx):
    """Every device of the memory report that has a budget."""
    s = ctx.settings
    if not s.memory:
        return
    for name, memory in sorted(ctx.memory.devices.items()):
        found = budget_for(name, s.memory, s.gpu_memory_fraction)
        if found is not None and memory.total_bytes:
            yield Usage(memory, *found)
