"""Import-time NodeDef validation: what TensorFlow's graph importer refuses per node.

``tf.compat.v1.import_graph_def`` and the C++ ``ImportGraphDef`` (graph_constructor.cc,
``GraphConstructor::Convert``) take the nodes in topological order (among ready nodes,
the lowest GraphDef index first) and, for each one,

1. ``AddDefaultsToNodeDef`` then ``ValidateNodeDef`` (node_def_util.cc): every attr the
   node sets that its OpDef declares has a value of the declared kind
   (``AttrValueHasType``) and meets the AttrDef's minimum and allowed values
   (``ValidateAttrValue``, op_def_util.cc); every attr without a default is present
   (``NodeDef missing attr 'T' from Op<...>``); the number of data inputs is what the
   OpDef's argument list sized by the number and type-list attrs expects;
2. ``MakeEdge`` for each data input: the source output's dtype must be compatible with
   the input's (``TypesCompatible``, types.h: equal, or a ref output feeding the
   non-ref input of its base type; a non-ref tensor never feeds a ref input);
3. ``ValidateShape``: the op's shape function (a ``Placeholder`` shape with a
   dimension below -1 fails there) and the ``_output_shapes`` attr (one valid shape per
   output).

TensorFlow stops at the first failure; here every failing node is reported, in
TensorFlow's order, so the first finding is the node TensorFlow names. Data edges that
close a while loop (``NextIteration -> Merge``) are typed after every node, as
``AddBackEdges`` does. Only what the shipped op database knows is checked: ops it does
not know (custom ops, function calls by name) are left alone, as are edges from them.

Bodies of library functions called from the top level are checked as TensorFlow's
``InstantiateFunction`` does when the import runs the call's shape function (see
function_validation.py), conservatively.

Cost: one pass over the nodes; per node a handful of dict and set operations, and the
op database's memoized typing. TensorFlow's order is computed only when two or more
nodes fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import dtypes as _dt
from ..checks.pl007_invalid_node_def import InvalidNodeDef
from ..diagnostics import Diagnostic
from ..loaders.library import FunctionLibrary
from ..proto_lite import node_depth, real_node
from .attr_validation import (attr_value_has_type, dtype_string, missing_order, shape_text,
                              op_summary, shape_error, validate_attr_value, value_case)
from .function_validation import callee, called_functions, check_function
from .import_order import split_input, tf_order
from .ops import NEXT_ITERATION, NODEDEF_MERGE

#: causes (``Finding.kind``)
ATTR_VALUE = "attr-value"
MISSING_ATTR = "missing-attr"
INPUT_COUNT = "input-count"
INPUT_TYPE = "input-type"
SHAPE = "shape"
FUNCTION_BODY = "function-body"

OUTPUT_SHAPES = "_output_shapes"
#: TF's "NodeDef expected inputs '...'" lists every input's dtype; past this many the
#: message says how many (an AddN with N: 100000 made a 700 KB message)
MAX_LISTED_INPUTS = 32


@dataclass
class Finding:
    node: str
    kind: str
    message: str                  #: TensorFlow's message, ``{{node X}}`` as Python shows it
    related: list[str] = field(default_factory=list)


@dataclass
class Validation:
    findings: list[Finding]       #: in TensorFlow's import order (the first is TF's)

    @property
    def invalid_nodes(self) -> dict[str, str]:
        """node -> cause, for rules that must not report the same node again."""
        out: dict[str, str] = {}
        for f in self.findings:
            out.setdefault(f.node, f.kind)
        return out

    def diagnostics(self) -> list[Diagnostic]:
        out = []
        # in import order: the grouped finding's first node is where TF's importer stops
        for f in self.findings:
            out.append(InvalidNodeDef.diag(f"{f.message} (TensorFlow refuses to import the "
                                           "graph)", fix=_FIX[f.kind],
                                           node=f.node, related=f.related))
        return out


_FIX = {
    ATTR_VALUE: "give the attr a value of the kind and range the op declares (see Op<...>).",
    MISSING_ATTR: "add the missing attr(s); a NodeDef written by hand or by another tool "
                  "must carry every attr the op declares without a default.",
    INPUT_COUNT: "make the number of data inputs match the op's arguments and the attrs "
                 "that size them (N, T lists).",
    INPUT_TYPE: "feed the input a tensor of the expected dtype (add a Cast, or read the "
                "variable with ReadVariableOp/Identity first).",
    FUNCTION_BODY: "fix the function's body node (its attrs, or the inputs it consumes), or "
                   "regenerate the function from the code that traced it.",
    SHAPE: "write every dimension as a size >= 0 or -1 (unknown), and no dimensions with "
           "unknown_rank.",
}


# --------------------------------------------------------------------------- the pass


def _attrs_key(info, attrs, signature: tuple) -> tuple:
    """What of a node's attrs its verdict depends on, as a memo key: ``signature`` (the op
    database's key: the values of the type, number and kernel-constraint attrs, which the
    builder computed), the op's other declared attrs, and ``_output_shapes``. Attrs the
    OpDef does not declare (``_class`` above all: the colocation lists are what makes most
    nodes of a training graph differ) are read by no check. A value is its serialized
    bytes (equal bytes are equal values; different map orders of one value merely miss the
    memo), or only its kind (``WhichOneof``) for an attr whose checks read nothing else:
    a Const's tensor is not serialized again."""
    key = [signature]
    for name, kind_only in _unsigned(info):
        if name in attrs:
            value = attrs[name]
            if kind_only:
                case = value.WhichOneof("value")
                key.append(case if case != "list" else value.SerializeToString())
            else:
                key.append(value.SerializeToString())
        else:
            key.append(None)
    if OUTPUT_SHAPES in attrs:
        key.append(attrs[OUTPUT_SHAPES].SerializeToString())
    return tuple(key)


_UNSIGNED: dict[str, tuple[tuple[str, bool], ...]] = {}
#: scalar attr types whose value ``validate_attr_value`` checks only for its kind when the
#: AttrDef sets no minimum and no allowed values (and the importer's shape check is off)
_KIND_ONLY = frozenset({"tensor", "bool", "float", "func", "string", "int", "shape"})


def _unsigned(info) -> tuple[tuple[str, bool], ...]:
    """The op's declared attrs that ``OpInfo.signature`` does not read, each with whether
    its kind alone decides its checks."""
    names = _UNSIGNED.get(info.name)
    if names is None:
        sig = set(info.signature_attrs)
        names = _UNSIGNED[info.name] = tuple(
            (a, d.type in _KIND_ONLY and d.minimum is None and d.allowed is None
             and not d.shape_checked)
            for a, d in info.attr_defs.items() if a not in sig)
    return names


class _Verdict:
    """What a node's op and attrs decide, shared by every node with the same ones."""

    __slots__ = ("kind", "template", "in_types", "out_types", "late_kind", "late_template",
                 "in_count")

    def __init__(self, kind=None, template="", in_types=None, out_types=None, in_count=None):
        self.kind, self.template = kind, template      # ValidateNodeDef's failure
        self.in_types, self.out_types = in_types, out_types
        #: without ``in_types`` (a number attr past ``MAX_ARG_COUNT``): the number of
        #: inputs and the first dtypes, for TF's input count check
        self.in_count = in_count
        self.late_kind = self.late_template = None     # ValidateShape's (after the edges)


def validate_graph_def(graph_def, opdb) -> Validation:
    """Every node of ``graph_def`` that TensorFlow's importer refuses (see module doc)."""
    validator = NodeDefValidator(graph_def, opdb)
    check = validator.check
    for nd in graph_def.node:
        check(nd, nd.name, nd.op, nd.input[:], None)
    return validator.result()


_UNSEEN = object()


class NodeDefValidator:
    """``validate_graph_def`` node by node, for the graph builder, which hands each
    top-level NodeDef over as it reads it (its fields read once, nothing kept per node but
    what the edge checks need) with the typing of the ``Node`` it made, whose op signature
    is reused and which keys the verdicts; or does not hand it over when ``passes`` says
    that it passes (see there).

    ``nodes``: the builder's graph, where a top-level node that passed unchecked is found
    (its output dtypes are its verdict's)."""

    def __init__(self, graph_def, opdb, nodes=None, library: FunctionLibrary | None = None):
        self.graph_def, self.opdb = graph_def, opdb
        #: how deep a lite GraphDef's nodes sit in their file (``proto_lite``: a node whose
        #: attrs are read is converted); 0: a real GraphDef
        self.depth = node_depth(graph_def)
        self.nodes = {} if nodes is None else nodes
        #: id of a typing -> the number of data inputs with which a node of that typing
        #: passes, when the builder connected each to the top-level node it names with
        #: equal dtypes (or either unknown): its verdict passes and no edge check can fail
        self.passes: dict[int, int] = {}
        self.library = FunctionLibrary.of(graph_def) if library is None else library
        #: the findings in the bodies of called functions (see ``check_functions``)
        self.function_findings: list[Finding] | None = None
        #: function checked -> its body nodes' attrs as wire bytes (see ``check_function``)
        self.body_keys: dict[str, list] = {}
        self.memo: dict[tuple[str, tuple], _Verdict] = {}
        # id of the builder's typing of a node -> (it, the node's verdict)
        self.by_typed: dict[int, tuple[tuple, _Verdict]] = {}
        self.infos: dict = {}
        self.out_types: dict[str, list[int] | None] = {}   # None: unknown, or the node failed
        self.per_node: dict[str, Finding] = {}
        self.late: list[tuple[str, _Verdict]] = []
        # the edge checks, made as each node comes (a node's inputs from nodes not seen yet
        # wait in ``deferred``), keyed by the node's sequence number to restore the order
        # of one pass after all the nodes: (seq, finding); (seq, slot, loop back edge)
        self.seq = 0
        self.deferred: list[tuple] = []
        self.edge_findings: list[tuple[int, Finding]] = []
        self.back: list[tuple[int, int, tuple]] = []
        self.next_iterations: set[str] | None = None

    def _verdict(self, nd, info, op: str, attrs, signature: tuple) -> _Verdict:
        key = (op, _attrs_key(info, attrs, signature))
        verdict = self.memo.get(key)
        if verdict is None:
            verdict = self.memo[key] = _judge_attrs(nd, info)
        return verdict

    def check(self, nd, name: str, op: str, inputs: list[str], typed,
              typed_inputs: bool = False) -> None:
        """The checks of ``nd`` (``name``, ``op``, ``inputs``: its fields) that need no
        other node; ``typed``: the builder's typing of the node it made from ``nd`` (the op
        signature first), one object for the nodes whose op and declared attrs are equal,
        or None; ``typed_inputs``: the builder connected each data input to the top-level
        node it names and found the two dtypes equal (or either unknown): no edge check
        can fail."""
        out_types, per_node = self.out_types, self.per_node
        if name in out_types:
            return                        # a duplicate name: PL005's
        if typed is None and self._passed(name) is not _UNSEEN:
            return                        # ... of a node that passed unchecked
        infos = self.infos
        try:
            info = infos[op]
        except KeyError:
            info = infos[op] = None if op in self.library else self.opdb.op(op)
        if info is None:
            out_types[name] = None        # unknown op (PL105) or a function call: unchecked
            return
        if typed is None:
            nd = real_node(nd, self.depth) if self.depth else nd
            verdict = self._verdict(nd, info, op, nd.attr, info.signature(nd.attr))
        else:
            try:
                verdict = self.by_typed[id(typed)][1]
            except KeyError:
                nd = real_node(nd, self.depth) if self.depth else nd
                verdict = self._verdict(nd, info, op, nd.attr, typed[0])
                # (the entry keeps ``typed`` alive: its id is not reused)
                self.by_typed[id(typed)] = (typed, verdict)
                if verdict.kind is None and verdict.in_types is not None \
                        and verdict.late_kind is None:
                    self.passes[id(typed)] = len(verdict.in_types)
        if verdict.kind is not None:
            per_node[name] = Finding(name, verdict.kind, verdict.template.replace("\0", name))
            out_types[name] = None
            return
        in_types = verdict.in_types
        n_data = len(inputs)
        if n_data and inputs[-1][:1] == "^":
            n_data = sum(1 for r in inputs if r[:1] != "^")
        if in_types is None:
            counted = verdict.in_count
            if counted is None or counted[0] == n_data:
                out_types[name] = None    # not resolvable: be conservative
                return
            n_in, first = counted
        else:
            n_in, first = len(in_types), in_types
        if n_data != n_in:
            expected = ", ".join(dtype_string(t) for t in first[:MAX_LISTED_INPUTS])
            if n_in > MAX_LISTED_INPUTS:
                expected += f", ... ({n_in} in all)"
            per_node[name] = Finding(name, INPUT_COUNT,
                                     f"NodeDef expected inputs '{expected}' do not match {n_data} "
                                     f"inputs specified; {op_summary(op)}; NodeDef: node {name}")
            out_types[name] = None
            return
        out_types[name] = verdict.out_types
        if n_data and not typed_inputs:
            self._check_inputs(self.seq, name, op, in_types, inputs, 0, False)
        self.seq += 1
        if verdict.late_kind is not None:
            self.late.append((name, verdict))

    def _check_inputs(self, seq: int, name: str, op: str, in_types: list[int],
                      inputs: list[str], start: int, final: bool) -> None:
        """MakeEdge's dtype check of the data inputs of node ``name`` from slot ``start``:
        TF's first refusal per node. Not ``final``: an input from a node not seen yet
        defers the rest of the node."""
        out_types = self.out_types
        for slot in range(start, len(inputs)):
            ref = inputs[slot]
            if ref[:1] == "^":
                return
            if ":" in ref:
                src, src_slot = split_input(ref)
            else:
                src, src_slot = ref, 0
            src_types = out_types.get(src, _UNSEEN)
            if src_types is _UNSEEN:
                src_types = self._passed(src)
            if src_types is _UNSEEN and not final:
                self.deferred.append((seq, name, op, in_types, inputs, slot))
                return
            if src_types is None or src_types is _UNSEEN or not 0 <= src_slot < len(src_types):
                continue                  # failed or unknown source, or PL005's bad output
            expected, actual = in_types[slot], src_types[src_slot]
            if expected == actual or expected == _dt.base_type(actual):
                continue
            if op in NODEDEF_MERGE:
                if self.next_iterations is None:
                    self.next_iterations = {n.name for n in self.graph_def.node
                                            if n.op in NEXT_ITERATION}
                if src in self.next_iterations:
                    self.back.append((seq, slot, (name, slot, src, src_slot, expected, actual)))
                    continue
            self.edge_findings.append((seq, Finding(
                name, INPUT_TYPE, _edge_message(name, slot, src, src_slot, expected, actual),
                [src])))
            return

    def _passed(self, name: str):
        """The output dtypes of the top-level node ``name`` that passed unchecked (see
        ``passes``); else ``_UNSEEN``. (The builder's top-level nodes are those of no
        function and no call site.)"""
        node = self.nodes.get(name)
        if node is None or node.function or node.call_site:
            return _UNSEEN
        return node.output_dtypes

    def check_functions(self) -> None:
        """Check the bodies of the called functions now (the builder then lets the parsed
        bodies go before its last passes); ``result`` lists the findings."""
        self.function_findings = (_function_findings(self.graph_def, self.opdb, self.library,
                                                     self.body_keys)
                                  if self.library else [])

    def result(self) -> Validation:
        """The edge checks, then every finding in TensorFlow's order."""
        graph_def, opdb, library = self.graph_def, self.opdb, self.library
        out_types, per_node, late = self.out_types, self.per_node, self.late
        for deferred in self.deferred:
            self._check_inputs(*deferred, True)
        for _seq, finding in sorted(self.edge_findings, key=lambda x: x[0]):
            per_node[finding.node] = finding
        # loop back edges, typed last
        back = [edge for _seq, _slot, edge in sorted(self.back, key=lambda x: x[:2])]
        for name, verdict in late:
            if name not in per_node:
                per_node[name] = Finding(name, verdict.late_kind,
                                         verdict.late_template.replace("\0", name))
        ordered = tf_order(graph_def, per_node) if len(per_node) > 1 else list(per_node.values())
        if library:
            if self.function_findings is None:
                self.check_functions()
            ordered.extend(self.function_findings)
        for name, slot, src, src_slot, expected, actual in back:
            if name not in per_node:
                ordered.append(Finding(name, INPUT_TYPE,
                                       _edge_message(name, slot, src, src_slot, expected, actual), [src]))
        return Validation(ordered)


def _function_findings(graph_def, opdb, functions, keys: dict[str, list]) -> list[Finding]:
    """InstantiateFunction's refusals in the bodies of called functions (see
    function_validation); the finding is on the body node as the first call expands it.
    ``keys`` gets each function's body keys (see ``check_function``)."""
    calls: dict[str, str] = {}      # function -> the top-level node that first calls it
    for nd in graph_def.node:
        called = callee(nd, functions)
        if called is not None:
            calls.setdefault(called, nd.name)
    out = []
    typings: dict = {}      # (see check_function)

    def visit(fname: str) -> list[str]:
        """Check function ``fname``'s body; the functions it calls."""
        callees: list[str] = []
        keys[fname] = []
        for body_node, message in check_function(functions[fname], opdb, functions, typings,
                                                 keys[fname], callees):
            where = f"{calls[fname]}/{body_node}" if fname in calls else body_node
            out.append(Finding(where, FUNCTION_BODY,
                               f"{message} In node {body_node} (function '{fname}', "
                               f"instantiated when the graph is imported)"))
        return callees

    called_functions(graph_def, functions, visit)
    return out


def _edge_message(name, slot, src, src_slot, expected, actual) -> str:
    return (f"Input {slot} of node {name} was passed {dtype_string(actual)} from {src}:{src_slot} "
            f"incompatible with expected {dtype_string(expected)}.")


def _judge_attrs(nd, info) -> _Verdict:
    """ValidateNodeDef's attr checks and the node's dtypes; the node's name in messages
    is a NUL placeholder (the verdict is shared)."""
    op = nd.op
    attrs = nd.attr
    attr_defs = info.attr_defs
    present = 0
    for key in attrs:
        if key[:1] == "_":
            continue
        attr = attr_defs.get(key)
        if attr is None:
            continue                # TF logs and ignores attrs its OpDef lacks
        present += 1
        value = attrs[key]
        if value_case(value) == "placeholder":
            continue
        err = validate_attr_value(value, attr)
        if err:
            return _Verdict(ATTR_VALUE, f"{err}; NodeDef: node \0; {op_summary(op)}")
    if present < len(attr_defs):
        missing = [a for a in _required(info) if a not in attrs]
        if missing:
            missing = missing_order(op, missing)
            plural = "s" if len(missing) > 1 else ""
            return _Verdict(MISSING_ATTR, f"NodeDef missing attr{plural} "
                                          f"'{_QUOTE_SEP.join(missing)}' from {op_summary(op)}; "
                                          "NodeDef: node \0")
    _sig, in_types, out_types = info.typing(attrs)
    if in_types is None or out_types is None:
        err = info.count_error(attrs)
        return (_Verdict(ATTR_VALUE, err) if err else
                _Verdict(in_count=info.input_count(attrs, MAX_LISTED_INPUTS)))
    for attr in _shape_checked(info):
        if attr in attrs:
            value = attrs[attr]
            err = shape_error(value.shape) if value_case(value) == "shape" else None
            if err:
                return _Verdict(SHAPE, f"{err} for 'node \0 = {op}[..., {attr}="
                                       f"{shape_text(value.shape)}, ...]'")
    verdict = _Verdict(None, "", in_types, out_types)
    if OUTPUT_SHAPES in attrs:
        _check_output_shapes(attrs[OUTPUT_SHAPES], len(out_types), verdict)
    return verdict


_QUOTE_SEP = "', '"
_REQUIRED: dict[str, tuple[str, ...]] = {}


def _required(info) -> tuple[str, ...]:
    """The attrs of an op that have no default (AddDefaultsToNodeDef cannot add them)."""
    req = _REQUIRED.get(info.name)
    if req is None:
        req = _REQUIRED[info.name] = tuple(a.name for a in info.attr_defs.values()
                                           if not a.has_default)
    return req


_SHAPE_CHECKED: dict[str, tuple[str, ...]] = {}


def _shape_checked(info) -> tuple[str, ...]:
    """The shape attrs the op's shape function reads at import (ValidateShape), where a
    dimension below -1 fails: ``AttrDef.shape_checked``, probed with TF by gen_opdb."""
    attrs = _SHAPE_CHECKED.get(info.name)
    if attrs is None:
        attrs = _SHAPE_CHECKED[info.name] = tuple(a.name for a in info.attr_defs.values()
                                                  if a.shape_checked)
    return attrs


def _check_output_shapes(value, n_out: int, verdict: _Verdict) -> None:
    """GraphConstructor::ValidateShape's ``_output_shapes`` checks (after the edges)."""
    if attr_value_has_type(value, "list(shape)") is not None:
        return                      # TryGetNodeAttr fails quietly: no check
    shapes = value.list.shape
    if len(shapes) < n_out:
        verdict.late_kind = SHAPE
        verdict.late_template = (f"Node '\0' has {n_out} outputs but the {OUTPUT_SHAPES} "
                                 f"attribute specifies shapes for {len(shapes)} outputs")
        return
    for i in range(n_out):
        err = shape_error(shapes[i])
        if err:
            verdict.late_kind = SHAPE
            verdict.late_template = (f"Node '\0 has an invalid {OUTPUT_SHAPES} attribute "
                                     f"(shape #{i} error:'{err}'")
            return
