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
from dataclasses import dataclass, field

import numpy as np

from ..model.ops import CASE, IF, WHILE
from .dag import IndexedDag
from .threads import DISPATCH_US
from .waves import Grouped

__all__ = ["step_mask", "exclusive_branches", "loop_copies", "LoopScope"]

_TARGET = re.compile(r"(^|/)(init|init_all_tables|init_all_vars|legacy_init_op|restore_all|"
                     r"restore_shard)(_\d+)?$")
_SAVE_SCOPE = re.compile(r"(^|/)save(_\d+)?/")
BRANCH_OPS = IF | CASE
LOOP_OPS = WHILE
DEFAULT_PARALLEL_ITERATIONS = 10     # the While op's attr default (ops/functional_ops.cc)
#: measured: one inline control op of a loop frame, per iteration (benchmarks/dispatch_overhead.py
#: ``loop_op_us``: a counting loop's step time per iteration over its lowered ops per iteration)
LOOP_INLINE_US = 0.13


def _successors(dag: IndexedDag) -> tuple[list[int], list[int]]:
    by_src = np.argsort(dag.src, kind="stable")
    succ = dag.dst[by_src].tolist()
    starts = np.searchsorted(dag.src[by_src], np.arange(dag.n + 1)).tolist()
    return succ, starts


def step_mask(dag: IndexedDag, step_nodes, per_op, pred: Grouped | None = None
              ) -> tuple[np.ndarray, int]:
    """(bool mask of the nodes the step runs, how many nodes were left out); ``step_nodes``:
    the step's nodes when known (None: judged by the targets' names); ``per_op``: a bool
    mask over the nodes from a predicate on op types (``model.op_index.OpIndex.mask``);
    ``pred``: each node's predecessors (``Grouped(n, dag.dst, dag.src)``), if the caller
    has them."""
    n = dag.n
    if step_nodes is not None:
        mask = np.fromiter(map(step_nodes.__contains__, dag.index), dtype=bool, count=n)
        return mask, int(n - np.count_nonzero(mask))
    remaining = np.bincount(dag.src, minlength=n)     # out edges not yet left out
    has_out = remaining > 0
    nodes = dag.nodes       # (the names of the few nodes asked about, not a list of all)
    # (every target name holds "init" or "restore_": a substring test spares most NoOps
    # the search)
    targets = [i for i in np.flatnonzero(per_op("NoOp".__eq__)).tolist()
               if ("init" in (name := nodes[i].name) or "restore_" in name) and _TARGET.search(name)]
    targets += [i for i in np.flatnonzero(~has_out).tolist()      # sinks in save scopes
                if "save" in (name := nodes[i].name) and _SAVE_SCOPE.search(name)]
    if not targets:
        return np.ones(n, dtype=bool), 0
    # the step: the nodes with a path to a sink that is not a target, through no target.
    # Its complement, the targets and the nodes whose every edge leads into it, is found
    # from the targets backwards (a node joins once its last edge does), a wave at a time
    # over the edge arrays: a pass over the init/restore/save part only, not over the step
    left = np.zeros(n, dtype=bool)
    left[targets] = True
    if pred is None:
        pred = Grouped(n, dag.dst, dag.src)
    pred.spread(left, remaining)
    mask = ~left
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


@dataclass
class LoopScope:
    """Per node: ``copies``, how many times a step runs it (``parallel_iterations`` for a
    loop body op that does not wait for the previous iteration, else 1); ``at_once``, how
    many of those copies can be in flight together (the hand-out bound below); and
    ``handout_us``, the time between two copies' hand-outs (0 outside loops). ``loops``:
    per functional loop (name, parallel_iterations, ops worth a thread in its body, how
    many of them overlap across iterations, the most copies of one in flight at once)."""
    copies: np.ndarray
    at_once: np.ndarray
    handout_us: np.ndarray
    loops: list[tuple[str, int, int, int, int]] = field(default_factory=list)


def loop_copies(dag: IndexedDag, useful: np.ndarray, op_types=None,
                time_us: np.ndarray | None = None) -> LoopScope:
    """How often loop body ops run per step and how many of their copies overlap.

    TF lowers a functional ``While`` to a frame (``LowerWhileHelper``,
    lower_while_op.cc) whose ``Enter`` nodes carry ``parallel_iterations``: the executor
    starts iteration i+1 as soon as its loop variables are ready, with up to that many
    iterations alive. A body op that depends only on loop variables computed by cheap
    ops (a counter) and on loop invariants is ready in every live iteration: it counts
    ``parallel_iterations`` times (the trip count is not known statically; at least that
    many iterations are assumed). A body op downstream of a loop variable whose next value
    needs an op worth a thread (an RNN state) waits for the previous iteration: it counts
    once.

    Hand-out: iterations do not start all at once. In executor.cc an iteration's ops are
    activated through its ``Merge`` nodes, which fire when the previous iteration's
    ``NextIteration`` runs (``PropagatorState::PropagateOutputs``: a NextIteration's output
    goes to iteration ``iter + 1`` of the frame, ``FrameState::IncrementIteration``, which
    is deferred once ``parallel_iterations`` iterations are alive). Per iteration the
    lowered loop runs, per loop variable, a Merge, a Switch and a NextIteration (plus the
    body's input and output identities, the function's ``_Arg``/``_Retval`` here), the
    LoopCond and the condition's and body's inexpensive ops: all below the inline
    threshold, so ``ScheduleReady`` keeps them on one thread, one after the other. The loop
    hands out one iteration's body kernels every ``h = c * LOOP_INLINE_US`` (``c`` those
    control ops) to the inter-op pool, so a body op of time ``T`` has at most
    ``min(p, 1 + floor((T + DISPATCH_US) / h))`` copies in flight: copy j is handed out at
    ``j * h`` and the first ends at ``DISPATCH_US + T``. The thread simulation hands the
    copies out at the same pace (``ThreadModel``'s ``handout_us``).
    ``LOOP_INLINE_US`` is measured (``benchmarks/dispatch_overhead.py``: ``loop_op_us``,
    a counting loop's step time per iteration over its lowered ops per iteration).
    Measured on TF 2.21: 0.13-0.15 us per control op, the same while TF's profiler records
    the expensive kernels (``loop_op_profiled_us``). tests/parallel_corpus.py ``while_p10``
    (ten iterations of an independent MatMul, ~300 us each; 50 control ops an iteration):
    h = 6.5 us, all ten copies hand out within one MatMul; the profiler saw the ten
    iterations handed out ~10 us apart and all in flight at inter_op=8. The hand-out
    needs a core: on a busy 2-core machine the OS often runs the woken MatMul threads
    instead of the loop's thread, which then hands out the rest one MatMul later (per
    step 2-11 in flight); the bound here is the graph's, with the thread keeping its core.
    """
    n = dag.n
    nodes = dag.nodes
    copies = np.ones(n, dtype=np.int64)
    at_once = np.ones(n, dtype=np.int64)
    handout = np.zeros(n, dtype=float)
    out = LoopScope(copies, at_once, handout)
    if op_types is not None and not LOOP_OPS & op_types:
        return out
    loops = {nodes[i].name: i for i in range(n) if nodes[i].op in LOOP_OPS}
    if not loops:
        return out
    members: dict[str, list[int]] = {name: [] for name in loops}
    frame: dict[str, list[int]] = {name: [] for name in loops}
    for k, node in enumerate(nodes):
        if node.loop in members:
            frame[node.loop].append(k)
            if node.call_site.startswith(node.loop + "/body"):
                members[node.loop].append(k)
    succ, starts = _successors(dag)
    useful_l = useful.tolist()
    times = (np.zeros(n) if time_us is None else np.asarray(time_us, dtype=float)).tolist()
    for name, i in loops.items():
        attr = nodes[i].attrs.get("parallel_iterations")
        p = int(attr.i) if attr is not None and attr.i else DEFAULT_PARALLEL_ITERATIONS
        body = members[name]
        heavy = [k for k in body if useful_l[k]]
        overlapping = most = 0
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
            # the control ops an iteration runs inline: Merge, Switch, NextIteration per
            # loop variable, the LoopCond, and the cond's and body's inexpensive ops
            variables = sum(1 for e in nodes[i].in_edges if not e.control)
            control = 3 * variables + 1 + sum(1 for k in frame[name] if not useful_l[k])
            h = control * LOOP_INLINE_US
            for k in heavy:
                if k not in waits:
                    copies[k] = p
                    at_once[k] = min(p, 1 + int((times[k] + DISPATCH_US) // h)) if h > 0 else p
                    handout[k] = h
                    overlapping += 1
                    most = max(most, int(at_once[k]))
        out.loops.append((name, p, len(heavy), overlapping, most))
    return out
