"""The data a diagram is made of: what ``build_view`` takes (``ViewInputs``, ``ViewOptions``)
and what it produces (``View``: units, edges, clusters, devices), shared by the phases
of ``render/view.py`` and by ``render/dot.py``.

Cross-device copies are the transfers analysis' own ``Transfer`` objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analyses.transfers import Transfer
from ..model.graph import Graph

SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}

#: A copy's identity (graph_partition.cc's DupRecvKey without the host flag).
CopyKey = tuple[str, int, str, str]


def copy_key(t: Transfer) -> CopyKey:
    return (t.src, -1 if t.control else t.src_slot, t.src_device, t.dst_device)


class ViewError(ValueError):
    """A --focus or --expand name that the graph does not have (message says which)."""


@dataclass(frozen=True)
class ViewOptions:
    max_nodes: int = 100             #: most units (ops + collapsed scopes) to draw
    expand: tuple[str, ...] = ()     #: scopes to open whatever the budget
    focus: tuple[str, ...] = ()      #: draw only the neighbourhood of these nodes
    radius: int = 2                  #: hops around the focus nodes
    show_cheap: bool = False         #: draw constants, shapes and pass-through nodes too
    hub_degree: int = 40             #: more distinct neighbours than this -> hub; 0 = never
    width_px: int | None = None      #: scale the drawing down to at most this many pixels


@dataclass(frozen=True)
class Finding:
    severity: str     #: error / warning / info
    code: str
    rule: str
    message: str
    cause: str = ""   #: a few words for the visible label ("wants CPU:1")

    @property
    def label(self) -> str:
        return f"{self.code}: {self.cause}" if self.cause else self.code


@dataclass
class DiffMarks:
    """What changed since an older version (``graph --diff``)."""

    old: str                                   #: the older version, as the user named it
    moved: dict[str, str | None] = field(default_factory=dict)   #: node -> old device
    added: set[str] = field(default_factory=set)                 #: nodes new in this version
    removed: int = 0                           #: nodes only the old version had
    new_copies: set[CopyKey] = field(default_factory=set)        #: copies the old one lacked
    ghost_copies: list[Transfer] = field(default_factory=list)   #: copies only the old one had


@dataclass
class ViewInputs:
    """Everything the view needs, gathered from one analysed model."""

    graph: Graph
    device: dict[str, str | None]              #: node -> full device name (None: unplaced)
    devices: list[str]                         #: the target's devices, full names
    copies: list[Transfer] = field(default_factory=list)
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    intra_op: set[str] = field(default_factory=set)          #: nodes that split (by name)
    intra_op_types: set[str] = field(default_factory=set)    #: op types that split
    antichain: set[str] = field(default_factory=set)         #: one node per widest branch
    width: int | None = None                   #: inter-op width (widest antichain)
    title: str = ""
    subtitle: str = ""
    caption: list[str] = field(default_factory=list)         #: lines under the title
    notes: list[str] = field(default_factory=list)
    diff: DiffMarks | None = None
    #: full device name -> its memory and budget (``analyses.memory_budget.device_objects``)
    memory: dict[str, dict] | None = None


@dataclass
class Unit:
    """One drawn box: an op, a collapsed scope (or chunk of one), or a hub."""

    key: str
    kind: str                                  #: op | scope | hub
    name: str                                  #: TF node name, or scope path
    label_name: str                            #: name relative to the enclosing cluster
    parent: str                                #: enclosing drawn cluster path ('' = top)
    op: str = ""                               #: op type (op, hub)
    members: int = 1                           #: drawn graph nodes it stands for
    devices: tuple[tuple[str | None, int], ...] = ()   #: device -> member count
    ops: tuple[tuple[str, int], ...] = ()      #: op histogram (scopes)
    findings: tuple[tuple[str, Finding], ...] = ()     #: (node, finding)
    location: str | None = None                #: Python file:line that created the op
    requested: str = ""                        #: requested device (ops)
    intra_op: int = 0                          #: members that split over the intra-op pool
    branches: int = 0                          #: members on the widest set of parallel branches
    focus: bool = False
    expand_hint: str = ""                      #: scopes: the real scope --expand opens
    hidden: int = 0                            #: hidden cheap/pass-through members (scopes)
    hub_links: tuple[str, ...] = ()            #: hubs this unit's members connect to
    degree: int = 0                            #: hubs: neighbours whose edges are not drawn
    internal_copies: tuple[Transfer, ...] = ()  #: copies between members (scopes)
    hub_copies: tuple[Transfer, ...] = ()      #: hubs: copies to or from the hub
    outside: int = 0                           #: focus: neighbours beyond the radius
    moved_from: tuple[str | None, ...] = ()    #: diff: old devices of moved members
    moved: int = 0                             #: diff: members whose device changed
    added: int = 0                             #: diff: members new in this version

    @property
    def severity(self) -> str | None:
        if not self.findings:
            return None
        return max((f.severity for _, f in self.findings), key=lambda s: SEVERITY_RANK.get(s, 0))

    @property
    def device(self) -> str | None:
        """The single device of all members, or None (unplaced or mixed)."""
        return self.devices[0][0] if len(self.devices) == 1 else None


@dataclass
class ViewEdge:
    src: str                                   #: unit key
    dst: str
    data: int = 0                              #: graph data edges merged into this one
    control: int = 0                           #: graph control edges merged into this one
    copies: tuple[Transfer, ...] = ()          #: cross-device copies it carries
    tensors: tuple[str, ...] = ()              #: a few of the tensors, for the tooltip
    new_copies: int = 0                        #: diff: copies the old version did not have
    ghost: bool = False                        #: diff: copies only the old version had

    @property
    def cross(self) -> bool:
        return bool(self.copies)

    @property
    def control_only(self) -> bool:
        return self.data == 0


@dataclass
class Cluster:
    path: str                                  #: scope path
    parent: str                                #: enclosing drawn cluster ('' = top)
    label: str                                 #: path relative to the parent cluster
    members: int


@dataclass
class DeviceInfo:
    name: str                                  #: full device name
    short: str                                 #: what the legend and labels show
    nodes: int                                 #: graph nodes placed there
    #: its memory (``analyses.memory_budget.device_objects``), None when not analysed
    memory: dict | None = None


@dataclass
class View:
    title: str
    subtitle: str
    units: list[Unit]
    edges: list[ViewEdge]
    clusters: list[Cluster]                    #: parents before children
    devices: list[DeviceInfo]
    unplaced: int
    short: dict[str, str]                      #: full device name -> short name
    copies: int = 0                            #: copies in the whole graph
    copy_bytes: int = 0                        #: their known bytes per step
    copies_unknown: int = 0                    #: copies whose size is unknown
    total_nodes: int = 0
    drawn_nodes: int = 0                       #: graph nodes drawn or inside drawn scopes
    cheap: int = 0
    passthrough: int = 0
    outside_focus: int = 0
    collapsed: int = 0                         #: collapsed scope units
    width: int | None = None
    branch_count: int = 0
    intra_op_count: int = 0
    options: ViewOptions = field(default_factory=ViewOptions)
    notes: list[str] = field(default_factory=list)
    caption: list[str] = field(default_factory=list)
    diff: DiffMarks | None = None

    @property
    def hubs(self) -> list[Unit]:
        return [u for u in self.units if u.kind == "hub"]
