"""Function calls and functional control flow, expanded into the graph being built.

A direct call (op = function name) or a (Stateful)PartitionedCall node ``c`` is replaced
by its body the way TF's function inlining does it (``InlineFunctionBody``): body nodes
are named ``c/<node>``; each input argument becomes an ``_Arg`` node ``c/<arg>`` fed by
the call's input, each output a ``_Retval`` node ``c/<output>`` that feeds the call's
consumers; control inputs of the call reach the body through a NoOp
``c/input_control_node`` and control consumers wait on a NoOp ``c/output_control_node``.
Body nodes with no device inherit the call's device (TF's multi-device function runtime
uses the call's device as the default); explicit body devices are kept.

A call marked for XLA or TPU compilation (``tf.function(jit_compile=True)`` writes
``_XlaMustCompile``) is not expanded: TensorFlow neither inlines nor lowers it, so it runs
as one op on its device, and XLA compiles its body for that device.

Functional control flow (If/StatelessIf, While/StatelessWhile, Case/StatelessCase) keeps
its node; each branch/body is added as ``n/<branch>/<node>``, fed from the op's inputs,
and finishes into the op through control edges, so its ops are analysed (and marked with
``Node.loop`` inside While bodies).
"""

from __future__ import annotations

from functools import lru_cache

from ..checks.pl003_recursive_function import RecursiveFunction
from ..checks.pl004_missing_function import MissingFunction
from ..checks.pl005_invalid_graph import InvalidGraph
from ..checks.pl002_unsupported_format import UnsupportedFormat
from ..proto import AttrValue, NodeDef
from .body_nodes import BodyNodes
from .body_refs import BodyRefs
from .devices import parse_device
from .graph import Edge, Node
from .ops import PARTITIONED_CALL, WHILE

CONTROL_FLOW_FUNCS = {
    "If": ("then_branch", "else_branch"), "StatelessIf": ("then_branch", "else_branch"),
    "While": ("cond", "body"), "StatelessWhile": ("cond", "body"),
    "Case": ("branches",), "StatelessCase": ("branches",),
}
#: Calls nested deeper than this are left unexpanded (with a diagnostic): expansion
#: recurses once per level, and real models nest a handful of levels.
MAX_CALL_DEPTH = 100
#: Marks the ``_Arg`` nodes of an expanded (Stateful)PartitionedCall: TF places such a
#: function body on its own, with each ``_Arg`` pinned to its input's device (the call node
#: is colocation-exempt, so the body never pulls a variable to its own device requests).
CALL_ARG_ATTR = "_placelint_call_arg"
#: A function body of this many nodes or more read apart from its GraphDef (a SavedModel's
#: ``FunctionLibrary``) is let go once a call is expanded, and parsed again for another
#: call: such a body is most often called once (a TF2 SavedModel's save and restore
#: functions), and parsing it again costs a fraction of expanding it.
RELEASE_BODY_NODES = 4096
#: ... and once a call from the top level is expanded, every body parsed is let go when
#: they were this many bytes or more (a TF2 SavedModel's serving function calls thousands
#: of small functions once each; one called again is parsed again, at a fraction of the
#: cost of expanding a call of it)
RELEASE_PARSED_BYTES = 8 * 2**20


#: The attrs that mark a node for XLA or TPU compilation, and the kind of value that turns
#: each on: lower_functional_ops.cc ``MarkedForXlaCompilation`` (``_xla_compile_id``, a
#: non-empty string; ``_XlaMustCompile``, true) and ``MarkedForTpuCompilation``
#: (``_tpu_replicate``, a non-empty string). Such a function call is neither lowered nor
#: inlined (Grappler's function optimizer leaves it too).
COMPILED_CALL_ATTRS = (("_XlaMustCompile", "b"), ("_xla_compile_id", "s"),
                       ("_tpu_replicate", "s"))
#: ... those of them that mean XLA (not a TPU cluster)
XLA_MARKS = frozenset({"_XlaMustCompile", "_xla_compile_id"})


def compilation_mark(attrs) -> str | None:
    """The attr (``COMPILED_CALL_ATTRS``) that marks a node with ``attrs`` (a NodeDef's attr
    map, or ``Node.attrs``) for compilation, or None."""
    for key, kind in COMPILED_CALL_ATTRS:
        if key in attrs:
            value = attrs[key]
            if value.WhichOneof("value") == kind and getattr(value, kind):
                return key
    return None


class Reexpanded(Exception):
    """A second call of an expanded call's name is being expanded: its aliases replace
    the first one's, which the edges already made through them did not see (the builder
    starts again without making such edges early)."""


class FunctionExpansion(BodyNodes, BodyRefs):
    """Mixed into the graph builder: expands calls and attaches control-flow bodies."""

    def wait(self, src: str, slot: int, dst: str, dst_slot: int, text: str) -> None:
        """Leave the edge ``src:slot -> dst`` to ``finish`` (``text``: the input as written);
        the later edges of its two nodes wait too, so that every node's edges keep the
        order in which they were read."""
        self.pending.append((src, slot, dst, dst_slot, text))
        self.waiting_src.add(src)
        self.waiting_src.add(self._resolved(src, slot))
        self.waiting_dst.add(dst)

    def control_edge(self, src: str, dst: Node, text: str) -> None:
        """The control edge ``src -> dst`` (``dst`` added after ``src``, when ``src`` exists):
        made now when ``finish`` would make exactly it, in the same place of its two nodes'
        edge lists (the test ``_add_inputs`` applies), else left to ``finish``. (Most
        edges a call's expansion adds: its body's ``control_ret`` nodes into the exit NoOp,
        ~14k of a TF2 SavedModel's save and restore functions at 10^5 nodes.)"""
        source = (self.graph.nodes.get(src) if src not in self.waiting_src
                  and src not in self.control_alias and dst.name not in self.waiting_dst
                  else None)
        if source is not None and source is not dst:
            self._connect(source, -1, dst, -1, None)
        else:
            self.wait(src, -1, dst.name, -1, text)

    def release_bodies(self) -> None:
        """Let the parsed function bodies go (expansion is done): what the builder read of
        them, and the library's parsed functions."""
        self._function_bodies = {}
        self._nd_records = {}
        self.library.release()

    def _resolved(self, src: str, slot: int) -> str:
        """The node an edge from ``src:slot`` leaves once the aliases known so far apply
        (as ``finish`` resolves it)."""
        if slot == -1:
            return self.control_alias.get(src, src)
        alias = self.alias
        while (src, slot) in alias:
            src, slot = alias[(src, slot)]
        return src

    def _called_function(self, nd: NodeDef) -> str | None:
        if nd.op in PARTITIONED_CALL:
            return nd.attr["f"].func.name if "f" in nd.attr else ""
        if nd.op in self.library:
            return nd.op
        return None

    def _expand_call(self, nd, name, fname, device, function, call_site, loop, resolve, stack) -> bool:
        fdef = self.library.get(fname)
        if fdef is None:
            what = (f"calls function '{fname}', which is not in the graph's function library"
                    if fname else f"({nd.op}) names no function (its 'f' attr is missing or empty)")
            self.diags.append(MissingFunction.diag(
                f"node '{name}' {what}; its body cannot be analysed",
                node=name))
            return False
        if fname in stack:
            chain = _chain((*stack[stack.index(fname):], fname))
            self.diags.append(RecursiveFunction.diag(
                f"function '{fname}' calls itself ({chain}); TensorFlow cannot "
                "place recursive functions (UNIMPLEMENTED), and the call is "
                "analysed as an opaque node", node=name))
            return False
        if len(stack) >= MAX_CALL_DEPTH:
            if not self.depth_exceeded:
                self.depth_exceeded = True
                self.diags.append(UnsupportedFormat.diag(
                    f"function calls are nested more than {MAX_CALL_DEPTH} "
                    f"levels deep ({_chain(stack[:3])} -> ...); deeper calls "
                    "are analysed as opaque nodes", node=name))
            return False
        if self.early_alias and name in self.control_alias:
            raise Reexpanded(name)
        # the call's own _Arg/_Retval/control nodes stand for the call node, placed by
        # its caller (strictly at top level); the body is soft-placed under its config_proto
        outer_soft = bool(call_site) and call_site in self._soft_calls
        if outer_soft or _config_soft(nd):
            self._soft_calls.add(name)
        prefix = name + "/"
        (bodies, body_names, in_args, out_args, rets, control_rets, by_name,
         resolved) = self._function_parts(fname, fdef)
        body_stack = (*stack, fname)
        refs = nd.input[:]
        data_refs = [r for r in refs if not r.startswith("^")]
        control_refs = [r for r in refs if r.startswith("^")]
        taken: set[str] = set()     # (the names ``unique`` gave, besides the body's)
        nodes = self.graph.nodes
        spec = parse_device(device)
        partitioned = nd.op in PARTITIONED_CALL

        def unique(base: str) -> str:
            """A name for a node placelint adds (``_Arg``, ``_Retval``, control NoOps) that
            clashes with no body node and no node already in the graph."""
            candidate, i = base, 0
            while (candidate in body_names or candidate in taken
                   or (full := prefix + candidate) in nodes):
                candidate, i = f"{base}_{i}", i + 1
            taken.add(candidate)
            return full

        arg_nodes: dict[str, str] = {}
        entry_control = None
        if control_refs:
            entry_control = unique("input_control_node")
            attrs, types, out_types, shapes, signature = (
                self._made_records.get(("NoOp", None, 0, False)) or self._made_record("NoOp"))
            ctl = nodes[entry_control] = Node(entry_control, "NoOp", device, spec, attrs, [], [],
                                              out_types, shapes, fname, name, loop, None, None,
                                              signature, outer_soft)
            self._add_inputs(ctl, control_refs, resolve, types)
        add_inputs, connect = self._add_inputs, self._connect
        made_records, made_record = self._made_records, self._made_record
        alias, waiting_src, waiting_dst = self.alias, self.waiting_src, self.waiting_dst
        early, fast = self.early_alias, self.fast
        n_refs = len(data_refs)
        for i, (arg, arg_type, type_attr) in enumerate(in_args):
            arg_name = prefix + arg     # (``unique``'s first candidate, tested inline)
            if arg in body_names or arg in taken or arg_name in nodes:
                arg_name = unique(arg)
            else:
                taken.add(arg)
            arg_nodes[arg] = arg_name
            dtype = arg_type or _attr_type(nd, type_attr)
            record = (made_records.get(("_Arg", dtype, i, partitioned))
                      or made_record("_Arg", dtype, i, partitioned))
            attrs, types, out_types, shapes, signature = record
            # (every field positionally, typed as ``_made_record`` says: a third of a TF2
            # SavedModel's nodes are _Arg nodes)
            node = nodes[arg_name] = Node(arg_name, "_Arg", device, spec, attrs, [], [],
                                          out_types, shapes, fname, name, loop, None, None,
                                          signature, outer_soft)
            if i < n_refs:
                ref = data_refs[i]
                if fast:
                    # the edge ``_add_inputs`` would make at once, made here (one data input
                    # into a new node: its tests of a data input at slot 0)
                    src, slot, _ = resolve(ref)
                    if slot >= 0:
                        real, real_slot = src, slot
                        while (real, real_slot) in alias:
                            real, real_slot = alias[(real, real_slot)]
                        if (real not in waiting_src and arg_name not in waiting_dst
                                and (real is src or early and src not in waiting_src)):
                            source = nodes.get(real)
                            if source is not None and source is not node:
                                connect(source, real_slot, node, 0, types)
                                ref = None
                if ref is not None:
                    add_inputs(node, (ref,), resolve, types)
            else:
                self.diags.append(InvalidGraph.diag(
                    f"call '{name}' passes {len(data_refs)} inputs but "
                    f"function '{fname}' takes {len(in_args)}",
                    node=name))
            if entry_control:
                self.control_edge(entry_control, node, "^" + entry_control)

        body_resolve = self._function_resolver(prefix, arg_nodes, by_name, resolved)
        self.add_body(bodies, prefix, device, fname, name, loop, body_resolve, body_stack,
                      (arg_nodes, by_name, resolved), entry_control)

        ret_nodes = []
        for i, (out, out_type, type_attr) in enumerate(out_args):
            ret_name = unique(out)
            dtype = out_type or _attr_type(nd, type_attr)
            attrs, types, out_types, shapes, signature = (
                made_records.get(("_Retval", dtype, i, False)) or made_record("_Retval", dtype, i))
            node = nodes[ret_name] = Node(ret_name, "_Retval", device, spec, attrs, [], [],
                                          out_types, shapes, fname, name, loop, None, None,
                                          signature, outer_soft)
            ref = rets.get(out)
            if ref is not None:
                self._add_inputs(node, [ref], body_resolve, types)
            self.alias[(name, i)] = (ret_name, 0)
            if name in self.waiting_src:    # (see ``wait``)
                self.waiting_src.add(ret_name)
            ret_nodes.append(ret_name)
        exit_control = unique("output_control_node")
        attrs, _, out_types, shapes, signature = (made_records.get(("NoOp", None, 0, False))
                                                  or made_record("NoOp"))
        exit_node = nodes[exit_control] = Node(exit_control, "NoOp", device, spec, attrs, [], [],
                                               out_types, shapes, fname, name, loop, None, None,
                                               signature, outer_soft)
        # the exit NoOp's control edges (``control_edge``'s, inline: ~a quarter of a TF2
        # SavedModel's edges)
        control_alias = self.control_alias
        sources = ret_nodes + [prefix + ctl for ctl in control_rets]
        for k, src in enumerate(sources):
            source = (nodes.get(src) if src not in waiting_src and src not in control_alias
                      and exit_control not in waiting_dst else None)
            if source is not None and source is not exit_node:
                edge = Edge(source.name, -1, exit_control, -1)
                source.out_edges.append(edge)
                exit_node.in_edges.append(edge)
            else:
                written = src if k < len(ret_nodes) else control_rets[k - len(ret_nodes)]
                self.wait(src, -1, exit_control, -1, "^" + written)
        control_alias[name] = exit_control
        if name in self.waiting_src:
            self.waiting_src.add(exit_control)
        if self.library.lazy:
            if not stack and self.library.parsed_bytes >= RELEASE_PARSED_BYTES:
                self.release_bodies()
            elif len(bodies) >= RELEASE_BODY_NODES:
                self._forget_function(fname, bodies)
        return True

    def _made_record(self, op: str, dtype: int | None = None, index: int = 0,
                     call_arg: bool = False) -> tuple:
        """``_made_records[(op, dtype, index, call_arg)]``, made on its first use: what a
        node the builder makes (an ``_Arg`` or ``_Retval`` of that dtype and index,
        ``call_arg``: see ``_arg_attrs``; a ``NoOp``) is given as ``AttrRecords.type_node`` types it,
        ``(attrs, its input dtypes, output dtypes, output shapes, op signature)``, shared
        by the nodes with it."""
        if op == "NoOp":
            attrs, dtypes = _NO_ATTRS, None
        else:
            attrs, dtypes = _arg_attrs(dtype, index, call_arg), _dtypes(dtype)
        node = Node("", op, "", None, attrs, output_dtypes=dtypes)
        types = self.attr_records.type_node(node, op != "NoOp", dtypes)
        record = self._made_records[(op, dtype, index, call_arg)] = (
            node.attrs, types, node.output_dtypes, node.output_shapes, node.op_signature)
        return record

    def _forget_function(self, fname: str, bodies) -> None:
        """Let function ``fname``'s parsed body go, with what the builder read of it (its
        NodeDefs' records are keyed by their ids: they go too)."""
        del self._function_bodies[fname]
        records = self._nd_records
        for body in bodies:
            records.pop(id(body[0]), None)
        self.library.forget(fname)

    def _function_parts(self, fname: str, fdef) -> tuple:
        """What expanding a call of function ``fname`` reads of its FunctionDef, read once
        for all its calls (each protobuf field access makes a new Python object): per body
        node ``(nd, name, op, device, inputs, its attrs' wire bytes or None)`` (those the
        check of the called bodies read: ``body_keys``); the body node names; per input and
        output arg ``(name, type, type_attr)``; ``ret`` as a dict; the ``control_ret`` nodes; body
        node name -> its tuple above (the last of that name); and the body inputs resolved so
        far (see ``_function_resolver``), shared by every call."""
        parts = self._function_bodies.get(fname)
        if parts is None:
            # (a body parsed again: no keys; none either when not ``fast``: tests compare)
            keys = self.body_keys.pop(fname, None) if self.fast else None
            if keys is None or len(keys) != len(fdef.node_def):
                keys = (None,) * len(fdef.node_def)
            bodies = [(nd, nd.name, nd.op, nd.device, nd.input[:], key)
                      for nd, key in zip(fdef.node_def, keys)]
            sig = fdef.signature
            by_name = {b[1]: b for b in bodies}
            parts = self._function_bodies[fname] = (
                bodies, by_name.keys(),
                [(a.name, a.type, a.type_attr) for a in sig.input_arg],
                [(a.name, a.type, a.type_attr) for a in sig.output_arg],
                dict(fdef.ret), control_ret_nodes(fdef), by_name, {})
        return parts

    def _attach_bodies(self, nd, node: Node, device, function, loop, resolve, stack):
        data_refs = [r for r in nd.input if not r.startswith("^")]
        if node.soft:
            self._soft_calls.add(node.name)
        is_while = nd.op in WHILE
        skip = 0 if is_while else 1   # If/Case: input 0 is the predicate / branch index
        funcs: list[tuple[str, str]] = []
        for attr in CONTROL_FLOW_FUNCS[nd.op]:
            if attr not in nd.attr:
                continue
            value = nd.attr[attr]
            if value.HasField("func"):
                funcs.append((attr, value.func.name))
            else:
                funcs += [(f"{attr}_{i}", f.name) for i, f in enumerate(value.list.func)]
        for label, fname in funcs:
            call = NodeDef(name=f"{node.name}/{label}", op=fname, device=nd.device)
            call.input.extend(data_refs[skip:])
            for k, v in nd.attr.items():
                if k in ("T", "Tin", "Tout"):
                    call.attr[k].CopyFrom(v)
            fdef = self.library.get(fname)
            if fdef is None:
                self.diags.append(MissingFunction.diag(
                    f"node '{node.name}' refers to function '{fname}', which "
                    "is not in the graph's function library", node=node.name))
                continue
            self.add_nodedef(call, name=call.name, device=device, function=function,
                             call_site=node.name, loop=node.name if is_while else loop,
                             resolve=resolve, stack=stack)
            exit_name = self.control_alias.get(call.name)
            if exit_name:
                self.wait(exit_name, -1, node.name, -1, "^" + exit_name)


@lru_cache(maxsize=None)
def _arg_attrs(dtype: int | None, index: int, call_arg: bool) -> dict[str, AttrValue]:
    """The attrs TF gives ``_Arg``/``_Retval`` nodes (``T``, ``index``; ``call_arg``: an
    ``_Arg`` of a (Stateful)PartitionedCall, see ``CALL_ARG_ATTR``): one dict for all the
    nodes with these (attrs are never changed after the build)."""
    attrs = {"index": _index_value(index)}
    if dtype:
        attrs["T"] = _type_value(dtype)
    if call_arg:
        attrs[CALL_ARG_ATTR] = _CALL_ARG_VALUE
    return attrs


@lru_cache(maxsize=None)
def _dtypes(dtype: int | None) -> list[int] | None:
    """``[dtype]`` (None when unknown): one list for all the nodes with it (dtype lists are
    never changed after the build)."""
    return [dtype] if dtype else None


@lru_cache(maxsize=None)
def _index_value(index: int) -> AttrValue:
    return AttrValue(i=index)


@lru_cache(maxsize=None)
def _type_value(dtype: int) -> AttrValue:
    return AttrValue(type=dtype)


_CALL_ARG_VALUE = AttrValue(b=True)
#: the attrs of the NoOps the builder makes: none (one dict for all: attrs are never
#: changed after the build)
_NO_ATTRS: dict[str, AttrValue] = {}


def _config_soft(nd: NodeDef) -> bool:
    """A call's ``config_proto`` attr (a serialized ConfigProto) turns soft placement on
    for its body: TF2 writes ``allow_soft_placement: true`` into every call it makes."""
    if "config_proto" not in nd.attr:
        return False
    from tensorboard.compat.proto.config_pb2 import ConfigProto
    try:
        return ConfigProto.FromString(nd.attr["config_proto"].s).allow_soft_placement
    except Exception:  # noqa: BLE001 - a damaged attr: TF would fail to parse it too
        return False


def _chain(names) -> str:
    """``f -> g -> f``, bounded."""
    names = list(names)
    if len(names) > 8:
        names = names[:6] + [f"... ({len(names) - 7} more)", names[-1]]
    return " -> ".join(names)


def _attr_type(nd: NodeDef, attr: str) -> int | None:
    """Resolve a type attr of a call: the call's own attr, or the positional Tin/Tout."""
    if attr and attr in nd.attr and nd.attr[attr].type:
        return nd.attr[attr].type
    return None


def control_ret_nodes(fdef) -> list[str]:
    """The body nodes of ``fdef``'s control outputs, in the signature's ``control_output``
    order (``control_ret`` is a protobuf map: its iteration order changes from one process
    to the next, and with it the order of the exit NoOp's in-edges); a ``control_ret`` key
    the signature does not declare comes after them, by name."""
    control_ret = dict(fdef.control_ret)
    declared = [name for name in fdef.signature.control_output if name in control_ret]
    rest = sorted(control_ret.keys() - set(declared))
    return [control_ret[name] for name in dict.fromkeys(declared + rest)]
