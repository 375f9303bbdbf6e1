"""PL202 variable-device-split: a variable read every step by ops on another device.

Grouping: one finding per (variable device, the other devices that read it, over the network
or not): the variables in ``nodes``, their readers on other devices in ``related_nodes``.
"""

from operator import attrgetter

import numpy as np

from ..diagnostics import Severity
from ..humanize import format_bytes, list_names, plural
from ..model.edge_index import graph_edges
from ..model.op_index import op_index
from ..model.ops import FUNCTION_IO, IDENTITY, VARIABLE_CREATORS
from .base import Rule
from .common import Groups, node_names
from ..model.devices import display

VARIABLE_OPS = VARIABLE_CREATORS
READ_THROUGH = IDENTITY | FUNCTION_IO | {"ReadVariableOp"}
#: consumers that only initialise, save or restore a variable: not every step
NOT_PER_STEP = ("Assign", "AssignVariableOp", "SaveV2", "Save", "SaveSlices", "RestoreV2",
                "VarIsInitializedOp", "IsVariableInitialized", "MergeV2Checkpoints")
NOT_PER_STEP_OPS = frozenset(NOT_PER_STEP)


def variable_source(graph, name: str, limit: int = 8) -> str | None:
    """The variable a tensor is read from (through Identity/ReadVariableOp), if any."""
    for _ in range(limit):
        node = graph.nodes[name]
        if node.op in VARIABLE_OPS:
            return name
        if node.op not in READ_THROUGH:
            return None
        data = [e for e in node.in_edges if not e.control]
        if not data:
            return None
        name = data[0].src
    return None


def _per_step_consumers(graph, transfers) -> list[list[str]]:
    """Each transfer's consumers but those that do not run every step (``NOT_PER_STEP``).
    With fewer such nodes in the graph than consumers to ask about, the nodes are made a
    set of names first (a small table to look up, where the graph's dict of 10^6 nodes
    misses the cache); else each consumer's op is read through the graph."""
    ops = op_index(graph)
    if not ops.any_of(NOT_PER_STEP_OPS):
        return [list(t.consumers) for t in transfers]
    mask = ops.mask(NOT_PER_STEP_OPS.__contains__)
    if np.count_nonzero(mask) < sum(len(t.consumers) for t in transfers):
        names = node_names(graph)
        skip = set(map(names.__getitem__, np.flatnonzero(mask).tolist()))
        return [[c for c in t.consumers if c not in skip] for t in transfers]
    nodes = graph.nodes
    return [[c for c in t.consumers if nodes[c].op not in NOT_PER_STEP] for t in transfers]


#: one walk by name costs about as much as a numpy pass over this many edges
WALKS_PER_EDGE_PASS = 64


def variable_sources(graph, names: list[str], limit: int = 8) -> list[str | None]:
    """``variable_source`` of each of ``names``, walked for all of them at once over the
    graph's op index and edge index: a step per node of the longest walk, not a Python
    walk per name (a SavedModel's 10^6-node graph has ~45k tensors sent between devices,
    and looking each walk's nodes up by name missed the cache at every step). A walk that
    leaves the graph (an input from a node it lacks) is redone by ``variable_source``,
    which raises as it did."""
    ge = graph_edges(graph)
    if len(names) * WALKS_PER_EDGE_PASS < ge.src.size:
        # a few walks (a TF1 graph's variables are mostly read where they live) cost less
        # by name than the passes over every edge below
        return [variable_source(graph, name, limit) for name in names]
    ops = op_index(graph)
    is_var = ops.mask(VARIABLE_OPS.__contains__)
    through = ops.mask(READ_THROUGH.__contains__)
    # each node's first data input (``variable_source`` follows it): -1 none, -2 not in
    # the graph (the edge index lists a node's in-edges in order, nodes in graph order)
    data = np.flatnonzero(ge.src_slot >= 0)
    dst = ge.dst[data]
    first = data[np.concatenate(([True], dst[1:] != dst[:-1]))] if data.size else data
    first_src = np.full(len(graph.nodes), -1, dtype=np.int64)
    first_src[ge.dst[first]] = np.where(ge.src[first] >= 0, ge.src[first], -2)
    index = graph.positions()
    at = np.fromiter(map(index.__getitem__, names), dtype=np.int64, count=len(names))
    found = np.full(at.size, -1, dtype=np.int64)
    left = np.ones(at.size, dtype=bool)     # still walking
    lost = np.zeros(at.size, dtype=bool)    # walked out of the graph
    for _ in range(limit):
        var = left & is_var[at]
        found[var] = at[var]
        nxt = first_src[at]
        left &= ~var & through[at] & (nxt != -1)
        lost |= left & (nxt == -2)
        left &= nxt >= 0
        at = np.where(left, nxt, at)
    nodes = node_names(graph)
    out = [None if k < 0 else nodes[k] for k in found.tolist()]
    for i in np.flatnonzero(lost).tolist():
        out[i] = variable_source(graph, names[i], limit)
    return out


def _memo(memo: dict, device, show) -> str:
    """``show(device)``, memoized in ``memo``."""
    text = memo.get(device)
    if text is None:
        text = memo[device] = show(device)
    return text


_DISPLAY = attrgetter("display")    # (``DeviceName.display``)


class VariableDeviceSplit(Rule):
    code = "PL202"
    name = "variable-device-split"
    severity = Severity.WARNING
    summary = "A variable lives on one device and is read every step by ops on another."
    per_step = True

    def check(self, ctx):
        graph = ctx.graph
        placement = ctx.placement.device
        by_var: dict[str, list] = {}
        sent = [t for t in ctx.transfers if not t.control]
        read = []
        foreign = ctx.copies_for_foreign_resources()   # (PL109's: the step fails first)
        for t, consumers in zip(sent, _per_step_consumers(graph, sent)):
            if foreign:
                consumers = [c for c in consumers if (t.src, t.src_slot, c) not in foreign]
            if consumers:
                read.append((t, consumers))
        for item, var in zip(read, variable_sources(graph, [t.src for t, _ in read])):
            if var is not None:
                by_var.setdefault(var, []).append(item)
        # one cause: the variables of one device read on the same other devices (a model
        # whose variables were made outside its ops' ``tf.device`` has hundreds of them)
        groups = Groups()
        # how reports print a device, worked out once per device
        shown, homes = {}, {}
        for var, items in by_var.items():
            readers = {t.dst_device for t, _ in items}
            devices = tuple(sorted({_memo(shown, d, _DISPLAY) for d in readers}))
            network = all(t.network for t, _ in items)
            groups.add((_memo(homes, placement.get(var), display), devices, network), var, items)
        for (home, devices, network), variables, per_var in groups:
            yield self._finding(home, ", ".join(devices), network, variables, per_var)

    def _finding(self, home: str, devices: str, network: bool, variables: list[str],
                 per_var: list[list]):
        items = [item for items in per_var for item in items]
        readers = sorted({c for _, cs in items for c in cs})
        known = [t.bytes for t, _ in items if t.bytes is not None]
        size = format_bytes(sum(known)) if len(known) == len(items) else "unknown size"
        copies = plural(len(items), "copy", "copies")
        # variables on ps tasks read by workers: the parameter-server layout
        link, over = ("and", " over the network") if network else ("but", "")
        if len(variables) == 1:
            subject = f"variable '{variables[0]}' lives on {home} {link} is read every step{over}"
            detail = f"{subject} by {list_names(readers)} on {devices}."
        else:
            subject = (f"{len(variables)} variables live on {home} {link} are read every "
                       f"step{over}")
            shown = "; ".join(f"'{v}' by {list_names(sorted({c for _, cs in its for c in cs}), 3)}"
                              for v, its in zip(variables[:10], per_var))
            more = f"; and {len(variables) - 10} more" if len(variables) > 10 else ""
            detail = f"{subject} on {devices}: {shown}{more}."
        message = f"{subject} on {devices} ({copies}, {size} per step)"
        if network:
            return self.diag(
                f"{message}: the parameter-server layout pays "
                f"{'this copy' if len(items) == 1 else 'these copies'} by design",
                nodes=variables, related=readers, severity=Severity.INFO, detail=detail,
                fix="(to make it cheaper) read each variable once per step per worker, and "
                    "spread large variables over the ps tasks (replica_device_setter's "
                    "ps_strategy, variable partitioners).")
        return self.diag(
            message, nodes=variables, related=readers, detail=detail,
            fix="keep a variable and the ops that use it on one device (place the variable "
                "where it is used), or pay a copy each step.")


RULE = VariableDeviceSplit
