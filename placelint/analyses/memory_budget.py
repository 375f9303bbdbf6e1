"""Memory budgets per device: ``--memory GPU=16GiB,CPU=64GiB`` and ``--gpu-memory-fraction``.

A budget names a device type (``GPU``) or a device (``GPU:1``, ``/job:worker/task:0/device:GPU:0``);
a device takes the budget of its most specific match (full name, then ``TYPE:ID``, then
type). ``gpu_options.per_process_gpu_memory_fraction`` makes TensorFlow's GPU allocator take
that fraction of each GPU's memory (gpu_device.cc ``MinSystemMemory``/``total_memory *
fraction``), so with a fraction a GPU's budget is the fraction of its memory.
``allow_growth`` only changes when the allocator reserves memory, never how much exists: it
has no option here.
"""

from __future__ import annotations

from ..humanize import parse_size, size_setting
from ..model.devices import DeviceName


class BudgetError(ValueError):
    """A budget text or value that cannot be used; the message says why."""


def parse_budget(text: str) -> dict[str, int]:
    """``GPU=16GiB,CPU=64GiB`` (or ``GPU:1=8G``) -> ``{"GPU": 17179869184, ...}``."""
    out: dict[str, int] = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        device, eq, size = item.rpartition("=")
        if not eq or not device.strip():
            raise BudgetError(f"{item!r} is not DEVICE=SIZE (e.g. GPU=16GiB, GPU:1=8GiB)")
        try:
            out[device.strip()] = budget_size(size.strip())
        except BudgetError as exc:
            raise BudgetError(f"{item!r}: {exc}") from None
    if not out:
        raise BudgetError("no budget given (e.g. GPU=16GiB,CPU=64GiB)")
    return out


def budget_size(value) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        try:
            n = parse_size(value)
        except ValueError as exc:
            raise BudgetError(str(exc)) from None
        if n > 0:
            return n
    raise BudgetError(f"{value!r} is not a positive size (e.g. 16GiB, 512M)")


def check_fraction(value) -> float:
    """``per_process_gpu_memory_fraction``: a number in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise BudgetError(f"must be a number in (0, 1], not {value!r}")
    return float(value)


def budget_for(device: str, memory: dict[str, int], gpu_fraction: float | None
               ) -> tuple[int, str] | None:
    """(bytes, how it was set) for ``device``, or None when no budget names it."""
    name = DeviceName.of(device)
    keys = (str(name), name.display, name.local_name, name.type or "")
    for key in keys:
        if key in memory:
            total = memory[key]
            how = f"{key}={size_setting(total)}"
            if gpu_fraction is not None and name.type == "GPU":
                return int(total * gpu_fraction), f"{how} x gpu-memory-fraction {gpu_fraction:g}"
            return total, how
    return None


def device_objects(report, settings) -> dict[str, dict]:
    """Full device name -> the device's memory as JSON (``DeviceMemory.to_json``) with
    ``budget_bytes`` and ``budget`` (how it was set), both None when no budget names it."""
    out = {}
    for name, d in sorted(report.devices.items()):
        obj = d.to_json()
        found = budget_for(name, settings.memory, settings.gpu_memory_fraction)
        obj["budget_bytes"], obj["budget"] = found if found is not None else (None, None)
        out[name] = obj
    return out


def analysed_device_objects(ctx) -> dict[str, dict] | None:
    """``device_objects`` of an analysis context's memory report; None when TensorFlow
    would refuse the placement (there is no step to measure)."""
    if ctx.placement.errors:
        return None
    return device_objects(ctx.memory, ctx.settings)
