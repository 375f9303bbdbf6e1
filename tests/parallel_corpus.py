"""Graphs that judge placelint's parallelism figures against TensorFlow's own step stats
(needs TensorFlow; imported lazily). Used by tests/test_parallel_trace.py and
benchmarks/threads_vs_trace.py.

    build(name, out_dir) -> {"path": GraphDef file, "fetch": tensor name}
    measure_in_flight(path, fetch, inter=8, runs=5) -> (max expensive kernels in flight, ...)
    time_step(path, fetch, inter, intra, runs) -> median ms per Session.run

Every graph takes no feeds (inputs are ``placeholder_with_default``) and is run with
Grappler off, as tests/differential/oracle.py does, so TF runs the graph placelint reads.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: the small graphs the fast test uses; the benchmark runs them all
SMALL = ("branches_uneven", "chain", "tiny_branches")
ALL = ("branches_uneven", "chain", "tiny_branches", "py_branches", "cond", "while_p1", "while_p10",
       "keras_two_towers")
#: a kernel counts as expensive in a trace when its median duration is at least this
#: (the executor's inline threshold, 8000 cycles at 2.6 GHz)
EXPENSIVE_US = 3.1


def _graph(name: str):
    import numpy as np
    import tensorflow as tf

    tf1 = tf.compat.v1
    rng = np.random.default_rng(0)

    def const(*shape):
        return tf.constant(rng.standard_normal(shape).astype("float32") * 0.05)

    def inp(*shape):
        return tf1.placeholder_with_default(rng.standard_normal(shape).astype("float32"), shape, name="x")

    if name == "keras_two_towers":
        return _keras_two_towers()
    g = tf.Graph()
    with g.as_default():
        if name == "branches_uneven":     # 4 independent chains of 1..4 MatMuls
            x = inp(256, 256)
            outs = []
            for i in range(4):
                with tf.name_scope(f"branch_{i}"):
                    y = x
                    for _ in range(i + 1):
                        y = tf.matmul(y, const(256, 256))
                    outs.append(y)
            out = tf.add_n(outs, name="out")
        elif name == "chain":             # one chain of MatMul + Relu
            y = inp(256, 512)
            for i in range(6):
                with tf.name_scope(f"layer{i}"):
                    y = tf.nn.relu(tf.matmul(y, const(512, 512)))
            out = tf.identity(y, name="out")
        elif name == "tiny_branches":     # 16 branches of per-channel arithmetic (64 floats)
            x = inp(64)
            outs = []
            for i in range(16):
                with tf.name_scope(f"branch_{i}"):
                    outs.append(tf.math.rsqrt(x * x + (1.0 + i)) * (0.5 + i))
            y = tf1.placeholder_with_default(rng.standard_normal((256, 256)).astype("float32"),
                                             (256, 256), name="y")
            big = tf.matmul(y, const(256, 256))
            out = tf.add(tf.add_n(outs), tf.reduce_sum(big), name="out")
        elif name == "py_branches":       # two Python branches: the GIL serialises them
            x = inp(256, 256)

            def work(a):
                v = a.numpy()
                for _ in range(20):
                    v = np.tanh(v @ v.T * 0.01)
                return v.astype("float32")

            outs = []
            for i in range(2):
                with tf.name_scope(f"py_{i}"):
                    y = tf.py_function(work, [x * (1.0 + i)], tf.float32)
                    y.set_shape([256, 256])
                    outs.append(y)
            out = tf.add_n(outs, name="out")
        elif name == "cond":              # If: each branch two parallel MatMuls; one runs
            x = inp(256, 256)
            pred = tf1.placeholder_with_default(True, [], name="pred")

            def branch(scale):
                def f():
                    a = tf.matmul(x, const(256, 256) * scale)
                    b = tf.matmul(x, const(256, 256) * scale)
                    return tf.matmul(a, b)
                return f
            out = tf.identity(tf.cond(pred, branch(1.0), branch(2.0)), name="out")
        elif name in ("while_p1", "while_p10"):    # 10 iterations of an independent MatMul
            x = inp(256, 256)
            w = const(256, 256)
            p = 1 if name == "while_p1" else 10

            def body(i, ta):
                return i + 1, ta.write(i, tf.matmul(x * tf.cast(i + 1, tf.float32), w))
            _, ta = tf.while_loop(lambda i, ta: i < 10, body,
                                  [tf.constant(0), tf.TensorArray(tf.float32, size=10)],
                                  parallel_iterations=p)
            out = tf.reduce_sum(ta.stack(), axis=0, name="out")
        else:
            raise ValueError(name)
    return g, out.name


def keras_two_towers_model(batch: int | None = 4):
    """A small Keras functional model: two convolution towers on one input, concatenated."""
    import keras

    keras.utils.set_random_seed(0)
    x = keras.Input((32, 32, 16), batch_size=batch)
    a = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    a = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(a)
    b = keras.layers.Conv2D(32, 5, padding="same", activation="relu")(x)
    b = keras.layers.BatchNormalization()(b)
    y = keras.layers.Concatenate()([a, b])
    y = keras.layers.GlobalAveragePooling2D()(y)
    y = keras.layers.Dense(10)(y)
    return keras.Model(x, y)


def _keras_two_towers():
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    model = keras_two_towers_model()
    fn = tf.function(lambda x: model(x, training=False), autograph=False)
    concrete = fn.get_concrete_function(tf.TensorSpec([4, 32, 32, 16], tf.float32, name="input"))
    frozen = convert_variables_to_constants_v2(concrete)
    # a default for the input, so the graph runs without feeds
    g = tf.Graph()
    import numpy as np
    with g.as_default():
        x = tf.compat.v1.placeholder_with_default(
            np.random.default_rng(0).standard_normal((4, 32, 32, 16)).astype("float32"),
            [4, 32, 32, 16], name="x")
        outs = tf.graph_util.import_graph_def(frozen.graph.as_graph_def(), input_map={"input:0": x},
                                              return_elements=[frozen.outputs[0].name], name="model")
        out = tf.identity(outs[0], name="out")
    return g, out.name


def build(name: str, out_dir: str | os.PathLike) -> dict:
    g, fetch = _graph(name)
    path = Path(out_dir) / f"{name}.pb"
    path.write_bytes(g.as_graph_def().SerializeToString())
    return {"path": str(path), "fetch": fetch}


def _session(graph, inter: int, intra: int, pyfunc_ok: bool = True):
    import tensorflow as tf

    tf1 = tf.compat.v1
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    return tf1.Session(graph=graph, config=config)


def _load(path: str):
    import tensorflow as tf

    gd = tf.compat.v1.GraphDef.FromString(Path(path).read_bytes())
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    return g


def _rebuild_if_python(spec: dict):
    """py_function graphs need their Python callables registered in this process: build
    them again instead of importing the GraphDef."""
    name = Path(spec["path"]).stem
    if name == "py_branches":
        return _graph(name)[0]
    return _load(spec["path"])


def _peak(intervals) -> int:
    events = []
    for s, e in intervals:
        if e > s:
            events += [(s, 1), (e, -1)]
    events.sort()
    cur = peak = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    return peak


def measure_in_flight(spec: dict, inter: int = 8, runs: int = 7) -> dict:
    """Expensive kernels in flight, from FULL_TRACE step stats at ``inter`` inter-op threads.

    A kernel is expensive when its shortest duration over the runs is at least
    ``EXPENSIVE_US`` (TF's executor runs cheaper ones inline once it has measured them). The
    shortest, not the median: a loaded machine stretches a microsecond kernel past the
    threshold in most runs (and TF's cost estimate with it), the least disturbed run does not.
    ``in_flight``: the most expensive kernels the executor had handed out and not finished
    at once (``scheduled_micros`` .. op end): its own concurrency, which other processes on
    the machine cannot change. ``running``: the most whose kernels actually ran at once (op
    start .. op end); a loaded machine delays the inter-op threads and lowers it (on a
    saturated 2-core machine a thread often drains its own queue before another is woken).
    Both are the largest of any run.
    """
    import tensorflow as tf

    tf1 = tf.compat.v1
    g = _rebuild_if_python(spec)
    opts = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
    traces = []
    with _session(g, inter, 1) as sess:
        fetch = g.get_tensor_by_name(spec["fetch"])
        for _ in range(5):
            sess.run(fetch)
        for _ in range(runs):
            meta = tf1.RunMetadata()
            sess.run(fetch, options=opts, run_metadata=meta)
            spans = []
            for dev in meta.step_stats.dev_stats:
                for ns in dev.node_stats:
                    if ns.node_name in ("_SOURCE", "_SINK"):
                        continue
                    start = ns.all_start_micros + ns.op_start_rel_micros
                    end = ns.all_start_micros + ns.op_end_rel_micros
                    sched = ns.scheduled_micros if 0 < ns.scheduled_micros <= start else start
                    spans.append((ns.node_name, sched, start, end))
            traces.append(spans)
    durations: dict[str, list[int]] = {}
    for spans in traces:
        for name, _, s, e in spans:
            durations.setdefault(name, []).append(e - s)
    expensive = {n for n, d in durations.items() if min(d) >= EXPENSIVE_US}
    in_flight = [_peak((sc, e) for n, sc, _, e in spans if n in expensive) for spans in traces]
    running = [_peak((s, e) for n, _, s, e in spans if n in expensive) for spans in traces]
    return {"in_flight": max(in_flight), "running": max(running), "peaks": in_flight,
            "expensive_kernels": len(expensive), "load": os.getloadavg()[0]}


def time_step(spec: dict, inter: int, intra: int, runs: int = 30) -> dict:
    """Milliseconds per Session.run at (inter, intra): the median and the lowest of ``runs``
    steps (call in a fresh process). On a shared machine the lowest is the least disturbed."""
    g = _rebuild_if_python(spec)
    with _session(g, inter, intra) as sess:
        fetch = g.get_tensor_by_name(spec["fetch"])
        for _ in range(5):
            sess.run(fetch)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(fetch)
            times.append((time.perf_counter() - t) * 1000)
    return {"median": statistics.median(times), "min": min(times), "load": os.getloadavg()[0]}


def keras_two_towers_both(out_dir: str | os.PathLike) -> dict:
    """The two-tower Keras model as a TF2 SavedModel (unknown batch) and as a frozen
    GraphDef (batch 1): the same expensive work, variables vs constants."""
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    out = Path(out_dir)
    model = keras_two_towers_model(batch=None)

    @tf.function(input_signature=[tf.TensorSpec([None, 32, 32, 16], tf.float32, name="input")],
                 autograph=False)
    def serve(x):
        return {"output": model(x, training=False)}

    saved = out / "two_towers_savedmodel"
    tf.saved_model.save(model, str(saved), signatures={"serving_default": serve})
    fn = tf.function(lambda x: model(x, training=False), autograph=False)
    frozen = convert_variables_to_constants_v2(
        fn.get_concrete_function(tf.TensorSpec([1, 32, 32, 16], tf.float32, name="input")))
    frozen_path = out / "two_towers_frozen.pb"
    frozen_path.write_bytes(frozen.graph.as_graph_def().SerializeToString(deterministic=True))
    return {"savedmodel": str(saved), "frozen": str(frozen_path)}
