"""Structural checks TensorFlow makes on import or at the first run, on the built ``Graph``.

* Cycles: TF's graph import (``GraphConstructor``, graph_constructor.cc) processes nodes
  in topological order and refuses what is left over as ``N nodes in a cycle``; the only
  exception is a ``Merge`` fed by a ``NextIteration`` (a TF1 while loop), which becomes
  ready after one data input. Every analysis assumes that ``Graph.dag_edges`` (all edges
  but loop back edges) is acyclic, so a cycle elsewhere is reported and the edges closing
  it are removed from the graph: analyses never loop on it.
* Frames: ``Exit`` leaves a while-loop frame; TF fails at the first run with ``Invalid
  Exit op: Cannot find a corresponding Enter op.`` when an ``Exit`` is not inside one
  (``BuildControlFlowInfo``, control_flow.cc).

Everything here is iterative and linear in the size of the graph.
"""

from __future__ import annotations

from collections import deque

from ..checks.pl005_invalid_graph import InvalidGraph
from ..diagnostics import Diagnostic
from ..humanize import list_names
from .graph import Edge, Graph
from .ops import ENTER, EXIT, MERGE, NEXT_ITERATION


def _diag(message: str, node: str | None, related=()) -> Diagnostic:
    return InvalidGraph.diag(message, node=node, related=related)


def validate(graph: Graph, ops=None, backward=None) -> list[Diagnostic]:
    """Check ``graph`` in place: report what TF refuses and break illegal cycles.
    ``ops``: every op of the graph (a superset will do), when the caller knows them (else
    read from the nodes); ``backward``: see ``check_cycles``."""
    diags = []
    diags.extend(check_cycles(graph, backward))
    diags.extend(check_frames(graph, ops))
    return diags


# -- cycles -------------------------------------------------------------------------
def unprocessed_nodes(graph: Graph) -> tuple[set[str], bool]:
    """Nodes TF's import cannot order: in a cycle that is not a while loop, or after one;
    and whether a while loop's Merge was ordered after one input (without one, every
    node ordered means no cycle at all)."""
    nodes = list(graph.nodes.values())
    index = graph.positions()
    by_name = graph.nodes
    pending = [0] * len(nodes)
    ready: deque[int] = deque()
    loop_merge = False
    for i, node in enumerate(nodes):
        count = len(node.in_edges)
        if node.op in MERGE and any(by_name[e.src].op in NEXT_ITERATION
                                    for e in node.in_edges if not e.control):
            count = len(node.control_inputs) + 1
            loop_merge = True
        pending[i] = count
        if count == 0:
            ready.append(i)
    done = [False] * len(nodes)
    while ready:
        i = ready.popleft()
        done[i] = True
        for e in nodes[i].out_edges:
            j = index[e.dst]
            pending[j] -= 1
            if pending[j] == 0:
                ready.append(j)
    return {node.name for node, ok in zip(nodes, done) if not ok}, loop_merge


def _find_cycle(graph: Graph, left: set[str]) -> list[str]:
    """One cycle among ``left`` (every node there has a predecessor there): walk back."""
    start = min(left)
    seen: dict[str, int] = {}
    path: list[str] = []
    name = start
    while name not in seen:
        seen[name] = len(path)
        path.append(name)
        preds = sorted(e.src for e in graph.nodes[name].in_edges if e.src in left)
        if not preds:   # cannot happen for Kahn leftovers; be safe
            return path
        name = preds[0]
    cycle = path[seen[name]:]
    cycle.reverse()     # walked against the edges
    return cycle


def _closing_edges(graph: Graph) -> list[Edge]:
    """Edges (other than loop back edges) whose removal leaves the graph acyclic:
    the back edges of an iterative depth-first search."""
    nodes = graph.nodes
    state: dict[str, int] = {}   # 1 = on the stack, 2 = finished
    closing: list[Edge] = []
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(nodes[root].out_edges))]
        while stack:
            name, it = stack[-1]
            for e in it:
                if graph.is_back_edge(e):
                    continue
                s = state.get(e.dst)
                if s == 1:
                    closing.append(e)
                elif s is None:
                    state[e.dst] = 1
                    stack.append((e.dst, iter(nodes[e.dst].out_edges)))
                    break
            else:
                state[name] = 2
                stack.pop()
    return closing


def format_path(names: list[str], limit: int = 8) -> str:
    """``a -> b -> c -> a``, eliding the middle of long cycles."""
    names = names + names[:1]
    if len(names) > limit:
        names = names[:limit - 2] + [f"... ({len(names) - limit + 1} more)", names[-1]]
    return " -> ".join(names)


def no_cycle_within(graph: Graph, backward: list[tuple[int, int]]) -> bool:
    """Whether ``graph`` has no cycle, given the spans ``(destination, source)`` (graph
    positions) of every edge that does not point forward. A cycle from position ``m`` up
    to ``M`` must come back down across each point between them, which only those edges
    do: their spans on the cycle chain from ``m`` to ``M``, and the cycle lies within one
    run of overlapping or touching spans. Kahn's pass over each run's nodes and the edges
    among them finds it. (The edges among them are read as the run's out-edges into the
    run, through a name -> position table of the run alone: an expanded TF2 body's runs
    are two nodes, one a NoOp with thousands of in-edges, and a look-up in the graph's
    positions is a cache miss at 10^6 nodes.)"""
    spans = sorted(backward)
    runs: list[list[int]] = []
    for lo, hi in spans:
        if runs and lo <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], hi)
        else:
            runs.append([lo, hi])
    nodes = list(graph.nodes.values())
    for lo, hi in runs:
        run = nodes[lo:hi + 1]
        at = {node.name: k for k, node in enumerate(run)}
        pending = [0] * len(run)
        for node in run:
            for e in node.out_edges:
                j = at.get(e.dst)
                if j is not None:
                    pending[j] += 1
        ready = [k for k in range(len(run)) if not pending[k]]
        done = 0
        while ready:
            k = ready.pop()
            done += 1
            for e in run[k].out_edges:
                j = at.get(e.dst)
                if j is not None:
                    pending[j] -= 1
                    if not pending[j]:
                        ready.append(j)
        if done < len(run):
            return False
    return True


def check_cycles(graph: Graph, backward: list[tuple[int, int]] | None = None) -> list[Diagnostic]:
    """Report cycles TF refuses and remove the edges closing any cycle that is not a loop.
    ``backward``: when the caller knows them, the spans of the edges that do not point
    forward (see ``no_cycle_within``)."""
    if (no_cycle_within(graph, backward) if backward is not None
            else graph.edges_point_forward()):     # then there is no cycle at all
        return []
    left, loop_merge = unprocessed_nodes(graph)
    cycle = _find_cycle(graph, left) if left else []
    closing = _closing_edges(graph) if left or loop_merge else []
    for e in closing:
        graph.remove_edge(e)
    ignored = ""
    if closing:
        edges = list_names([f"{e.src} -> {e.dst}" for e in closing], limit=5)
        ignored = f"; placelint ignores the edge(s) {edges} to analyse the rest"
    if cycle:
        return [_diag(f"{len(left)} nodes are in or after a cycle that is not a while loop "
                      f"({format_path(cycle)}); TensorFlow refuses the graph ('{len(left)} "
                      "nodes in a cycle'): only NextIteration -> Merge may close a cycle"
                      + ignored, node=cycle[0], related=cycle[1:10])]
    if closing:
        e = closing[0]
        return [_diag("a cycle goes through a while loop's Merge without passing its "
                      f"NextIteration (closed by {e.src} -> {e.dst})" + ignored,
                      node=e.dst, related=[e.src])]
    return []


# -- while-loop frames --------------------------------------------------------------
def check_frames(graph: Graph, ops=None) -> list[Diagnostic]:
    """Every ``Exit`` node is inside a while loop (``ops``: see ``validate``)."""
    nodes = graph.nodes
    if EXIT.isdisjoint({n.op for n in nodes.values()} if ops is None else ops):
        return []
    depth: dict[str, int] = {}
    queue: deque[str] = deque()
    for name, node in nodes.items():
        if not node.in_edges:
            depth[name] = 0
            queue.append(name)
    bad: list[str] = []
    while queue:
        name = queue.popleft()
        node = nodes[name]
        d = depth[name]
        if node.op in EXIT:
            if d <= 0:
                bad.append(name)
            d = max(d - 1, 0)
        for e in node.out_edges:
            if e.dst in depth:
                continue
            depth[e.dst] = d + 1 if nodes[e.dst].op in ENTER else d
            queue.append(e.dst)
    if not bad:
        return []
    return [_diag(f"Exit node '{bad[0]}' is not inside a while loop (no Enter leads to it); "
                  "TensorFlow fails at the first run with 'Invalid Exit op: Cannot find a "
                  f"corresponding Enter op.'"
                  + (f" Also: {list_names(bad[1:])}." if len(bad) > 1 else ""),
                  node=bad[0], related=bad[1:10])]
