"""Pick ``inter_op_parallelism_threads`` and ``intra_op_parallelism_threads`` for N cores.

A small analytic model of TF's CPU executor, evaluated on a grid of settings:

* with ``b`` intra-op threads an op whose kernel splits takes ``work / min(b, m)``, where
  ``m`` is the thread count Eigen's cost model gives it at its size (``intra_op.py``);
  other ops take ``work``;
* with ``a`` inter-op threads the step takes at least the critical path of those times,
  their sum over ``a``, the total work over the threads the cores can run at once
  (``min(N, a + b - 1)``: the calling inter-op thread works in ``parallelFor`` too), and
  the work of the GIL-holding Python ops, which run one at a time.

The predicted time is the largest of these bounds. Among settings within 2% of the best
the fewest threads win (oversubscription costs real time the model does not see), then
the larger intra-op pool. Work is Grappler's op count, so the figures rank settings; they
are not timings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .dag import IndexedDag, longest_path, longest_path_and_span

TOLERANCE = 1.02
#: share of the work in small element-wise ops above which a recommendation of several
#: inter-op threads carries a caveat (dispatch overhead is not modelled)
SMALL_OPS_SHARE = 0.9


@dataclass
class Recommendation:
    inter_op: int
    intra_op: int
    cores: int
    reason: str
    predicted: dict[str, float] = field(default_factory=dict)  #: relative step times

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
    """Predicted step time of the expensive ops for (inter, intra) settings."""

    def __init__(self, dag: IndexedDag, work: np.ndarray, max_threads: np.ndarray, gil: np.ndarray,
                 cores: int, *, serial_span: float | None = None, small: np.ndarray | None = None):
        self.dag = dag
        self.work = work.astype(float)
        self.max_threads = np.maximum(max_threads, 1)
        self.cores = max(1, int(cores))
        self.total = float(self.work.sum())
        self.gil_total = float(self.work[gil].sum())
        #: share of the work in small Eigen element-wise ops (``small`` marks them)
        self.small_share = float(self.work[small].sum()) / self.total if small is not None and self.total else 0.0
        self._span: dict[int, tuple[float, float]] = {}
        self._splits = bool((self.max_threads > 1).any())
        if serial_span is not None:
            self._span[1] = (float(serial_span), self.total)

    def critical_path(self) -> tuple[float, list[int]]:
        """The heaviest path of the op times with one intra-op thread (the serial critical
        path) and its weight. The span with every core in the intra-op pool, which the
        recommendation always compares, comes out of the same pass over the graph."""
        if self.cores > 1 and self._splits:
            d = self.work / np.minimum(self.max_threads, self.cores)
            span, path, full = longest_path_and_span(self.dag, self.work, d)
            self._span[self.cores] = (full, float(d.sum()))
        else:
            span, path = longest_path(self.dag, self.work)
        self._span[1] = (span, self.total)
        return span, path

    def _times(self, intra: int) -> tuple[float, float]:
        """(critical path, sum) of op times with ``intra`` intra-op threads."""
        if intra > 1 and not self._splits:
            return self._times(1)
        if intra not in self._span:
            d = self.work / np.minimum(self.max_threads, intra)
            span, _ = longest_path(self.dag, d)
            self._span[intra] = (span, float(d.sum()))
        return self._span[intra]

    def time(self, inter: int, intra: int) -> float:
        span, total = self._times(intra)
        concurrent = min(self.cores, inter + intra - 1)
        return max(span, total / inter, self.total / concurrent, self.gil_total)

    def candidates(self) -> list[tuple[int, int]]:
        n = self.cores
        inters = list(range(1, n + 1)) if n <= 16 else sorted({1, 2, 4, 8, 16, n} | {2 ** k for k in range(n.bit_length()) if 2 ** k <= n})
        intras = sorted({1, n} | {max(1, n // a) for a in inters})
        return [(a, b) for a in inters for b in intras]


def recommend(model: ThreadModel, *, width: int, intra_share: float, average_parallelism: float | None,
              unknown_ops: int, splittable_share: float = 0.0) -> Recommendation:
    n = model.cores
    if model.total <= 0:
        return Recommendation(n, n, n, "No expensive ops to schedule: the thread settings make no "
                                       "difference, so keep TensorFlow's defaults.",
                              {"recommended": 1.0, "tf_default": 1.0, "serial": 1.0})
    times = {c: model.time(*c) for c in model.candidates()}
    best = min(times.values())
    near = [c for c, t in times.items() if t <= best * TOLERANCE]
    a, b = min(near, key=lambda c: (c[0] + c[1], -c[1], c[0]))
    t = times[(a, b)]
    serial = model.time(1, 1)
    default = model.time(n, n)
    predicted = {"recommended": 1.0, "tf_default": default / t, "serial": serial / t}
    reason = _reason(model, a, b, width, intra_share, average_parallelism, unknown_ops, splittable_share)
    return Recommendation(a, b, n, reason, predicted)


def _reason(model: ThreadModel, a: int, b: int, width: int, share: float, avg: float | None,
            unknown_ops: int, splittable: float) -> str:
    n = model.cores
    pct = "under 1%" if 0 < share < 0.01 else f"{share:.0%}"
    avg_s = f"{avg:.2f}" if avg is not None else "n/a"
    gil_share = model.gil_total / model.total if model.total else 0.0
    if gil_share > 0.5:
        first = (f"Most of the work is in Python ops that hold the GIL and run one at a time "
                 f"whatever inter_op says, so {a} inter-op thread{'s' if a > 1 else ''} suffice")
    elif width <= 1:
        first = ("The graph is serial (width 1): a second inter-op thread never finds another "
                 "expensive op to run")
    elif a == 1:
        first = (f"Up to {width} expensive ops could run at once, but the average parallelism "
                 f"is only {avg_s}: one inter-op thread keeps the critical path busy")
    else:
        first = (f"Up to {width} expensive ops can run at once (average parallelism {avg_s}), "
                 f"so {a} inter-op threads keep independent branches running side by side")
    if b > 1 and share > 0:
        second = f"{pct} of the work is in kernels that split over the intra-op pool, so give it {b} threads"
    elif b > 1:
        second = (f"{splittable:.0%} of the work is in kernels that can split over the intra-op pool "
                  f"and their sizes are not known statically, so give it {b} threads")
    elif share > 0:
        second = (f"the kernels that split over the intra-op pool ({pct} of the work) gain less than "
                  "running branches side by side, so intra_op=1 avoids oversubscribing the cores")
    else:
        second = "no kernel is big enough to split its work, so intra-op threads would sit idle"
    text = f"{first}; {second} ({n} core{'s' if n != 1 else ''})."
    if a > 1 and model.small_share >= SMALL_OPS_SHARE:
        text += (" Caveat: the ops are small (each under Eigen's ~2e5-cycle threshold for splitting); "
                 "when each takes only microseconds, handing ops to other inter-op threads can cost "
                 "more than it gains, so measure inter_op=1 too.")
    if unknown_ops:
        text += f" {unknown_ops} op(s) have unknown shapes and count as unit cost."
    return text
