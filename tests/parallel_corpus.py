"""Graphs that judge placelint's parallelism figures against TensorFlow's own traces
(needs TensorFlow; imported lazily). Used by tests/test_parallel_trace.py and
benchmarks/threads_vs_trace.py.

    build(name, out_dir) -> {"path": GraphDef file, "fetch": tensor name}
    measure_in_flight(spec, inter=8, runs=7) -> max expensive kernels in flight, running, ...
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
#: untraced steps before a trace: the executor's cost estimate of a kernel starts at 10^8
#: cycles and moves 1/10 of the way to each measured run (executor.cc ``KernelStats``): a
#: kernel run once per step is counted as expensive for its first ~90 steps
WARMUP = 120
#: untraced steps before the in-flight trace: more, because a kernel still counted as
#: expensive when the trace starts is handed out like a real one, and on a loaded machine
#: one preempted run (50 us for a 1 us kernel) puts its estimate back above the threshold
#: for another ~20 runs (a CI run once read 3 in flight on ``tiny_branches``, 2 running)
TRACE_WARMUP = 300


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


def kernel_spans(xspace) -> list[list[tuple[str, int, int, int]]]:
    """Per ``SessionRun`` of a profiler trace (an ``XSpace``): the kernels the executor
    traced, as (name, handed out, start, end) in picoseconds.

    The host plane has one line per thread. A kernel event is one whose metadata has a
    display name (its op type; the name is ``node:type``). ``ThreadpoolListener::Record``
    marks a closure handed to the inter-op pool (stat ``_p``: its id) and
    ``ThreadpoolListener::StartRegion`` (``_c``: the same id) .. ``StopRegion`` the thread
    that runs it: the first kernel a closure runs was handed out at its ``Record``, a
    later one (``ProcessInline`` runs it after the first) when the thread reached it.
    """
    plane = next(p for p in xspace.planes if p.name == "/host:CPU")
    stat_name = {k: v.name for k, v in plane.stat_metadata.items()}
    handed: dict[int, int] = {}
    steps: list[tuple[int, int]] = []
    per_line = []
    for line in plane.lines:
        base = line.timestamp_ns * 1000
        events = sorted(line.events, key=lambda e: e.offset_ps)
        per_line.append((base, events))
        for e in events:
            name = plane.event_metadata[e.metadata_id].name
            if name == "ThreadpoolListener::Record":
                for s in e.stats:
                    if stat_name.get(s.metadata_id) == "_p":
                        handed[s.uint64_value or s.int64_value] = base + e.offset_ps
            elif name == "SessionRun":
                steps.append((base + e.offset_ps, base + e.offset_ps + e.duration_ps))
    spans = []
    for base, events in per_line:
        region = None       # the id of the closure this thread runs, until its first kernel
        for e in events:
            md = plane.event_metadata[e.metadata_id]
            if md.name == "ThreadpoolListener::StartRegion":
                region = next((s.uint64_value or s.int64_value for s in e.stats
                               if stat_name.get(s.metadata_id) == "_c"), None)
            elif md.name == "ThreadpoolListener::StopRegion":
                region = None
            elif md.display_name:
                start = base + e.offset_ps
                out = handed.get(region, start) if region is not None else start
                spans.append((md.name.rpartition(":")[0], min(out, start), start, start + e.duration_ps))
                region = None
    return [sorted(sp for sp in spans if s <= sp[2] < e) for s, e in sorted(steps)]


def measure_in_flight(spec: dict, inter: int = 8, runs: int = 7) -> dict:
    """Expensive kernels in flight at ``inter`` inter-op threads, from TensorFlow's profiler.

    The executor wraps each kernel in a TraceMe at level 2 when it counts the kernel as
    expensive and at level 3 when it runs it inline (``GetTFTraceMeLevel(is_expensive)``,
    tsl/profiler/lib/traceme.h; ``MightTrace`` in executor.cc): profiled at
    ``host_tracer_level=2`` only the expensive kernels are recorded, by TF's own
    ``KernelStats::IsExpensive``, and the inline control ops of a loop run untraced (a
    TraceMe that is off is one atomic load). ``TRACE_WARMUP`` untraced steps first: every
    kernel starts out expensive (an estimate of 10^8 cycles that decays by 1/10 per run
    to its measured cost; ~90 runs bring a microsecond kernel under the 8000-cycle
    threshold), and a kernel traced as expensive does not update its estimate.
    ``in_flight``: the most expensive kernels the executor had handed out and not
    finished at once (hand-out .. kernel end, ``kernel_spans``): its own concurrency,
    which other processes on the machine cannot change. ``running``: the most whose
    kernels actually ran at once (kernel start .. end); a loaded machine delays the
    inter-op threads and lowers it. Both are the largest of any of the ``runs`` steps.
    """
    import glob
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    g = _rebuild_if_python(spec)
    options = tf.profiler.experimental.ProfilerOptions(host_tracer_level=2, python_tracer_level=0,
                                                       device_tracer_level=0)
    with _session(g, inter, 1) as sess, tempfile.TemporaryDirectory() as logdir:
        fetch = g.get_tensor_by_name(spec["fetch"])
        for _ in range(TRACE_WARMUP):
            sess.run(fetch)
        tf.profiler.experimental.start(logdir, options=options)
        try:
            for _ in range(runs):
                sess.run(fetch)
        finally:
            tf.profiler.experimental.stop()
        path = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)[0]
        steps = kernel_spans(xplane_pb2.XSpace.FromString(Path(path).read_bytes()))
    in_flight = [_peak((h, e) for _, h, _, e in spans) for spans in steps]
    running = [_peak((s, e) for _, _, s, e in spans) for spans in steps]
    kernels = {name for spans in steps for name, *_ in spans}
    return {"in_flight": max(in_flight), "running": max(running), "peaks": in_flight,
            "expensive_kernels": len(kernels), "load": os.getloadavg()[0]}


def time_step(spec: dict, inter: int, intra: int, runs: int = 30) -> dict:
    """Milliseconds per Session.run at (inter, intra): the median and the lowest of ``runs``
    steps (call in a fresh process), after ``WARMUP`` untimed steps, so that the executor
    runs in its steady state (its cost estimates settled: cheap kernels inline), as in a
    user's run of thousands of steps. The median is what such a run gets per step (the
    judge's verdict uses it); the lowest is the least disturbed step."""
    g = _rebuild_if_python(spec)
    with _session(g, inter, intra) as sess:
        fetch = g.get_tensor_by_name(spec["fetch"])
        for _ in range(WARMUP):
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
