"""Phases 1-4 of a diagram: decide which graph nodes are drawn at all.

1. *kept* nodes (findings, both ends of copies, diff changes, ``--focus``) always stay;
2. *cheap* nodes are hidden: constants, shape metadata and the constant-foldable ops fed
   only by them (what Grappler folds before the graph runs);
3. *hubs* (more than ``hub_degree`` distinct neighbours: ``init``, restore ops) are drawn
   apart, without edges;
4. *pass-through* nodes with one live input are contracted into their source, and
   ``--focus NODE --radius K`` keeps only a neighbourhood.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..model.graph import Graph
from ..model.ops import ARG, CONSTANT, METADATA, RETVAL
from .viewmodel import ViewError, ViewInputs, ViewOptions

#: Constant sources: always cheap.
CONST_OPS = CONSTANT | {"ImmutableConst"}
#: Shape metadata: cheap whatever they read (the executor runs them inline).
METADATA_OPS = METADATA | {"ShapeN"}
#: Stateless ops that are cheap when every input is cheap (the constant-foldable part).
FOLDABLE_OPS = frozenset({
    "Identity", "IdentityN", "Snapshot", "Reshape", "Cast", "Fill", "Pack", "Unpack",
    "ConcatV2", "Concat", "StridedSlice", "Slice", "ExpandDims", "Squeeze", "Transpose",
    "Range", "ZerosLike", "OnesLike", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div",
    "FloorDiv", "Maximum", "Minimum", "Neg", "Sqrt", "Rsqrt", "Reciprocal", "Prod", "Sum",
    "GatherV2", "BroadcastTo", "BroadcastArgs", "Tile", "Pad", "NoOp",
})
#: Ops drawn as their input when they have exactly one: they only forward a tensor.
PASSTHROUGH_OPS = ARG | RETVAL | {"Identity", "Snapshot", "ReadVariableOp"}


@dataclass
class Reduced:
    """The drawn nodes and the contracted edges among them."""

    candidates: list[str]                      #: drawn graph nodes, in graph order
    links: list[tuple[str, str, Any]]          #: (src, dst, graph edge) among candidates
    hub_links: dict[str, set[str]]             #: node -> hubs it is linked to
    neighbours: dict[str, set[str]]            #: node -> distinct non-cheap neighbours
    drawn_hubs: list[str]
    focus: list[str]
    cheap: set[str] = field(default_factory=set)
    passthrough: set[str] = field(default_factory=set)
    outside: Counter = field(default_factory=Counter)   #: focus: neighbours beyond radius
    outside_focus: int = 0


def unknown_name(what: str, name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"no {what} named {name!r} in the graph{hint}"


def kept_nodes(inputs: ViewInputs, focus: list[str]) -> set[str]:
    g = inputs.graph
    kept = set(inputs.findings) | set(focus)
    for c in inputs.copies:
        kept.add(c.src)
        kept.update(x for x in c.consumers if x in g.nodes)
    if inputs.diff is not None:
        kept.update(n for n in inputs.diff.moved if n in g.nodes)
        kept.update(n for n in inputs.diff.added if n in g.nodes)
        for c in inputs.diff.ghost_copies:
            kept.update(x for x in (c.src, *c.consumers) if x in g.nodes)
    return kept


def cheap_nodes(g: Graph, kept: set[str]) -> set[str]:
    """Constants, shape metadata, and foldable ops all of whose inputs are cheap."""
    cheap: set[str] = set()
    work: deque[str] = deque()
    for node in g:
        if node.name not in kept and (node.op in CONST_OPS or node.op in METADATA_OPS):
            cheap.add(node.name)
            work.append(node.name)
    while work:
        n = work.popleft()
        for e in g.nodes[n].out_edges:
            d = e.dst
            if d in cheap or d in kept:
                continue
            node = g.nodes[d]
            if node.op in FOLDABLE_OPS and node.in_edges and \
                    all(x.src in cheap for x in node.in_edges):
                cheap.add(d)
                work.append(d)
    return cheap


def neighbour_sets(g: Graph, cheap: set[str]) -> dict[str, set[str]]:
    out = {}
    for node in g:
        if node.name in cheap:
            continue
        nb = {e.src for e in node.in_edges if e.src not in cheap}
        nb.update(e.dst for e in node.out_edges if e.dst not in cheap)
        nb.discard(node.name)
        out[node.name] = nb
    return out


def passthrough_nodes(g: Graph, skip: set[str], cheap: set[str], hubs: set[str]) -> set[str]:
    out = set()
    for node in g:
        n = node.name
        if node.op not in PASSTHROUGH_OPS or n in skip or n in cheap or n in hubs:
            continue
        live = [e for e in node.in_edges if e.src not in cheap and e.src not in hubs]
        if len(live) == 1 and not live[0].control:
            out.add(n)
    return out


class _Resolver:
    """The drawn node a pass-through node forwards (None if it forwards nothing drawn)."""

    def __init__(self, g: Graph, passthrough: set[str], cheap: set[str], hubs: set[str]):
        self.g, self.passthrough, self.cheap, self.hubs = g, passthrough, cheap, hubs
        self.source_of: dict[str, str | None] = {}

    def __call__(self, n: str) -> str | None:
        chain = []
        while n in self.passthrough and n not in self.source_of:
            chain.append(n)
            live = [e for e in self.g.nodes[n].in_edges
                    if e.src not in self.cheap and e.src not in self.hubs]
            nxt = live[0].src
            if nxt in chain:          # a cycle of pass-throughs: give up on it
                n = None
                break
            n = nxt
        result = self.source_of.get(n, n) if n is not None else None
        for c in chain:
            self.source_of[c] = result
        return result


def contracted_links(g: Graph, candidates: list[str], hubs: set[str], passthrough: set[str],
                     resolve) -> tuple[list, dict[str, set[str]]]:
    cand_set = set(candidates)
    links: list[tuple[str, str, Any]] = []
    hub_links: dict[str, set[str]] = defaultdict(set)
    for n in candidates:
        for e in g.nodes[n].in_edges:
            src = e.src
            if src in hubs:
                hub_links[n].add(src)
                continue
            if src in passthrough:
                src = resolve(src)
            if src is None or src not in cand_set or src == n:
                continue
            links.append((src, n, e))
        for e in g.nodes[n].out_edges:
            if e.dst in hubs:
                hub_links[n].add(e.dst)
    return links, hub_links


def apply_focus(r: Reduced, radius: int, order: dict[str, int], hubs: set[str]) -> None:
    """Keep the nodes within ``radius`` hops of the focus nodes (over the links left)."""
    adj: dict[str, set[str]] = defaultdict(set)
    for s, d, _ in r.links:
        adj[s].add(d)
        adj[d].add(s)
    dist = {f: 0 for f in r.focus}        # kept, so never hidden, contracted or a hub
    queue = deque(r.focus)
    while queue:
        n = queue.popleft()
        if dist[n] >= radius:
            continue
        for m in sorted(adj[n], key=order.__getitem__):
            if m not in dist:
                dist[m] = dist[n] + 1
                queue.append(m)
    inside = set(dist)
    for n in inside:
        r.outside[n] = sum(1 for m in adj[n] if m not in inside)
    r.outside_focus = len(set(r.candidates) - inside)
    r.candidates = [n for n in r.candidates if n in inside or n in r.focus]
    cand_set = set(r.candidates)
    r.links = [(s, d, e) for s, d, e in r.links if s in cand_set and d in cand_set]
    r.drawn_hubs = sorted({h for n in r.candidates for h in r.hub_links.get(n, ())},
                          key=order.__getitem__)


def reduce_graph(inputs: ViewInputs, options: ViewOptions, order: dict[str, int]) -> Reduced:
    """Phases 1-4: kept, cheap, hubs, pass-through contraction, focus."""
    g = inputs.graph
    focus = list(dict.fromkeys(options.focus))
    for name in focus:
        if name not in g.nodes:
            raise ViewError(unknown_name("node", name, g.nodes))
    kept = kept_nodes(inputs, focus)
    cheap = set() if options.show_cheap else cheap_nodes(g, kept)
    neighbours = neighbour_sets(g, cheap)
    hubs: set[str] = set()
    if options.hub_degree > 0:
        hubs = {n for n, nb in neighbours.items()
                if len(nb) > options.hub_degree and n not in focus}
    passthrough = set() if options.show_cheap else passthrough_nodes(g, kept, cheap, hubs)
    candidates = [n for n in g.nodes if n not in cheap and n not in hubs and n not in passthrough]
    links, hub_links = contracted_links(g, candidates, hubs, passthrough,
                                        _Resolver(g, passthrough, cheap, hubs))
    r = Reduced(candidates=candidates, links=links, hub_links=hub_links, neighbours=neighbours,
                drawn_hubs=sorted(hubs, key=order.__getitem__), focus=focus, cheap=cheap,
                passthrough=passthrough)
    if focus:
        apply_focus(r, options.radius, order, hubs)
    return r
