"""Measure the per-kernel costs placelint's thread model uses (not run in CI).

    .venv/bin/python benchmarks/dispatch_overhead.py [--ops 200] [--runs 50]

TensorFlow's executor (tensorflow/core/common_runtime/executor.cc) keeps one ready
expensive op on the thread that made it ready and hands every other one to the inter-op
pool (``ExecutorState::ScheduleReady`` -> ``RunTask``); kernels whose measured cost falls
below ``KernelStats::kOpIsExpensiveThresholdCycles`` (8000 cycles; the estimate decays
from 10^8 by 1/``kCostDecay`` per run) are run inline instead. This script measures, on
this machine, at inter_op = intra_op = 1, Grappler off:

* ``inline_us``: a chain of N tiny Tanh kernels (16 floats; inline after warm-up), step / N;
* ``chain_us`` and ``fanout_us``: N Tanh kernels of 16384 floats, as a chain (each
  continues on the thread that made it ready) and as a fan-out of one input (each handed
  to the pool), step / N; ``dispatch_us`` = fanout - chain is what handing a kernel to
  another inter-op thread costs;
* ``pyfunc_us``: a chain of N ``tf.py_function`` identities on 16 floats, step / N: the
  fixed cost of one Python kernel (GIL, EagerTensor conversion);
* ``loop_op_us``: a ``tf.while_loop`` (``parallel_iterations=10``) that only counts,
  lowered to Enter/Merge/Switch/NextIteration frames: the step time per iteration
  (``--ops`` iterations over 10) over the lowered ops per iteration (counted in one
  FULL_TRACE step), i.e. one inline control op of a loop frame; ``loop_op_traced_us`` the
  same under FULL_TRACE (the step stats' own cost, which slows the hand-out of
  iterations that a trace measures); ``loop_op_profiled_us`` the same while TF's
  profiler records at ``host_tracer_level=2`` (what ``tests/parallel_corpus.py``
  ``measure_in_flight`` uses: only kernels the executor counts as expensive are traced;
  what remains per control op is the executor's per-iteration ``ExecutorState::Process``
  event);
* ``cycles_per_us``: the Eigen cost-model cycles (``placelint.analyses.intra_op``) of one
  16384-float Tanh over its measured time, which converts the figures above to the
  cost model's units. Each figure is a median over ``--runs`` steps.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _session(tf, graph):
    tf1 = tf.compat.v1
    config = tf1.ConfigProto(inter_op_parallelism_threads=1, intra_op_parallelism_threads=1)
    rw = config.graph_options.rewrite_options
    rw.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    return tf1.Session(graph=graph, config=config)


def _time(tf, graph, fetch, runs):
    with _session(tf, graph) as sess:
        for _ in range(20):
            sess.run(fetch)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(fetch)
            times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def _loop_ops(tf, n: int, runs: int) -> dict:
    """Per lowered control op of a counting while loop, untraced and traced."""
    tf1 = tf.compat.v1

    def loop(iterations):
        g = tf.Graph()
        with g.as_default():
            out = tf.while_loop(lambda i, v: i < iterations, lambda i, v: (i + 1, v + 1.0),
                                [tf.constant(0), tf.constant(0.0)], parallel_iterations=10)
        return g, out[0]

    def traced(graph, fetch):
        opts = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
        with _session(tf, graph) as sess:
            for _ in range(5):
                sess.run(fetch, options=opts)
            times, ops = [], 0
            for _ in range(runs):
                meta = tf1.RunMetadata()
                t = time.perf_counter()
                sess.run(fetch, options=opts, run_metadata=meta)
                times.append((time.perf_counter() - t) * 1e6)
                ops = sum(len(d.node_stats) for d in meta.step_stats.dev_stats)
        return statistics.median(times), ops

    def profiled(graph, fetch):
        import tempfile
        options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=0,
                                                           device_tracer_level=0)
        with _session(tf, graph) as sess, tempfile.TemporaryDirectory() as logdir:
            for _ in range(20):
                sess.run(fetch)
            tf.profiler.experimental.start(logdir, options=options)
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                sess.run(fetch)
                times.append((time.perf_counter() - t) * 1e6)
            tf.profiler.experimental.stop()
        return statistics.median(times)

    few, many = loop(10), loop(n)
    t_few, ops_few = traced(*few)
    t_many, ops_many = traced(*many)
    per_iteration = (ops_many - ops_few) / (n - 10)
    untraced = (_time(tf, *many, runs) - _time(tf, *few, runs)) / (n - 10)
    return {"loop_ops_per_iteration": per_iteration,
            "loop_op_us": untraced / per_iteration,
            "loop_op_traced_us": (t_many - t_few) / (n - 10) / per_iteration,
            "loop_op_profiled_us": (profiled(*many) - profiled(*few)) / (n - 10) / per_iteration}


def measure(n: int, runs: int) -> dict:
    import numpy as np
    import tensorflow as tf

    tf1 = tf.compat.v1
    out = {}

    def chain(size, fn):
        g = tf.Graph()
        with g.as_default():
            x = tf1.placeholder_with_default(np.ones([size], np.float32), [size])
            y = x
            for _ in range(n):
                y = fn(y)
        return g, y

    def fanout(size):
        g = tf.Graph()
        with g.as_default():
            x = tf1.placeholder_with_default(np.ones([size], np.float32), [size])
            ys = [tf.tanh(x) for _ in range(n)]
            y = tf.group(*ys)
        return g, y

    def empty(size):
        g = tf.Graph()
        with g.as_default():
            x = tf1.placeholder_with_default(np.ones([size], np.float32), [size])
            y = tf.identity(x)
        return g, y

    base_small = _time(tf, *empty(16), runs)
    base_big = _time(tf, *empty(16384), runs)
    out["inline_us"] = (_time(tf, *chain(16, tf.tanh), runs) - base_small) / n
    out["chain_us"] = (_time(tf, *chain(16384, tf.tanh), runs) - base_big) / n
    out["fanout_us"] = (_time(tf, *fanout(16384), runs) - base_big) / n
    out["dispatch_us"] = out["fanout_us"] - out["chain_us"]
    out["pyfunc_us"] = (_time(tf, *chain(16, lambda t: tf.py_function(lambda a: a, [t], tf.float32)),
                              runs) - base_small) / n
    out.update(_loop_ops(tf, n, runs))
    from placelint.analyses.cost import op_cost
    from placelint.analyses.intra_op import intra_op_use
    from placelint.analyses.shape_inference import infer_shapes
    from placelint.model import model_from_raw
    g, y = chain(16384, tf.tanh)
    import tempfile
    from pathlib import Path
    from placelint.loaders import discover, load_raw
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "g.pb"
        p.write_bytes(g.as_graph_def().SerializeToString())
        graph = model_from_raw(load_raw(discover([str(p)])[0])).graph
    shapes = infer_shapes(graph)
    node = next(nd for nd in graph.nodes.values() if nd.op == "Tanh")
    cycles = intra_op_use(node, shapes, op_cost(node, shapes)).cycles
    out["tanh16k_model_cycles"] = cycles
    out["cycles_per_us"] = cycles / out["chain_us"]
    out["dispatch_cycles"] = out["dispatch_us"] * out["cycles_per_us"]
    out["pyfunc_cycles"] = out["pyfunc_us"] * out["cycles_per_us"]
    out["load"] = os.getloadavg()[0]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args(argv)
    print(json.dumps({k: round(v, 3) for k, v in measure(args.ops, args.runs).items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
