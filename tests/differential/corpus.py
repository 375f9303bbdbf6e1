"""Build the differential corpus once: generated cases plus TensorFlow's verdict on each.

The expensive part (TF import, graph building, sessions) runs in subprocesses: one generator
process (``generate.py`` as a script, so its control-flow toggles never touch the caller's TF),
then an :class:`~oracle.OraclePool` of at most two TF workers. The result is cached as JSON in a
directory (pytest's cache, ``.pytest_cache/d/placelint-differential``) under a key made of the
sources of generate.py, oracle.py and this file, the installed TensorFlow version, the seed and
the count: any change to how cases are made or judged rebuilds the corpus, nothing else does. A
cached load needs no TensorFlow at all.

Knobs (environment): PLACELINT_DIFF_SEED, PLACELINT_DIFF_COUNT, PLACELINT_DIFF_REBUILD=1,
PLACELINT_DIFF_WORKERS (1 or 2).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .generate import DEFAULT_COUNT, DEFAULT_SEED, Case
from .oracle import OraclePool, Request, TFResult

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DEFAULT_CACHE_DIR = REPO_ROOT / ".pytest_cache" / "d" / "placelint-differential"
FORMAT_VERSION = 1


def tf_version() -> str:
    try:
        return importlib.metadata.version("tensorflow")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def corpus_key(seed: int, count: int) -> str:
    h = hashlib.sha256()
    for name in ("generate.py", "oracle.py", "corpus.py"):
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    h.update(f"tf={tf_version()};seed={seed};count={count};v={FORMAT_VERSION}".encode())
    return h.hexdigest()[:20]


@dataclass
class Corpus:
    cases: list[Case]
    results: list[TFResult]
    key: str
    seed: int
    count: int
    from_cache: bool = False
    timings: dict[str, float] = field(default_factory=dict)  # seconds: generate, oracle, load

    def __post_init__(self) -> None:
        assert len(self.cases) == len(self.results)

    def __len__(self) -> int:
        return len(self.cases)

    def pairs(self) -> list[tuple[Case, TFResult]]:
        return list(zip(self.cases, self.results))

    def by_name(self) -> dict[str, tuple[Case, TFResult]]:
        return {c.name: (c, r) for c, r in self.pairs()}

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {"cases": len(self)}
        for r in self.results:
            out[r.status] = out.get(r.status, 0) + 1
        return out


def _generate_in_subprocess(seed: int, count: int) -> list[Case]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cases.json"
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
        proc = subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--seed", str(seed),
             "--count", str(count), "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"generate.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        return [Case.from_dict(d) for d in json.loads(out.read_text())]


def build_corpus(
    cache_dir: Path | str | None = DEFAULT_CACHE_DIR,
    seed: int | None = None,
    count: int | None = None,
    workers: int | None = None,
    rebuild: bool | None = None,
) -> Corpus:
    """Load the corpus from `cache_dir` or build it (and store it there)."""
    seed = int(os.environ.get("PLACELINT_DIFF_SEED", DEFAULT_SEED)) if seed is None else seed
    count = int(os.environ.get("PLACELINT_DIFF_COUNT", DEFAULT_COUNT)) if count is None else count
    workers = int(os.environ.get("PLACELINT_DIFF_WORKERS", 2)) if workers is None else workers
    workers = max(1, min(2, workers))  # a shared 2-core machine
    if rebuild is None:
        rebuild = os.environ.get("PLACELINT_DIFF_REBUILD", "") not in ("", "0")
    key = corpus_key(seed, count)
    path = Path(cache_dir) / f"corpus-{key}.json" if cache_dir is not None else None

    if path is not None and path.exists() and not rebuild:
        t0 = time.monotonic()
        data = json.loads(path.read_text())
        corpus = Corpus(
            cases=[Case.from_dict(d) for d in data["cases"]],
            results=[TFResult.from_dict(d) for d in data["results"]],
            key=key,
            seed=seed,
            count=count,
            from_cache=True,
            timings={**data.get("timings", {}), "load": round(time.monotonic() - t0, 3)},
        )
        return corpus

    t0 = time.monotonic()
    cases = _generate_in_subprocess(seed, count)
    t1 = time.monotonic()
    results = OraclePool(workers=workers).run(
        [Request(c.graph_def_bytes, c.n_cpus, c.allow_soft_placement) for c in cases]
    )
    t2 = time.monotonic()
    timings = {"generate": round(t1 - t0, 3), "oracle": round(t2 - t1, 3)}
    corpus = Corpus(cases, results, key, seed, count, from_cache=False, timings=timings)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob("corpus-*.json"):
            old.unlink()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "key": key,
                    "seed": seed,
                    "count": count,
                    "tf_version": tf_version(),
                    "timings": timings,
                    "cases": [c.to_dict() for c in cases],
                    "results": [r.to_dict() for r in results],
                }
            )
        )
        tmp.replace(path)
    return corpus
