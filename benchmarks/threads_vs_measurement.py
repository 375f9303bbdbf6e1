"""Check placelint's thread recommendation against TensorFlow on this machine (not run in CI).

    .venv/bin/python benchmarks/threads_vs_measurement.py [--cores N] [--runs 30] [--rounds 2]

For each model below the script writes a frozen TF1 GraphDef, asks placelint for its
recommendation (``analyze_parallelism(..., cores=N)``, no TensorFlow involved), then times
``Session.run`` with real TensorFlow at every (inter_op, intra_op) setting on a small grid.
TF's thread pools are per process and fixed by the first session, so every setting runs in
its own subprocess. Settings run ``--rounds`` times in interleaved order; a setting's time
is the lowest of its round medians (the machine may be shared).

It prints, per model, the measured milliseconds per step for each setting, the measured
best, placelint's pick, and whether they agree: the pick is the best or within 5% of it.

Models:
* ``inception_block``: four convolution towers on one 35x35x192 input (big kernels that
  split over the intra-op pool, four independent branches);
* ``wide_small``: sixteen independent chains of element-wise ops on 128x128 tensors (big
  enough to leave the executor's inline path, too small for Eigen to split them; only
  inter-op threads can run them side by side);
* ``wide_single``: eight independent 320x320 matrix inversions (milliseconds each; one
  matrix never splits over the intra-op pool, so only inter-op threads help);
* ``matmul_chain``: a chain of 1024x1024 matrix multiplications (width 1, big kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

AGREE_WITHIN = 0.05
ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- models (TF)


def build_models(out: Path) -> dict[str, dict]:
    """Write each model's GraphDef; return name -> {path, feeds: {name: shape}, fetch}."""
    import numpy as np
    import tensorflow as tf

    tf1 = tf.compat.v1
    rng = np.random.default_rng(0)
    models = {}

    def save(name, graph, feeds, fetch):
        path = out / f"{name}.pb"
        path.write_bytes(graph.as_graph_def().SerializeToString())
        models[name] = {"path": str(path), "feeds": feeds, "fetch": fetch}

    def w(*shape):
        return tf.constant(rng.standard_normal(shape).astype("float32") * 0.05)

    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [8, 35, 35, 192], name="x")

        def conv(name, inp, k, cin, cout):
            with tf.name_scope(name):
                return tf.nn.relu(tf.nn.conv2d(inp, w(k, k, cin, cout), 1, "SAME"))

        with tf.name_scope("mixed"):
            b0 = conv("branch_0", x, 1, 192, 64)
            b1 = conv("branch_1b", conv("branch_1a", x, 1, 192, 48), 5, 48, 64)
            b2 = conv("branch_2c", conv("branch_2b", conv("branch_2a", x, 1, 192, 64), 3, 64, 96), 3, 96, 96)
            b3 = conv("branch_3", tf.nn.avg_pool2d(x, 3, 1, "SAME"), 1, 192, 32)
            out_t = tf.concat([b0, b1, b2, b3], 3, name="out")
    save("inception_block", g, {"x:0": [8, 35, 35, 192]}, out_t.name)

    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [128, 128], name="x")
        outs = []
        for i in range(16):
            with tf.name_scope(f"branch_{i}"):
                y = x
                for k in range(6):
                    # distinct constants per branch: identical branches would be merged by
                    # Grappler's common-subexpression elimination
                    y = tf.tanh(y * (1.0 + 0.01 * i) + 0.1 * k)
                outs.append(y)
        out_t = tf.add_n(outs, name="out")
    save("wide_small", g, {"x:0": [128, 128]}, out_t.name)

    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [320, 320], name="x")
        outs = []
        for i in range(8):
            with tf.name_scope(f"branch_{i}"):
                shifted = x + tf.eye(320) * (320.0 + i)     # diagonally dominant: invertible
                outs.append(tf.linalg.inv(shifted))
        out_t = tf.add_n(outs, name="out")
    save("wide_single", g, {"x:0": [320, 320]}, out_t.name)

    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [512, 1024], name="x")
        y = x
        for i in range(4):
            with tf.name_scope(f"layer{i}"):
                y = tf.nn.relu(tf.matmul(y, w(1024, 1024)))
        out_t = tf.identity(y, name="out")
    save("matmul_chain", g, {"x:0": [512, 1024]}, out_t.name)
    return models


# --------------------------------------------------------------------------- one timing run


def time_setting(spec: dict, inter: int, intra: int, runs: int) -> float:
    """Median milliseconds per Session.run (runs in a fresh process: see the module doc)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import time

    import numpy as np
    import tensorflow as tf

    tf1 = tf.compat.v1
    gd = tf1.GraphDef.FromString(Path(spec["path"]).read_bytes())
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    rng = np.random.default_rng(1)
    feeds = {k: rng.standard_normal(v).astype("float32") for k, v in spec["feeds"].items()}
    with tf1.Session(graph=g, config=config) as sess:
        fetch = g.get_tensor_by_name(spec["fetch"])
        for _ in range(5):
            sess.run(fetch, feeds)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(fetch, feeds)
            times.append((time.perf_counter() - t) * 1000)
    return float(np.median(times))


# --------------------------------------------------------------------------- driver


def busy_fraction(interval: float = 1.0) -> float:
    """Share of all CPUs busy over ``interval`` seconds (/proc/stat); the driver itself idles."""
    import time

    def sample():
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return idle, sum(fields)

    i0, t0 = sample()
    time.sleep(interval)
    i1, t1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def wait_idle(limit_s: float, threshold: float = 0.15) -> float:
    """Wait (up to ``limit_s``) until other processes use under ``threshold`` of the CPUs."""
    import time
    deadline = time.monotonic() + limit_s
    busy = busy_fraction()
    while busy > threshold and time.monotonic() < deadline:
        busy = busy_fraction(2.0)
    return busy


def recommend(path: str, cores: int):
    from placelint.loaders import discover, load_raw
    from placelint.model import model_from_raw
    from placelint.analyses.parallelism import analyze_parallelism

    model = model_from_raw(load_raw(discover([path])[0]))
    return analyze_parallelism(model.graph, cores=cores)


def grid(cores: int) -> list[tuple[int, int]]:
    values = sorted({1, max(1, cores // 2), cores})
    return [(a, b) for a in values for b in values]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--runs", type=int, default=30, help="timed runs per setting")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved repetitions of the grid")
    ap.add_argument("--models", default="inception_block,wide_small,wide_single,matmul_chain")
    ap.add_argument("--wait-idle", type=float, default=120.0,
                    help="seconds to wait, before each timing, for other processes to go quiet")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:  # subprocess: time one setting
        spec, inter, intra = json.loads(args.child)
        print(json.dumps(time_setting(spec, inter, intra, args.runs)))
        return 0

    work = Path(tempfile.mkdtemp(prefix="placelint-threads-"))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    out = subprocess.run([sys.executable, "-c",
                          "import json, sys; sys.path.insert(0, %r); import threads_vs_measurement as t; "
                          "print(json.dumps(t.build_models(__import__('pathlib').Path(%r))))"
                          % (str(Path(__file__).parent), str(work))],
                         capture_output=True, text=True, env=env, check=True)
    models = json.loads(out.stdout.strip().splitlines()[-1])
    wanted = [m for m in args.models.split(",") if m]
    settings = grid(args.cores)
    print(f"cores: {args.cores}; settings (inter, intra): {settings}; {args.runs} runs x {args.rounds} rounds")
    summary = []
    for name in wanted:
        spec = models[name]
        report = recommend(spec["path"], args.cores)
        rec = report.recommendation
        pick = (rec.inter_op, rec.intra_op)
        measured: dict[tuple[int, int], list[float]] = {s: [] for s in settings}
        busy_seen: list[float] = []
        for _ in range(args.rounds):
            for inter, intra in settings:
                busy_seen.append(wait_idle(args.wait_idle))
                child = subprocess.run([sys.executable, __file__, "--runs", str(args.runs), "--child",
                                        json.dumps([spec, inter, intra])],
                                       capture_output=True, text=True, env=env, check=True)
                measured[(inter, intra)].append(float(child.stdout.strip().splitlines()[-1]))
        best_ms = {s: min(v) for s, v in measured.items()}
        best = min(best_ms, key=best_ms.get)
        if pick not in best_ms:  # recommendation off the grid: time it too
            child = subprocess.run([sys.executable, __file__, "--runs", str(args.runs), "--child",
                                    json.dumps([spec, *pick])], capture_output=True, text=True, env=env,
                                   check=True)
            best_ms[pick] = float(child.stdout.strip().splitlines()[-1])
        ratio = best_ms[pick] / best_ms[best]
        agree = pick == best or ratio <= 1 + AGREE_WITHIN
        print(f"\n{name}: width {report.width}, average parallelism "
              f"{report.average_parallelism:.2f}, intra-op share {report.intra_share:.0%}")
        print(f"  placelint: inter_op={pick[0]} intra_op={pick[1]} -- {rec.reason}")
        print(f"  other load before timings: {min(busy_seen):.0%}..{max(busy_seen):.0%} of the CPUs")
        for s in sorted(best_ms):
            marks = (" <- measured best" if s == best else "") + (" <- placelint" if s == pick else "")
            print(f"  inter={s[0]} intra={s[1]}: {best_ms[s]:8.2f} ms/step{marks}")
        verdict = "agrees" if agree else "DISAGREES"
        print(f"  {verdict}: placelint's pick is {ratio:.3f}x the measured best")
        summary.append((name, pick, best, ratio, agree))
    print("\nsummary:")
    for name, pick, best, ratio, agree in summary:
        print(f"  {name:<16} placelint {pick}  measured best {best}  pick/best {ratio:.3f}  "
              f"{'agrees' if agree else 'DISAGREES'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
