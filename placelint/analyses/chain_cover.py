"""The maximum flow of ``antichain.py``'s network in pure Python, from a greedy chain cover.

A flow in that network pairs members: one unit ``t -> u_out -> ... -> v_in -> s`` links a
member ``u`` to a member ``v`` it reaches (``u`` then comes before ``v`` on one chain). Since
the DAG's arcs are unbounded, only the pairs matter, not the paths that carry them: the
flow is kept as ``units[v][u]`` (units linking ``u`` before ``v``) and ``outs[u][v]``, and
searches walk the DAG itself instead of the network's arcs.

* Greedy: in topological order, each member is linked after the last member of the longest
  chain of members that ends at one of its predecessors, or if that one is taken, of the
  longest such chain whose last member was still free (Mirsky's levels). On realistic
  graphs this leaves the flow at most a few units short.
* Kuhn's algorithm finishes it (``_finish``): from each member with spare ``in`` capacity,
  a breadth-first search backwards through the residual network for a member with spare
  ``out`` capacity. A vertex a search cannot lead to ``t`` never can later (an augmenting
  path runs inside the vertices ``t`` reaches, and its reversed arcs stay there), so one
  pass over the members gives a maximum flow.
* ``R``, the vertices the residual network reaches from ``t``, is found on demand
  (``_search``): forward from the members with spare ``out`` capacity through the DAG (a
  member reached on its ``in`` side is passed through: its ``in -> out`` arc is unbounded);
  a member reached on its ``in`` side leads back to the ``out`` side of each member linked
  before it. Which vertices a path reaches there depends only on the pairs (a vertex on a
  unit's path leads forward to that unit's ``v_in`` and from it back to ``u_out``, which
  reaches everything the path does), so the antichain is the one every max-flow algorithm
  gives.

Each pass costs a Python loop over the edges, so this is for graphs of the size such a loop
handles quickly and flows the greedy start leaves a few units short (``budget``); beyond,
``antichain.py`` hands the network to scipy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["greedy_max_flow"]


def greedy_max_flow(n: int, src: np.ndarray, dst: np.ndarray, member_idx: np.ndarray,
                    weights: np.ndarray | None, order: np.ndarray, budget: int):
    """(flow value, ``reach``) of the maximum flow, or None when the searches that finish
    the greedy flow visit more than ``budget`` edges; ``reach()`` gives the bool arrays
    (member reached on its ``in`` side, on its ``out`` side), in ``member_idx`` order.
    ``order``: the nodes in a topological order of the edges; ``weights``: each member's
    lower bound (None: 1), in ``member_idx`` order."""
    n, src, dst, member_idx, order = _contract(n, src, dst, member_idx, order)
    members = member_idx.tolist()
    cap = np.zeros(n, dtype=np.int64)
    cap[member_idx] = 1 if weights is None else weights
    cap = cap.tolist()
    # only the nodes from the first member to the last in ``order`` matter: the ones before
    # have no member above them (the greedy's initial state), the ones after none below
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64)
    at = rank[member_idx]
    order = order[int(at.min()):int(at.max()) + 1]
    value, units, outs, spare_out, spare_in, pred, p_start = _greedy(n, src, dst, order, cap)
    succ, s_start = _grouped(n, src, dst)
    # Is the greedy flow maximum already? Then the search from t that finds the antichain
    # (usually a small part of the graph: it starts at the chains' last members) reaches
    # no member with spare ``in`` capacity, and the searches of ``_finish`` (a walk over
    # the ancestors of every chain's first member) are not needed.
    searched = _search(n, members, succ, s_start, cap, units, spare_out, spare_in, first=True)
    if searched[2]:
        searched = None
        more = _finish(n, order, cap, units, outs, spare_out, spare_in, pred, p_start, budget)
        if more is None:
            return None
        value += more

    def reach():
        reached_in, reached_out, found = searched or _search(n, members, succ, s_start, cap,
                                                             units, spare_out, spare_in)
        if found:
            raise ValueError("the flow is not maximum; are the edges acyclic?")
        return (np.asarray(reached_in, dtype=bool)[member_idx],
                np.asarray(reached_out, dtype=bool)[member_idx])
    return value, reach


def _contract(n: int, src: np.ndarray, dst: np.ndarray, member_idx: np.ndarray, order: np.ndarray):
    """The same problem on fewer nodes and edges: ``(n, src, dst, member_idx, order)`` with
    the nodes that are not members taken out where that keeps which members reach which
    (the flow's value and the antichain depend on nothing else; see the module docstring):
    those without an edge in or without one out (no path between members runs through
    them), then those with one edge in (their out-edges leave from their predecessor
    instead), then those with one edge out (their in-edges lead to their successor). The
    members keep their order; the others are numbered anew in node order. Every pass over
    the edges costs Python time per edge and node: a subset of the members (the useful
    ops) leaves most of the nodes between them with one edge in."""
    member = np.zeros(n, dtype=bool)
    member[member_idx] = True
    other = ~member
    dead = other & ((np.bincount(dst, minlength=n) == 0) | (np.bincount(src, minlength=n) == 0))
    if dead.any():
        keep = ~(dead[src] | dead[dst])
        src, dst = src[keep], dst[keep]
    one_in = other & ~dead & (np.bincount(dst, minlength=n) == 1)
    if one_in.any():
        by = one_in[dst]
        src, dst = _follow(n, dst[by], src[by])[src[~by]], dst[~by]
    one_out = other & ~dead & ~one_in & (np.bincount(src, minlength=n) == 1)
    if one_out.any():
        by = one_out[src]
        src, dst = src[~by], _follow(n, src[by], dst[by])[dst[~by]]
    gone = dead | one_in | one_out
    if not gone.any():
        return n, src, dst, member_idx, order
    kept = np.flatnonzero(~gone)
    renumber = np.full(n, -1, dtype=np.int64)
    renumber[kept] = np.arange(kept.size, dtype=np.int64)
    return (int(kept.size), renumber[src], renumber[dst], renumber[member_idx],
            renumber[order[~gone[order]]])


def _follow(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where each node ends up when node ``a[i]`` is replaced by ``b[i]``, which may be
    replaced in turn: the end of that chain (a node not replaced stays), by pointer
    jumping (the chains end: the edges are acyclic)."""
    to = np.arange(n, dtype=np.int64)
    to[a] = b
    while True:
        nxt = to[to]
        if np.array_equal(nxt, to):
            return to
        to = nxt


def _grouped(n: int, key: np.ndarray, other: np.ndarray) -> tuple[list[int], list[int]]:
    """``other`` grouped by ``key`` (``other[starts[v]:starts[v + 1]]`` for ``key == v``)."""
    if key.size > 1 and not bool((key[1:] >= key[:-1]).all()):
        other = other[np.argsort(key, kind="stable")]
    return other.tolist(), _starts(n, key).tolist()


def _starts(n: int, key: np.ndarray) -> np.ndarray:
    """Where each node's run starts among ``key`` sorted (and ``key.size`` at ``n``): the
    counts summed up (quicker than a search of each node in the sorted keys)."""
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n), out=starts[1:])
    return starts


def _greedy(n, src, dst, order, cap):
    """A feasible flow linking each member after a free member above it, if any."""
    pred, p_start = _grouped(n, dst, src)
    level = [0] * n         # members on the longest chain ending at the node
    last = [-1] * n         # that chain's last member
    alt = [-1] * n          # the last member of the longest chain whose last member was free
    alt_level = [0] * n
    spare_out = cap[:]
    spare_in = cap[:]
    units: list[dict | None] = [None] * n     # member -> {member linked before it: units}
    outs: list[dict | None] = [None] * n      # member -> {member linked after it: units}
    value = 0
    for v in order.tolist():
        lo = p_start[v]
        hi = p_start[v + 1]
        if hi - lo == 1:    # (most nodes: the loop below with one predecessor, unrolled)
            u = pred[lo]
            top = level[u]
            best = last[u]
            if best >= 0 and spare_out[best]:
                a_top, a_best = top, best
            else:
                a_best = alt[u]
                if a_best >= 0 and spare_out[a_best]:
                    a_top = alt_level[u]
                else:
                    a_top, a_best = 0, -1
        else:
            top = a_top = 0
            best = a_best = -1
            for j in range(lo, hi):
                u = pred[j]
                if level[u] > top:
                    top = level[u]
                    best = last[u]
                b = alt[u]
                if b >= 0 and alt_level[u] > a_top and spare_out[b]:
                    a_top = alt_level[u]
                    a_best = b
            if best >= 0 and spare_out[best]:
                a_top, a_best = top, best
        c = cap[v]
        if c:
            if a_best >= 0:
                k = min(spare_out[a_best], c)
                spare_out[a_best] -= k
                spare_in[v] = c - k
                units[v] = {a_best: k}
                linked = outs[a_best]
                if linked is None:
                    outs[a_best] = {v: k}
                else:
                    linked[v] = k
                value += k
            level[v] = top + 1
            last[v] = v
            alt_level[v] = top + 1
            alt[v] = v
        else:
            level[v] = top
            last[v] = best
            alt_level[v] = a_top
            alt[v] = a_best
    return value, units, outs, spare_out, spare_in, pred, p_start


def _search(n, members, succ, s_start, cap, units, spare_out, spare_in, first=False):
    """The search of the residual network from ``t``: which nodes it reaches on their
    ``in`` side (a node that is not a member: the node) and ``out`` side, and the members
    with spare ``in`` capacity it reaches (an augmenting path each; with ``first``, the
    search stops at the first such member)."""
    reached_in = [False] * n
    reached_out = [False] * n
    expanded = [False] * n
    found: list[int] = []
    queue = [u for u in members if spare_out[u]]
    for u in queue:
        reached_out[u] = True
    queue.reverse()
    while queue:
        u = queue.pop()
        if expanded[u]:
            continue
        expanded[u] = True
        stack = [u]
        while stack:
            y = stack.pop()
            for j in range(s_start[y], s_start[y + 1]):
                x = succ[j]
                if reached_in[x]:
                    continue
                reached_in[x] = True
                if cap[x]:
                    if spare_in[x]:
                        found.append(x)
                        if first:
                            return reached_in, reached_out, found
                    linked = units[x]
                    if linked:
                        for s in linked:
                            if not reached_out[s]:
                                reached_out[s] = True
                                queue.append(s)
                    reached_out[x] = True
                if not expanded[x]:
                    expanded[x] = True
                    stack.append(x)
    return reached_in, reached_out, found


def _finish(n, order, cap, units, outs, spare_out, spare_in, pred, p_start, budget):
    """Augments the greedy flow to a maximum one (what it added; None past ``budget``
    edges), as Kuhn's matching algorithm does: from each member with spare ``in`` capacity,
    in topological order, a breadth-first search backwards for a member with spare ``out``
    capacity. Backwards from a node are its predecessors; from a member's ``out`` side also
    its ``in`` side and, through each unit linking it before a member ``z``, ``z``'s ``in``
    side (the path then takes that unit back and links ``z`` to another member instead).
    What a search that found nothing visited leads nowhere until the next augmentation, so
    such searches share their marks."""
    seen = [0] * n          # mark of the search that reached the node (its in side)
    seen_out = [0] * n      # ... a member's out side
    target = [-1] * n       # the member whose in side the search reached the node from
    jumped = [-1] * n       # member reached through a unit: the member linked before it
    mark = 1
    added = 0
    for v in order.tolist():
        while spare_in[v]:
            if seen[v] == mark:
                break           # reached by a search that found nothing: leads nowhere
            seen[v] = mark
            target[v] = v
            queue = [v]         # breadth first: the nearest free member
            at = 0
            free = -1
            while at < len(queue) and free < 0:
                x = queue[at]
                at += 1
                t = target[x]
                lo, hi = p_start[x], p_start[x + 1]
                budget -= hi - lo
                for j in range(lo, hi):
                    p = pred[j]
                    if cap[p]:
                        if seen_out[p] == mark:
                            continue
                        seen_out[p] = mark
                        target[p] = t
                        if spare_out[p]:
                            free = p
                            break
                        linked = outs[p]
                        if linked:
                            for z in linked:
                                if seen[z] != mark:
                                    seen[z] = mark
                                    target[z] = z
                                    jumped[z] = p
                                    queue.append(z)
                    if seen[p] != mark:
                        seen[p] = mark
                        if not cap[p]:
                            target[p] = t
                        queue.append(p)
                if budget < 0:
                    return None
            if free < 0:
                break
            added += _augment(v, free, target, jumped, units, outs, spare_out, spare_in)
            mark += 1
    return added


def _augment(v, free, target, jumped, units, outs, spare_out, spare_in) -> int:
    """Pushes what the path the search found from ``free``'s ``out`` side to ``v``'s ``in``
    side carries; returns that."""
    amount = min(spare_in[v], spare_out[free])
    steps = [(free, target[free], 1)]       # (member, member linked after it, +1 / -1 unit)
    y = target[free]
    while y != v:
        p = jumped[y]
        amount = min(amount, units[y][p])
        steps.append((p, y, -1))
        steps.append((p, target[p], 1))
        y = target[p]
    for u, y, sign in steps:
        _link(units, y, u, sign * amount)
        _link(outs, u, y, sign * amount)
    spare_out[free] -= amount
    spare_in[v] -= amount
    return amount


def _link(table, a, b, k):
    row = table[a]
    if row is None:
        row = table[a] = {}
    k += row.get(b, 0)
    if k:
        row[b] = k
    else:
        del row[b]
