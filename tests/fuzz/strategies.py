"""Hypothesis strategies for hostile GraphDefs and hostile bytes.

Structure: nodes drawn from a small pool of names (so duplicates, dangling inputs and
cycles happen often), real ops that matter to the analyses (control flow, variables, calls,
functional If/While/Case) plus unknown ones, inputs as ``name``, ``name:k``, ``^name`` and
malformed forms, devices valid and not, attrs with odd types and shapes (``-1``,
``2**62``), function libraries whose bodies call each other.

Bytes: a seed file from ``tests/fuzz/seeds`` with a few mutations (flip, delete, insert,
truncate, duplicate, splice), or raw bytes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

from placelint.proto import AttrValue, GraphDef, MetaGraphDef, NodeDef, SavedModel

SEEDS = Path(__file__).resolve().parent / "seeds"

NAMES = ["a", "b", "c", "d", "x/y", "loop/Merge", "loop/Enter", "call", "v", "n0", "n1",
         "deep/scope/node", "a_1", "ü", ""]
FUNCS = ["f", "g", "h", "missing_fn", ""]
OPS = ["Placeholder", "Const", "Identity", "IdentityN", "AddV2", "MatMul", "Square", "NoOp",
       "Merge", "Switch", "Enter", "Exit", "NextIteration", "LoopCond", "VariableV2",
       "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "Assign", "PartitionedCall",
       "StatefulPartitionedCall", "If", "StatelessIf", "While", "StatelessWhile", "Case",
       "Shape", "Size", "Cast", "ConcatV2", "AddN", "_Arg", "_Retval", "PyFunc", "Send",
       "_Recv", "ResourceGather", "TensorListReserve", "ControlTrigger", "NotARealOp", "f",
       "g", "h", ""]
DEVICES = ["", "/device:CPU:0", "/device:GPU:0", "/device:GPU:1", "/cpu:0", "/gpu:0", "/GPU:3",
           "/job:worker/task:1/device:GPU:0", "/job:localhost/replica:0/task:0/device:CPU:0",
           "/device:GPU:*", "/device:TPU:0", "/device:XLA_CPU:0", "/gpu0", "gpu:0", "/job:",
           "/device:GPU:99999999999999999999", "\x00"]
#: DataType values: ordinary, ref (+100), DT_RESOURCE 20, DT_VARIANT 21, DT_STRING 7,
#: invalid 0 and out of range
DTYPES = [1, 2, 3, 7, 9, 10, 19, 20, 21, 101, 120, 0, 99, 12345]
DIMS = [-7, -1, 0, 1, 2, 3, 1024, 2**31, 2**62, 2**63 - 1]
ATTR_KEYS = ["T", "dtype", "N", "value", "shape", "_output_shapes", "_class", "f",
             "then_branch", "else_branch", "cond", "body", "branches", "Tin", "Tout", "SrcT",
             "DstT", "Tcond", "transpose_a", "container", "shared_name", "element_dtype",
             "output_types", "Tindices", "frame_name", "_kernel", "_XlaMustCompile"]


@lru_cache(maxsize=None)
def input_refs(names: tuple[str, ...] = tuple(NAMES)) -> st.SearchStrategy[str]:
    name = st.sampled_from(names)
    return st.one_of(
        name,
        st.builds(lambda n, k: f"{n}:{k}", name, st.sampled_from([0, 1, 2, 7, 2**31, 2**40])),
        name.map(lambda n: "^" + n),
        st.builds(lambda n, a, k: f"{n}:{a}:{k}", name,
                  st.sampled_from(["output", "z", "y", "then", "a"]), st.integers(0, 2)),
        st.sampled_from(["a:", "^a:1", "", ":0", "^", "a:-1", "a:01", "a:\u00b2", "^^a",
                         "a: 1", "a:b"]),
    )


def shapes(draw_unknown=True) -> st.SearchStrategy:
    return st.builds(_shape, st.lists(st.sampled_from(DIMS), max_size=24),
                     st.booleans() if draw_unknown else st.just(False))


def _shape(dims, unknown_rank):
    v = AttrValue()
    v.shape.unknown_rank = unknown_rank
    for d in dims:
        v.shape.dim.add(size=d)
    return v.shape


def _attr(kind, data):
    v = AttrValue()
    if kind == "type":
        v.type = data
    elif kind == "types":
        v.list.type.extend(data)
    elif kind == "i":
        v.i = data
    elif kind == "b":
        v.b = data
    elif kind == "s":
        v.s = data
    elif kind == "shape":
        v.shape.CopyFrom(data)
    elif kind == "shapes":
        for s in data:
            v.list.shape.add().CopyFrom(s)
    elif kind == "tensor":
        dtype, shape = data
        v.tensor.dtype = dtype
        v.tensor.tensor_shape.CopyFrom(shape)
    elif kind == "func":
        v.func.name = data
    elif kind == "funcs":
        for name in data:
            v.list.func.add(name=name)
    elif kind == "class":
        v.list.s.extend(s.encode() for s in data)
    return v


@lru_cache(maxsize=None)
def attr_values() -> st.SearchStrategy[AttrValue]:
    return st.one_of(
        st.builds(_attr, st.just("type"), st.sampled_from(DTYPES)),
        st.builds(_attr, st.just("types"), st.lists(st.sampled_from(DTYPES), max_size=4)),
        st.builds(_attr, st.just("i"), st.sampled_from([-1, 0, 1, 2, 3, 2**31, -(2**63)])),
        st.builds(_attr, st.just("b"), st.booleans()),
        st.builds(_attr, st.just("s"), st.sampled_from([b"", b"x", b"\xff", b"loc:@a"])),
        st.builds(_attr, st.just("shape"), shapes()),
        st.builds(_attr, st.just("shapes"), st.lists(shapes(), max_size=3)),
        st.builds(_attr, st.just("tensor"), st.tuples(st.sampled_from(DTYPES), shapes(False))),
        st.builds(_attr, st.just("func"), st.sampled_from(FUNCS)),
        st.builds(_attr, st.just("funcs"), st.lists(st.sampled_from(FUNCS), max_size=3)),
        st.builds(_attr, st.just("class"),
                  st.lists(st.sampled_from(NAMES).map(lambda n: "loc:@" + n), max_size=3)),
    )


_OPS = st.sampled_from(OPS)
_DEVICES = st.sampled_from(DEVICES)
_KEYS = st.lists(st.sampled_from(ATTR_KEYS), max_size=4, unique=True)


@lru_cache(maxsize=None)
def node_defs(names: tuple[str, ...] = tuple(NAMES), ref_names: tuple[str, ...] | None = None):
    """NodeDefs named from ``names`` whose inputs name ``ref_names`` (default: ``names``)."""
    return _node_defs(st.sampled_from(names), st.lists(input_refs(ref_names or names),
                                                        max_size=4))


@st.composite
def _node_defs(draw, name, inputs):
    nd = NodeDef(name=draw(name), op=draw(_OPS), device=draw(_DEVICES))
    nd.input.extend(draw(inputs))
    if draw(st.booleans()):
        # well-typed enough for the analyses to get far: float tensors of a drawn shape
        nd.attr["T"].type = nd.attr["dtype"].type = 1
        nd.attr["N"].i = max(1, sum(not i.startswith("^") for i in nd.input))
        nd.attr["shape"].shape.CopyFrom(draw(shapes()))
    for key in draw(_KEYS):
        nd.attr[key].CopyFrom(draw(attr_values()))
    return nd


@st.composite
def function_defs(draw):
    lib = GraphDef().library
    f = lib.function.add()
    f.signature.name = draw(st.sampled_from(FUNCS))
    args = draw(st.lists(st.sampled_from(["x", "y", "a", "n0"]), max_size=3))
    for a in args:
        arg = f.signature.input_arg.add(name=a)
        if draw(st.booleans()):
            arg.type = draw(st.sampled_from(DTYPES))
        else:
            arg.type_attr = "T"
    outs = draw(st.lists(st.sampled_from(["out", "z", "x"]), max_size=2))
    for o in outs:
        f.signature.output_arg.add(name=o, type=draw(st.sampled_from(DTYPES)))
    body_names = ("n0", "n1", "b", "x", "input_control_node", "out")
    refs = tuple(dict.fromkeys(body_names + tuple(args)))
    for nd in draw(st.lists(node_defs(body_names, refs), max_size=5)):
        f.node_def.add().CopyFrom(nd)
    for o in outs:
        f.ret[o] = draw(input_refs(refs))
    if draw(st.booleans()):
        f.control_ret["c"] = draw(st.sampled_from(body_names))
    return f


@st.composite
def graph_defs(draw, max_nodes=12) -> GraphDef:
    gd = GraphDef()
    for nd in draw(st.lists(node_defs(), min_size=1, max_size=max_nodes)):
        gd.node.add().CopyFrom(nd)
    for f in draw(st.lists(function_defs(), max_size=3)):
        gd.library.function.add().CopyFrom(f)
    return gd


@st.composite
def models(draw):
    """(file name, bytes or text): a GraphDef, MetaGraphDef or SavedModel, binary or text."""
    from google.protobuf import text_format
    gd = draw(graph_defs())
    wrap = draw(st.sampled_from(["graphdef", "meta", "savedmodel"]))
    msg = gd
    if wrap != "graphdef":
        meta = MetaGraphDef()
        meta.graph_def.CopyFrom(gd)
        meta.meta_info_def.tags.extend(draw(st.lists(st.sampled_from(["serve", "train"]),
                                                     max_size=2)))
        for sig in draw(st.lists(st.sampled_from(["serving_default", "other"]), max_size=2,
                                 unique=True)):
            out = meta.signature_def[sig].outputs["o"]
            out.name = draw(input_refs())
        msg = meta
        if wrap == "savedmodel":
            msg = SavedModel(saved_model_schema_version=1)
            msg.meta_graphs.add().CopyFrom(meta)
    if draw(st.booleans()):
        name = {"graphdef": "g.pbtxt", "meta": "m.meta", "savedmodel": "saved_model.pbtxt"}[wrap]
        return name, text_format.MessageToString(msg).encode()
    name = {"graphdef": "g.pb", "meta": "m.meta", "savedmodel": "saved_model.pb"}[wrap]
    return name, msg.SerializeToString()


# -- bytes --------------------------------------------------------------------------
def seed_files() -> list[Path]:
    return sorted(p for p in SEEDS.iterdir() if p.is_file())


def mutate(data: bytes, ops: list[tuple[int, int, int, bytes]], other: bytes = b"") -> bytes:
    """Apply byte mutations; each op is (kind, position, length, payload)."""
    buf = bytearray(data)
    for kind, pos, length, payload in ops:
        at = pos % (len(buf) + 1)
        if kind == 0 and buf:                       # flip a byte
            buf[at % len(buf)] ^= (payload[0] if payload else 0xFF) or 1
        elif kind == 1:                             # delete a range
            del buf[at:at + length]
        elif kind == 2:                             # insert bytes
            buf[at:at] = payload
        elif kind == 3:                             # truncate
            del buf[at:]
        elif kind == 4:                             # duplicate a chunk
            buf[at:at] = buf[at:at + length]
        elif kind == 5 and other:                   # splice from another seed
            o = pos % len(other)
            buf[at:] = other[o:o + length * 8]
        elif kind == 6 and buf:                     # overwrite with an interesting byte
            buf[at % len(buf)] = payload[0] if payload else 0x80
    return bytes(buf)


MUTATIONS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 2**20), st.integers(0, 64),
                               st.binary(max_size=16)), min_size=1, max_size=6)


@st.composite
def mutated_seeds(draw):
    """(file name, bytes): a seed with mutations, under a name with the seed's extension."""
    seeds = seed_files()
    seed = draw(st.sampled_from(seeds))
    other = draw(st.sampled_from(seeds)).read_bytes()
    data = mutate(seed.read_bytes(), draw(MUTATIONS), other)
    suffix = draw(st.sampled_from([seed.suffix, ".pb", ".pbtxt", ".meta"]))
    return "fuzz" + suffix, data


def hostile_bytes():
    return st.one_of(mutated_seeds(),
                     st.tuples(st.sampled_from(["r.pb", "r.pbtxt", "r.meta"]),
                               st.binary(max_size=512)))


# -- structural mutations of real graphs ---------------------------------------------
@lru_cache(maxsize=None)
def seed_graphs() -> tuple[bytes, ...]:
    """The seeds that are graphs (a MetaGraph's graph_def too), serialized."""
    from google.protobuf import text_format
    out = []
    for p in seed_files():
        data = p.read_bytes()
        for cls in (GraphDef, MetaGraphDef):
            msg = cls()
            try:
                if p.suffix == ".pbtxt" or (p.suffix == ".meta" and data[:1].isalpha()):
                    text_format.Parse(data.decode(), msg, max_recursion_depth=100)
                else:
                    msg.ParseFromString(data)
            except Exception:   # noqa: BLE001 - hostile seeds are not graphs
                continue
            gd = msg if cls is GraphDef else msg.graph_def
            if gd.node and all(n.name and n.op for n in gd.node):
                out.append(gd.SerializeToString())
                break
    return tuple(out)


EDITS = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 10**6), st.integers(0, 10**6),
                           st.sampled_from(NAMES)), min_size=1, max_size=6)


def edit_graph(gd: GraphDef, edits) -> GraphDef:
    """Rename, rewire (``^``, ``:k``, malformed), delete, re-device, re-op, close cycles."""
    for kind, i, j, word in edits:
        if not gd.node:
            break
        node = gd.node[i % len(gd.node)]
        other = gd.node[j % len(gd.node)]
        if kind == 0:
            node.name = other.name if j % 2 else word         # duplicates / dangling
        elif kind == 1:
            node.input.append([other.name, f"{other.name}:{j % 5}", "^" + other.name][j % 3])
        elif kind == 2:
            node.input.insert(0, ["a:", "^a:1", "", ":0", "^" + other.name][j % 5])
        elif kind == 3 and len(gd.node) > 1:
            del gd.node[i % len(gd.node)]
        elif kind == 4:
            node.device = DEVICES[j % len(DEVICES)]
        elif kind == 5:
            node.op = OPS[j % len(OPS)]
        elif kind == 6:                                       # a cycle
            node.input.append(other.name)
            other.input.append(node.name)
        elif kind == 7 and node.input:
            del node.input[j % len(node.input)]
        elif kind == 8:
            node.attr["_class"].list.s.append(f"loc:@{other.name}".encode())
        elif kind == 9 and gd.library.function:
            f = gd.library.function[j % len(gd.library.function)]
            if f.node_def:
                f.node_def[i % len(f.node_def)].op = gd.library.function[i % len(
                    gd.library.function)].signature.name    # (mutual) recursion
    return gd


@st.composite
def mutated_graphs(draw):
    """(file name, bytes): a real seed graph with structural edits, binary or text."""
    from google.protobuf import text_format
    gd = GraphDef.FromString(draw(st.sampled_from(seed_graphs())))
    gd = edit_graph(gd, draw(EDITS))
    if draw(st.booleans()):
        return "g.pbtxt", text_format.MessageToString(gd).encode()
    return "g.pb", gd.SerializeToString()
