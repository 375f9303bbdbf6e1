"""Pick ``inter_op_parallelism_threads`` and ``intra_op_parallelism_threads`` by simulating
the step on a model of TensorFlow's CPU executor.

Per op the model knows its estimated single-thread time (``kernel_time_us``), how many
intra-op threads its kernel would use at its size (``intra_op.py``), whether it holds the
Python GIL, and how many copies of it run (loop iterations, ``parallelism_scope``). The
simulation is list scheduling over the DAG, the way ``ExecutorState`` runs a step
(tensorflow/core/common_runtime/executor.cc):

* ops below ``KernelStats::kOpIsExpensiveThresholdCycles`` (8000 cycles) and the
  inexpensive kernels run inline on the thread that made them ready;
* of the expensive ops a finished op makes ready, all but the last are handed to the
  inter-op pool (``ScheduleReady`` -> ``RunTask``), paying ``DISPATCH_US`` and waiting for
  a free inter-op thread (FIFO); the last continues on the same thread when no inline
  work is pending there, and is handed out too otherwise;
* the cheap roots (Consts, Placeholders, variable handles) run on one thread: TF hands
  each to the pool, but crediting microsecond kernels behind many roots to more inter-op
  threads would contradict the useful width;
* an op whose kernel splits takes ``time / (1 + (k - 1) * SPLIT_EFFICIENCY)`` with
  ``k = min(b, m)``, ``b`` intra-op threads and ``m`` the threads Eigen's cost model gives
  it at its size (a split is not free: measured 1.77x at two threads); when the running
  ops ask for more threads than there are cores, each is slowed by the oversubscription
  at its start;
* the copies of a loop body op (its iterations) are handed to the pool one per pass of
  the loop's inline control ops (``handout_us``, ``parallelism_scope.loop_copies``),
  not all at once;
* PyFunc/EagerPyFunc kernels hold the GIL (tensorflow/python/lib/core/py_func.cc): one
  runs at a time, a second one blocks its inter-op thread until the first is done.

The figures measured on TF 2.21 that the model uses (``benchmarks/dispatch_overhead.py``,
AMD EPYC 2.6 GHz, inter_op = intra_op = 1): handing a kernel to the inter-op pool costs
2.2 us more than continuing on the same thread; a trivial ``tf.py_function`` call 49 us
(a Python kernel's body is invisible: it is assumed to take ``PYFUNC_BODY_US`` more);
one microsecond is ~15,500 cycles of Eigen's cost model (a 16384-float Tanh: 96,256 model
cycles, 6.2 us). ``kOpIsExpensiveThresholdCycles`` = 8000 TSC cycles is 3.1 us at 2.6 GHz.

The predicted step time of a setting is the simulated makespan. Among settings within
``TOLERANCE`` of the best the fewest threads win (oversubscription costs real time the
model only approximates), then the larger intra-op pool. Graphs over ``SIMULATE_MAX_NODES``
nodes use bounds instead of the simulation (critical path, work over threads, GIL work),
which keeps the analysis linear on huge graphs.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dag import IndexedDag, longest_path, longest_path_and_span

TOLERANCE = 1.03
#: Executor's inline threshold, KernelStats::kOpIsExpensiveThresholdCycles (executor.cc)
INLINE_THRESHOLD_CYCLES = 8000
#: ... in microseconds at 2.6 GHz (the TSC rate of the machine the figures were measured on)
INLINE_THRESHOLD_US = 3.1
#: measured: handing a ready kernel to another inter-op thread (RunTask) vs continuing inline
DISPATCH_US = 2.2
#: measured: fixed cost of one trivial tf.py_function kernel (GIL, EagerTensor conversion)
PYFUNC_US = 49.0
#: assumed: what a Python kernel's body costs on top (it is not visible in the graph; the
#: reports say so). Real tf.py_function bodies do numpy work: a millisecond is modest.
PYFUNC_BODY_US = 1000.0
#: Eigen cost-model cycles per microsecond of measured kernel time (calibration)
MODEL_CYCLES_PER_US = 15500.0
#: measured: each intra-op thread beyond the first adds this fraction of a thread's speed
#: to a kernel that splits (parallelFor's blocks, wake-ups and barrier; tests/parallel_corpus.py
#: ``chain``, 2 MiB MatMuls: 14.97 ms at intra_op=1, 8.48 ms at 2, i.e. 1.77x)
SPLIT_EFFICIENCY = 0.75
#: the simulation runs on graphs up to this many nodes; larger ones use bounds
SIMULATE_MAX_NODES = 30000


def split_speedup(threads):
    """Speed-up of a kernel split over ``threads`` intra-op threads (scalar or array)."""
    return 1.0 + (threads - 1) * SPLIT_EFFICIENCY


@dataclass
class Recommendation:
    inter_op: int
    intra_op: int
    cores: int
    reason: str
    predicted: dict[str, float] = field(default_factory=dict)  #: relative step times
    #: (inter, intra) -> estimated step time relative to inter_op=1, intra_op=1
    table: dict[tuple[int, int], float] = field(default_factory=dict)
    simulated: bool = True
    #: the same if the Python kernels' bodies release the GIL (numpy, I/O); empty when
    #: fewer than two Python kernels could run side by side (it makes no difference)
    table_gil_released: dict[tuple[int, int], float] = field(default_factory=dict)

    def code(self) -> dict[str, str]:
        a, b = self.inter_op, self.intra_op
        return {
            "tf2": (f"tf.config.threading.set_inter_op_parallelism_threads({a})\n"
                    f"tf.config.threading.set_intra_op_parallelism_threads({b})"),
            "tf1": (f"config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads={a}, "
                    f"intra_op_parallelism_threads={b})\n"
                    "sess = tf.compat.v1.Session(config=config)"),
        }


class ThreadModel:
    """Predicted step time (microseconds) of the step's ops for (inter, intra) settings."""

    def __init__(self, dag: IndexedDag, time_us: np.ndarray, max_threads: np.ndarray, gil: np.ndarray,
                 cores: int, *, dispatched: np.ndarray, copies: np.ndarray | None = None,
                 handout_us: np.ndarray | None = None, run: np.ndarray | None = None,
                 paths: tuple[IndexedDag, np.ndarray, Any] | None = None):
        self.dag = dag
        #: the DAG the heaviest paths are found in, its nodes' indices in ``dag`` (None:
        #: ``dag`` itself) and each node of ``dag``'s predecessors (a ``waves.Grouped``):
        #: the descendants of the nodes of positive time (``MemberNetwork.paths``)
        self._paths = (dag, None, None) if paths is None else paths
        self.run = np.ones(dag.n, dtype=bool) if run is None else run
        self.time = np.where(self.run, time_us, 0.0).astype(float)
        self.max_threads = np.maximum(max_threads, 1)
        self.gil = gil & self.run
        self.dispatched = dispatched & self.run
        self.copies = np.ones(dag.n, dtype=np.int64) if copies is None else copies
        #: time between the hand-outs of a loop body op's copies (its loop's inline control
        #: ops per iteration, ``parallelism_scope.loop_copies``); 0: all at once
        self.handout = np.zeros(dag.n) if handout_us is None else np.asarray(handout_us, dtype=float)
        self.cores = max(1, int(cores))
        work = self.time * self.copies
        self.total = float(work.sum())
        self.gil_total = float(work[self.gil].sum())
        #: Python kernels that could run side by side (set by the analysis): with two or
        #: more, whether their bodies hold the GIL decides the schedule (see ``recommend``)
        self.gil_width = 0
        self._splits = bool((self.max_threads[self.time > 0] > 1).any())
        self._span: dict[int, tuple[float, float]] = {}
        self._succ = None
        self.simulate_ok = dag.n <= SIMULATE_MAX_NODES

    # ------------------------------------------------------------------ bounds
    def critical_path(self) -> tuple[float, list[int]]:
        """The heaviest path of single-thread op times, and its nodes."""
        dag, idx, pred = self._paths
        here = (lambda a: a) if idx is None else (lambda a: a[idx])
        if self.cores > 1 and self._splits:
            d = self.time / split_speedup(np.minimum(self.max_threads, self.cores))
            span, path, full = longest_path_and_span(dag, here(self.time), here(d))
            self._span[self.cores] = (full, float((d * self.copies).sum()))
        else:
            span, path = longest_path(dag, here(self.time))
        self._span[1] = (span, self.total)
        if idx is None:
            return span, path
        # The path as the whole DAG gives it: the same from its first node of positive time
        # on (every heavier predecessor is a descendant of one); before it every node's
        # predecessors weigh 0, and the DAG's pass takes the first, in edge order. Without
        # time anywhere the pass ends at node 0.
        if not self.dag.n:
            return span, []
        path = idx[path].tolist()
        first = next((i for i, v in enumerate(path) if self.time[v] > 0), None)
        tail = [] if first is None else path[first + 1:]
        v = 0 if first is None else path[first]
        head = [v]
        starts, other = pred.starts, pred.other
        while starts[v] < starts[v + 1]:
            v = int(other[starts[v]])
            head.append(v)
        head.reverse()
        return span, head + tail

    def _times(self, intra: int) -> tuple[float, float]:
        if intra > 1 and not self._splits:
            return self._times(1)
        if intra not in self._span:
            d = self.time / split_speedup(np.minimum(self.max_threads, intra))
            dag, idx, _ = self._paths
            span, _ = longest_path(dag, d if idx is None else d[idx])
            self._span[intra] = (span, float((d * self.copies).sum()))
        return self._span[intra]

    def _gil_locked(self, gil_held: bool) -> float:
        """Time the GIL is held: every Python kernel's whole time, or only its call
        overhead when the bodies release it."""
        if gil_held:
            return self.gil_total
        return float((np.minimum(self.time, PYFUNC_US) * self.copies)[self.gil].sum())

    def bound_time(self, inter: int, intra: int, gil_held: bool = True) -> float:
        span, total = self._times(intra)
        concurrent = min(self.cores, inter + intra - 1)
        return max(span, total / inter, self.total / concurrent, self._gil_locked(gil_held))

    # ------------------------------------------------------------------ simulation
    def _successors(self):
        if self._succ is None:
            dag = self.dag
            by_src = np.argsort(dag.src, kind="stable")
            succ = dag.dst[by_src].tolist()
            starts = np.searchsorted(dag.src[by_src], np.arange(dag.n + 1)).tolist()
            indeg = np.bincount(dag.dst, minlength=dag.n).tolist()
            self._succ = (succ, starts, indeg)
        return self._succ

    def simulate(self, inter: int, intra: int, gil_held: bool = True) -> float:
        """Makespan of the step (us) by list scheduling (see the module docstring).
        ``gil_held``: Python kernels hold the GIL for their whole run; otherwise only for
        their call overhead (``PYFUNC_US``: a numpy body releases it)."""
        succ, starts, indeg = self._successors()
        pending = list(indeg)
        n = self.dag.n
        cores = self.cores
        base = self.time.tolist()
        thr = np.minimum(self.max_threads, max(1, intra)).tolist()
        gil = self.gil.tolist()
        disp = self.dispatched.tolist()
        copies = self.copies.tolist()
        handout = self.handout.tolist()
        left = list(copies)                 # copies of a node not finished yet
        # the pool's tasks, FIFO: (node, time handed out, whether it pays DISPATCH_US; only
        # the roots, queued before the step starts, do not)
        queue: deque = deque()
        # (time, seq, node, demand): an op's end; node -1: a thread is free; node -2 - w: the
        # loop's control ops hand out the next copy of w
        events: list = []
        free = inter
        demand = 0                          # intra-op threads the running ops use
        gil_free = 0.0
        seq = 0
        now = 0.0

        def start(v: int, t: float) -> None:
            """Expensive op v starts on a busy thread at t; its end is an event."""
            nonlocal demand, gil_free, seq
            k = thr[v]
            d = base[v] / (1.0 + (k - 1) * SPLIT_EFFICIENCY)
            if demand + k > cores:
                d *= (demand + k) / cores
            begin = t
            if gil[v]:
                begin = max(t, gil_free)
                gil_free = begin + (d if gil_held else min(d, PYFUNC_US))
            demand += k
            seq += 1
            heapq.heappush(events, (begin + d, seq, v, k))

        def schedule_ready(u: int, inline: deque, t: float) -> None:
            """``ExecutorState::ScheduleReady`` after u finished: inexpensive ready ops
            join this thread's inline queue; of the expensive ones all but the last are
            handed to the pool, and the last stays on this thread only when the inline
            queue is empty (otherwise it is handed out too). Further loop copies of an
            expensive op are handed out: one per ``handout`` (its loop's control ops
            per iteration), or all at once."""
            nonlocal seq
            last = -1
            for j in range(starts[u], starts[u + 1]):
                w = succ[j]
                p = pending[w] - 1
                pending[w] = p
                if p:
                    continue
                if not disp[w]:
                    inline.append(w)
                    continue
                if copies[w] > 1:
                    if handout[w] > 0:      # the next iterations' copies, one per h
                        for j in range(1, copies[w]):
                            seq += 1
                            heapq.heappush(events, (t + j * handout[w], seq, -2 - w, 0))
                    else:
                        queue.extend((w, t, True) for _ in range(copies[w] - 1))
                if last >= 0:
                    queue.append((last, t, True))
                last = w
            if last >= 0:
                if inline:
                    queue.append((last, t, True))
                else:
                    inline.append(last)

        def run(inline: deque, t: float) -> None:
            """``ExecutorState::Process``: a thread runs its inline queue from t until it
            reaches an expensive op (the thread stays busy until that op's end event) or
            runs dry (the thread is free)."""
            nonlocal seq
            while inline:
                u = inline.popleft()
                if disp[u]:
                    start(u, t)
                    return
                t += base[u] * copies[u]
                schedule_ready(u, inline, t)
            seq += 1
            heapq.heappush(events, (t, seq, -1, 0))

        def drain(t: float) -> None:
            nonlocal free
            while queue and free > 0:
                w, handed, pays = queue.popleft()
                free -= 1
                run(deque([w]), max(t, handed) + (DISPATCH_US if pays else 0.0))

        # TF hands every root to the pool (ScheduleReady without an inline queue), but
        # roots are Consts, Placeholders and variable handles: one thread runs the cheap
        # ones and what they make ready inline (as at inter_op=1), so that microsecond
        # kernels behind many roots are not credited to more inter-op threads; expensive
        # roots go to the pool
        queue.extend((v, 0.0, False) for v in range(n) if indeg[v] == 0 and disp[v])
        free -= 1
        run(deque(v for v in range(n) if indeg[v] == 0 and not disp[v]), 0.0)
        drain(0.0)
        while events:
            end, _, v, k = heapq.heappop(events)
            now = max(now, end)
            if v < -1:
                queue.append((-2 - v, end, True))
            elif v < 0:
                free += 1
            else:
                demand -= k
                left[v] -= 1
                if left[v] == 0:
                    inline: deque = deque()
                    schedule_ready(v, inline, end)
                    run(inline, end)
                else:
                    free += 1
            drain(end)
        return now

    def step_time(self, inter: int, intra: int, gil_held: bool = True) -> float:
        if self.simulate_ok:
            return self.simulate(inter, intra, gil_held)
        return self.bound_time(inter, intra, gil_held)

    def candidates(self, width: int) -> list[tuple[int, int]]:
        n = self.cores
        powers = {1, n} | {2 ** k for k in range(n.bit_length()) if 2 ** k <= n}
        inters = sorted(a for a in powers if a <= max(1, width) or a == n)
        most = int(self.max_threads[self.time > 0].max()) if self._splits else 1
        intras = sorted(b for b in powers if b <= max(1, most) or b == n)
        return [(a, b) for a in inters for b in intras]


def recommend(model: ThreadModel, *, width: int, useful_width: int, intra_share: float,
              average_parallelism: float | None, assumed_share: float) -> Recommendation:
    """The setting to use, from the simulated step times of the candidates.

    Python kernels: whether a ``tf.py_function`` body holds the GIL is not in the graph
    (pure Python holds it; numpy releases it inside its calls, I/O while it waits). With
    two or more Python kernels that could run side by side, both cases are simulated and
    the pick is the setting whose time is nearest the best in the worse of the two (its
    *regret*): an extra inter-op thread costs next to nothing when the GIL serialises the
    kernels (the thread waits for the lock) and halves the time when it does not.
    """
    n = model.cores
    if model.total <= 0:
        return Recommendation(n, n, n, "No expensive ops to schedule: the thread settings make no "
                                       "difference, so keep TensorFlow's defaults.",
                              {"recommended": 1.0, "tf_default": 1.0, "serial": 1.0}, {(1, 1): 1.0},
                              model.simulate_ok)
    cands = model.candidates(max(useful_width, model.gil_width))
    times = {c: model.step_time(*c) for c in cands}
    released = ({c: model.step_time(*c, gil_held=False) for c in cands}
                if model.gil_width >= 2 else None)
    best = min(times.values())
    regret = {c: t / best for c, t in times.items()}
    if released is not None:
        best_r = min(released.values())
        regret = {c: max(r, released[c] / best_r) for c, r in regret.items()}
    least = min(regret.values())
    near = [c for c, r in regret.items() if r <= least * TOLERANCE]
    a, b = min(near, key=lambda c: (c[0] + c[1], -c[1], c[0]))
    serial = times.get((1, 1)) or model.step_time(1, 1)
    default = times.get((n, n)) or model.step_time(n, n)
    t = times[(a, b)]
    predicted = {"recommended": 1.0, "tf_default": default / t, "serial": serial / t}
    table = {c: v / serial for c, v in sorted(times.items())}
    table_r: dict[tuple[int, int], float] = {}
    if released is not None:
        serial_r = released.get((1, 1)) or model.step_time(1, 1, gil_held=False)
        table_r = {c: v / serial_r for c, v in sorted(released.items())}
    reason = _reason(model, a, b, t / serial, default / serial, useful_width, intra_share,
                     average_parallelism, assumed_share, table_r)
    return Recommendation(a, b, n, reason, predicted, table, model.simulate_ok, table_r)


def _reason(model: ThreadModel, a: int, b: int, rel: float, rel_default: float, useful: int,
            share: float, avg: float | None, assumed: float,
            released: dict[tuple[int, int], float]) -> str:
    n = model.cores
    pct = "under 1%" if 0 < share < 0.01 else f"{share:.0%}"
    gil_share = model.gil_total / model.total if model.total else 0.0
    how = "simulated" if model.simulate_ok else "bounded"
    parts = [f"Estimated step time {rel:.2f}x that of inter_op=1, intra_op=1 "
             f"(TF's default {n}/{n}: {rel_default:.2f}x; {how} on {n} cores)"]
    if released:
        parts.append(f"{model.gil_width} Python kernels (tf.py_function) could run side by side and "
                     f"{gil_share:.0%} of the time is in Python kernels, whose bodies are not in the "
                     "graph: if they hold the GIL (pure Python) they run one at a time "
                     f"({rel:.2f}x), if they release it (numpy, I/O) they overlap "
                     f"({released[(a, b)]:.2f}x); inter_op={a} is the safe choice in both cases")
    elif gil_share > 0.5:
        parts.append(f"{gil_share:.0%} of the time is in Python kernels that hold the GIL and run "
                     "one at a time whatever inter_op says")
    elif useful <= 1:
        parts.append("no two ops above the executor's inline threshold (~3 us) are independent "
                     "(useful width 1), so a second inter-op thread has nothing to run")
    elif a == 1:
        parts.append(f"up to {useful} ops worth a thread are independent, but they overlap too little "
                     f"(average parallelism {avg:.2f}) to pay for handing them to other threads"
                     if avg is not None else f"up to {useful} ops worth a thread are independent, "
                     "but running them side by side gains too little")
    else:
        parts.append(f"up to {useful} ops worth a thread are independent, so {a} inter-op threads "
                     "run branches side by side")
    if b > 1:
        parts.append(f"{pct} of the time is in kernels that split over the intra-op pool at their "
                     f"size, so give it {b} threads")
    elif share > 0:
        parts.append(f"the kernels that split over the intra-op pool ({pct} of the time) gain less "
                     "than they cost in oversubscription, so intra_op=1")
    else:
        parts.append("no kernel is big enough to split its work, so intra-op threads would sit idle")
    text = "; ".join(parts) + "."
    if assumed >= 0.01:
        text += (f" {assumed:.0%} of the estimated time rests on assumed sizes (unknown dims); "
                 "pass --batch-size to cost them at your batch.")
    return text
