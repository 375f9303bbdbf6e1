"""PL201 cross-device-copy: a tensor copied between devices every step.

Grouping: one finding per (source device, destination device, memory, outermost name scope
of the producer): a model-parallel network that copies hundreds of tensors between two
GPUs in one tower gets one finding per tower, with the copies' producers in ``nodes``, the
consumers in ``related_nodes`` and the bytes per step summed. Copies between the device
memory and the host memory of one device (host-memory arguments of a kernel) are grouped
apart from copies between devices. The finding is a warning when its bytes per step
reach the size threshold (``copy-warning-bytes``).
"""

from ..diagnostics import Severity, top_scope
from ..humanize import format_bytes, list_names, plural
from .base import Rule
from .common import Groups


def transfer_text(t) -> str:
    size = format_bytes(t.bytes) if t.bytes is not None else "unknown size"
    return f"{t.tensor} ({size}) for {list_names(t.consumers, 3)}"


def group_size(items) -> tuple[int | None, str]:
    """(bytes per step, text): the sum, or "unknown size" when a copy's size is unknown."""
    known = [t.bytes for t in items if t.bytes is not None]
    total = sum(known) if len(known) == len(items) else None
    if total is not None:
        return total, format_bytes(total)
    return (None, f"at least {format_bytes(sum(known))}" if known else "unknown size")


def memory_move(t) -> str | None:
    """For a copy within one device: which way it moves between device and host memory."""
    if t.src_device != t.dst_device:
        return None
    return "to host memory" if t.recv_on_host else "to device memory"


class CrossDeviceCopy(Rule):
    code = "PL201"
    name = "cross-device-copy"
    severity = Severity.INFO
    summary = ("A tensor that TensorFlow copies between devices (_Send/_Recv) every step; a "
               "warning at or above the size threshold.")
    per_step = True

    def check(self, ctx):
        s = ctx.settings
        groups = Groups()
        foreign = ctx.copies_for_foreign_resources()   # (PL109's: the step fails first)
        for t in ctx.transfers:
            if t.control:
                continue
            if foreign and t.consumers and all((t.src, t.src_slot, c) in foreign
                                               for c in t.consumers):
                continue
            if t.bytes is not None and t.bytes < s.copy_info_bytes:
                continue
            groups.add((t.src_device, t.dst_device, memory_move(t), top_scope(t.src), t.network,
                        t.fed), t.src, t)
        for (src, dst, move, scope, network, fed), nodes, items in groups:
            total, size = group_size(items)
            big = total is not None and total >= s.copy_warning_bytes
            n = plural(len(items), "tensor")
            if fed:
                n += " fed by the caller (from the client's device)"
            where = f" from scope {scope}" if scope else ""
            if move is None:
                over = " over the network" if network else ""
                message = (f"{n} copied{over} from {src.display} to {dst.display}{where} "
                           f"every step ({size})")
            else:
                message = (f"{n} moved {move} on {src.display}{where} every step ({size}): "
                           "kernels that take or give these arguments in host memory")
            consumers = list(dict.fromkeys(c for t in items for c in t.consumers))
            yield self.diag(
                message, nodes=nodes, related=consumers,
                severity=Severity.WARNING if big else Severity.INFO,
                detail="; ".join(transfer_text(t) for t in items[:10]) +
                       (f"; and {len(items) - 10} more" if len(items) > 10 else ""),
                fix="place the producers and their consumers on one device, or accept the copies."
                if move is None else "nothing to do unless the tensors are large: the kernel "
                "needs them in host memory (pick ops whose kernels keep them on the device).")


RULE = CrossDeviceCopy
