#!/usr/bin/env python3
"""Scale benchmark: placelint's phases on 10^4..10^6-node graphs, next to TensorFlow (not CI).

    .venv/bin/python benchmarks/bench_scale.py --sizes 1e4,1e5,1e6 --tf
    .venv/bin/python benchmarks/bench_scale.py --sizes 1e5 --repeat 3     # best of 3 per size
    .venv/bin/python benchmarks/bench_scale.py --sizes 1e5 --cli 5        # the whole command
    .venv/bin/python benchmarks/bench_scale.py --sizes 1e4 --pbtxt 1e4,1e5 --cold 10

The graphs are ``gen_graphs.make_towers(n)``: four model-parallel towers of dense layers
(VariableV2 weight and bias with Identity reads, MatMul, BiasAdd, Relu, Square), one tower per
CPU device, mixed by an AddN on CPU:0 every four layers, written as binary GraphDefs.

Each size is measured in its own process (so peak RSS is that size's), phase by phase as
``pipeline.analyze`` runs them, garbage collection paused as there:

* parse: read + binary protobuf parse (``loaders.load_raw``); build: GraphDef -> ``Graph``
  with function expansion and validation (``model.model_from_raw``); load = parse + build;
* placement, shapes, transfers, parallelism: the cached analyses of ``context.Context``;
* rules: every rule and ``finalize`` over the cached analyses; check = parse .. rules, what
  ``placelint check`` spends on the model;
* render: the collapsed view (``render.view.build_view``, 100 boxes) and its DOT source,
  (``--dot``: plus Graphviz's layout of it).

``--tf`` runs TensorFlow's route on the same file in another process: parse the GraphDef,
``tf.compat.v1.import_graph_def``, then a first ``Session.run`` of a cheap constant, which
places the whole graph (DirectSession places every node at the first run); Grappler and
constant folding off, ``device_count={'CPU': k}``. ``import tensorflow`` is timed apart and
not counted. A TF run past ``--tf-timeout`` seconds is stopped and reported as such.

``--cold N``: ``placelint check`` on a small sample in a fresh process, N times (median and
best). ``--cli N``: the whole ``placelint check`` command on each generated graph in a fresh
process, N times: the phases above plus interpreter start, imports and the text report. ``--pbtxt SIZES``: text-format loading (parse + node line numbers) of the same graphs.

Every placelint run prints a fingerprint of its results (placement, transfers, widths), so
runs before and after an optimisation can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PHASES = ("parse", "build", "placement", "shapes", "transfers", "parallelism", "rules")
SMALL_SAMPLE = ROOT / "samples" / "towers_gpu.pb"
#: the devices the small sample is checked on (its own: no finding about missing ones)
SMALL_SAMPLE_DEVICES = "CPU:0,GPU:0,GPU:1"


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


# --------------------------------------------------------------------------- children


def child_placelint(path: Path, devices: int, dot: bool) -> dict:
    """One placelint run over ``path``, phase by phase; returns seconds, RSS, fingerprint."""
    import hashlib

    from placelint.context import Context
    from placelint.loaders import discover, load_raw
    from placelint.model import model_from_raw
    from placelint.model.devices import DeviceSet
    from placelint.pipeline import ModelReport, finalize, run_rules
    from placelint.settings import Settings
    try:
        from placelint.pipeline import gc_paused
    except ImportError:     # an older tree (for before/after figures): GC on, as it ran
        from contextlib import nullcontext as gc_paused

    settings = Settings(devices=DeviceSet.parse(f"CPU={devices}"))
    rss_start = _peak_rss_mib()
    ref = discover([path])[0]
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(phase, fn):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        seconds[phase] = time.perf_counter() - t0
        cpu[phase] = time.process_time() - c0
        return value

    with gc_paused():
        raw = timed("parse", lambda: load_raw(ref, settings.load))
        model = timed("build", lambda: model_from_raw(raw))
        del raw
        ctx = Context(model, settings)
        for phase in ("placement", "shapes", "transfers", "parallelism"):
            timed(phase, lambda: getattr(ctx, phase))
        diags = timed("rules", lambda: finalize(list(model.diagnostics) + run_rules(ctx, settings),
                                                 ref, model, settings))
    rss_check = _peak_rss_mib()
    report = ModelReport(ref, model, diags, ctx)

    def render():
        from placelint.render.dot import to_dot
        from placelint.render.view import ViewOptions, build_view, inputs_from_report
        return to_dot(build_view(inputs_from_report(report), ViewOptions()))

    source = timed("render", render)
    if dot:
        from placelint.render.run_dot import render as run_dot
        seconds["dot"] = timed("dot", lambda: run_dot(source, "svg", timeout=120)).seconds

    placement = ctx.placement.device
    h = hashlib.sha1()
    for name in sorted(placement):
        h.update(f"{name}={placement[name]}\n".encode())
    for t in ctx.transfers:
        h.update(json.dumps(t.to_json(), sort_keys=True).encode())
    par = ctx.parallelism
    par_json = par.to_json()
    par_json.pop("model", None)     # the file's path: a temporary directory unless --keep
    h.update(json.dumps(par_json, sort_keys=True).encode())
    for d in diags:
        h.update(f"{d.code} {d.node} {d.message}\n".encode())
    fingerprint = {"nodes": len(model.graph), "placed": sum(v is not None for v in placement.values()),
                   "transfers": len(ctx.transfers), "width": par.width,
                   "width_all_ops": par.width_all_ops, "findings": len(diags),
                   "sha1": h.hexdigest()[:12]}
    return {"seconds": seconds, "cpu": cpu, "rss_start_mib": rss_start, "rss_check_mib": rss_check,
            "rss_peak_mib": _peak_rss_mib(), "fingerprint": fingerprint}


def child_tf(path: Path, devices: int) -> dict:
    """TensorFlow's route: import the GraphDef and place it with a first Session.run."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    t0 = time.perf_counter()
    import tensorflow as tf
    from tensorflow.core.protobuf import rewriter_config_pb2
    seconds = {"tf_import": time.perf_counter() - t0}
    rss_start = _peak_rss_mib()
    tf1 = tf.compat.v1
    c0 = time.process_time()

    t0 = time.perf_counter()
    if path.is_dir():   # a SavedModel: its first MetaGraph's graph (functions in its library)
        from tensorflow.core.protobuf import saved_model_pb2
        saved = saved_model_pb2.SavedModel()
        saved.ParseFromString((path / "saved_model.pb").read_bytes())
        graph_def = saved.meta_graphs[0].graph_def
    else:
        graph_def = tf1.GraphDef()
        graph_def.ParseFromString(path.read_bytes())
    seconds["parse"] = time.perf_counter() - t0

    graph = tf.Graph()
    t0 = time.perf_counter()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
        probe = tf.constant(0.0, name="bench_scale_probe")
    seconds["import_graph_def"] = time.perf_counter() - t0
    del graph_def

    config = tf1.ConfigProto(device_count={"CPU": devices})
    rw = config.graph_options.rewrite_options
    rw.disable_meta_optimizer = True
    rw.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    t0 = time.perf_counter()
    with tf1.Session(graph=graph, config=config) as sess:
        sess.run(probe)     # the first run places the whole graph
        seconds["first_run"] = time.perf_counter() - t0
    seconds["import_place"] = seconds["parse"] + seconds["import_graph_def"] + seconds["first_run"]
    seconds["import_place_cpu"] = time.process_time() - c0    # every thread's CPU time
    return {"seconds": seconds, "rss_start_mib": rss_start, "rss_peak_mib": _peak_rss_mib(),
            "nodes": len(graph.get_operations())}


def child_pbtxt(path: Path) -> dict:
    from placelint.loaders import LoadOptions, discover, load_raw
    ref = discover([path])[0]
    t0 = time.perf_counter()
    raw = load_raw(ref, LoadOptions(max_text_bytes=2**31))
    return {"seconds": time.perf_counter() - t0, "nodes": len(raw.graph_def.node),
            "rss_peak_mib": _peak_rss_mib()}


# --------------------------------------------------------------------------- parent


def run_child(args: list[str], timeout: float | None = None) -> dict:
    """This script as a child process; its last stdout line is the JSON result."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        how = ("killed (out of memory?)" if proc.returncode < 0 else f"exit {proc.returncode}")
        return {"error": f"{how}: {' | '.join(tail)}"[:300],
                "wall": time.perf_counter() - t0}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def size_arg(text: str) -> list[int]:
    return [int(float(s)) for s in text.split(",") if s.strip()]


def generate(n: int, directory: Path, devices: int, text: bool = False) -> Path:
    from gen_graphs import make_towers
    path = directory / f"towers_{n}.{'pbtxt' if text else 'pb'}"
    if not path.exists():
        gd = make_towers(n, towers=devices, devices=devices)
        if text:
            from google.protobuf import text_format
            path.write_text(text_format.MessageToString(gd))
        else:
            path.write_bytes(gd.SerializeToString())
    return path


def best_of(runs: list[dict]) -> dict:
    """Per phase, the fastest of ``runs`` (errors skipped); RSS: the largest."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    out = dict(ok[0])
    for key in ("seconds", "cpu"):
        out[key] = {k: min(r[key][k] for r in ok) for k in ok[0][key]}
    out["rss_peak_mib"] = max(r["rss_peak_mib"] for r in ok)
    prints = {json.dumps(r["fingerprint"], sort_keys=True) for r in ok}
    if len(prints) > 1:
        out["fingerprint"] = {"error": "runs disagree", "runs": sorted(prints),
                              "nodes": ok[0]["fingerprint"]["nodes"]}
    return out


def time_cli(model: Path, devices: str, runs: int) -> list[float]:
    """Wall seconds of the whole ``placelint check MODEL`` command in a fresh process
    (interpreter start, imports, analysis and text output), ``runs`` times."""
    return time_cli_cpu(model, devices, runs)[0]


def time_cli_cpu(model: Path, devices: str, runs: int) -> tuple[list[float], list[float]]:
    """``time_cli``'s wall seconds, and the CPU seconds (user + system) of each run."""
    import resource
    # ``-m placelint`` from the repository: the tree being measured (an installed console
    # script may point at another checkout)
    cmd = [sys.executable, "-m", "placelint",
           "check", str(model), "--no-cache", "--isolated", "--jobs", "1", "--devices", devices]
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"placelint check failed: {proc.stderr.strip()[-300:]}")
    return times, cpu


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def fmt(x: float | None, width: int = 7, digits: int = 2) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"


def print_table(results: dict[int, dict], tf: dict[int, dict], dot: bool) -> None:
    cols = ["parse", "build", "load", "place", "shapes", "transf", "parall", "rules", "check",
            "render", *(["dot"] if dot else []), "peakMiB", "TFplace", "ratio"]
    print(f"{'nodes':>8} " + " ".join(f"{c:>7}" for c in cols))
    for n, r in results.items():
        if "error" in r:
            print(f"{n:>8} {r['error']}")
            continue
        s = r["seconds"]
        load = s["parse"] + s["build"]
        check = sum(s[p] for p in PHASES)
        t = tf.get(n)
        tf_place = t["seconds"]["import_place"] if t and "error" not in t else None
        row = [s["parse"], s["build"], load, s["placement"], s["shapes"], s["transfers"],
               s["parallelism"], s["rules"], check, s["render"], *([s.get("dot")] if dot else [])]
        cells = [fmt(x) for x in row] + [fmt(r["rss_peak_mib"], 7, 0), fmt(tf_place),
                                        fmt(check / tf_place if tf_place else None, 7, 3)]
        print(f"{r['fingerprint'].get('nodes', n):>8} " + " ".join(cells))


def print_ratios(results: dict[int, dict]) -> None:
    ok = [(n, r) for n, r in sorted(results.items()) if "error" not in r]
    if len(ok) < 2:
        return
    print("\ngrowth per phase (time ratio / node ratio; 1.00 = linear):")
    phases = [*PHASES, "check", "render"]
    print(f"{'sizes':>16} " + " ".join(f"{p[:7]:>7}" for p in phases))
    for (n0, a), (n1, b) in zip(ok, ok[1:]):
        def total(r, p):
            return sum(r["seconds"][q] for q in PHASES) if p == "check" else r["seconds"][p]
        nodes0, nodes1 = a["fingerprint"]["nodes"], b["fingerprint"]["nodes"]
        cells = []
        for p in phases:
            t0, t1 = total(a, p), total(b, p)
            cells.append(fmt((t1 / t0) / (nodes1 / nodes0) if t0 > 0 else None))
        print(f"{f'{n0:.0e} -> {n1:.0e}':>16} " + " ".join(cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=size_arg, default=size_arg("1e4,1e5"),
                    help="node counts, comma separated (default 1e4,1e5)")
    ap.add_argument("--devices", type=int, default=4, help="CPU devices = towers (default 4)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per size; the best is shown")
    ap.add_argument("--tf", action="store_true", help="also time TensorFlow's import + placement")
    ap.add_argument("--tf-timeout", type=float, default=900.0, help="seconds per TF run")
    ap.add_argument("--dot", action="store_true", help="also run Graphviz on the collapsed view")
    ap.add_argument("--cold", type=int, default=0, metavar="N",
                    help="time `placelint check` on a small sample in N fresh processes")
    ap.add_argument("--cli", type=int, default=0, metavar="N",
                    help="also time the whole `placelint check` command on each size, N times")
    ap.add_argument("--pbtxt", type=size_arg, default=[], metavar="SIZES",
                    help="also time loading these sizes as text-format GraphDefs")
    ap.add_argument("--keep", type=Path, help="keep the generated graphs in this directory")
    ap.add_argument("--json", type=Path, help="write every measurement to this file")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        kind, path = args.child[0], Path(args.child[1])
        if kind == "placelint":
            result = child_placelint(path, args.devices, args.dot)
        elif kind == "tf":
            result = child_tf(path, args.devices)
        else:
            result = child_pbtxt(path)
        print(json.dumps(result))
        return 0

    tmp = tempfile.TemporaryDirectory(prefix="placelint-scale-")
    directory = args.keep or Path(tmp.name)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)", flush=True)
    common = ["--devices", str(args.devices), *(["--dot"] if args.dot else [])]
    results: dict[int, dict] = {}
    tf: dict[int, dict] = {}
    cli: dict[int, list[float]] = {}
    for n in args.sizes:
        t0 = time.perf_counter()
        path = generate(n, directory, args.devices)
        print(f"{n:.0e}: {path.stat().st_size / 2**20:.1f} MiB binary GraphDef "
              f"(generated in {time.perf_counter() - t0:.1f} s)", flush=True)
        runs = [run_child(["placelint", str(path), *common]) for _ in range(args.repeat)]
        results[n] = best_of(runs)
        r = results[n]
        if "error" in r:
            print(f"  placelint: {r['error']}", flush=True)
        else:
            check = sum(r["seconds"][p] for p in PHASES)
            cpu = sum(r["cpu"][p] for p in PHASES)
            print(f"  placelint check {check:.2f} s ({cpu:.2f} s CPU), peak RSS {r['rss_peak_mib']:.0f} MiB, "
                  f"{r['fingerprint']}", flush=True)
        if args.cli:
            times = time_cli(path, f"CPU={args.devices}", args.cli)
            cli[n] = times
            print(f"  `placelint check` command (fresh process, text output): median "
                  f"{statistics.median(times):.2f} s, best {min(times):.2f} s over {len(times)} runs",
                  flush=True)
        if args.tf:
            tf[n] = run_child(["tf", str(path), *common], timeout=args.tf_timeout)
            t = tf[n]
            if "error" in t:
                print(f"  tensorflow: {t['error']}", flush=True)
            else:
                s = t["seconds"]
                print(f"  tensorflow: import tensorflow {s['tf_import']:.1f} s (not counted); parse "
                      f"{s['parse']:.2f} + import_graph_def {s['import_graph_def']:.2f} + first run "
                      f"{s['first_run']:.2f} = {s['import_place']:.2f} s, peak RSS "
                      f"{t['rss_peak_mib']:.0f} MiB, {t['nodes']} ops", flush=True)
    print(f"\nload average after: {load_average()}\n")
    print("seconds per phase (best of %d); check = parse..rules; ratio = check / TF import+place"
          % args.repeat)
    print_table(results, tf, args.dot)
    print_ratios(results)

    pbtxt = {}
    for n in args.pbtxt:
        text_path = generate(n, directory, args.devices, text=True)
        binary = results.get(n, {}).get("seconds", {}).get("parse")
        pbtxt[n] = run_child(["pbtxt", str(text_path)])
        p = pbtxt[n]
        mib = text_path.stat().st_size / 2**20
        if "error" in p:
            print(f"pbtxt {n:.0e}: {p['error']}")
            continue
        vs = f", binary parse {binary:.2f} s" if binary else ""
        print(f"pbtxt {n:.0e}: {mib:.1f} MiB text parsed in {p['seconds']:.2f} s "
              f"({mib / p['seconds']:.1f} MiB/s){vs}")

    cold = []
    if args.cold:
        cold = time_cli(SMALL_SAMPLE, SMALL_SAMPLE_DEVICES, args.cold)
        print(f"\ncold `placelint check {SMALL_SAMPLE.relative_to(ROOT)}`: median "
              f"{statistics.median(cold):.3f} s, best {min(cold):.3f} s over {len(cold)} runs")
    if args.json:
        args.json.write_text(json.dumps({"load_average": load_average(), "placelint": results,
                                         "tensorflow": tf, "pbtxt": pbtxt, "cold": cold,
                                         "cli": cli},
                                        indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
