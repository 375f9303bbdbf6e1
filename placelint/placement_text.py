"""Wording shared by placement messages."""

from __future__ import annotations


def available_devices_text(devices) -> str:
    return ", ".join(sorted(devices.names))
