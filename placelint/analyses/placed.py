"""Each node's placed device in graph order, read without a look-up per node when it can.

Transfers, parallelism and PL108 turn the placement (``PlacementResult.device``: node name
-> device) into a device per node position. The placer's result is a ``DeviceOf``, one
device code per graph position: the list is those codes' names. A plain dict (a caller's
own placement) whose keys are the names, in order, gives its values; otherwise each name
is looked up, a dict probe per node that at 10^6 nodes misses the cache (tf1_train 10^6:
0.26 s of the transfers phase, 24 times its 10^5 cost)."""

from __future__ import annotations

from operator import is_
from typing import Collection, Mapping

import numpy as np

from ..model.graph import Graph


def placed_devices(names: Collection[str], device: Mapping[str, object],
                   graph: Graph | None = None) -> list:
    """``device.get(name)`` for each of ``names`` (an ordered collection: the graph's
    ``nodes`` or its positions dict), in their order. ``graph``: the graph ``names`` are
    the nodes of (a ``DeviceOf`` of that graph then gives its codes by position)."""
    codes = getattr(device, "codes", None)      # (a ``DeviceOf``: its codes by position)
    known = None if codes is None or graph is None else codes(graph.positions())
    if known is not None and len(known[0]) == len(names):
        return np.array(known[1], dtype=object)[known[0]].tolist()
    if len(device) == len(names) and all(map(is_, device, names)):
        return list(device.values())
    return list(map(device.get, names))
