"""What to draw: an analysed graph reduced to a ``View`` that ``dot`` can lay out quickly.

Real models have thousands of nodes, and Graphviz ``dot`` slows down sharply with size
and with high-degree nodes. ``build_view`` therefore decides, deterministically and
without Graphviz, in phases (one module each):

0. inputs (``render/inputs.py``): placement, copies (``Transfer``), findings with a short
   cause, the parallel branches worth outlining, and the diff marks of ``graph --diff``;
1-4. ``render/reduce.py``: kept nodes (findings, copy ends, changes, ``--focus``), cheap
   nodes hidden, hubs drawn apart, pass-through nodes contracted, the focus neighbourhood;
5. ``render/scopes.py``: name scopes collapsed into boxes within ``--max-nodes``, scopes
   holding findings or changes opened first;
6-7. ``render/units.py``: one box per op, scope or hub; edges merged between boxes with
   the copies they carry.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from ..model.devices import display, parse_device
from .inputs import inputs_from_report, outlined_branches, short_cause
from .reduce import reduce_graph
from .scopes import CHUNK_FANOUT, ScopeTree, collapse
from .units import UnitBuilder, build_edges
from .viewmodel import (SEVERITY_RANK, Cluster, DeviceInfo, DiffMarks, Finding, Unit, View,
                        ViewEdge, ViewError, ViewInputs, ViewOptions, copy_key)

__all__ = ["CHUNK_FANOUT", "SEVERITY_RANK", "Cluster", "DeviceInfo", "DiffMarks", "Finding",
           "ScopeTree", "Unit", "View", "ViewEdge", "ViewError", "ViewInputs", "ViewOptions",
           "build_view", "copy_key", "device_order",
           "inputs_from_report", "outlined_branches", "short_cause", "short_device_names"]


def short_device_names(names: Iterable[str]) -> dict[str, str]:
    """Each device's displayed name (``DeviceName.display``) when that is unambiguous,
    else the full name."""
    names = sorted(set(names))
    shorts = {n: display(n) for n in names}
    counts = Counter(shorts.values())
    return {n: (s if counts[s] == 1 else n) for n, s in shorts.items()}


def device_order(name: str) -> tuple:
    spec = parse_device(name)
    if spec is None:
        return (1, name)
    return (0, spec.job or "", spec.replica or 0, spec.task or 0, spec.type or "", spec.id or 0)


def flagged_nodes(inputs: ViewInputs) -> set[str]:
    """What the reader must see first: nodes with findings, and with a diff the nodes that
    moved or are new and the ends of new and removed copies."""
    out = set(inputs.findings)
    d = inputs.diff
    if d is not None:
        out.update(d.moved)
        out.update(d.added)
        for c in inputs.copies:
            if copy_key(c) in d.new_copies:
                out.add(c.src)
                out.update(c.consumers)
        for c in d.ghost_copies:
            out.add(c.src)
            out.update(c.consumers)
    return out


def build_view(inputs: ViewInputs, options: ViewOptions = ViewOptions()) -> View:
    """The ``View`` of ``inputs`` under ``options`` (see the module docstring)."""
    g = inputs.graph
    order = {name: i for i, name in enumerate(g.nodes)}
    device = inputs.device
    reduced = reduce_graph(inputs, options, order)
    collapsed = collapse(reduced.candidates, reduced.links, options.expand, g, options.max_nodes,
                         flagged_nodes(inputs), only_flagged=inputs.diff is not None)
    devs = sorted(set(inputs.devices) | {d for d in device.values() if d}, key=device_order)
    short = short_device_names(devs)
    antichain = inputs.antichain & set(g.nodes) if (inputs.width or 0) > 1 else set()
    builder = UnitBuilder(inputs, reduced, collapsed, order,
                          {d: i for i, d in enumerate(devs)}, antichain)
    units = builder.build()
    edges, edge_notes = build_edges(inputs, reduced, collapsed, units, order)
    tree = collapsed.tree
    clusters = [Cluster(path=key, parent=collapsed.enclosing(tree.parent[key]),
                        label=tree.display(key, collapsed.enclosing(tree.parent[key])),
                        members=tree.size[key])
                for key in sorted(collapsed.clusters, key=lambda k: (tree.depth[k], tree.index[k]))]
    placed = Counter(device.get(n) for n in g.nodes)
    return View(title=inputs.title, subtitle=inputs.subtitle, units=units, edges=edges,
                clusters=clusters,
                devices=[DeviceInfo(name=d, short=short[d], nodes=placed.get(d, 0),
                                    memory=(inputs.memory or {}).get(d)) for d in devs],
                unplaced=placed.get(None, 0), short=short,
                copies=len(inputs.copies),
                copy_bytes=sum(c.bytes or 0 for c in inputs.copies),
                copies_unknown=sum(1 for c in inputs.copies if c.bytes is None),
                total_nodes=len(g), drawn_nodes=len(reduced.candidates) + len(reduced.drawn_hubs),
                cheap=len(reduced.cheap), passthrough=len(reduced.passthrough),
                outside_focus=reduced.outside_focus,
                collapsed=sum(1 for u in units if u.kind == "scope"),
                width=inputs.width, branch_count=len(antichain),
                intra_op_count=sum(1 for n in g.nodes if builder.splits(n)), options=options,
                notes=list(inputs.notes) + collapsed.notes + edge_notes,
                caption=list(inputs.caption), diff=inputs.diff)
