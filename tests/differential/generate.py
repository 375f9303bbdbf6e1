"""Seeded generator of varied TF1-style graphs for the differential test against TensorFlow.

``generate_cases(seed, count)`` builds ``count`` graphs with real TF ops in
``tf.compat.v1`` graph mode, each from a few *motifs* (variables, colocation, device scopes,
generators, metadata ops, strings, control dependencies, fan-out, v1 while loops...), then
optionally edits NodeDefs directly to place requests Python would never write (malformed
strings, conflicting ``_class`` groups, devices that do not exist). Whether TF places or refuses
a case is for TensorFlow to say (see ``oracle.py``); the family name only tells what was aimed at.

Determinism: the same seed gives byte-identical GraphDefs (one ``random.Random`` per case,
deterministic serialisation). Run as a script to write cases to a file:
``python generate.py --seed 1 --count 400 --out cases.json``.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import random
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

DEFAULT_SEED = 20240611
DEFAULT_COUNT = 420


@dataclass(frozen=True)
class Case:
    name: str
    graph_def_bytes: bytes
    n_cpus: int
    allow_soft_placement: bool
    family: str = ""
    motifs: tuple[str, ...] = ()
    edits: tuple[str, ...] = field(default=())  # NodeDef edits applied after building

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "graph_def": base64.b64encode(self.graph_def_bytes).decode(),
            "n_cpus": self.n_cpus,
            "allow_soft_placement": self.allow_soft_placement,
            "family": self.family,
            "motifs": list(self.motifs),
            "edits": list(self.edits),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Case":
        return cls(
            name=d["name"],
            graph_def_bytes=base64.b64decode(d["graph_def"]),
            n_cpus=d["n_cpus"],
            allow_soft_placement=d["allow_soft_placement"],
            family=d.get("family", ""),
            motifs=tuple(d.get("motifs", ())),
            edits=tuple(d.get("edits", ())),
        )


# Device requests. Python's tf.device canonicalises all of these before they reach the NodeDef
# ('CPU:2' -> '/device:CPU:2', '/cpu:0' -> '/device:CPU:0').
REQ_CPU0 = ["/cpu:0", "/device:CPU:0", "/CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"]
REQ_CPU12 = [
    "/device:CPU:1",
    "CPU:2",
    "/cpu:1",
    "/job:localhost/replica:0/task:0/device:CPU:2",
    "/job:localhost/device:CPU:1",
    "/replica:0/task:0/device:CPU:2",
    "/task:0/cpu:1",
]
REQ_PARTIAL = [
    "/device:CPU:*",
    "/job:localhost",
    "/job:localhost/replica:0",
    "/job:localhost/replica:0/task:0",
    "/task:0",
]
REQ_NONEXISTENT = [
    "/device:CPU:7",
    "/device:GPU:0",
    "/gpu:0",
    "/device:GPU:1",
    "/cpu:3",
    "/job:localhost/replica:0/task:0/device:GPU:0",
]
REQ_FOREIGN = ["/job:worker", "/job:ps/task:0", "/job:localhost/task:1", "/replica:1"]
# Written straight into NodeDef.device, bypassing Python's parser.
RAW_MALFORMED = [
    "CPU:2",  # fine for Python's tf.device, malformed for the C++ parser
    "cpu:0",
    "garbage",
    "/device:CPU:one",
    "/cpu:1:2",
    "/job:localhost/bogus:1",
    "/device:CPU:1/extra",
    "/device:CPU:-1",
]
RAW_ODD_BUT_VALID = ["/cpu:1", "/CPU:2", "/device:cpu:1", "/job:localhost/cpu:2", "/gpu:*"]


class _Builder:
    """State while building one graph."""

    def __init__(self, tf: Any, rng: random.Random, n_cpus: int, soft: bool, bad_rate: float):
        self.tf = tf
        self.tf1 = tf.compat.v1
        self.rng = rng
        self.n_cpus = n_cpus
        self.soft = soft
        self.bad_rate = bad_rate  # chance that a device request names no existing device
        self.floats: list[Any] = []  # float tensors of shape [4] (replicable when Const)
        self.bigs: list[Any] = []  # float tensors of shape [32]
        self.ints: list[Any] = []  # int32 tensors
        self.strings: list[Any] = []
        self.ops: list[Any] = []  # ops worth a control edge or colocation
        self.ref_vars: list[Any] = []
        self.refs: list[Any] = []  # ref-typed tensors (outputs of Assign & co.)
        self.res_handles: list[Any] = []
        self.k = 0

    # -- device requests
    def device(self, p_none: float = 0.35) -> str | None:
        r = self.rng.random()
        if r < p_none:
            return None
        if self.rng.random() < self.bad_rate:
            if self.rng.random() < 0.04:
                return self.rng.choice(REQ_FOREIGN)
            return self.rng.choice(REQ_NONEXISTENT)
        pool = REQ_CPU0 + REQ_PARTIAL
        if self.n_cpus > 1 or self.rng.random() < 0.01:
            pool = pool + REQ_CPU12 * 3
        return self.rng.choice(pool)

    @contextlib.contextmanager
    def dev(self, p_none: float = 0.35, nested: float = 0.15) -> Iterator[None]:
        d = self.device(p_none)
        with contextlib.ExitStack() as stack:
            if d is not None:
                stack.enter_context(self.tf.device(d))
                if self.rng.random() < nested:  # nested scope: merged with the outer one
                    inner = REQ_PARTIAL + (REQ_CPU12 if self.n_cpus > 1 else REQ_CPU0)
                    stack.enter_context(self.tf.device(self.rng.choice(inner)))
            elif self.rng.random() < 0.05:
                stack.enter_context(self.tf.device(None))
            yield

    def scope(self, what: str) -> Any:
        self.k += 1
        return self.tf1.name_scope(f"m{self.k}_{what}")

    # -- tensor pools
    def float_t(self) -> Any:
        if not self.floats:
            self.m_const(big=False)
        return self.rng.choice(self.floats)

    def big_t(self) -> Any:
        if not self.bigs:
            self.m_const(big=True)
        return self.rng.choice(self.bigs)

    def int_t(self) -> Any:
        if not self.ints:
            self.m_int()
        return self.rng.choice(self.ints)

    def add(self, t: Any) -> Any:
        shape = t.shape.as_list() if t.shape.rank is not None else None
        dt = t.dtype.base_dtype
        if t.dtype._is_ref_dtype:  # noqa: SLF001  (an Assign's output): a pool of its own
            self.refs.append(t)
        elif dt == self.tf.float32 and shape == [4]:
            self.floats.append(t)
        elif dt == self.tf.float32 and shape == [32]:
            self.bigs.append(t)
        elif dt == self.tf.int32:
            self.ints.append(t)
        elif dt == self.tf.string:
            self.strings.append(t)
        self.ops.append(t.op)
        return t

    # -- motifs
    def m_const(self, big: bool | None = None) -> None:
        tf, rng = self.tf, self.rng
        big = rng.random() < 0.3 if big is None else big
        with self.scope("const"), self.dev(p_none=0.5):
            n = 32 if big else 4
            kind = rng.random()
            if kind < 0.6:
                t = tf.constant([round(rng.uniform(-2, 2), 2) for _ in range(n)], name="c")
            elif kind < 0.8:
                t = tf.random.uniform([n], seed=rng.randrange(1 << 20), name="ru")
            else:
                t = tf.raw_ops.RandomStandardNormal(
                    shape=tf.constant([n], name="shape"), dtype=tf.float32, name="rn"
                )
        self.add(t)
        # consumers of the fresh generator: one device or several
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            with self.scope("use"), self.dev():
                self.add(rng.choice([tf.identity, tf.negative, tf.square, tf.nn.relu])(t))

    def m_unary(self) -> None:
        tf, rng = self.tf, self.rng
        src = self.float_t() if rng.random() < 0.75 else self.big_t()
        if self.refs and rng.random() < 0.3:
            src = rng.choice(self.refs)  # a ref edge into a non-ref input: no colocation
        with self.scope("unary"), self.dev():
            f = rng.choice([tf.identity, tf.negative, tf.square, tf.nn.relu, tf.tanh, tf.abs])
            self.add(f(src))

    def m_binary(self) -> None:
        tf, rng = self.tf, self.rng
        if rng.random() < 0.7:
            a, b = self.float_t(), self.float_t()
        else:
            a, b = self.big_t(), self.big_t()
        with self.scope("binary"), self.dev():
            f = rng.choice([tf.add, tf.multiply, tf.subtract, tf.maximum])
            self.add(f(a, b))

    def m_fanout(self) -> None:
        tf, rng = self.tf, self.rng
        src = self.float_t() if rng.random() < 0.6 else self.big_t()
        with self.scope("fanout"):
            for _ in range(rng.randint(2, 4)):
                with self.dev(p_none=0.25):
                    self.add(rng.choice([tf.identity, tf.negative, tf.nn.relu])(src))

    def m_multi_output(self) -> None:
        tf, rng = self.tf, self.rng
        src = self.big_t()
        with self.scope("split"):
            with self.dev():
                parts = tf.split(src, 8) if rng.random() < 0.5 else tf.unstack(
                    tf.reshape(src, [8, 4])
                )
            for p in rng.sample(parts, 3):
                with self.dev(p_none=0.2):
                    self.add(tf.identity(p))

    def m_metadata(self) -> None:
        tf, rng = self.tf, self.rng
        src = self.float_t() if rng.random() < 0.6 else self.big_t()
        with self.scope("meta"):
            with self.dev(p_none=0.6):
                op = rng.choice(["Shape", "Size", "Rank"])
                t = getattr(tf.raw_ops, op)(input=src)
            self.add(t)
            if rng.random() < 0.6:
                with self.dev():
                    self.add(tf.add(t, tf.constant(1, name="one")))
            if rng.random() < 0.5:
                with self.dev():
                    self.add(tf.strings.as_string(t))

    def m_int(self) -> None:
        tf, rng = self.tf, self.rng
        with self.scope("int"):
            with self.dev(p_none=0.5):
                a = tf.constant([rng.randrange(100) for _ in range(4)], name="ia")
            self.add(a)
            with self.dev():
                b = tf.add(a, tf.constant(3, name="three"), name="iadd")
            self.add(b)
            if rng.random() < 0.5:
                with self.dev():
                    self.add(tf.cast(b, tf.float32, name="tofloat"))

    def m_string(self) -> None:
        tf, rng = self.tf, self.rng
        with self.scope("str"):
            src = self.float_t() if rng.random() < 0.5 else self.int_t()
            with self.dev():
                s = tf.strings.as_string(src, name="as_str")
            self.add(s)
            with self.dev():
                other = tf.constant("suffix", name="sc")
                j = tf.strings.join([s, other], separator="-", name="join")
            self.add(j)
            with self.dev():
                if rng.random() < 0.5:
                    self.add(tf.strings.length(j, name="len"))
                else:
                    self.add(tf.strings.to_hash_bucket_fast(j, 10, name="hash"))

    def m_ref_var(self) -> None:
        tf, tf1, rng = self.tf, self.tf1, self.rng
        with self.scope("refvar"):
            with self.dev(p_none=0.4):
                init = tf.zeros([4]) if rng.random() < 0.5 else tf.random.uniform([4], seed=3)
                v = tf1.Variable(init, use_resource=False, name="v")
            self.ref_vars.append(v)
            self.add(v.value())
            self.ops.append(v.op)
            for _ in range(rng.randint(0, 3)):
                kind = rng.random()
                # assign pinned elsewhere than its variable: the value Const stays in the scope
                with self.dev(p_none=0.3):
                    if kind < 0.35:
                        a = tf1.assign(v, [1.0, 2.0, 3.0, 4.0])
                    elif kind < 0.6:
                        a = tf1.assign_add(v, self.float_t() if rng.random() < 0.5 else [0.5] * 4)
                    elif kind < 0.75:
                        a = tf1.assign_sub(v, [0.25] * 4)
                    elif kind < 0.9:
                        a = tf1.scatter_add(v, tf.constant([0, 2], name="idx"), [1.0, 1.0])
                    else:
                        a = tf.add(v, 1.0)  # ref auto-dereferenced: no colocation
                self.add(a)

    def m_res_var(self) -> None:
        tf, tf1, rng = self.tf, self.tf1, self.rng
        with self.scope("resvar"):
            if rng.random() < 0.4:
                with self.dev(p_none=0.4):
                    v = tf1.get_variable(
                        f"rv{self.k}", shape=[4], initializer=tf1.zeros_initializer(), use_resource=True
                    )
                h = v.handle
                self.add(v.value())
            else:
                with self.dev(p_none=0.3):
                    h = tf.raw_ops.VarHandleOp(
                        dtype=tf.float32, shape=[4], shared_name=f"h{self.k}", name="h"
                    )
                with self.dev():
                    self.ops.append(
                        tf.raw_ops.AssignVariableOp(
                            resource=h, value=tf.constant([1.0] * 4, name="init"), name="init_assign"
                        )
                    )
            self.res_handles.append(h)
            for _ in range(rng.randint(1, 3)):
                kind = rng.random()
                with self.dev(p_none=0.3):  # requests on resource consumers are overridden
                    if kind < 0.5:
                        self.add(tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32))
                    elif kind < 0.8:
                        self.ops.append(
                            tf.raw_ops.AssignAddVariableOp(resource=h, value=self.float_t())
                        )
                    else:
                        self.ops.append(
                            tf.raw_ops.AssignSubVariableOp(
                                resource=h, value=tf.constant([0.5] * 4, name="dec")
                            )
                        )
            if rng.random() < 0.3:
                with self.dev():
                    read = tf.raw_ops.ReadVariableOp(resource=h, dtype=tf.float32)
                with self.dev():
                    self.add(tf.raw_ops.Shape(input=read))

    def m_colocate(self) -> None:
        tf, tf1, rng = self.tf, self.tf1, self.rng
        if not self.ops:
            self.m_const()
        anchor = rng.choice(self.ops)
        with self.scope("coloc"):
            with self.dev(p_none=0.3), tf1.colocate_with(anchor):
                t = rng.choice([tf.identity, tf.negative])(self.float_t())
            self.add(t)
            if rng.random() < 0.4:  # nested colocation: joins the same group
                with tf1.colocate_with(t.op):
                    self.add(tf.square(t))
            if rng.random() < 0.3:
                with tf1.colocate_with(t.op, ignore_existing=True), self.dev():
                    self.add(tf.nn.relu(self.float_t()))

    def m_control(self) -> None:
        tf, rng = self.tf, self.rng
        if len(self.ops) < 2:
            self.m_unary()
            self.m_unary()
        deps = rng.sample(self.ops, min(len(self.ops), rng.randint(1, 3)))
        with self.scope("ctrl"):
            with tf.control_dependencies(deps), self.dev():
                if rng.random() < 0.5:
                    self.add(tf.identity(self.float_t()))
                else:
                    self.ops.append(tf.no_op(name="after"))
            if rng.random() < 0.4:
                with self.dev():
                    self.ops.append(tf.group(*rng.sample(self.ops, min(3, len(self.ops)))))

    def m_placeholder(self) -> None:
        tf1 = self.tf1
        with self.scope("pwd"), self.dev():
            self.add(tf1.placeholder_with_default(self.float_t(), shape=[4]))

    def m_while(self) -> None:
        tf, tf1, rng = self.tf, self.tf1, self.rng
        var = self.rng.choice(self.ref_vars) if self.ref_vars and rng.random() < 0.5 else None
        start = self.float_t()
        devs = [self.device(p_none=0.3) for _ in range(3)]

        def cond(i: Any, x: Any) -> Any:
            return tf.less(i, 3)

        def body(i: Any, x: Any) -> Any:
            with tf.device(devs[0]):
                y = tf.multiply(x, 0.5)
            with tf.device(devs[1]):
                z = tf.add(y, var.value() if var is not None else 1.0)
            with tf.device(devs[2]):
                j = tf.add(i, 1)
            return j, z

        with self.scope("while"), self.dev(p_none=0.5):
            i0 = tf.constant(0, name="i0")
            _, out = tf1.while_loop(cond, body, [i0, start], name="loop")
        self.add(out)
        with self.scope("after_loop"), self.dev():
            self.add(tf.identity(out))


MOTIFS: dict[str, Callable[[_Builder], None]] = {
    "const": _Builder.m_const,
    "unary": _Builder.m_unary,
    "binary": _Builder.m_binary,
    "fanout": _Builder.m_fanout,
    "split": _Builder.m_multi_output,
    "meta": _Builder.m_metadata,
    "int": _Builder.m_int,
    "str": _Builder.m_string,
    "refvar": _Builder.m_ref_var,
    "resvar": _Builder.m_res_var,
    "coloc": _Builder.m_colocate,
    "ctrl": _Builder.m_control,
    "pwd": _Builder.m_placeholder,
    "while": _Builder.m_while,
}
MOTIF_WEIGHTS = {
    "const": 3,
    "unary": 2,
    "binary": 2,
    "fanout": 3,
    "split": 1,
    "meta": 2,
    "int": 1,
    "str": 1.5,
    "refvar": 3,
    "resvar": 3,
    "coloc": 2.5,
    "ctrl": 2,
    "pwd": 0.5,
}

# family: (weight, allow_soft_placement chance, bad-request rate, NodeDef edit kind)
FAMILIES: dict[str, tuple[float, float, float, str]] = {
    "clean": (40, 0.3, 0.0, ""),
    "soft_unknown": (12, 1.0, 0.25, ""),  # requests for devices that do not exist, soft on
    "unknown": (8, 0.0, 0.08, ""),  # the same without soft placement: TF refuses
    "raw_valid": (7, 0.4, 0.0, "raw_valid"),  # odd but parseable strings written to NodeDefs
    "malformed": (6, 0.4, 0.0, "malformed"),
    "class_conflict": (9, 0.35, 0.0, "class_conflict"),  # `_class` groups with clashing requests
    "class_join": (5, 0.3, 0.0, "class_join"),  # `_class` links to nodes elsewhere, no clash
    "ref_request_clash": (6, 0.3, 0.0, "ref_clash"),  # assign pinned elsewhere, NodeDef level
    "while": (8, 0.3, 0.0, ""),
}


def _edit(rng: random.Random, gd: Any, kind: str, n_cpus: int) -> list[str]:
    """Direct NodeDef edits, returning a description of each."""
    done: list[str] = []
    nodes = list(gd.node)
    if not nodes:
        return done
    by_name = {n.name: n for n in nodes}
    if kind == "raw_valid":
        for n in rng.sample(nodes, min(len(nodes), rng.randint(1, 3))):
            n.device = rng.choice(RAW_ODD_BUT_VALID + REQ_PARTIAL)
            done.append(f"{n.name}.device={n.device}")
    elif kind == "malformed":
        n = rng.choice(nodes)
        n.device = rng.choice(RAW_MALFORMED)
        done.append(f"{n.name}.device={n.device}")
    elif kind in ("class_conflict", "class_join"):
        a, b = rng.sample(nodes, 2) if len(nodes) > 1 else (nodes[0], nodes[0])
        cls = b.attr["_class"].list.s
        if f"loc:@{a.name}".encode() not in cls:
            cls.append(f"loc:@{a.name}".encode())
        done.append(f"{b.name}._class+=loc:@{a.name}")
        if kind == "class_conflict":
            r = rng.random()
            if r < 0.7 and n_cpus > 1:  # two existing devices
                da, db = rng.sample(range(n_cpus), 2)
                a.device, b.device = f"/device:CPU:{da}", f"/device:CPU:{db}"
            elif r < 0.85:  # clashing jobs
                a.device, b.device = "/job:localhost", "/job:worker/device:CPU:0"
            else:  # one device that does not exist
                a.device, b.device = "/device:CPU:0", f"/device:CPU:{n_cpus + rng.randrange(3)}"
            if rng.random() < 0.5:
                a.device, b.device = b.device, a.device
            done.append(f"{a.name}.device={a.device}; {b.name}.device={b.device}")
    elif kind == "ref_clash":
        assigns = [n for n in nodes if n.op in ("Assign", "AssignAdd", "AssignSub", "ScatterAdd",
                                                 "AssignVariableOp", "ReadVariableOp",
                                                 "AssignAddVariableOp")]
        for n in assigns[: rng.randint(1, 3)]:
            n.device = f"/device:CPU:{rng.randrange(max(1, n_cpus))}"
            if "_class" in n.attr and rng.random() < 0.5:
                del n.attr["_class"]
                done.append(f"{n.name}._class removed")
            done.append(f"{n.name}.device={n.device}")
        var = [n for n in nodes if n.op in ("VariableV2", "VarHandleOp")]
        if var and rng.random() < 0.5:
            v = rng.choice(var)
            v.device = f"/device:CPU:{rng.randrange(max(1, n_cpus))}"
            done.append(f"{v.name}.device={v.device}")
    del by_name
    return done


def _build_one(tf: Any, rng: random.Random, index: int) -> Case:
    fam_names = list(FAMILIES)
    family = rng.choices(fam_names, weights=[FAMILIES[f][0] for f in fam_names])[0]
    _, p_soft, bad_rate, edit_kind = FAMILIES[family]
    n_cpus = 3 if rng.random() < 0.72 else 1
    soft = rng.random() < p_soft
    b = _Builder(tf, rng, n_cpus, soft, bad_rate)
    motif_names = list(MOTIF_WEIGHTS)
    chosen = rng.choices(motif_names, weights=list(MOTIF_WEIGHTS.values()), k=rng.randint(4, 9))
    if family == "while":
        chosen.insert(rng.randrange(len(chosen) + 1), "while")
    graph = tf.Graph()
    with graph.as_default():
        for m in chosen:
            MOTIFS[m](b)
    gd = graph.as_graph_def()
    edits = _edit(rng, gd, edit_kind, n_cpus) if edit_kind else []
    if family == "unknown" and not any(n.device in REQ_NONEXISTENT for n in gd.node):
        n = rng.choice(list(gd.node))
        n.device = rng.choice(REQ_NONEXISTENT + REQ_FOREIGN)
        edits.append(f"{n.name}.device={n.device}")
    name = f"{index:04d}_{family}_{n_cpus}cpu_{'soft' if soft else 'strict'}"
    return Case(
        name=name,
        graph_def_bytes=gd.SerializeToString(deterministic=True),
        n_cpus=n_cpus,
        allow_soft_placement=soft,
        family=family,
        motifs=tuple(chosen),
        edits=tuple(edits),
    )


def generate_cases(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT) -> list[Case]:
    """Build `count` cases; the same (seed, count prefix) gives the same graphs."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    from tensorflow.python.ops import control_flow_util

    saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = False  # TF1 while_loop: Enter/Merge/Switch/Exit
    try:
        return [_build_one(tf, random.Random(f"{seed}:{i}"), i) for i in range(count)]
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cases = generate_cases(args.seed, args.count)
    with open(args.out, "w") as f:
        json.dump([c.to_dict() for c in cases], f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
