"""What the predicted Placer reports: its events (errors TF would raise, requests TF
silently ignores) and the placement result the analyses and rules read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

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


@dataclass
class PlacementResult:
    devices: DeviceSet
    allow_soft_placement: bool
    device: dict[str, str | None]                 #: node -> full device name, None if unplaced
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


