"""The cross-device transfers per device pair, as text reports print them (``place`` and
the text report of ``check``)."""

from __future__ import annotations

from ..analyses.transfers import PairSummary, Transfer, summarize
from ..humanize import format_bytes


def pair_label(pair: PairSummary) -> str:
    """``CPU:0 -> GPU:0`` (the devices' display names); ``GPU:0 host memory <-> device``
    for the copies within one device between its host and device memory (an argument a
    kernel keeps in host memory: graph_partition.cc NeedSameDeviceSendRecv)."""
    if pair.src_device == pair.dst_device:
        return f"{pair.src_device.display} host memory <-> device"
    return f"{pair.src_device.display} -> {pair.dst_device.display}"


def pair_size(pair: PairSummary) -> str:
    """The pair's known bytes per step, and how many transfers are of unknown size."""
    if pair.unknown == pair.count:
        return "unknown size"
    return format_bytes(pair.bytes) + (f" + {pair.unknown} of unknown size" if pair.unknown else "")


def pair_lines(pairs: list[PairSummary], head: str = "") -> list[str]:
    """``transfers per step (device pair: count, bytes):`` and one line per pair."""
    if not pairs:
        return [f"{head}transfers: none (every edge stays on one device)"]
    return [f"{head}transfers per step (device pair: count, bytes):"] + [
        f"  {pair_label(s)}: {s.count}, {pair_size(s)}" + (" (network)" if s.network else "")
        for s in pairs]


def summary_lines(transfers: list[Transfer]) -> list[str]:
    """The per-device-pair summary that ends ``place`` text output."""
    return pair_lines(summarize(transfers))
