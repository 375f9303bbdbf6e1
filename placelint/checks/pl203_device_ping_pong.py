"""PL203 device-ping-pong: a path that leaves a device and comes back to it.

Grouping: one finding per (device A, device B, outermost name scope of the first node on
B): the nodes where the paths enter B are the finding's ``nodes``; the nodes on A they
come from and go back to are in ``related_nodes``. Parameter-server round trips (a
variable read, its update sent back) are not reported.
"""

import numpy as np

from ..diagnostics import Severity, top_scope
from ..humanize import plural
from .base import Rule
from .common import Groups, node_names
from .pl202_variable_device_split import READ_THROUGH, VARIABLE_OPS, variable_source
from ..model.devices import display
from ..model.op_index import op_index
from ..model.ops import NEXT_ITERATION


#: paths looked for per device pair: the walk stops there (a 10^6-node graph of towers
#: mixed every few layers has ~7500 per pair, and walking them all cost ~3 s)
MAX_PATHS = 100


def ping_pongs(graph, placement, transfers, skip=None, limit: int = MAX_PATHS):
    """(paths, cut): the paths (node on A, first node on B, last node on B, node back on A)
    for device pairs A, B, and the pairs (A, B) whose walk stopped at ``limit`` paths.

    For each ordered pair (A, B) with transfers both ways: walk forward from the nodes on
    B that receive from A, through nodes on B only; a node reached that sends back to A
    closes a ping-pong. Linear per device pair. A pair gives one path per (node on A, node
    back on A), leaving out those ``skip(src, back)`` is true of, up to ``limit``.
    """
    device = placement.device
    pairs: dict[tuple, list] = {}       # (A, B) -> its data transfers, in order
    for t in transfers:
        if not t.control:
            pairs.setdefault((t.src_device, t.dst_device), []).append(t)
    found = []
    cut: set[tuple[str, str]] = set()
    walked = [(a, b) for a, b in sorted(pairs) if (b, a) in pairs]
    if not walked:
        return found, cut
    # Each node's device as a small int by graph position: the walk looks the device of
    # each edge's destination up (~1.5 graphs' worth of edges in a 4-device training
    # graph), and a look-up through the placement's name -> device mapping costs a call
    # each
    known = device.codes(graph) if hasattr(device, "codes") else None
    if known is None:
        codes = None
    else:
        codes, table = known
        codes = codes.tolist()
        index = graph.positions()
    nodes = graph.nodes
    for a, b in walked:
        entry: dict[str, tuple[str, str]] = {}   # node on B -> (node on A, entry node on B)
        ends: set[tuple[str, str]] = set()       # (node on A, node back on A) reported
        skipped: set[tuple[str, str]] = set()    # ... and left out
        stack = []
        for t in pairs[a, b]:
            for c in t.consumers:
                if c not in entry:
                    entry[c] = (t.src, c)
                    stack.append(c)
        if codes is not None:
            on_a, on_b = [d == a for d in table], [d == b for d in table]   # by code
        while stack:
            if len(ends) >= limit:
                cut.add((a, b))
                break
            name = stack.pop()
            origin = entry[name]
            node = nodes[name]
            if node.op in NEXT_ITERATION:
                continue        # its out edges are loop back edges (Graph.is_back_edge)
            for e in node.out_edges:
                if e.src_slot < 0:      # a control edge
                    continue
                dst = e.dst
                if codes is None:
                    dst_dev = device.get(dst)
                    to_a, to_b = dst_dev == a, dst_dev == b
                else:
                    code = codes[index[dst]]
                    to_a, to_b = on_a[code], on_b[code]
                if to_a:
                    end = (origin[0], dst)
                    if end in ends or end in skipped:
                        continue
                    if skip is not None and skip(*end):
                        skipped.add(end)
                        continue
                    ends.add(end)
                    found.append((origin[0], origin[1], name, dst))
                elif to_b and dst not in entry:
                    entry[dst] = origin
                    stack.append(dst)
    return found, cut


def variable_round_trip(graph, placement, src: str, back: str, var_groups: set[str]) -> bool:
    """The parameter-server round trip: ``src`` reads a variable, and ``back`` updates a
    variable (an Assign or Apply op, joined to the variable's colocation group by its
    ref/resource input). Training reads the variables where they live, computes the
    gradients on the workers (or the accelerator) and sends the updates back: the round
    trip is the design, not a misplaced op."""
    if variable_source(graph, src) is None or graph.nodes[back].op in READ_THROUGH:
        return False
    return placement.group_of.get(back, back) in var_groups


class DevicePingPong(Rule):
    code = "PL203"
    name = "device-ping-pong"
    severity = Severity.WARNING
    summary = "Data leaves a device and comes back to it: two copies where none may be needed."
    per_step = True

    def check(self, ctx):
        # the analysed step's graph and placement (a fed tensor comes from the client)
        placement = ctx.step_placement
        device = placement.device
        group = placement.group_of
        graph = ctx.step.graph
        ops = op_index(graph)   # the variables by op type, not by reading every node's op
        if ops.any_of(VARIABLE_OPS):
            names = node_names(graph)
            var_groups = {group.get(names[i], names[i]) for i in
                          np.flatnonzero(ops.mask(VARIABLE_OPS.__contains__)).tolist()}
        else:
            var_groups = set()
        groups = Groups()
        paths, cut = ping_pongs(
            ctx.step.graph, placement, ctx.transfers,
            skip=lambda src, back: variable_round_trip(ctx.graph, placement, src, back,
                                                       var_groups))
        stopped = set()     # the findings of the pairs whose walk stopped at MAX_PATHS
        for src, enter, leave, back in paths:
            key = (display(device[back]), display(device[enter]), top_scope(enter))
            groups.add(key, enter, (src, enter, leave, back))
            if (device[back], device[enter]) in cut:
                stopped.add(key)
        for (a, b, scope), nodes, paths in groups:
            texts = []
            for src, enter, leave, back in paths[:5]:
                texts.append(f"{src} ({a}) -> {enter}" + (f" ... {leave}" if leave != enter else "")
                             + f" ({b}) -> {back} ({a})")
            more = f"; and {len(paths) - 5} more" if len(paths) > 5 else ""
            entered = set(nodes)    # (thousands of paths per finding in a 10^6-node graph)
            related = list(dict.fromkeys(n for src, _, leave, back in paths
                                         for n in (src, leave, back) if n not in entered))
            where = f" in scope {scope}" if scope else ""
            counted = ("at least " if (a, b, scope) in stopped else "") + plural(len(paths), "path")
            yield self.diag(
                f"data goes {a} -> {b} -> {a}{where} "
                f"({counted}; each hop is a copy every step)",
                nodes=nodes, related=related, detail="; ".join(texts) + more,
                fix=f"move the {b} ops of these paths to {a}, or the {a} ops to {b}.")


RULE = DevicePingPong
