"""Benchmark: exact inter-op width of a 10^6-node graph (not run in CI).

    .venv/bin/python benchmarks/bench_width.py                 # width on a 1e6-node graph
    .venv/bin/python benchmarks/bench_width.py --full          # + shape inference, full analysis
    .venv/bin/python benchmarks/bench_width.py --nodes 200000

Two graphs:

* ``random``: a DAG given as arrays (each node takes one or two inputs from the previous
  ``--window`` nodes, half the nodes are members) -- the min-flow width alone;
* ``inception-like``: a ``placelint.model.Graph`` of four-tower blocks (MatMul, AddV2, Relu,
  Identity, Const, AddN; ``benchmarks/synthetic.py``) -- indexing, width among the expensive
  ops, and with ``--full`` shape inference and ``analyze_parallelism``.

Prints wall and CPU seconds for each step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


class Timer:
    def __init__(self, label: str):
        self.label = label

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        print(f"{self.label:<44} {wall:8.2f} s wall {cpu:8.2f} s cpu", flush=True)


def random_dag(n: int, window: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    targets = np.arange(1, n, dtype=np.int64)
    src1 = np.maximum(targets - rng.integers(1, window + 1, size=n - 1), 0)
    extra = rng.random(n - 1) < 0.5
    src2 = np.maximum(targets - rng.integers(1, window + 1, size=n - 1), 0)[extra]
    src = np.concatenate([src1, src2])
    dst = np.concatenate([targets, targets[extra]])
    return src, dst, rng.random(n) < 0.5


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--full", action="store_true", help="also shape inference and the full analysis")
    args = ap.parse_args(argv)

    from placelint.analyses.antichain import max_antichain
    from placelint.analyses.dag import index_graph
    from placelint.analyses.op_tables import executor_table

    n = args.nodes
    src, dst, members = random_dag(n, args.window)
    print(f"random DAG: {n} nodes, {src.size} edges, {int(members.sum())} members")
    with Timer("  width (min flow, scipy dinic)"):
        result = max_antichain(n, src, dst, members)
    print(f"  width = {result.width}")

    from synthetic import inception_like
    with Timer("inception-like Graph: build"):
        g = inception_like(n)
    with Timer("  index (arrays, topological order)"):
        dag = index_graph(g)
    print(f"  {dag.n} nodes, {dag.src.size} edges")
    table = executor_table()
    expensive = np.fromiter((not table.runs_inline(nd.op) for nd in dag.nodes), dtype=bool, count=dag.n)
    with Timer("  width among expensive ops"):
        w = max_antichain(dag.n, dag.src, dag.dst, expensive)
    with Timer("  width over every node"):
        w_all = max_antichain(dag.n, dag.src, dag.dst, np.ones(dag.n, dtype=bool))
    print(f"  width = {w.width} ({int(expensive.sum())} expensive ops), width_all_ops = {w_all.width}")
    if args.full:
        from placelint.analyses.parallelism import analyze_parallelism
        from placelint.analyses.shape_inference import infer_shapes
        with Timer("  shape inference"):
            shapes = infer_shapes(g)
        with Timer("  analyze_parallelism (cores=8)"):
            report = analyze_parallelism(g, shapes=shapes, cores=8)
        rec = report.recommendation
        print(f"  width {report.width}, work {report.work:.3g}, span {report.span:.3g}, average "
              f"parallelism {report.average_parallelism:.2f}; recommend inter {rec.inter_op}, "
              f"intra {rec.intra_op}")


if __name__ == "__main__":
    main()
