"""What the predicted Placer reports: its events (errors TF would raise, requests TF
silently ignores) and the placement result the analyses and rules read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from itertools import islice
from operator import attrgetter

import numpy as np

from ..data import load_json
from ..model.devices import DeviceSet


class PlacerEventKind(StrEnum):
    """What a ``PlacerEvent`` is about; the placement rules pick theirs by kind."""

    # errors: TF's placer fails
    UNKNOWN_DEVICE = "unknown-device"
    NO_KERNEL = "no-kernel-for-device"
    COLOCATION = "colocation-conflict"
    MALFORMED = "malformed-device"
    # events: TF places the node, silently differently from what the graph asks
    OVERRIDDEN_DEVICE_REQUEST = "overridden-device-request"
    IGNORED_COLOCATION = "ignored-colocation"



@lru_cache(maxsize=1)
def placer_facts() -> dict:
    return load_json("placer_facts.json", format=None)


@dataclass
class PlacerEvent:
    """Something the Placer would fail on (``error``) or silently do (warning-worthy)."""

    kind: PlacerEventKind
    node: str                  #: the node TF names
    message: str               #: TF's wording
    related: list[str] = field(default_factory=list)
    requested: str = ""        #: the device the node asked for
    detail: dict = field(default_factory=dict)


class GroupOf(Mapping):
    """node -> its group's root node, for the nodes in a group of several, in processing
    order: a view over the union-find's roots. Rules ask it about a few nodes (variables,
    failed nodes); a dict of every grouped node (most nodes of a training graph) is made
    only when the view is iterated. ``nodes``: the nodes in processing order (``index``
    their positions); ``roots`` (int64) and ``grouped`` (bool): arrays by position."""

    def __init__(self, nodes: list, index: dict[str, int], roots: np.ndarray,
                 grouped: np.ndarray):
        self._nodes, self._index, self._roots, self._grouped = nodes, index, roots, grouped
        self._dict: dict[str, str] | None = None

    def __getitem__(self, node: str) -> str:
        i = self._index[node]
        if not self._grouped[i]:
            raise KeyError(node)
        return self._nodes[self._roots[i]].name

    def get(self, node, default=None):
        i = self._index.get(node)
        if i is None or not self._grouped[i]:
            return default
        return self._nodes[self._roots[i]].name

    def __contains__(self, node) -> bool:
        i = self._index.get(node)
        return i is not None and self._grouped[i]

    def _as_dict(self) -> dict[str, str]:
        if self._dict is None:
            nodes = self._nodes
            at = np.flatnonzero(self._grouped)
            self._dict = {nodes[i].name: nodes[r].name
                          for i, r in zip(at.tolist(), self._roots[at].tolist())}
        return self._dict

    def __iter__(self) -> Iterator[str]:
        return iter(self._as_dict())

    def __len__(self) -> int:
        return len(self._as_dict())

    def items(self):
        return self._as_dict().items()


class DeviceOf(Mapping):
    """node -> the full name of the device it is placed on (None: unplaced), in processing
    order: a view over one device code per node. Rules ask it about some nodes, transfers
    and parallelism read the codes themselves (``codes``); a dict of every node cost
    0.4 s at 10^6 nodes, 25 times its cost at 10^5 (the table outgrows the caches).
    ``graph``: the placed graph; ``order``: its nodes in processing order; ``codes``: per
    graph position, an index into ``table`` (the device names, None for unplaced);
    ``order_codes``: the same per processing position (``codes`` when processing order is
    graph order). ``extra``: names not in the graph -> device (a step's fed tensors,
    ``with_step``), after the graph's nodes."""

    def __init__(self, graph, order: list, codes: np.ndarray, table: list,
                 order_codes: np.ndarray, extra: dict | None = None, step=None):
        self._graph, self._order, self._codes, self._table = graph, order, codes, table
        self._order_codes, self._extra, self._step = order_codes, extra or {}, step
        self._index = graph.positions()
        self._devs: list | None = None      # each graph position's device, at the first look-up

    def _by_position(self) -> list:
        if self._devs is None:
            self._devs = np.array(self._table, dtype=object)[self._codes].tolist()
        return self._devs

    def __getitem__(self, node: str):
        i = self._index.get(node)
        if i is None:
            return self._extra[node]
        devs = self._devs
        return (devs if devs is not None else self._by_position())[i]

    def get(self, node, default=None):
        # (rules call it per node: PL108 on every soft-placed node, PL203 along its walks)
        i = self._index.get(node)
        if i is None:
            return self._extra.get(node, default)
        devs = self._devs
        return (devs if devs is not None else self._by_position())[i]

    def __contains__(self, node) -> bool:
        return node in self._index or node in self._extra

    def __iter__(self) -> Iterator[str]:
        yield from map(_NAME, self._order)
        yield from self._extra

    def __len__(self) -> int:
        return len(self._order) + len(self._extra)

    def values(self) -> list:
        """The devices in iteration order (a list)."""
        return np.array(self._table, dtype=object)[self._order_codes].tolist() + list(
            self._extra.values())

    def items(self) -> list:
        return list(zip(self, self.values()))

    def codes(self, graph) -> tuple[np.ndarray, list] | None:
        """The device of each node of ``graph`` as an index into the returned device names
        (None for unplaced), by position; None when this placement does not know that
        graph by position (the caller then looks names up). The graph is recognised by
        identity: its positions dict need not exist (a step's graph does not build it)."""
        if graph is self._graph and len(graph.nodes) == len(self._codes):
            return self._codes, self._table
        step = self._step
        if (step is not None and step.kept is not None and graph is step.graph
                and len(step.feeds) + len(step.kept) == len(graph.nodes)):
            # (else a kept node took an _Arg's name and place: the names are looked up)
            # the step's graph: its fed tensors' _Args, then the kept nodes in graph order
            args = islice(step.graph.nodes, len(step.feeds))
            table = list(self._table)
            slot = {}
            arg_codes = []
            for name in args:
                i = self._index.get(name)
                if i is not None:
                    arg_codes.append(int(self._codes[i]))
                    continue
                device = self._extra.get(name)
                if device not in slot:
                    slot[device] = len(table)
                    table.append(device)
                arg_codes.append(slot[device])
            return (np.concatenate((np.array(arg_codes, dtype=self._codes.dtype),
                                    self._codes[step.kept])), table)
        return None

    def with_step(self, extra: dict, step) -> "DeviceOf":
        """This placement with ``extra`` names (the step's fed tensors) added, which also
        knows ``step``'s graph by position (``codes``)."""
        return DeviceOf(self._graph, self._order, self._codes, self._table, self._order_codes,
                        {**self._extra, **extra}, step)


_NAME = attrgetter("name")


def device_codes(device, graph) -> tuple[np.ndarray, list] | None:
    """``DeviceOf.codes(graph)`` of a placement's ``device`` (None for a plain dict)."""
    codes = getattr(device, "codes", None)
    return None if codes is None else codes(graph)


@dataclass
class PlacementResult:
    devices: DeviceSet
    allow_soft_placement: bool
    #: node -> full device name, None if unplaced (a ``DeviceOf`` view once placed)
    device: Mapping[str, str | None]
    errors: list[PlacerEvent] = field(default_factory=list)
    #: requests TF silently ignores (ref/resource edge overrides, ignored _class under soft
    #: placement, soft-placement moves)
    events: list[PlacerEvent] = field(default_factory=list)
    unknown_ops: dict[str, list[str]] = field(default_factory=dict)   #: op -> nodes
    #: node -> its group's root node, for the nodes in a group of several (a node alone
    #: is its own root: ``group_of.get(node, node)``); a ``GroupOf`` view once placed
    group_of: Mapping[str, str] = field(default_factory=dict)
    #: group root -> its nodes, made at the first ``members`` call (after placement)
    _by_root: dict[str, list[str]] | None = field(default=None, init=False, repr=False,
                                                  compare=False)
    #: the colocation graph before assignment, for a soft placement of the same graph to
    #: start from (``placer.place(..., like=)``); None when a union failed
    _colocation: object = field(default=None, init=False, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.errors

    def members(self, node: str) -> list[str]:
        """The nodes of ``node``'s colocation group, in processing order."""
        root = self.group_of.get(node, node)
        if self._by_root is None:
            by_root: dict[str, list[str]] = {}
            for n, r in self.group_of.items():
                by_root.setdefault(r, []).append(n)
            self._by_root = by_root
        found = self._by_root.get(root)
        if found is None:
            return [node] if node in self.device else []
        return list(found)


