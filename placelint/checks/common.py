"""Shared helpers for rule messages and for grouping findings by cause.

Every rule groups the nodes that share one cause into one finding (see each rule's
``group_key`` and its rule document). ``Groups`` keeps the groups in the order their
first node appears, and ``in_tf_order`` sorts a group's nodes in TensorFlow's
processing order, so the first node is the one TF stops at first.
"""

from __future__ import annotations

import re

from ..humanize import list_names, plural

_NODE_REF = re.compile(r"\{\{(colocation_node|node) ([^}]*)\}\}")

#: How to turn on soft placement, TF1 and TF2 (the advice of PL101/PL104).
SOFT_PLACEMENT_HOWTO = ("tf.config.set_soft_device_placement(True) in TF2, "
                        "ConfigProto(allow_soft_placement=True) in a TF1 session")
#: How to drop a saved model's device requests when loading it on another machine.
CLEAR_DEVICES_HOWTO = ("load it with clear_devices=True (tf.compat.v1.train.import_meta_graph, "
                       "tf.compat.v1.saved_model.loader.load)")


def tf_text(message: str) -> str:
    """TF's internal node markers made readable: ``{{node X}}`` -> ``node X`` and
    ``{{colocation_node X}}`` -> ``X`` (TF's own text already says "the node" or "nodes"
    before a colocation marker, so expanding it to "node X" would read "the node node X")."""
    return _NODE_REF.sub(lambda m: m.group(2) if m.group(1) == "colocation_node"
                         else f"node {m.group(2)}", message)


def members_text(result, node: str) -> str:
    members = result.members(node)
    return list_names(sorted(members)) if len(members) > 1 else node


class Groups:
    """Findings under construction: key -> (nodes, items), in first-seen order."""

    def __init__(self):
        self._groups: dict = {}

    def add(self, key, node: str, item=None) -> None:
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = ({}, [])
        group[0][node] = None       # the nodes as dict keys: in first-seen order, once each
        if item is not None:
            group[1].append(item)

    def __iter__(self):
        for key, (nodes, items) in self._groups.items():
            yield key, list(nodes), items

    def __len__(self) -> int:
        return len(self._groups)


def node_names(graph) -> list[str]:
    """The graph's node names by position, made once per graph and shared by the rules
    that turn positions from the op or edge index back into names (listing 10^6 names
    touches every name string: ~40 ms)."""
    return graph.derived("node_names", lambda: list(graph.nodes))


def in_tf_order(ctx, nodes) -> list[str]:
    """``nodes`` in TensorFlow's node order (the order its placer visits them)."""
    order = ctx.node_order
    big = len(order)
    return sorted(dict.fromkeys(nodes), key=lambda n: order.get(n, big))


def count(n: int, word: str, many: str | None = None) -> str:
    return plural(n, word, many)


def registered_kernels(op: str) -> str:
    """TF's ``KernelsRegisteredForOp`` text for ``op`` (op_kernel.cc), from the op
    database: one ``  device='GPU'; T in [DT_FLOAT, DT_HALF]`` line per kernel."""
    from ..dtypes import dtype_enum_name
    from ..opdb import get_opdb
    info = get_opdb().op(op)
    if info is None or not info.kernels:
        return "  <no registered kernels>\n"
    lines = []
    for k in info.kernels:
        parts = [f"device='{k.device_type}'"]
        for c in k.constraints:
            if c.kind == "type":
                values = ", ".join(dtype_enum_name(v) for v in sorted(c.allowed))
            elif c.kind == "s":
                values = ", ".join(f'"{v.decode("utf-8", "replace")}"' for v in sorted(c.allowed))
            else:
                values = ", ".join(str(v) for v in sorted(c.allowed))
            parts.append(f"{c.attr} in [{values}]")
        if k.label:
            parts.append(f"label='{k.label}'")
        lines.append("  " + "; ".join(parts))
    return "\n".join(lines) + "\n"


def kernel_types_summary(op: str) -> str:
    """``CPU (float32, int32), GPU (float32)``: the device types with a kernel for ``op``
    and the dtypes they take (the union over a type's kernels); '' when none."""
    from ..dtypes import dtype_name
    from ..opdb import get_opdb
    info = get_opdb().op(op)
    if info is None or not info.kernels:
        return ""
    by_type: dict[str, set[int] | None] = {}
    for k in info.kernels:
        types = [c.allowed for c in k.constraints if c.kind == "type"]
        current = by_type.get(k.device_type, set())
        if not types or current is None:
            by_type[k.device_type] = None        # some kernel takes any dtype
        else:
            current.update(t for allowed in types for t in allowed)
            by_type[k.device_type] = current
    parts = []
    for dev in sorted(by_type):
        dts = by_type[dev]
        if dts is None:
            parts.append(dev)
        else:
            names = [dtype_name(t) for t in sorted(dts)]
            shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
            parts.append(f"{dev} ({shown})")
    return ", ".join(parts)
