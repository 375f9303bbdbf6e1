"""Which nodes a training or inference step runs, and how often, for the parallelism figures.

* ``step_mask``: the step excludes initialisation and restore work. With the analysed step
  from the context (a set of node names) that set is used; otherwise a structural rule: a
  node belongs to the step unless every path from it ends at an init/restore/save target
  (a NoOp named ``init``, ``init_all_tables``, ``legacy_init_op``, ``restore_all``,
  ``restore_shard``, or any sink under a ``save/`` scope), i.e. unless it is only reachable
  *backwards* from those targets: initializers (``Assign`` of a ``TruncatedNormal``),
  ``IsVariableInitialized`` checks and the saver's ops.
* ``exclusive_branches``: ``If``/``Case`` run one branch per step (TF's
  ``IfOp``/``CaseOp`` kernels, kernels/functional_ops.cc): every branch but the heaviest
  (by estimated time) is dropped from the step, so two branches of one ``If`` are never
  counted as parallel. TF1 ``Switch``/``Merge`` conditionals are not told apart.
* ``loop_copies``: ``parallel_iterations`` of a functional ``While``: body ops that do
  not wait for the previous iteration's heavy work count ``parallel_iterations`` times
  (see the function). TF1 loops (``Enter`` frames) overlap iterations the same way;
  placelint counts their body once (a limitation: their loop variables are not marked).
"""

from __future__ import annotations

import re

import numpy as np

from ..model.ops import CASE, IF, WHILE
from .dag import IndexedDag

__all__ = ["step_mask", "exclusive_branches", "loop_copies"]

_TARGET = re.compile(r"(^|/)(init|init_all_tables|init_all_vars|legacy_init_op|restore_all|"
                     r"restore_shard)(_\d+)?$")
_SAVE_SCOPE = re.compile(r"(^|/)save(_\d+)?/")
BRANCH_OPS = IF | CASE
LOOP_OPS = WHILE
DEFAULT_PARALLEL_ITERATIONS = 10     # the While op's attr default (ops/functional_ops.cc)


def _successors(dag: IndexedDag) -> tuple[list[int], list[int]]:
    by_src = np.argsort(dag.src, kind="stable")
    succ = dag.dst[by_src].tolist()
    starts = np.searchsorted(dag.src[by_src], np.arange(dag.n + 1)).tolist()
    return succ, starts


def step_mask(dag: IndexedDag, step_nodes=None) -> tuple[np.ndarray, int]:
    """(bool mask of the nodes the step runs, how many nodes were left out)."""
    n = dag.n
    if step_nodes is not None:
        mask = np.fromiter((node.name in step_nodes for node in dag.nodes), dtype=bool, count=n)
        return mask, int(n - np.count_nonzero(mask))
    nodes = dag.nodes
    has_out = np.zeros(n, dtype=bool)
    has_out[dag.src] = True
    targets = [i for i, node in enumerate(nodes)
               if (node.op == "NoOp" and _TARGET.search(node.name))
               or ("save" in node.name and not has_out[i] and _SAVE_SCOPE.search(node.name))]
    if not targets:
        return np.ones(n, dtype=bool), 0
    is_target = np.zeros(n, dtype=bool)
    is_target[targets] = True
    # nodes that reach a sink which is not a target: backwards from those sinks
    reach = ~has_out & ~is_target
    by_dst = np.argsort(dag.dst, kind="stable")
    pred = dag.src[by_dst].tolist()
    starts = np.searchsorted(dag.dst[by_dst], np.arange(n + 1)).tolist()
    seen = reach.tolist()
    stack = np.flatnonzero(reach).tolist()
    while stack:
        v = stack.pop()
        for j in range(starts[v], starts[v + 1]):
            u = pred[j]
            if not seen[u] and not is_target[u]:
                seen[u] = True
                stack.append(u)
    mask = np.asarray(seen, dtype=bool)
    return mask, int(n - np.count_nonzero(mask))


def _branch_root(call_site: str, roots: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    s = call_site
    while s:
        hit = roots.get(s)
        if hit is not None:
            return hit
        s = s.rpartition("/")[0]
    return None


def exclusive_branches(dag: IndexedDag, time_us: np.ndarray, op_types=None) -> np.ndarray:
    """Bool mask of the nodes in the ``If``/``Case`` branches a step does not run (all but
    the heaviest branch of each such op). ``op_types``: the graph's op types, if known."""
    nodes = dag.nodes
    out = np.zeros(dag.n, dtype=bool)
    if op_types is not None and not BRANCH_OPS & op_types:
        return out
    calls = [i for i, node in enumerate(nodes) if node.op in BRANCH_OPS]
    if not calls:
        return out
    # branch call sites are "<op node>/<label>" (model/build.py)
    roots: dict[str, tuple[int, str]] = {}
    for i in calls:
        roots[nodes[i].name] = (i, "")
    members: dict[tuple[int, str], list[int]] = {}
    for k, node in enumerate(nodes):
        cs = node.call_site
        if not cs:
            continue
        # every If/Case this node is inside, and the branch label under each
        s = cs
        while s:
            head, _, label = s.rpartition("/")
            hit = roots.get(head)
            if hit is not None:
                members.setdefault((hit[0], label.split("/")[0]), []).append(k)
            s = head
    by_call: dict[int, list[tuple[str, list[int]]]] = {}
    for (i, label), idx in members.items():
        by_call.setdefault(i, []).append((label, idx))
    for i, branches in by_call.items():
        if len(branches) < 2:
            continue
        weights = [float(time_us[idx].sum()) for _, idx in branches]
        keep = max(range(len(branches)), key=lambda b: (weights[b], -b))
        for b, (_, idx) in enumerate(branches):
            if b != keep:
                out[idx] = True
    return out


def _index_attr(node) -> int | None:
    attr = node.attrs.get("index")
    return int(attr.i) if attr is not None else None


def _reach(start: list[int], succ: list[int], starts: list[int], inside: set[int]) -> set[int]:
    """Nodes of ``inside`` reachable from ``start`` (included) along edges within it."""
    seen = set(start)
    stack = list(start)
    while stack:
        u = stack.pop()
        for j in range(starts[u], starts[u + 1]):
            w = succ[j]
            if w in inside and w not in seen:
                seen.add(w)
                stack.append(w)
    return seen


def loop_copies(dag: IndexedDag, useful: np.ndarray, op_types=None
                ) -> tuple[np.ndarray, list[tuple[str, int, int, int]]]:
    """(copies per node, per functional loop: (name, parallel_iterations, ops worth a
    thread in its body, how many of them overlap across iterations)).

    TF lowers a functional ``While`` to a frame (``LowerWhileHelper``,
    lower_while_op.cc) whose ``Enter`` nodes carry ``parallel_iterations``: the executor
    starts iteration i+1 as soon as its loop variables are ready, with up to that many
    iterations alive. A body op that depends only on loop variables computed by cheap
    ops (a counter) and on loop invariants is ready in every live iteration at about the
    same time: it counts ``parallel_iterations`` times (the trip count is not known
    statically; at least that many iterations are assumed). A body op downstream of a
    loop variable whose next value needs an op worth a thread (an RNN state) waits for
    the previous iteration: it counts once. Measured on TF 2.21 (tests/parallel_corpus.py
    ``while_p10``: ten iterations of an independent MatMul, FULL_TRACE): up to 7 of the
    iterations' MatMuls handed out at once on a loaded 2-core machine, 1-2 at
    ``parallel_iterations=1``.
    """
    nodes = dag.nodes
    copies = np.ones(dag.n, dtype=np.int64)
    info: list[tuple[str, int, int, int]] = []
    if op_types is not None and not LOOP_OPS & op_types:
        return copies, info
    loops = {nodes[i].name: i for i in range(dag.n) if nodes[i].op in LOOP_OPS}
    if not loops:
        return copies, info
    members: dict[str, list[int]] = {name: [] for name in loops}
    for k, node in enumerate(nodes):
        if node.loop in members and node.call_site.startswith(node.loop + "/body"):
            members[node.loop].append(k)
    succ, starts = _successors(dag)
    useful_l = useful.tolist()
    for name, i in loops.items():
        attr = nodes[i].attrs.get("parallel_iterations")
        p = int(attr.i) if attr is not None and attr.i else DEFAULT_PARALLEL_ITERATIONS
        body = members[name]
        heavy = [k for k in body if useful_l[k]]
        overlapping = 0
        if heavy and p > 1:
            inside = set(body)
            top = name + "/body"
            args = {_index_attr(nodes[k]): k for k in body
                    if nodes[k].op == "_Arg" and nodes[k].call_site == top}
            # loop variables whose next value needs an op worth a thread
            after_heavy = _reach(heavy, succ, starts, inside)
            carried = [args[j] for k in body
                       if nodes[k].op == "_Retval" and nodes[k].call_site == top and k in after_heavy
                       and (j := _index_attr(nodes[k])) in args]
            waits = _reach(carried, succ, starts, inside)
            for k in heavy:
                if k not in waits:
                    copies[k] = p
                    overlapping += 1
        info.append((name, p, len(heavy), overlapping))
    return copies, info
