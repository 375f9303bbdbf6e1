"""TensorFlow side of the SavedModel judges (run as a script: ``python savedmodels_tf.py OUT``).

Builds SavedModels under OUT and loads each in ``tf.compat.v1`` sessions of several device counts,
strict and soft, the way TF Serving does (``tf.compat.v1.saved_model.loader.load``: one session
over the MetaGraph, the saver's restore op, then the init op; then one run of the serving
signature with zeros fed). Writes OUT/verdicts.json: per model and session config, whether it
loaded and ran, the node TF names when it did not (and the colocation members the message
lists), and where the signature's step placed each node (its partition graphs).

TF1 models (``tf1_*``): a variable, a small table, a saver and compute, each optionally pinned to
``/GPU:0`` (no GPU here) or ``/CPU:1``. TF2 models (``tf2_*``): ``tf.saved_model.save`` of a
module whose signature calls nested ``tf.function``s with ``tf.device`` scopes inside, one of
them compiled by XLA in the last few (``JIT_SPECS``): the step's nodes with ``_XlaMustCompile``
are listed too.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = [(1, False), (2, False), (3, False), (1, True), (2, True)]
PINS = (None, "/GPU:0", "/CPU:1")


def tf1_specs(rng: random.Random, n: int) -> list[dict]:
    specs = [
        {"saver": "/GPU:0"}, {"saver": "/CPU:1"}, {"table": "/GPU:0"}, {"compute": "/GPU:0"},
        {"variable": "/CPU:1"}, {"init": "/CPU:1"}, {},
    ]
    while len(specs) < n:
        specs.append({k: rng.choice(PINS) for k in ("saver", "table", "compute", "variable",
                                                     "init")})
    return specs[:n]


def build_tf1(tf, path: str, spec: dict) -> None:
    import contextlib

    tf1 = tf.compat.v1

    def dev(key):
        return tf.device(spec[key]) if spec.get(key) else contextlib.nullcontext()

    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [4], name="x")
        with dev("variable"):
            v = tf1.get_variable("v", [4], initializer=tf1.ones_initializer(),
                                 use_resource=spec.get("resource", True))
        with dev("table"):
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b"]),
                                                    tf.constant([1.0, 2.0])), -1.0)
        with dev("compute"):
            y = tf.identity(x * v + table.lookup(tf.constant("a")), name="y")
        with dev("saver"):
            saver = tf1.train.Saver()
        with dev("init"):
            main_op = tf1.group(tf1.local_variables_initializer(), tf1.tables_initializer(),
                                name="main_op")
        config = tf1.ConfigProto(allow_soft_placement=True, device_count={"CPU": 3})
        with tf1.Session(graph=g, config=config) as s:
            s.run(tf1.global_variables_initializer())
            b = tf1.saved_model.Builder(path)
            sig = tf1.saved_model.predict_signature_def({"x": x}, {"y": y})
            b.add_meta_graph_and_variables(s, ["serve"], {"serving_default": sig},
                                           saver=saver, main_op=main_op)
            b.save()


def tf2_specs(rng: random.Random, n: int) -> list[dict]:
    specs = [{"outer": "/GPU:0"}, {"inner": "/GPU:0", "nested": "/CPU:1"},
             {"outer": "/CPU:1", "inner": "/CPU:2"}, {}]
    pins = (None, "/GPU:0", "/CPU:1", "/CPU:2", "/device:CPU:*")
    while len(specs) < n:
        specs.append({k: rng.choice(pins) for k in ("outer", "inner", "nested")})
    return specs[:n]


#: TF2 models whose ``jit`` function is compiled by XLA (``tf.function(jit_compile=True)``):
#: its call stays one node of the served step
JIT_SPECS = [{"jit": "inner"}, {"jit": "nested", "inner": "/CPU:1"},
             {"jit": "inner", "outer": "/CPU:1"}, {"jit": "inner", "inner": "/CPU:2"},
             {"jit": "nested", "nested": "/GPU:0"}]


def build_tf2(tf, path: str, spec: dict) -> None:
    import contextlib

    def dev(key):
        return tf.device(spec[key]) if spec.get(key) else contextlib.nullcontext()

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(tf.ones([4]), name="w")

        @tf.function(jit_compile=spec.get("jit") == "nested")
        def nested(self, z):
            with dev("nested"):
                return tf.sqrt(z * z + 1.0)

        @tf.function(jit_compile=spec.get("jit") == "inner")
        def inner(self, y):
            with dev("inner"):
                a = y * self.w
                b = tf.tanh(a)
            return self.nested(a + b)

        @tf.function(input_signature=[tf.TensorSpec([4], tf.float32)])
        def serve(self, x):
            with dev("outer"):
                h = x + 2.0
                k = self.inner(h)
            return {"out": k * 3.0}

    m = M()
    tf.saved_model.save(m, path, signatures=m.serve)


def judge(tf, path: str, n_cpus: int, soft: bool) -> dict:
    sys.path.insert(0, HERE)
    import numpy as np
    import oracle  # noqa: E402

    tf1 = tf.compat.v1
    g = tf.Graph()
    if os.path.basename(path).startswith("tf2"):
        # as TF Serving runs it: the default session options (Grappler's function inlining
        # on), so the partition graphs show where each function-body op landed
        config = tf1.ConfigProto(device_count={"CPU": n_cpus}, allow_soft_placement=soft)
    else:
        config = oracle._session_config(tf, n_cpus, soft)  # noqa: SLF001
        config.log_device_placement = False
    with g.as_default():
        sess = tf1.Session(graph=g, config=config)
        try:
            meta = tf1.saved_model.loader.load(sess, ["serve"], path)
            sig = meta.signature_def["serving_default"]
            feeds = {name: np.zeros([d.size for d in t.tensor_shape.dim], np.float32)
                     for name, t in ((t.name, t) for t in sig.inputs.values())}
            opts = tf1.RunOptions(output_partition_graphs=True)
            md = tf1.RunMetadata()
            sess.run([t.name for t in sig.outputs.values()], feed_dict=feeds, options=opts,
                     run_metadata=md)
        except Exception as e:  # noqa: BLE001 - the verdict
            msg = getattr(e, "message", None) or str(e)
            nodes, coloc = oracle.parse_error_nodes(msg)
            members = [m.group(1) for m in (oracle._MEMBER_LINE.match(line)  # noqa: SLF001
                                            for line in msg.splitlines()) if m]
            return {"ok": False, "error": type(e).__name__, "message": msg[:4000],
                    "nodes": nodes, "colocation": sorted(set(coloc) | set(members))}
        finally:
            sess.close()
    placement = {nd.name: nd.device for pg in md.partition_graphs for nd in pg.node
                 if nd.op not in ("_Send", "_Recv", "_HostSend", "_HostRecv", "_Arg", "_Retval")}
    compiled = sorted(nd.name for pg in md.partition_graphs for nd in pg.node
                      if "_XlaMustCompile" in nd.attr and nd.attr["_XlaMustCompile"].b)
    return {"ok": True, "placement": placement, "compiled": compiled}


def main(out: str) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    rng = random.Random(13)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    models = []
    for i, spec in enumerate(tf1_specs(rng, 12)):
        name = f"tf1_{i:02d}"
        build_tf1(tf, os.path.join(out, name), spec)
        models.append((name, spec))
    for i, spec in enumerate(tf2_specs(rng, 10) + JIT_SPECS):
        name = f"tf2_{i:02d}"
        build_tf2(tf, os.path.join(out, name), spec)
        models.append((name, spec))
    verdicts = {}
    for name, spec in models:
        verdicts[name] = {"spec": spec, "runs": {
            f"CPU={n},soft={int(s)}": judge(tf, os.path.join(out, name), n, s)
            for n, s in CONFIGS}}
    with open(os.path.join(out, "verdicts.json"), "w") as fh:
        json.dump({"tf_version": tf.__version__, "models": verdicts}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
