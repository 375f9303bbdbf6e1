"""The cross-device transfers TensorFlow's graph partitioner will insert.

Follows ``tensorflow/core/graph/graph_partition.cc`` (``Partition``): for every edge whose
two ends are on different devices (and, on non-CPU devices, every same-device data edge
whose memory types differ: ``NeedSameDeviceSendRecv``) the partitioner adds a
``_Send``/``_Recv`` pair, reused for every edge with the same
``DupRecvKey{src node, src slot, dst device, recv-on-host}``. A control edge becomes a
dummy float ``Const`` of shape {0} sent over. ``_HostSend``/``_HostRecv`` are used when the
tensor lives in host memory.

Before partitioning, ``ReplicateConstantsPass`` (replicate_constants_pass.cc, a
POST_REWRITE_FOR_EXEC pass) copies small CPU constants (at most 16 elements, several
consumers, no control successors) to each consumer's CPU device, so those edges need no
transfer; consumers on an accelerator read the copy on their host's ``CPU:0``.

Not modelled: the extra control-loop machinery ``AddControlFlow`` adds for TF1 while
loops that span devices (its own small transfers per iteration); the data transfers of
such loops are listed and marked ``in_loop``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from ..dtypes import DT_FLOAT, base_type, dtype_name, is_ref
from ..model.devices import DeviceName
from ..model.edge_index import graph_edges
from ..model.graph import Graph
from ..model.op_index import op_index
from ..model.ops import CONSTANT, ENTER, EXIT, FUNCTION_IO
from ..opdb import get_opdb
from .placed import placed_codes

HOST_TO_DEVICE = "host->device"
DEVICE_TO_HOST = "device->host"
DEVICE_TO_DEVICE = "device->device"
HOST_TO_HOST = "host->host"

_LOOP = attrgetter("loop")


@dataclass
class Transfer:
    src: str
    src_slot: int                 #: -1 for a control edge
    src_device: DeviceName
    dst_device: DeviceName
    consumers: list[str] = field(default_factory=list)
    dtype: int | None = None
    bytes: int | None = None      #: per step (per iteration inside a loop); None if unknown
    control: bool = False
    in_loop: bool = False
    loop: str = ""                #: the while frame (TF1) or While node (TF2) it sits in
    recv_on_host: bool = False
    phase: str = "graph"          #: the phase whose step copies it (``step`` or ``graph``)
    fed: bool = False             #: a fed tensor, sent from the client's device

    def __post_init__(self):
        if self.src_device.__class__ is not DeviceName:
            self.src_device = DeviceName.of(self.src_device)
        if self.dst_device.__class__ is not DeviceName:
            self.dst_device = DeviceName.of(self.dst_device)

    @property
    def network(self) -> bool:
        """Between two tasks (processes): graph_partition.cc gives each device its own
        partition, and a _Send/_Recv pair across tasks goes over the cluster's RPC
        transport (gRPC) rather than a local memory copy."""
        return _across_tasks(self.src_device, self.dst_device)

    @property
    def tensor(self) -> str:
        return f"^{self.src}" if self.control else f"{self.src}:{self.src_slot}"

    @property
    def direction(self) -> str:
        src_host = self.src_device.type == "CPU"
        dst_host = self.dst_device.type == "CPU"
        if src_host and dst_host:
            return HOST_TO_HOST
        if src_host:
            return HOST_TO_DEVICE
        if dst_host:
            return DEVICE_TO_HOST
        return DEVICE_TO_DEVICE

    def to_json(self) -> dict:
        return {
            "tensor": self.tensor,
            "from": str(self.src_device),
            "to": str(self.dst_device),
            "consumers": list(self.consumers),
            "dtype": None if self.dtype is None else dtype_name(self.dtype),
            "bytes": self.bytes,
            "control": self.control,
            "in_loop": self.in_loop,
            "direction": self.direction,
            "phase": self.phase,
            "fed": self.fed,
            "network": self.network,
        }




@lru_cache(maxsize=None)
def _across_tasks(src: DeviceName, dst: DeviceName) -> bool:
    """``Transfer.network``, once per pair of devices (the rules ask it of every transfer)."""
    return not src.same_task(dst)


def loop_frames(graph: Graph) -> dict[str, str]:
    """Node -> while-loop frame it runs in (every iteration), '' if none.

    TF1 loops as ``BuildControlFlowInfo`` (graph/control_flow.cc) computes them: a walk from
    the nodes without inputs in which an ``Enter`` opens the frame named by its
    ``frame_name`` and the successors of an ``Exit`` are back in the parent frame (the
    ``Exit`` itself still belongs to the loop; see :func:`output_frames`). Functional While:
    ``Node.loop`` (set by the builder).
    """
    return _frames(graph)[0]


def output_frames(graph: Graph) -> dict[str, str]:
    """Node -> frame its outputs (and a _Send fed by it) live in: the node's frame, except
    for ``Exit``, whose outputs leave the loop for the parent frame once, after the last
    iteration."""
    frames, parents = _frames(graph)
    out = dict(frames)
    for name, frame in frames.items():
        if frame and graph.nodes[name].op in EXIT and not graph.nodes[name].loop:
            out[name] = parents.get(frame, "")
    return {k: v for k, v in out.items() if v}


def _frames(graph: Graph) -> tuple[dict[str, str], dict[str, str]]:
    """(node -> frame, frame -> parent frame); '' is the root frame."""
    nodes = graph.nodes
    frames: dict[str, str] = {}
    parents: dict[str, str] = {}
    if not op_index(graph).any_of(ENTER):
        # No TF1 loop: every frame is the root frame but a functional While body's. (The
        # walk below would visit every node to say so; the key order is the walk's: nodes
        # without inputs first.)
        if not any(map(_LOOP, nodes.values())):
            return frames, parents
        looped = [(name, node) for name, node in nodes.items() if node.loop]
        frames = {name: node.loop for name, node in looped if not node.in_edges}
        frames.update((name, node.loop) for name, node in looped if node.in_edges)
        return frames, parents
    ready = deque(name for name, node in nodes.items() if not node.in_edges)
    for name in ready:
        frames[name] = ""
    while ready:
        name = ready.popleft()
        node = nodes[name]
        frame = frames[name]
        if node.op in EXIT:       # "Exit to the parent frame."
            frame = parents.get(frame, "")
        for e in node.out_edges:
            if e.dst in frames:       # first visit decides (TF then checks consistency)
                continue
            dst = nodes[e.dst]
            if dst.op in ENTER:
                child = (dst.attrs["frame_name"].s.decode("utf-8", "replace")
                         if "frame_name" in dst.attrs else dst.name)
                frames[e.dst] = child
                parents.setdefault(child, frame)
            else:
                frames[e.dst] = frame
            ready.append(e.dst)
    for name, node in nodes.items():
        if node.loop:
            frames[name] = node.loop
    return {k: v for k, v in frames.items() if v}, parents


def _memory_info(graph: Graph, placement):
    """Host-memory inputs/outputs per node on its placed device type (``MemoryTypesForNode``)."""
    opdb = get_opdb()
    cache: dict[str, tuple[frozenset[int], frozenset[int]]] = {}

    def memory(name: str):
        if name not in cache:
            node = graph.nodes[name]
            device = placement.device.get(name)
            dtype = device.type if device is not None else ""
            info = opdb.op(node.op)
            result = (frozenset(), frozenset())
            if info is not None and dtype and dtype != "CPU":
                try:
                    result = info.memory_types(dtype, node.attrs)
                except (ValueError, KeyError):
                    pass
                if node.op in FUNCTION_IO:
                    # Inlined function arguments/results carry one tensor through: its
                    # input sits in the same memory as its output.
                    host = bool(result[0] or result[1])
                    result = (frozenset({0}) if host else frozenset(),
                              frozenset({0}) if host else frozenset())
            cache[name] = result
        return cache[name]

    return memory


#: ReplicateConstantsPass's kMaxSize: constants of at most this many elements are replicated.
REPLICATE_MAX_ELEMENTS = 16


def _host_cpu(device_name: DeviceName) -> DeviceName:
    """The CPU a replicated constant lands on for a consumer on ``device_name``
    (aggressive constant replication, on by default: a CPU consumer's own device, else
    ``CPU:0`` of the consumer's task)."""
    if device_name.type == "CPU":
        return device_name
    return device_name.on("CPU", 0)


class _Codes(NamedTuple):
    """Every node's device as a code over the graph's positions (0: unplaced), the devices
    by code (``names``), and per code its CPU-ness and the code of the CPU a replicated
    constant lands on for a consumer there (``host``)."""
    dev: np.ndarray
    names: list
    cpu: np.ndarray
    host: np.ndarray


def _device_codes(graph: Graph, placement) -> _Codes:
    # (codes: None, then the devices in graph order of their first node)
    dev, table = placed_codes(graph, placement.device)
    first = np.full(len(table), dev.size, dtype=np.int64)
    np.minimum.at(first, dev, np.arange(dev.size, dtype=np.int64))
    code = {None: 0}
    remap = np.zeros(len(table), dtype=np.int64)
    for k in np.argsort(first, kind="stable").tolist():
        if first[k] < dev.size:
            remap[k] = code.setdefault(table[k], len(code))
    dev = remap[dev]
    for d in list(code)[1:]:
        code.setdefault(_host_cpu(d), len(code))
    names = list(code)
    host = np.array([0] + [code[_host_cpu(d)] for d in names[1:]], dtype=np.int64)
    cpu = np.array([False] + [d.type == "CPU" for d in names[1:]], dtype=bool)
    return _Codes(dev, names, cpu, host)


def _replicated(graph: Graph, codes: _Codes) -> np.ndarray:
    """The positions of the constants ``ReplicateConstantsPass`` copies: on a CPU, at most
    ``REPLICATE_MAX_ELEMENTS`` elements, several out-edges, none a control edge, and
    consumers on more than one CPU (each consumer's host CPU)."""
    const = op_index(graph).mask(CONSTANT.__contains__)
    n = const.size
    const &= codes.cpu[codes.dev]
    ge = graph_edges(graph)
    src = ge.src
    out = (src >= 0) & const[np.maximum(src, 0)]
    if not out.any():
        return np.empty(0, dtype=np.int64)
    s, d, control = src[out], ge.dst[out], ge.src_slot[out] < 0
    const[s[control]] = False
    const &= np.bincount(s, minlength=n) > 1
    # consumers' host CPUs: distinct (constant, host) pairs of the placed consumers
    placed = const[s] & (codes.dev[d] > 0)
    pairs = _distinct(s[placed] * len(codes.names) + codes.host[codes.dev[d[placed]]])
    several = np.bincount(pairs // len(codes.names), minlength=n) > 1
    found = []
    nodes = list(graph.nodes.values())
    for i in np.flatnonzero(const & several).tolist():
        node = nodes[i]
        if "value" not in node.attrs:
            continue
        shape = node.attrs["value"].tensor.tensor_shape
        if shape.unknown_rank:
            continue
        elements = 1
        for dim in shape.dim:
            elements *= max(dim.size, 0)
        if elements <= REPLICATE_MAX_ELEMENTS:
            found.append(i)
    return np.array(found, dtype=np.int64)


def _distinct(values: np.ndarray) -> np.ndarray:
    """``values``' distinct elements, sorted: ``np.unique`` without its options imports
    numpy.ma (to ask whether the array is masked), ~10 ms of a fresh process's CPU."""
    values = np.sort(values)
    return values[np.concatenate(([True], values[1:] != values[:-1]))] if values.size else values


def find_transfers(graph: Graph, placement, shapes=None) -> list[Transfer]:
    """Every _Send/_Recv pair the partitioner would add, in graph order."""
    frames = output_frames(graph)
    memory = _memory_info(graph, placement)
    ge = graph_edges(graph)
    src_at, dst_at = ge.src, ge.dst
    codes = _device_codes(graph, placement)
    dev, names, host, cpu = codes.dev, codes.names, codes.host, codes.cpu
    replicated = _replicated(graph, codes)
    # An edge needs a look when both ends are placed and, after constant replication, its
    # ends are on two devices, or on one non-CPU device for a data edge (memory types).
    known = src_at >= 0
    src_dev = dev[np.where(known, src_at, 0)]
    dst_dev = dev[dst_at]
    is_rep = np.zeros(len(graph.nodes) + 1, dtype=bool)
    is_rep[replicated] = True
    src_dev = np.where(is_rep[np.where(known, src_at, -1)], host[dst_dev], src_dev)
    dst_cpu = cpu[dst_dev]
    look = known & (src_dev > 0) & (dst_dev > 0) & ~(
        (src_dev == dst_dev) & (dst_cpu | (ge.src_slot < 0)))
    table: dict[tuple[str, int, str, bool], Transfer] = {}
    out: list[Transfer] = []
    nodes = graph.nodes
    node_names = list(nodes)
    # the size of a tensor: by its source's position when the shapes are of this graph
    tensor = tensor_at = None
    if shapes is not None:
        if shapes.positions is graph.positions():
            tensor_at = shapes.dtype_nbytes_at
        else:
            tensor = shapes.dtype_nbytes
    edges = ge.edges
    at = np.flatnonzero(look)
    for e, dst_name, s_dev, d_dev, on_cpu, s_at in zip(
            map(edges.__getitem__, at.tolist()), map(node_names.__getitem__, dst_at[at].tolist()),
            src_dev[at].tolist(), dst_dev[at].tolist(), dst_cpu[at].tolist(),
            src_at[at].tolist()):
        src, slot = e.src, e.src_slot
        src_device, dst_device = names[s_dev], names[d_dev]
        control = slot < 0          # (``Edge.control``, without a property call per edge)
        if control:
            on_host = on_cpu
        else:
            on_host = on_cpu or e.dst_slot in memory(dst_name)[0]
        if s_dev == d_dev:
            src_on_host = slot in memory(src)[1]
            if src_on_host == on_host:
                continue        # same device, same memory type: a plain edge
        key = (src, slot, dst_device, on_host)
        # TF reuses a _Recv for the same tensor and destination, except for ref-typed
        # outputs ("Collapsing ref edges requires extreme care").
        t = table.get(key)
        if t is not None and not control:
            types = nodes[src].output_dtypes
            if types is not None and slot < len(types) and is_ref(types[slot]):
                t = None
        if t is None:
            loop = frames.get(src, "")
            t = Transfer(src, slot, src_device, dst_device, control=control, in_loop=bool(loop),
                         loop=loop, recv_on_host=on_host)
            if control:
                t.dtype, t.bytes = DT_FLOAT, 0    # a DT_FLOAT tensor of shape {0}
            elif tensor_at is not None:
                t.dtype, t.bytes = tensor_at(s_at, slot)
            elif tensor is not None:
                t.dtype, t.bytes = tensor(src, slot)
            else:
                t.dtype = e.dtype if e.dtype is None else base_type(e.dtype)
            table[key] = t
            out.append(t)
        # the edges come destination by destination: a consumer already listed is the last
        if not t.consumers or t.consumers[-1] != dst_name:
            t.consumers.append(dst_name)
    return out


def step_transfers(step, placement, shapes=None) -> list[Transfer]:
    """The transfers of one ``model.step.Step``: the partitioner on the pruned step graph
    (after ``ReplicateConstantsPass`` on it). A fed tensor comes from the client's device:
    its transfers name the fed tensor and are marked ``fed``."""
    out = find_transfers(step.graph, placement, shapes)
    fed = {f"_arg_{n}_{k}_{i}": (n, k) for i, (n, k) in enumerate(step.feeds)}
    phase = step.phase
    for t in out:
        t.phase = phase
        if t.src in fed:
            t.src, t.src_slot = fed[t.src]
            t.fed = True
            if shapes is not None and not t.control:
                t.dtype = shapes.dtype(t.src, t.src_slot)
                t.bytes = shapes.nbytes(t.src, t.src_slot)
    return out


@dataclass
class PairSummary:
    src_device: DeviceName
    dst_device: DeviceName
    count: int = 0
    bytes: int = 0
    unknown: int = 0        #: transfers whose size is unknown

    def __post_init__(self):
        self.src_device = DeviceName.of(self.src_device)
        self.dst_device = DeviceName.of(self.dst_device)

    @property
    def network(self) -> bool:
        return not self.src_device.same_task(self.dst_device)

    def to_dict(self) -> dict:
        return {"from": str(self.src_device), "to": str(self.dst_device), "count": self.count,
                "bytes": self.bytes, "unknown": self.unknown, "network": self.network}

    @classmethod
    def from_dict(cls, d: dict, devices=None) -> "PairSummary":
        """From ``to_dict``; ``devices`` (the run's ``DeviceSet``) gives the names back the
        set's display form."""
        name = devices.name if devices is not None else DeviceName.of
        return cls(name(d["from"]), name(d["to"]), d["count"], d["bytes"], d["unknown"])


def summarize(transfers: list[Transfer]) -> list[PairSummary]:
    """Per (from, to) device pair: number of transfers and known bytes per step."""
    pairs: dict[tuple[str, str], PairSummary] = {}
    for t in transfers:
        s = pairs.setdefault((t.src_device, t.dst_device), PairSummary(t.src_device, t.dst_device))
        s.count += 1
        if t.bytes is None:
            s.unknown += 1
        else:
            s.bytes += t.bytes
    return sorted(pairs.values(), key=lambda s: (s.src_device, s.dst_device))
