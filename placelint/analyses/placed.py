"""Each node's placed device in graph order, read without a look-up per node when it can.

Transfers, parallelism and PL108 turn the placement (``PlacementResult.device``: node name
-> device) into a device per node position. The placer's result is a ``DeviceOf``, one
device code per graph position: those codes are the answer. A plain dict (a caller's own
placement) whose keys are the names, in order, gives its values; otherwise each name is
looked up, a dict probe per node that at 10^6 nodes misses the cache (tf1_train 10^6:
0.26 s of the transfers phase, 24 times its 10^5 cost)."""

from __future__ import annotations

from operator import is_
from typing import Collection, Mapping

import numpy as np

from ..model.graph import Graph
from .placer_events import device_codes


def placed_devices(names: Collection[str], device: Mapping[str, object],
                   graph: Graph | None = None) -> list:
    """``device.get(name)`` for each of ``names`` (an ordered collection: the graph's
    ``nodes`` or its positions dict), in their order. ``graph``: the graph ``names`` are
    the nodes of (a ``DeviceOf`` of that graph then gives its codes by position)."""
    known = None if graph is None else device_codes(device, graph)
    if known is not None:
        return np.array(known[1], dtype=object)[known[0]].tolist()
    return _looked_up(names, device)


def placed_codes(graph: Graph, device: Mapping[str, object]) -> tuple[np.ndarray, list]:
    """Each node's device, by graph position, as an index (int) into the returned devices
    (None: unplaced): a ``DeviceOf``'s own codes, else the devices looked up and numbered
    in the order of their first node."""
    known = device_codes(device, graph)
    if known is not None:
        return known
    devs = _looked_up(graph.nodes, device)
    table = list(dict.fromkeys(devs))
    code = {d: k for k, d in enumerate(table)}
    return np.fromiter(map(code.__getitem__, devs), dtype=np.int64, count=len(devs)), table


def _looked_up(names: Collection[str], device: Mapping[str, object]) -> list:
    if len(device) == len(names) and all(map(is_, device, names)):
        return list(device.values())
    return list(map(device.get, names))
