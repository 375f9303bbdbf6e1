"""The order in which TensorFlow's graph importer takes a GraphDef's nodes
(``GraphConstructor::Convert``, graph_constructor.cc): among the nodes whose inputs are
all taken, the lowest GraphDef index first."""

from __future__ import annotations

import heapq
import re
from typing import TypeVar

from .ops import NEXT_ITERATION, NODEDEF_MERGE

T = TypeVar("T")

_INPUT = re.compile(r"^(.*):(\d+)$")


def split_input(ref: str) -> tuple[str, int]:
    """``name:k`` -> (name, k); ``name`` -> (name, 0); ``^name`` -> (name, -1)."""
    if ref.startswith("^"):
        return ref[1:], -1
    if ":" not in ref:
        return ref, 0
    m = _INPUT.match(ref)
    return (m.group(1), int(m.group(2))) if m else (ref, -2)


def tf_order(graph_def, per_node: dict[str, T]) -> list[T]:
    """The values of ``per_node`` (node -> value) in GraphConstructor::Convert's order of
    their nodes: ready nodes by GraphDef index (a NextIteration -> Merge edge does not hold
    its Merge back); the nodes left in cycles last, in graph order."""
    nds = []
    index: dict[str, int] = {}
    for nd in graph_def.node:
        if nd.name not in index:
            index[nd.name] = len(nds)
            nds.append(nd)
    next_iteration = {nd.name for nd in nds if nd.op in NEXT_ITERATION}
    pending = [0] * len(nds)
    outputs: list[list[int]] = [[] for _ in nds]
    for k, nd in enumerate(nds):
        controls = 0
        loop = False
        for ref in nd.input:
            if ref[:1] == "^":
                controls += 1
                src = ref[1:]
            else:
                src = split_input(ref)[0]
                loop = loop or src in next_iteration
            j = index.get(src)
            if j is not None:
                outputs[j].append(k)
        pending[k] = controls + 1 if nd.op in NODEDEF_MERGE and loop else len(nd.input)
    ready = [k for k, count in enumerate(pending) if count == 0]
    heapq.heapify(ready)
    order: list[T] = []
    seen: set[str] = set()
    while ready:
        k = heapq.heappop(ready)
        name = nds[k].name
        if name in per_node:
            order.append(per_node[name])
            seen.add(name)
        is_next = name in next_iteration
        for o in outputs[k]:
            if is_next and nds[o].op in NODEDEF_MERGE:
                continue
            pending[o] -= 1
            if pending[o] == 0:
                heapq.heappush(ready, o)
    order.extend(v for n, v in per_node.items() if n not in seen)   # in cycles: graph order
    return order
