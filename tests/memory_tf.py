"""TensorFlow's own memory accounting for a small corpus, as the judge of analyses/memory.py.

``python tests/memory_tf.py OUT.json`` builds each model of :data:`MODELS` (TF1 training graphs
with Adam, SGD, Momentum; Keras 3 layers built in graph mode; every op under an
explicit ``tf.device`` on one of 3 CPU devices), runs one step in a ``tf.compat.v1.Session``
with ``device_count={'CPU': 3}``, Grappler and constant folding off (as
tests/differential/oracle.py), one inter-op thread, and ``RunOptions(trace_level=FULL_TRACE,
output_partition_graphs=True)``, and writes per model:

* ``graph``: the step's GraphDef (text), the nodes the fetch needs (``extract_sub_graph``);
  that is what placelint analyses;
* ``variables``: device -> bytes of the variables there (their fetched values' ``nbytes``);
* ``outputs``: node -> [requested_bytes per output slot] (the step stats'
  ``allocation_description``), for nodes whose output allocates;
* ``peak``: device -> peak of live buffers reconstructed from the trace: a buffer (one
  pointer while live; outputs forwarded from an input, and tensors received from another CPU
  device, share it) counts on the device whose op allocated it, from that op's start to the
  end of its last reader (the readers read from the partition graphs; a ``_Recv``'s readers
  read the sent tensor); variables' and constants' buffers are resident, not transient.

This module imports nothing from placelint. ``load(cache_dir)`` runs it in a subprocess once
and caches the JSON keyed by this file's content.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()


def _dense_adam(tf):
    tf1 = tf.compat.v1
    with tf.device("/device:CPU:0"):
        x = tf1.placeholder(tf.float32, [32, 64], name="x")
        y = tf1.placeholder(tf.float32, [32, 10], name="y")
        w1 = tf1.get_variable("w1", [64, 128], use_resource=False)
        b1 = tf1.get_variable("b1", [128], use_resource=False)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.device("/device:CPU:1"):
        w2 = tf1.get_variable("w2", [128, 10], use_resource=False)
        logits = tf.matmul(h, w2)
    with tf.device("/device:CPU:2"):
        loss = tf.reduce_mean(tf.square(logits - y))
        opt = tf1.train.AdamOptimizer(0.01)
        train = opt.minimize(loss, colocate_gradients_with_ops=True)
    feeds = {"x:0": (32, 64), "y:0": (32, 10)}
    return train.name, feeds


def _mlp_split(tf):
    tf1 = tf.compat.v1
    sizes = [(256, 512), (512, 256), (256, 16)]
    with tf.device("/device:CPU:0"):
        h = tf1.placeholder(tf.float32, [64, 256], name="x")
    for i, (a, b) in enumerate(sizes):
        with tf.device(f"/device:CPU:{i}"), tf1.variable_scope(f"dense_{i}"):
            w = tf1.get_variable("kernel", [a, b], use_resource=True)
            bias = tf1.get_variable("bias", [b], use_resource=True)
            h = tf.matmul(h, w) + bias
            if i < len(sizes) - 1:
                h = tf.nn.relu(h)
    with tf.device("/device:CPU:2"):
        out = tf.identity(tf.nn.softmax(h), name="out")
    return out.op.name, {"x:0": (64, 256)}


def _cnn_sgd(tf):
    tf1 = tf.compat.v1
    with tf.device("/device:CPU:0"):
        x = tf1.placeholder(tf.float32, [8, 16, 16, 3], name="x")
        y = tf1.placeholder(tf.float32, [8, 10], name="y")
        k = tf1.get_variable("conv/kernel", [3, 3, 3, 8], use_resource=True)
        b = tf1.get_variable("conv/bias", [8], use_resource=True)
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, 1, "SAME"), b))
        h = tf.nn.max_pool2d(h, 2, 2, "VALID")
    with tf.device("/device:CPU:1"):
        w = tf1.get_variable("dense/kernel", [8 * 8 * 8, 10], use_resource=True)
        logits = tf.matmul(tf.reshape(h, [8, -1]), w)
    with tf.device("/device:CPU:2"):
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, colocate_gradients_with_ops=True)
    return train.name, {"x:0": (8, 16, 16, 3), "y:0": (8, 10)}


def _keras_momentum(tf):
    """Keras 3 layers (built in graph mode, each under its device) trained by a TF1 optimizer
    with slots (Momentum): the Keras model split over 3 CPU devices of the issue."""
    import keras
    tf1 = tf.compat.v1
    with tf.device("/device:CPU:0"):
        x = tf1.placeholder(tf.float32, [16, 48], name="x")
        y = tf1.placeholder(tf.float32, [16, 10], name="y")
        h = keras.layers.Dense(96, activation="relu", name="dense_0")(x)
    with tf.device("/device:CPU:1"):
        h = keras.layers.LayerNormalization(name="norm")(h)
        h = keras.layers.Dense(64, activation="tanh", name="dense_1")(h)
    with tf.device("/device:CPU:2"):
        logits = keras.layers.Dense(10, name="dense_2")(h)
        loss = keras.losses.CategoricalCrossentropy(from_logits=True)(y, logits)
        train = tf1.train.MomentumOptimizer(0.01, 0.9).minimize(
            loss, colocate_gradients_with_ops=True)
    return train.name, {"x:0": (16, 48), "y:0": (16, 10)}


def _keras_cnn_adam(tf):
    """Keras 3 convolution, pooling and dense layers over 3 CPU devices, trained by Adam."""
    import keras
    tf1 = tf.compat.v1
    with tf.device("/device:CPU:0"):
        x = tf1.placeholder(tf.float32, [4, 12, 12, 3], name="x")
        y = tf1.placeholder(tf.float32, [4, 5], name="y")
        h = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="conv_0")(x)
        h = keras.layers.MaxPooling2D(2, name="pool_0")(h)
    with tf.device("/device:CPU:1"):
        h = keras.layers.Conv2D(16, 3, activation="relu", name="conv_1")(h)
        h = keras.layers.Flatten(name="flatten")(h)
    with tf.device("/device:CPU:2"):
        logits = keras.layers.Dense(5, name="dense")(h)
        loss = keras.losses.CategoricalCrossentropy(from_logits=True)(y, logits)
        train = tf1.train.AdamOptimizer(0.001).minimize(loss, colocate_gradients_with_ops=True)
    return train.name, {"x:0": (4, 12, 12, 3), "y:0": (4, 5)}


#: Ops whose output buffer lives across steps (a kernel-held constant, a variable; a
#: ReadVariableOp outside copy-on-read mode outputs the variable's own buffer).
RESIDENT_OPS = frozenset({"Const", "HostConst", "VariableV2", "Variable", "VarHandleOp"})

#: Traced runs of each step: the peak TF reaches varies between them (see _run). cnn_sgd's
#: CPU:2 peaks at 384 bytes in about 2 runs of 7 on an idle host and at 672 in the others
#: (none of 7 under load): with 7 runs, about one suite in ten saw no 384; with 21, about
#: one in a thousand (well under a second more: importing TF is most of the run).
TRACED_RUNS = 21

MODELS = {"dense_adam": _dense_adam, "mlp_split": _mlp_split, "cnn_sgd": _cnn_sgd,
          "keras_momentum": _keras_momentum, "keras_cnn_adam": _keras_cnn_adam}


def _session_config(tf):
    from tensorflow.core.protobuf import rewriter_config_pb2
    tf1 = tf.compat.v1
    config = tf1.ConfigProto(device_count={"CPU": 3}, inter_op_parallelism_threads=1,
                             intra_op_parallelism_threads=1)
    rw = config.graph_options.rewrite_options
    rw.disable_meta_optimizer = True
    rw.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    return config


def _run(name, build):
    import numpy as np
    import tensorflow as tf
    from google.protobuf import text_format
    tf1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        fetch, feeds = build(tf)
        init = tf1.global_variables_initializer()
        variables = tf1.global_variables()
    step = tf1.graph_util.extract_sub_graph(graph.as_graph_def(), [fetch.split(":")[0]])
    metas = []
    for _ in range(TRACED_RUNS):    # a new session each time: see the note below
        with tf1.Session(graph=graph, config=_session_config(tf)) as sess:
            sess.run(init)
            values = sess.run(variables)
            feed = {k: np.ones(s, np.float32) for k, s in feeds.items()}
            opts = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE,
                                  output_partition_graphs=True)
            meta = tf1.RunMetadata()
            sess.run(fetch, feed_dict=feed, options=opts, run_metadata=meta)
            metas.append(meta)

    def analyse(meta):
        var_names = {v.op.name for v in variables}
        stats = {}
        for ds in meta.step_stats.dev_stats:
            for ns in ds.node_stats:
                stats[ns.node_name] = (ds.device, ns)
        var_bytes: dict[str, int] = defaultdict(int)
        for v, value in zip(variables, values):
            var_bytes[stats[v.op.name][0]] += int(value.nbytes)
        # consumers per (producer, slot) and op types, from the partition graphs (what runs)
        consumers, ops = defaultdict(list), {}
        sent, received = {}, {}          # rendezvous tensor_name -> sent tensor / receiving node
        for pg in meta.partition_graphs:
            for node in pg.node:
                ops[node.name] = node.op
                data = [i for i in node.input if not i.startswith("^")]
                for inp in data:
                    src, _, slot = inp.partition(":")
                    consumers[(src, int(slot or 0))].append(node.name)
                if node.op in ("_Send", "_HostSend") and data:
                    src, _, slot = data[0].partition(":")
                    sent[node.attr["tensor_name"].s] = (src, int(slot or 0))
                elif node.op in ("_Recv", "_HostRecv"):
                    received[node.attr["tensor_name"].s] = node.name
        # Between CPU devices the receiver gets the sender's buffer: its readers keep it alive.
        for key, recv in received.items():
            if key in sent:
                consumers[sent[key]].extend(consumers[(recv, 0)])
        outputs = {}
        allocations = []        # (start, end, device, ptr, bytes, resident)
        for node_name, (device, ns) in stats.items():
            sizes = []
            start = ns.all_start_nanos
            for out in ns.output:
                ad = out.tensor_description.allocation_description
                sizes.append(int(ad.requested_bytes))
                end = start + ns.all_end_rel_nanos
                for c in consumers[(node_name, out.slot)]:
                    if c in stats:
                        cs = stats[c][1]
                        end = max(end, cs.all_start_nanos + cs.all_end_rel_nanos)
                resident = ops.get(node_name) in RESIDENT_OPS or ops.get(node_name) == "ReadVariableOp"
                allocations.append((start, end, device, int(ad.ptr), int(ad.requested_bytes), resident,
                                    node_name))
            if sizes and node_name not in var_names:
                outputs[node_name] = sizes
        # One buffer per pointer while it is live: an output whose pointer is that of a live
        # buffer is a forwarded input or a tensor received from another CPU device (the local
        # rendezvous hands the buffer over; the CPU devices share one allocator, so pointers are
        # unique across them): same memory, kept by the device that allocated it. An output
        # whose pointer was freed is a new buffer.
        buffers, live = [], {}
        for start, end, device, ptr, nbytes, resident, owner in sorted(allocations):
            b = live.get(ptr) if ptr else None
            if b is not None and start <= b["end"]:
                b["end"] = max(b["end"], end)
                b["resident"] |= resident
                continue
            b = {"start": start, "end": end, "device": device, "bytes": nbytes, "resident": resident,
                 "owner": owner}
            buffers.append(b)
            if ptr:
                live[ptr] = b
        peak, at_peak = {}, {}
        for device in {d for d, _ in stats.values()}:
            mine = [b for b in buffers if b["device"] == device and not b["resident"]]
            events = []
            for b in mine:
                events += [(b["start"], 0, b["bytes"]), (b["end"], 1, -b["bytes"])]
            level = top = 0
            when = None
            for t, kind, delta in sorted(events):
                level += delta
                if level > top:
                    top, when = level, t
            peak[device] = top
            at_peak[device] = sorted([b["owner"], b["bytes"]] for b in mine
                                     if when is not None and b["start"] <= when < b["end"] and b["bytes"])
        return var_bytes, outputs, peak, at_peak, stats

    # TF's executors on the three devices meet at the rendezvous in an order that varies
    # from session to session (even with one inter-op thread), so a small device's peak does
    # too: keep the peak of every traced session; the first gives the outputs and the order.
    results = [analyse(meta) for meta in metas]
    var_bytes, outputs, peak, at_peak, stats = results[0]
    peaks = {d: sorted(r[2].get(d, 0) for r in results) for d in peak}
    return {"graph": text_format.MessageToString(step), "variables": dict(var_bytes),
            "outputs": outputs, "peak": peak, "peaks": peaks,
            "at_peak": at_peak, "order": {d: [n for n, (dd, _) in sorted(
                stats.items(), key=lambda kv: kv[1][1].all_start_nanos) if dd == d]
                for d in peak}}


def main(out: str) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    result = {name: _run(name, build) for name, build in MODELS.items()}
    Path(out).write_text(json.dumps(result, indent=1, sort_keys=True))


def load(cache_dir: Path) -> dict:
    """The corpus's TF answers, computed once per version of this file."""
    digest = hashlib.sha256(HERE.read_bytes()).hexdigest()[:16]
    path = Path(cache_dir) / f"memory_tf_{digest}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
        subprocess.run([sys.executable, str(HERE), str(path)], check=True, env=env,
                       capture_output=True, timeout=300)
    return json.loads(path.read_text())


if __name__ == "__main__":
    main(sys.argv[1])
