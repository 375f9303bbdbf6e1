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

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter

import numpy as np

from ..loaders.steps import GRAPH, INIT, PHASES, RESTORE, STEP, StepSpec
from .devices import parse_device
from .edge_index import GraphEdges, graph_edges, keep_graph_edges
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
    if sep and idx.isascii() and idx.isdigit():     # ('²' is a digit int() refuses)
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
    keep: np.ndarray                   #: bool per node (graph order): the step runs it
    feeds: list[tuple[str, int]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   #: names the graph does not have


def prune(graph: Graph, resolver: Resolver, spec: StepSpec, reverse=None) -> ResolvedStep:
    """The nodes ``spec`` runs: subgraph.cc's feed cut then ``PruneForTargets`` (reverse
    reachability over data and control edges from the fetched and target nodes), as a
    depth-first search over the shared edge index (``model.edge_index``), reversed
    (``reverse``: ``_reverse_edges`` of it, when the caller prunes several steps)."""
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
    ge = graph_edges(graph)
    n = len(graph.nodes)
    if not start:
        return ResolvedStep(spec, np.zeros(n, dtype=bool), feeds, missing)
    positions = graph.positions()
    # the edges reversed: a node's sources are indices[indptr[v]:indptr[v + 1]] (shared
    # by the steps ``build_step`` prunes); an edge the feeds cut reads as node ``n``, seen
    indices, indptr, walked = reverse if reverse is not None else _reverse_edges(ge, n)
    cut = (np.searchsorted(walked, np.flatnonzero(_fed_edges(graph, ge, feeds))).tolist()
           if feeds else [])
    saved = [indices[i] for i in cut]
    for i in cut:
        indices[i] = n
    seen = bytearray(n + 1)
    seen[n] = 1
    stack = list(map(positions.__getitem__, start))
    pop, extend = stack.pop, stack.extend
    try:
        while stack:
            v = pop()
            if not seen[v]:
                seen[v] = 1
                extend(indices[indptr[v]:indptr[v + 1]])
    finally:
        for i, source in zip(cut, saved):
            indices[i] = source
    keep = np.frombuffer(seen, dtype=bool, count=n)
    return ResolvedStep(spec, keep, feeds, missing)


def _reverse_edges(ge, n: int) -> tuple[list[int], list[int], np.ndarray]:
    """The edges from nodes of the graph, by destination: their sources, where each
    node's start (``indptr``), and their positions in ``ge``."""
    walked = np.flatnonzero(ge.src >= 0)
    return (ge.src[walked].tolist(),
            [0, *np.cumsum(np.bincount(ge.dst[walked], minlength=n)).tolist()], walked)


def _fed_edges(graph: Graph, ge, feeds: list[tuple[str, int]]) -> np.ndarray:
    """Bool per edge: the edge leaves a fed tensor (or is a control edge of a fed
    Placeholder), so the step takes it from the fed tensor's ``_Arg`` instead."""
    positions = graph.positions()
    cut = np.zeros(ge.src.size, dtype=bool)
    for name, slot in feeds:
        from_node = ge.src == positions[name]
        cut |= from_node & (ge.src_slot == slot)
        if graph.nodes[name].op in FED_PLACEHOLDER:
            cut |= from_node & (ge.src_slot < 0)
    return cut


def _has_output(graph: Graph, name: str, slot: int) -> bool:
    """``name`` has output ``slot`` (or its outputs are unknown, or it is a control name)."""
    types = graph.nodes[name].output_dtypes
    return slot < 0 or types is None or slot < len(types)


#: Every field of a ``Node``, in its constructor's order.
_node_fields = attrgetter(*(f.name for f in fields(Node)))


def subgraph(graph: Graph, keep: np.ndarray, feeds: list[tuple[str, int]]) -> Graph:
    """The step's graph: the kept nodes (``keep``: a bool per node in graph order) with the
    edges between them, and one ``_Arg`` per fed tensor (TF's name ``_arg_<node>_<k>_<i>``)
    on the client device feeding what the tensor fed. A kept node whose edges the step
    keeps, in the same order, is the graph's own node (no analysis changes a node after
    the build; a copy cost ~1.6 us a node, most of the step's time); any other is a copy
    sharing attrs, with the step's edges."""
    g = Graph(graph.name)
    args: dict[tuple[str, int], Node] = {}
    first_arg: dict[str, Node] = {}
    for i, (name, slot) in enumerate(feeds):
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
        first_arg.setdefault(name, arg)
        g.nodes[arg.name] = arg
    ge = graph_edges(graph)
    src, dst = ge.src, ge.dst
    fed = _fed_edges(graph, ge, feeds) if feeds else np.zeros(src.size, dtype=bool)
    into_kept = keep[dst]
    inner = into_kept & ~fed & (src >= 0)
    inner[inner] = keep[src[inner]]
    chosen = np.flatnonzero(inner | (into_kept & fed))    # by destination, in in_edges order
    edges = ge.edges
    in_list = list(map(edges.__getitem__, chosen.tolist()))
    # the step's GraphEdges, read off the graph's: a kept node's position in the step is
    # the number of _Args (first, in feed order) plus the kept nodes before it; an edge from
    # a fed tensor leaves its _Arg (what ``_graph_edges`` would find, without its pass over
    # every edge's names: ~0.5 s for a 10^6-node SavedModel's step)
    at = {id(arg): k for k, arg in enumerate(g.nodes.values())}
    moved = np.cumsum(keep) + (len(at) - 1)                # graph position -> step position
    step_src, step_slot = moved[src[chosen]], ge.src_slot[chosen]
    for j in np.flatnonzero(fed[chosen]).tolist():        # edges from a fed tensor: its _Arg
        e = in_list[j]
        arg = args.get((e.src, e.src_slot)) if e.src_slot >= 0 else first_arg[e.src]
        ne = Edge(arg.name, -1 if e.src_slot < 0 else 0, e.dst, e.dst_slot, e.dtype, e.ref)
        arg.out_edges.append(ne)
        in_list[j] = ne
        step_src[j], step_slot[j] = at[id(arg)], ne.src_slot
    n = len(graph.nodes)
    in_end = np.cumsum(np.bincount(dst[chosen], minlength=n)).tolist()
    out = np.flatnonzero(inner)
    out = out[np.argsort(src[out], kind="stable")]        # by source, in graph order
    out_list = list(map(edges.__getitem__, out.tolist()))
    out_end = np.cumsum(np.bincount(src[out], minlength=n)).tolist()
    all_nodes = list(graph.nodes.values())
    gnodes = g.nodes
    kept = np.flatnonzero(keep).tolist()
    for i in kept:
        node = all_nodes[i]
        ins = in_list[in_end[i - 1] if i else 0:in_end[i]]
        outs = out_list[out_end[i - 1] if i else 0:out_end[i]]
        if ins == node.in_edges and outs == node.out_edges:
            gnodes[node.name] = node    # every edge kept, in order: the node itself
            continue
        c = Node(*_node_fields(node))     # a copy, sharing attrs
        c.in_edges, c.out_edges = ins, outs
        gnodes[node.name] = c
    if len(gnodes) == len(at) + len(kept):   # (else a kept node took an _Arg's name and place)
        keep_graph_edges(g, GraphEdges(in_list, step_src, moved[dst[chosen]], step_slot))
    if not graph.may_have_class_attrs():    # (its nodes and attr-less _Args)
        g.note_no_class_attrs()
    return g


class PhaseOf(Mapping):
    """node -> the phase of the first spec that runs it, for the nodes some spec runs: a
    view over one byte per graph position (a dict of most nodes of a SavedModel was tens
    of MiB at 10^6 nodes)."""

    def __init__(self, graph: Graph, first: np.ndarray, phases: list[str]):
        # (``first``: per graph position, the index in ``phases`` of the first spec that
        # runs the node, -1 for none. A SavedModel may declare any number of signatures,
        # but their phases are a few names: each node's byte is its phase's, not its spec's)
        self._index = graph.positions()
        self._phases = [None, *dict.fromkeys(phases)]
        code = {phase: k for k, phase in enumerate(self._phases)}
        by_spec = np.array([0, *map(code.__getitem__, phases)], dtype=np.uint8)
        self._codes = by_spec[first + 1].tobytes()
        self._len = int(np.count_nonzero(first >= 0))

    def __getitem__(self, node: str) -> str:
        phase = self._phases[self._codes[self._index[node]]]
        if phase is None:
            raise KeyError(node)
        return phase

    def get(self, node, default=None):
        i = self._index.get(node)
        phase = None if i is None else self._phases[self._codes[i]]
        return default if phase is None else phase

    def __contains__(self, node) -> bool:
        return self.get(node) is not None

    def __iter__(self) -> Iterator[str]:
        return (n for n, c in zip(self._index, self._codes) if c)

    def __len__(self) -> int:
        return self._len


@dataclass
class Step:
    """The analysed step of one model and the phase of every node."""

    spec: StepSpec | None              #: None: the whole graph (no step chosen or declared)
    graph: Graph                       #: the step's graph (the model's graph when whole)
    phase_of: Mapping[str, str] = field(default_factory=dict)  #: nodes not in ``default_phase``
    default_phase: str = GRAPH
    feeds: list[tuple[str, int]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    place_pruned: bool = False
    #: the graph positions (int64, ascending) of the nodes of ``graph`` after its fed
    #: tensors' _Args (None: the whole graph): a placement of the model's graph gives the
    #: step's nodes their devices by position, without a look-up per name
    kept: np.ndarray | None = None

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
    first = np.full(len(graph.nodes), -1, dtype=np.int64)   # the first spec that runs a node
    specs = [*phases, spec] if spec is not None else list(phases)
    r = None
    reverse = _reverse_edges(graph_edges(graph), len(graph.nodes)) if specs else None
    for i, p in enumerate(specs):
        r = prune(graph, resolver, p, reverse)
        first[r.keep & (first < 0)] = i
    del reverse     # (before the step's graph is made)
    phase_of = PhaseOf(graph, first, [p.phase for p in specs])
    if spec is None:
        return Step(None, graph, phase_of, GRAPH)
    g = subgraph(graph, r.keep, r.feeds)
    return Step(spec, g, phase_of, GRAPH, r.feeds, list(r.missing), place_pruned,
                np.flatnonzero(r.keep))
