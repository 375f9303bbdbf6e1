"""Timed mutational fuzzer for placelint's loaders and the whole pipeline.

    python tools/fuzz_loaders.py --seconds 300 --seed 1 [--crashes DIR]
    python tools/fuzz_loaders.py --atheris -- -max_total_time=300   # if atheris is installed

Each input is a seed from ``tests/fuzz/seeds`` changed by one of three mutators: bytes
(flip, delete, insert, truncate, duplicate, splice), graph structure (the seed parsed as a
GraphDef, then nodes renamed, inputs added with ``^``/``:k``/malformed names, cycles,
devices, ops, function calls changed; written back binary or text), or text lines (for
text seeds: lines duplicated, deleted, braces added). Each input goes through
``placelint.pipeline.analyze`` with a time limit; anything but documented diagnostics
(PL009, an exception, a hang, an oversized message) is a failure, saved under
``--crashes``. Prints inputs tried and failures found; exits 1 if there were failures.
Deterministic for a given ``--seed`` and number of inputs (``--runs``).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzz.harness import run_bytes  # noqa: E402
from fuzz.strategies import DEVICES, NAMES, OPS, FUNCS, mutate, seed_files  # noqa: E402
from google.protobuf import message as pb_message  # noqa: E402
from google.protobuf import text_format  # noqa: E402

from placelint.proto import GraphDef  # noqa: E402

ODD_INPUTS = ["a:", "^a:1", "", ":0", "^", "a:-1", "a:01", "^^a", "a:99999999999"]


def byte_mutation(rng: random.Random, data: bytes, other: bytes) -> bytes:
    ops = [(rng.randrange(7), rng.randrange(2**20), rng.randrange(65),
            rng.randbytes(rng.randrange(1, 17))) for _ in range(rng.randrange(1, 6))]
    return mutate(data, ops, other)


def parse_graph(data: bytes) -> GraphDef | None:
    gd = GraphDef()
    try:
        gd.ParseFromString(data)
        if gd.node:
            return gd
    except (pb_message.DecodeError, ValueError):
        pass
    try:
        return text_format.Parse(data.decode("utf-8"), GraphDef(), max_recursion_depth=100)
    except Exception:   # noqa: BLE001 - not a text GraphDef: no structure to mutate
        return None


def graph_mutation(rng: random.Random, gd: GraphDef) -> GraphDef:
    names = [n.name for n in gd.node] + NAMES
    for _ in range(rng.randrange(1, 5)):
        if not gd.node:
            gd.node.add(name="a", op="NoOp")
        node = rng.choice(gd.node)
        kind = rng.randrange(9)
        if kind == 0:
            node.name = rng.choice(names)                     # duplicates, renames
        elif kind == 1:
            src = rng.choice(names)
            node.input.append(rng.choice([src, f"{src}:{rng.randrange(4)}", "^" + src]))
        elif kind == 2:
            node.input.insert(0, rng.choice(ODD_INPUTS + ["^" + rng.choice(names)]))
        elif kind == 3 and len(gd.node) > 1:
            del gd.node[rng.randrange(len(gd.node))]            # dangling inputs
        elif kind == 4:
            node.device = rng.choice(DEVICES)
        elif kind == 5:
            node.op = rng.choice(OPS)
        elif kind == 6:                                       # close a cycle
            other = rng.choice(gd.node)
            other.input.append(node.name)
            node.input.append(other.name)
        elif kind == 7:
            func = rng.choice([f.signature.name for f in gd.library.function] + FUNCS)
            node.op = rng.choice(["StatefulPartitionedCall", "PartitionedCall", func])
            node.attr["f"].func.name = func
        elif kind == 8 and node.input:
            del node.input[rng.randrange(len(node.input))]
    return gd


def text_mutation(rng: random.Random, text: str) -> str:
    lines = text.splitlines() or [""]
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(lines))
        kind = rng.randrange(4)
        if kind == 0:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif kind == 1 and len(lines) > 1:
            del lines[i]
        elif kind == 2:
            lines[i] = lines[i] + rng.choice(["{", "}", '"', "attr { key: ", "\\", "#"])
        else:
            lines[i] = lines[i].replace(":", rng.choice([": -", ": 99999999999999999999", ":"]))
    return "\n".join(lines) + "\n"


def next_input(rng: random.Random, seeds: list[tuple[Path, bytes]]) -> tuple[str, bytes]:
    path, data = rng.choice(seeds)
    suffix = rng.choice([path.suffix, path.suffix, ".pb", ".pbtxt", ".meta"])
    choice = rng.randrange(3)
    if choice == 1:
        gd = parse_graph(data)
        if gd is not None:
            gd = graph_mutation(rng, gd)
            if rng.random() < 0.5:
                return "fuzz.pbtxt", text_format.MessageToString(gd).encode()
            return "fuzz.pb", gd.SerializeToString()
    if choice == 2 and path.suffix in (".pbtxt", ".meta"):
        try:
            return "fuzz" + suffix, text_mutation(rng, data.decode("utf-8")).encode()
        except UnicodeDecodeError:
            pass
    return "fuzz" + suffix, byte_mutation(rng, data, rng.choice(seeds)[1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    ap.add_argument("--runs", type=int, default=0, help="stop after this many inputs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=30.0, help="seconds per input before a "
                                                              "hang is reported")
    ap.add_argument("--crashes", type=Path, default=None, help="save failing inputs here")
    ap.add_argument("--atheris", action="store_true", help="use atheris (libFuzzer) on raw "
                                                          "bytes instead; pass its flags "
                                                          "after --")
    args, rest = ap.parse_known_args(argv)
    if args.atheris:
        return run_atheris(rest)
    rng = random.Random(args.seed)
    seeds = [(p, p.read_bytes()) for p in seed_files()]
    start = time.monotonic()
    tried, failures = 0, {}
    while time.monotonic() - start < args.seconds and (not args.runs or tried < args.runs):
        name, data = next_input(rng, seeds)
        tried += 1
        found = run_bytes(name, data, seconds=args.limit)
        if found:
            key = found[0].split("\n")[0][:160]
            if key not in failures:
                failures[key] = (name, data, found)
                print(f"FAILURE #{len(failures)} after {tried} inputs: {key}", flush=True)
                if args.crashes:
                    args.crashes.mkdir(parents=True, exist_ok=True)
                    digest = hashlib.sha1(data).hexdigest()[:12]
                    (args.crashes / f"{digest}-{name}").write_bytes(data)
    elapsed = time.monotonic() - start
    print(f"{tried} inputs in {elapsed:.0f} s (seed {args.seed}), {len(failures)} distinct "
          f"failure(s)")
    for key, (name, _, found) in failures.items():
        print(f"  {name}: {found[0][:500]}")
    return 1 if failures else 0


def run_atheris(rest: list[str]) -> int:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed: pip install atheris", file=sys.stderr)
        return 2

    def one(data: bytes):
        found = run_bytes("fuzz.pb", data)
        if found:
            raise RuntimeError("; ".join(found))

    atheris.Setup([sys.argv[0], *[a for a in rest if a != "--"]], one)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
