"""Predicted device memory (analyses/memory.py) against TensorFlow's own accounting.

    PYTHONPATH=. python benchmarks/memory_vs_tf.py [CACHE_DIR]

Runs tests/memory_tf.py (TensorFlow, one traced step on 3 CPU devices; cached in CACHE_DIR,
default a temporary folder) and prints, per model and device: variables' bytes (placelint vs
TF), the peak of transient bytes (placelint's schedule, its lower bound, and the range of the
peaks reconstructed from TF's traced sessions), the error of the predicted peak against the
nearest TF peak, and how many of the model's static output sizes equal TF's allocations.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import memory_tf  # noqa: E402

from placelint.loaders import ModelRef  # noqa: E402
from placelint.loaders.read import GRAPHDEF  # noqa: E402
from placelint.model.devices import DeviceSet  # noqa: E402
from placelint.pipeline import analyze  # noqa: E402
from placelint.settings import Settings  # noqa: E402


def predict_context(graph_text: str, workdir: Path):
    """placelint's analysis context of a step graph on CPU=3."""
    path = workdir / "step.pbtxt"
    path.write_text(graph_text)
    s = Settings()
    s.devices = DeviceSet.parse("CPU=3")
    return analyze(ModelRef(path, GRAPHDEF), s).context


def predict(graph_text: str, workdir: Path):
    """The memory report placelint gives for a step graph on CPU=3."""
    return predict_context(graph_text, workdir).memory


def _outputs(ctx, answer) -> tuple[int, int]:
    """(static output sizes equal to TF's requested allocation, static output sizes compared)."""
    same = compared = 0
    for name, sizes in answer["outputs"].items():
        if name not in ctx.graph.nodes:
            continue          # nodes TF adds (_Send/_Recv, _arg, replicated constants)
        for slot, requested in enumerate(sizes):
            mine = ctx.shapes.nbytes(name, slot)
            if mine is not None and requested:
                compared += 1
                same += mine == requested
    return same, compared


def rows(cache_dir: Path):
    """Per model and device: (model, device, predicted variables, TF variables, predicted
    peak, lower bound, TF's peaks over its traced sessions, (exact outputs, compared))."""
    tf = memory_tf.load(cache_dir)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, answer in sorted(tf.items()):
            ctx = predict_context(answer["graph"], Path(tmp))
            mem = ctx.memory
            outputs = _outputs(ctx, answer)
            for device in sorted(set(mem.devices) | set(answer["peak"])):
                d = mem.devices.get(device)
                variables = sum(o.bytes for o in d.resident if o.kind == "variable") if d else 0
                out.append((model, device, variables, answer["variables"].get(device, 0),
                            d.peak_bytes if d else 0, d.peak_lower_bound_bytes if d else 0,
                            answer["peaks"].get(device, [0]), outputs))
    return out


def main() -> None:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    print(f"TF: {memory_tf.TRACED_RUNS} traced sessions per model; 'TF peaks' is the range of "
          "their peaks, 'error' the predicted peak against the nearest of them")
    print(f"{'model':<15} {'device':<6} {'vars':>8} {'TF vars':>8} {'peak':>8} {'bound':>8} "
          f"{'TF peaks':>15} {'error':>7} {'outputs exact':>13}")
    for model, device, var, tf_var, peak, bound, tf_peaks, (same, compared) in rows(cache):
        near = min(tf_peaks, key=lambda p: abs(peak - p))
        error = f"{(peak - near) / near:+.1%}" if near else "-"
        span = f"{min(tf_peaks)}" if min(tf_peaks) == max(tf_peaks) else \
            f"{min(tf_peaks)}..{max(tf_peaks)}"
        print(f"{model:<15} {device.rsplit('device:', 1)[-1]:<6} {var:>8} {tf_var:>8} "
              f"{peak:>8} {bound:>8} {span:>15} {error:>7} {f'{same}/{compared}':>13}")


if __name__ == "__main__":
    main()
