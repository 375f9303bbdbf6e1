"""Judge placelint's parallelism figures by TensorFlow's own traces and timings (not run in CI).

    .venv/bin/python benchmarks/threads_vs_trace.py [--cores 2] [--runs 30] [--rounds 3]
        [--graphs branches_uneven,chain,...] [--max-load 0.35] [--nice -10]

For each graph of ``tests/parallel_corpus.py`` (independent branches of different sizes, a
serial chain, per-channel arithmetic branches, two tf.py_function branches, an If with
parallel branches, while loops with parallel_iterations 1 and 10, a two-tower Keras
model) the script

* asks placelint (no TensorFlow involved) for the useful width and its recommended
  (inter_op, intra_op) for ``--cores`` cores;
* measures at inter_op = 8 the largest number of expensive kernels in flight (handed
  out and not finished) and running at once, in any of ``--trace-runs`` steps recorded by
  TensorFlow's profiler at ``host_tracer_level=2`` after ``parallel_corpus.TRACE_WARMUP``
  untraced steps: the executor traces a kernel at level 2 only when its own
  ``IsExpensive`` holds, so the expensive kernels are TF's own and the inline control ops
  (a lowered loop's hand-out of iterations) run untraced
  (``parallel_corpus.measure_in_flight``; ``dispatch_overhead.py`` ``loop_op_profiled_us``
  measures what the profiler costs them). The per-step peaks are printed too: on a
  2-core machine they vary from step to step with the OS's scheduling of the threads;
* times ``Session.run`` at inter_op 1, 2, 4 x intra_op 1, 2, each setting in a fresh
  process (TF's pools are fixed per process), in ``--rounds`` interleaved rounds of
  ``--runs`` steps, Grappler off. The machine is shared: before each timing the script
  waits (up to ``--wait-idle`` s) for other processes to use under ``--max-load`` of the
  CPUs and records the load average; rounds started above the limit are dropped (unless
  every round was). A round's figure is its median step (``--statistic median``, the
  default: a user's run of thousands of steps takes about that per step) or its fastest
  step (``--statistic fastest``: the least disturbed one; both are recorded, the verdict
  uses one); a setting's time is the median of its rounds; the noise of a graph is the
  median, over settings, of the spread between its rounds. The fastest step favours
  settings whose best steps are fast but whose typical step is not: on
  ``tiny_branches`` two inter-op threads sometimes overlap the 16 branches' microsecond
  kernels with the MatMul (TF hands each root to the pool), so their fastest step is
  ~15% under 1/1's, while their median step is not (600 steps per setting, three fresh
  processes each: medians 0.50-0.63 ms at every setting, in no order that repeats). ``--nice N`` runs the TensorFlow processes
  at that scheduling priority (negative needs root): on a machine shared with other
  jobs, a priority above theirs lets the step's threads have the cores when they are
  runnable, which is what the thread settings are about (the other jobs still run; with
  the kernel's autogroup scheduling, as on the development host, it has no effect across
  login sessions). numpy's BLAS runs single-threaded in the TensorFlow processes
  (``OPENBLAS_NUM_THREADS=1``), so the Python bodies of ``py_branches`` only overlap
  through the inter-op threads.

It prints one table: predicted useful width vs measured kernels in flight, placelint's
pick and its measured time over the measured best, and the spread of the settings
(worst/best). "agrees" means the pick is within 10% of the best, or the settings differ
by no more than the noise (a tie).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
AGREE_WITHIN = 0.10
SETTINGS = [(a, b) for a in (1, 2, 4) for b in (1, 2)]


def busy_fraction(interval: float = 1.0) -> float:
    """Share of all CPUs busy over ``interval`` seconds (/proc/stat)."""
    def sample():
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return idle, sum(fields)

    i0, t0 = sample()
    time.sleep(interval)
    i1, t1 = sample()
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def wait_idle(limit_s: float, threshold: float) -> float:
    deadline = time.monotonic() + limit_s
    busy = busy_fraction()
    while busy > threshold and time.monotonic() < deadline:
        busy = busy_fraction(2.0)
    return busy


def predict(path: str, cores: int):
    from placelint.analyses.parallelism import analyze_parallelism
    from placelint.loaders import discover, load_raw
    from placelint.model import model_from_raw

    return analyze_parallelism(model_from_raw(load_raw(discover([path])[0])).graph, cores=cores)


def child(args) -> int:
    if args.nice:
        os.setpriority(os.PRIO_PROCESS, 0, args.nice)   # before TF starts its threads
    import parallel_corpus as pc
    job = json.loads(args.child)
    spec = job["spec"]
    if job["what"] == "build":
        out = {name: pc.build(name, job["dir"]) for name in job["names"]}
    elif job["what"] == "trace":
        out = pc.measure_in_flight(spec, inter=8, runs=job["runs"])
    else:
        out = pc.time_step(spec, job["inter"], job["intra"], args.runs)
    print(json.dumps(out))
    return 0


def run_child(job: dict, runs: int, nice: int = 0) -> object:
    # numpy's BLAS gets one thread: py_branches' bodies then run on the inter-op threads
    # that call them (a BLAS pool of its own made their times vary 3x from round to round)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT),
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, __file__, "--runs", str(runs), "--nice", str(nice),
                           "--child", json.dumps(job)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    import parallel_corpus as pc

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2, help="target cores placelint recommends for")
    ap.add_argument("--runs", type=int, default=30, help="steps per round (and traced steps)")
    ap.add_argument("--trace-runs", type=int, default=15, help="steps traced for the in-flight count")
    ap.add_argument("--statistic", choices=("median", "fastest"), default="median",
                    help="a round's figure: its median step (what a long run gets per step) "
                         "or its fastest step")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--graphs", default=",".join(pc.ALL))
    ap.add_argument("--max-load", type=float, default=0.35,
                    help="drop timings started while other processes used more of the CPUs")
    ap.add_argument("--wait-idle", type=float, default=60.0)
    ap.add_argument("--noise", type=float, default=0.10,
                    help="settings whose best and worst differ by less are a tie")
    ap.add_argument("--nice", type=int, default=0,
                    help="scheduling priority of the TensorFlow processes (negative needs root)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)

    names = [g for g in args.graphs.split(",") if g]
    work = tempfile.mkdtemp(prefix="placelint-trace-")
    specs = run_child({"what": "build", "spec": None, "dir": work, "names": names}, args.runs, args.nice)
    print(f"target cores {args.cores}; settings (inter, intra) {SETTINGS}; {args.runs} steps x "
          f"{args.rounds} rounds, a round's {args.statistic} step; load limit {args.max_load:.0%} of the CPUs; machine: "
          f"{os.cpu_count()} CPUs; TF processes at nice {args.nice}; load average at start "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    results = []
    for name in names:
        spec = specs[name]
        report = predict(spec["path"], args.cores)
        rec = report.recommendation
        pick = (rec.inter_op, rec.intra_op)
        trace_busy = wait_idle(args.wait_idle, args.max_load)
        trace = run_child({"what": "trace", "spec": spec, "runs": args.trace_runs}, args.runs,
                          args.nice)
        rounds: dict[tuple[int, int], list[tuple[float, float, float]]] = {s: [] for s in SETTINGS}
        if pick not in rounds:
            rounds[pick] = []
        for _ in range(args.rounds):
            for s in rounds:
                busy = wait_idle(args.wait_idle, args.max_load)
                t = run_child({"what": "time", "spec": spec, "inter": s[0], "intra": s[1]}, args.runs,
                              args.nice)
                rounds[s].append((t, busy, t["load"]))
        key = "median" if args.statistic == "median" else "min"
        other = "min" if key == "median" else "median"
        kept_rounds = {s: [t for t, busy, _ in v if busy <= args.max_load] or [t for t, _, _ in v]
                       for s, v in rounds.items()}
        kept = {s: [t[key] for t in v] for s, v in kept_rounds.items()}
        noisy = sum(busy > args.max_load for v in rounds.values() for _, busy, _ in v)
        best_ms = {s: statistics.median(v) for s, v in kept.items()}
        other_ms = {s: statistics.median(t[other] for t in v) for s, v in kept_rounds.items()}
        noise = statistics.median([max(v) / min(v) - 1 for v in kept.values()])
        best = min(best_ms, key=best_ms.get)
        worst = max(best_ms.values())
        ratio = best_ms[pick] / best_ms[best]
        spread = worst / best_ms[best]
        tie = spread - 1 <= max(noise, args.noise)
        agree = tie or ratio <= 1 + AGREE_WITHIN
        loads = [load for v in rounds.values() for _, _, load in v]
        row = {"graph": name, "width": report.width, "useful_width": report.useful_width,
               "in_flight": trace["in_flight"], "running": trace["running"],
               "in_flight_per_step": trace["peaks"],
               "in_flight_median": statistics.median(trace["peaks"]),
               "trace_load": [round(trace_busy, 2), round(trace["load"], 2)],
               "average_parallelism": report.average_parallelism,
               "pick": pick, "best": best, "pick_over_best": ratio, "spread": spread, "noise": noise,
               "tie": tie, "agree": agree,
               "statistic": args.statistic,
               "ms": {f"{a}/{b}": round(v, 3) for (a, b), v in sorted(best_ms.items())},
               "ms_" + ("fastest" if other == "min" else "median"):
                   {f"{a}/{b}": round(v, 3) for (a, b), v in sorted(other_ms.items())},
               "predicted": {f"{a}/{b}": round(v, 3) for (a, b), v in rec.table.items()},
               "predicted_gil_released": {f"{a}/{b}": round(v, 3)
                                          for (a, b), v in rec.table_gil_released.items()},
               "load": [round(min(loads), 2), round(max(loads), 2)], "noisy_rounds": noisy}
        results.append(row)
        print(f"\n{name}: width {report.width}, useful width {report.useful_width} "
              f"(measured in flight {trace['in_flight']}, running at once {trace['running']}, "
              f"per step {trace['peaks']}, median {row['in_flight_median']:g}; CPUs busy "
              f"{trace_busy:.0%}, load average {trace['load']:.2f}); "
              f"pick {pick[0]}/{pick[1]}, measured best {best[0]}/{best[1]}")
        print(f"  ms/step ({args.statistic}) " + ", ".join(f"{k} {v}" for k, v in row["ms"].items()))
        other_name = "fastest" if other == "min" else "median"
        print(f"  ms/step ({other_name}) "
              + ", ".join(f"{k} {v}" for k, v in row["ms_" + other_name].items()))
        print("  predicted vs 1/1 " + ", ".join(f"{k} {v}" for k, v in row["predicted"].items()))
        if row["predicted_gil_released"]:
            print("  ... if the Python kernels release the GIL "
                  + ", ".join(f"{k} {v}" for k, v in row["predicted_gil_released"].items()))
        print(f"  load average {row['load']}, rounds over the CPU limit {noisy}; pick/best {ratio:.3f}, "
              f"spread {spread:.3f}, noise {noise:.3f} -> {'agrees' if agree else 'DISAGREES'}",
              flush=True)
    print("\n| graph | width | useful width | in flight (running; median per step) | pick | measured best | pick/best | "
          "worst/best | noise | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['graph']} | {r['width']} | {r['useful_width']} | {r['in_flight']} ({r['running']}; "
              f"{r['in_flight_median']:g}) | "
              f"{r['pick'][0]}/{r['pick'][1]} | {r['best'][0]}/{r['best'][1]} | {r['pick_over_best']:.2f} | "
              f"{r['spread']:.2f} | {r['noise']:.2f} | {'agrees' if r['agree'] else 'DISAGREES'}"
              f"{' (tie)' if r['tie'] else ''} |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
