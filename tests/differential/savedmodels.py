"""SavedModel loading judged by TensorFlow (see savedmodels_tf.py for the models and TF's side).

    python -m tests.differential.savedmodels [--verbose] [--json]

For every model and session config (CPU=1..3, strict and soft): TF1 models must load and serve
exactly when placelint (default: loader semantics) reports no error, and when TF fails,
placelint must name TF's node or a member of the colocation group TF lists. TF2 models (device
scopes inside nested tf.functions, loaded into a strict TF1 session as TF Serving does) must run
without a placelint error, and every node of the served step must be placed as TF placed it;
a call TF kept whole for XLA (``jit_compile``) must be one node of placelint's step, placed
as TF placed it, and a step TF fails because such a call reads a variable on another device
counts as caught when placelint's error quotes TF's words (PL109's detail).
The models and TF's verdicts are cached in pytest's cache (keyed on savedmodels_tf.py and the
TF version).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .corpus import DEFAULT_CACHE_DIR, tf_version

HERE = Path(__file__).resolve().parent


def models_dir(cache_dir: Path | None = None) -> Path:
    """Build the models and TF's verdicts once (one TF subprocess, ~30 s); cached."""
    h = hashlib.sha256((HERE / "savedmodels_tf.py").read_bytes())
    h.update(tf_version().encode())
    base = Path(cache_dir or DEFAULT_CACHE_DIR)
    out = base / f"savedmodels-{h.hexdigest()[:16]}"
    if not (out / "verdicts.json").exists():
        for old in base.glob("savedmodels-*"):
            import shutil
            shutil.rmtree(old, ignore_errors=True)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                   TF_ENABLE_ONEDNN_OPTS="0")
        subprocess.run([sys.executable, str(HERE / "savedmodels_tf.py"), str(out)], check=True,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=1800)
    return out


@dataclass
class LoadComparison:
    model: str
    config: str
    tf_ok: bool
    pl_errors: list[tuple[str, str | None]] = field(default_factory=list)
    false_error: bool = False
    caught: bool | None = None          #: TF failed: placelint named its node (or group)
    tf_nodes: list[str] = field(default_factory=list)
    nodes: int = 0                      #: nodes of TF's served step placelint also has
    agree: int = 0
    mismatches: list[tuple[str, str, str | None]] = field(default_factory=list)
    crash: str | None = None
    compiled: int = 0                   #: calls TF kept whole for XLA in the served step
    compiled_agree: int = 0             #: ... one node in placelint's too, placed as TF


def compare_load(path: Path, config: str, verdict: dict) -> LoadComparison:
    from placelint.loaders import ModelRef
    from placelint.loaders.read import SAVEDMODEL
    from placelint.model.devices import DeviceSet
    from placelint.pipeline import analyze
    from placelint.settings import Settings

    n, soft = config.split(",")
    settings = Settings(devices=DeviceSet.parse(n), allow_soft_placement=soft.endswith("1"))
    c = LoadComparison(path.name, config, verdict["ok"])
    try:
        report = analyze(ModelRef(path, SAVEDMODEL), settings)
    except Exception as e:  # noqa: BLE001
        c.crash = f"{type(e).__name__}: {e}"
        return c
    errors = [d for d in report.diagnostics if d.severity.value == "error"]
    c.pl_errors = [(d.code, d.node) for d in errors]
    if any(d.code == "PL009" for d in report.diagnostics):
        c.crash = next(d.message for d in report.diagnostics if d.code == "PL009")
    if verdict["ok"]:
        c.false_error = bool(errors)
        placement = report.context.placement.device if report.context else {}
        for node, dev in sorted(verdict["placement"].items()):
            if node not in placement:
                continue
            c.nodes += 1
            if placement[node] == dev:
                c.agree += 1
            else:
                c.mismatches.append((node, dev, placement[node]))
        step_nodes = report.context.step.graph.nodes if report.context else {}
        for node in verdict.get("compiled", []):
            c.compiled += 1
            body = [n for n in step_nodes if n.startswith(node + "/")]
            if placement.get(node) == verdict["placement"][node] and not body:
                c.compiled_agree += 1
            else:
                c.mismatches.append((node, verdict["placement"][node], placement.get(node)))
    else:
        want = set(verdict["nodes"][:1]) | set(verdict["colocation"])
        c.tf_nodes = sorted(want)
        named = {d.node for d in errors} | {n for d in errors for n in d.related_nodes}
        quoted = [d.detail.split(" (Cf. ")[0] for d in errors if d.code == "PL109"]
        c.caught = bool(want & named) or any(
            part and part in verdict["message"] for q in quoted for part in q.split("; "))
    return c


def compare_all(cache_dir: Path | None = None) -> list[LoadComparison]:
    out = models_dir(cache_dir)
    verdicts = json.loads((out / "verdicts.json").read_text())["models"]
    return [compare_load(out / name, config, v)
            for name, m in sorted(verdicts.items()) for config, v in m["runs"].items()]


@dataclass
class LoadFigures:
    kind: str
    loads: int
    tf_ok: int
    tf_failed: int
    caught: int
    false_errors: int
    nodes: int
    nodes_agree: int
    crashes: int
    compiled: int = 0
    compiled_agree: int = 0

    def failures(self) -> list[str]:
        out = []
        if self.caught != self.tf_failed:
            out.append(f"{self.kind}: load failures caught {self.caught}/{self.tf_failed}")
        if self.false_errors:
            out.append(f"{self.kind}: {self.false_errors} false errors")
        if self.nodes_agree != self.nodes:
            out.append(f"{self.kind}: nodes {self.nodes_agree}/{self.nodes}")
        if self.crashes:
            out.append(f"{self.kind}: {self.crashes} crashes")
        if self.compiled_agree != self.compiled:
            out.append(f"{self.kind}: XLA calls kept whole {self.compiled_agree}/{self.compiled}")
        return out


def aggregate(comps: list[LoadComparison], kind: str) -> LoadFigures:
    cs = [c for c in comps if c.model.startswith(kind)]
    return LoadFigures(kind, len(cs), sum(c.tf_ok for c in cs), sum(not c.tf_ok for c in cs),
                       sum(1 for c in cs if c.caught), sum(1 for c in cs if c.false_error),
                       sum(c.nodes for c in cs), sum(c.agree for c in cs),
                       sum(1 for c in cs if c.crash), sum(c.compiled for c in cs),
                       sum(c.compiled_agree for c in cs))


def format_report(figs: list[LoadFigures], comps: list[LoadComparison], verbose=False) -> str:
    lines = []
    for f in figs:
        lines.append(f"{f.kind} SavedModels: {f.loads} loads ({f.tf_ok} served by TF, "
                     f"{f.tf_failed} failed); failures caught on TF's node or its group "
                     f"{f.caught}/{f.tf_failed}; false errors {f.false_errors}; served-step "
                     f"nodes placed as TF {f.nodes_agree}/{f.nodes}; crashes {f.crashes}"
                     + (f"; XLA calls kept whole and placed as TF {f.compiled_agree}/"
                        f"{f.compiled}" if f.compiled else ""))
    bad = [c for c in comps if c.crash or c.false_error or c.caught is False or c.mismatches]
    for c in bad if verbose else bad[:10]:
        lines.append(f"  {c.model} {c.config}: TF {'ok' if c.tf_ok else c.tf_nodes[:4]}; "
                     f"placelint errors {c.pl_errors[:4]}; mismatches {c.mismatches[:3]}"
                     + (f"; crash {c.crash[:200]}" if c.crash else ""))
    failures = [x for f in figs for x in f.failures()]
    lines.append("thresholds met" if not failures else "THRESHOLDS NOT MET: " + "; ".join(failures))
    return "\n".join(lines)


def run(verbose=False, as_json=False, cache_dir=None) -> tuple[str, list[LoadFigures]]:
    comps = compare_all(cache_dir)
    figs = [aggregate(comps, "tf1"), aggregate(comps, "tf2")]
    if as_json:
        return json.dumps([asdict(f) for f in figs], indent=2), figs
    return format_report(figs, comps, verbose), figs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="placelint vs TensorFlow on SavedModel loading")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    text, figs = run(args.verbose, args.json)
    print(text)
    if not args.json:
        print(f"({time.monotonic() - t0:.1f}s)")
    return 0 if not any(f.failures() for f in figs) else 1


if __name__ == "__main__":
    sys.exit(main())
