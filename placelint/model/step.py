"""The step TensorFlow runs, and the phase of every node.

A ``Session.run(fetches, feed_dict)`` never runs the whole graph: DirectSession places the
whole graph once (unless ``GraphOptions.place_pruned_graph``), then for each step
``subgraph::RewriteGraphForExecution`` (tensorflow/core/graph/subgraph.cc):

* ``FeedInputs``: each fed tensor ``n:k`` is replaced by an ``_Arg`` (``_arg_n_k_i``) on the
  client's device (the host's ``CPU:0``); every out-edge of output ``k`` of ``n`` now leaves
  the ``_Arg``. When ``n`` is a Placeholder its control out-edges move to the ``_Arg`` too.
  ``n`` itself stays in the graph and runs only if something else still needs it;
* ``FetchOutputs``: each fetched tensor gets a ``_Retval`` on the client's device;
* ``PruneForTargets``: only what the fetches and the target nodes reach backwards (data and
  control edges, loop back edges included) is kept.

The POST_REWRITE_FOR_EXEC passes (``ReplicateConstantsPass``) and the partitioner then see
that pruned step. A loader runs several such steps over one placed graph: a SavedModel
load runs the saver's restore op (feeding its file name), then the init op, then serving
runs the signatures. ``Step`` holds the analysed step's nodes and graph, and every node's
*phase*: the first of ``restore``, ``init``, ``step`` that runs it, else ``graph``.

Everything here is linear in the size of the graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter

from ..loaders.steps import GRAPH, INIT, PHASES, RESTORE, STEP, StepSpec
from .devices import parse_device
from .graph import Edge, Graph, Node
from .ops import FED_PLACEHOLDER

__all__ = ["RESTORE", "INIT", "STEP", "GRAPH", "PHASES", "StepSpec", "Step", "Resolver",
           "ResolvedStep", "build_step", "prune", "subgraph", "tensor_name", "CLIENT_DEVICE"]

#: DirectSession's client device on one machine: fed tensors come from there
#: (``device_set_->client_device``; ``Context.client_device`` picks it for the target).
CLIENT_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def tensor_name(text: str) -> tuple[str, int]:
    """``name:k`` -> (name, k); ``name`` -> (name, 0); ``^name`` -> (name, -1)."""
    text = text.strip()
    if text.startswith("^"):
        return text[1:], -1
    name, sep, idx = text.rpartition(":")
    if sep and idx.isdigit():
        return name, int(idx)
    return text, 0


class Resolver:
    """Maps tensor and op names as written in the model to nodes of the expanded graph
    (a function call's outputs are its ``_Retval`` nodes; running a call as a target
    waits for its ``output_control_node``)."""

    def __init__(self, graph: Graph, alias: dict | None = None, control_alias: dict | None = None):
        self.graph = graph
        self.alias = alias or {}
        self.control_alias = control_alias or {}

    def tensor(self, text: str) -> tuple[str, int] | None:
        name, slot = tensor_name(text)
        if slot < 0:
            target = self.target(name)
            return None if target is None else (target, -1)
        while (name, slot) in self.alias:
            name, slot = self.alias[(name, slot)]
        return (name, slot) if name in self.graph.nodes else None

    def target(self, text: str) -> str | None:
        name = tensor_name(text)[0]
        name = self.control_alias.get(name, name)
        return name if name in self.graph.nodes else None


@dataclass
class ResolvedStep:
    spec: StepSpec
    nodes: set[str]
    feeds: list[tuple[str, int]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   #: names the graph does not have


def prune(graph: Graph, resolver: Resolver, spec: StepSpec) -> ResolvedStep:
    """The nodes ``spec`` runs: subgraph.cc's feed cut then ``PruneForTargets`` (reverse
    reachability over data and control edges from the fetched and target nodes)."""
    missing: list[str] = []
    fed: set[tuple[str, int]] = set()
    feeds: list[tuple[str, int]] = []
    for text in spec.feeds:
        t = resolver.tensor(text)
        if t is None or t[1] < 0 or not _has_output(graph, *t):
            missing.append(text)
        elif t not in fed:
            fed.add(t)
            feeds.append(t)
    fed_placeholders = {n for n, _ in feeds if graph.nodes[n].op in FED_PLACEHOLDER}
    start: list[str] = []
    for text in spec.fetches:
        t = resolver.tensor(text)
        if t is None or not _has_output(graph, *t):
            missing.append(text)
        elif t not in fed:
            start.append(t[0])
    for text in spec.targets:
        n = resolver.target(text)
        if n is None:
            missing.append(text)
        else:
            start.append(n)
    keep: set[str] = set()
    stack = start
    nodes = graph.nodes
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        keep.add(name)
        for e in nodes[name].in_edges:
            src = e.src
            if src in keep:
                continue
            if fed and ((src, e.src_slot) in fed or (e.src_slot < 0 and src in fed_placeholders)):
                continue
            stack.append(src)
    return ResolvedStep(spec, keep, feeds, missing)


def _has_output(graph: Graph, name: str, slot: int) -> bool:
    """``name`` has output ``slot`` (or its outputs are unknown, or it is a control name)."""
    types = graph.nodes[name].output_dtypes
    return slot < 0 or types is None or slot < len(types)


#: Every field of a ``Node``, in its constructor's order.
_node_fields = attrgetter(*(f.name for f in fields(Node)))


def subgraph(graph: Graph, nodes: set[str], feeds: list[tuple[str, int]]) -> Graph:
    """The step's graph: the kept nodes (copies sharing attrs) with the edges between them,
    and one ``_Arg`` per fed tensor (TF's name ``_arg_<node>_<k>_<i>``) on the client device
    feeding what the tensor fed."""
    g = Graph(graph.name)
    fed = {t: i for i, t in enumerate(feeds)}
    fed_placeholders = {n for n, _ in feeds if graph.nodes[n].op in FED_PLACEHOLDER}
    args: dict[tuple[str, int], Node] = {}
    for (name, slot), i in fed.items():
        src = graph.nodes[name]
        dtype = (src.output_dtypes[slot] if src.output_dtypes and slot < len(src.output_dtypes)
                 else None)
        shape = (src.output_shapes[slot] if src.output_shapes and slot < len(src.output_shapes)
                 else None)
        arg = Node(f"_arg_{name}_{slot}_{i}", "_Arg", CLIENT_DEVICE)
        arg.spec = parse_device(CLIENT_DEVICE)
        arg.output_dtypes = [dtype] if dtype is not None else None
        arg.output_shapes = [shape] if shape is not None else None
        arg.function, arg.call_site = src.function, src.call_site
        args[(name, slot)] = arg
        g.nodes[arg.name] = arg
    for name, node in graph.nodes.items():
        if name not in nodes:
            continue
        c = Node(*_node_fields(node))     # a copy, sharing attrs
        c.in_edges, c.out_edges = [], []
        g.nodes[name] = c
    for name, node in graph.nodes.items():
        if name not in nodes:
            continue
        dst = g.nodes[name]
        for e in node.in_edges:
            key = (e.src, e.src_slot)
            arg = args.get(key)
            if arg is None and e.src_slot < 0 and e.src in fed_placeholders:
                arg = next(a for (n, _), a in args.items() if n == e.src)
            if arg is not None:
                ne = Edge(arg.name, -1 if e.src_slot < 0 else 0, name, e.dst_slot, e.dtype, e.ref)
                arg.out_edges.append(ne)
                dst.in_edges.append(ne)
            elif e.src in nodes:
                g.nodes[e.src].out_edges.append(e)
                dst.in_edges.append(e)
    return g


@dataclass
class Step:
    """The analysed step of one model and the phase of every node."""

    spec: StepSpec | None              #: None: the whole graph (no step chosen or declared)
    graph: Graph                       #: the step's graph (the model's graph when whole)
    phase_of: dict[str, str] = field(default_factory=dict)   #: nodes not in ``default_phase``
    default_phase: str = GRAPH
    feeds: list[tuple[str, int]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    place_pruned: bool = False

    @property
    def whole(self) -> bool:
        return self.spec is None

    @property
    def phase(self) -> str:
        """The phase of the analysed step (``graph`` for a whole graph)."""
        return GRAPH if self.spec is None else self.spec.phase

    def phase_of_node(self, name: str | None) -> str:
        if name is None:
            return self.phase
        return self.phase_of.get(name, self.default_phase)

    def describe(self) -> str:
        if self.spec is None:
            return "whole graph"
        return f"{self.spec.name} ({len(self.graph)} nodes: {self.spec.describe()})"


def build_step(graph: Graph, resolver: Resolver, spec: StepSpec | None,
               phases: list[StepSpec] = (), place_pruned: bool = False) -> Step:
    """The ``Step`` for ``spec`` (None = whole graph), with the phase of each node from the
    loader's ``phases`` (restore, init and step specs, in the order a loader runs them)."""
    phase_of: dict[str, str] = {}
    missing: list[str] = []
    for p in phases:
        r = prune(graph, resolver, p)
        for n in r.nodes:
            phase_of.setdefault(n, p.phase)
    if spec is None:
        return Step(None, graph, phase_of, GRAPH)
    r = prune(graph, resolver, spec)
    missing += r.missing
    for n in r.nodes:       # the analysed step's nodes no earlier phase runs
        phase_of.setdefault(n, spec.phase)
    g = subgraph(graph, r.nodes, r.feeds)
    return Step(spec, g, phase_of, GRAPH, r.feeds, missing, place_pruned)
