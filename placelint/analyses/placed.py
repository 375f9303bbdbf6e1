"""Each node's placed device in graph order, read without a look-up per node when it can.

Transfers, parallelism and PL108 turn the placement (``PlacementResult.device``: node name
-> device) into a device per node position. The placer writes that dict in processing
order with the graph's own name objects as keys; processing order is graph order for most
graphs, and then the dict's values are already the list wanted; otherwise they are that
list permuted by each node's processing position. Looking every name up instead costs a
dict probe per node, and at 10^6 nodes each probe misses the cache (tf1_train 10^6: 0.26 s
of the transfers phase, 24 times its 10^5 cost)."""

from __future__ import annotations

from operator import attrgetter, is_
from typing import Collection, Mapping

from ..model.graph import Graph
from .processing_order import ordered, processing_positions

_NAME = attrgetter("name")


def placed_devices(names: Collection[str], device: Mapping[str, object],
                   graph: Graph | None = None) -> list:
    """``device.get(name)`` for each of ``names`` (an ordered collection: the graph's
    ``nodes`` or its positions dict), in their order. ``graph``: the graph ``names`` are
    the nodes of, when it is the graph that was placed (its processing order is then known,
    and the dict may follow it)."""
    if len(device) == len(names):
        if all(map(is_, device, names)):
            return list(device.values())
        if graph is not None and all(map(is_, device, map(_NAME, ordered(graph)[0]))):
            at = processing_positions(graph)
            values = list(device.values())
            return values if at is None else list(map(values.__getitem__, at.tolist()))
    return list(map(device.get, names))
