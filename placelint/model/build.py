"""GraphDef (+ function library) -> ``Graph``.

One pass over the GraphDef's nodes: each becomes a ``Node`` (its op, device, attrs, and
its dtypes from the op database: ``attr_records.py``), each input an ``Edge`` typed from the
destination's input dtypes (else its source's output dtypes). Function calls and functional control flow are
expanded into the graph as they are met (``expand.py``); the edges that cannot be made as
the inputs are read (forward references, call outputs redirected to a body's ``_Retval``)
are made in ``finish``, which also reports the inputs TF would refuse (PL005) and runs the
structural checks (``validate.py``) and TF's import-time NodeDef validation
(``nodedef_validation.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..checks.pl002_unsupported_format import UnsupportedFormat
from ..checks.pl005_invalid_graph import InvalidGraph
from ..diagnostics import Diagnostic
from ..dtypes import DT_RESOURCE, REF_OFFSET
from ..loaders.library import FunctionLibrary
from ..opdb import get_opdb
from ..proto import AttrValue, GraphDef, NodeDef
from ..proto_lite import node_depth
from .attr_records import AttrRecords
from .input_diagnostics import input_diagnostics
from .devices import DeviceSpec, parse_device
from .expand import (CALL_ARG_ATTR, CONTROL_FLOW_FUNCS, FunctionExpansion, Reexpanded,
                     compilation_mark)
from .graph import Edge, Graph, Node
from .ops import PARTITIONED_CALL
from .nodedef_validation import NodeDefValidator
from .tensor_names import parse_input, top_resolve as _top_resolve
from .top_nodes import TopNodes
from .validate import validate

__all__ = ["BuildResult", "CALL_ARG_ATTR", "build_graph", "parse_input"]

#: Expansion stops (with a diagnostic) once function bodies have added this many nodes to
#: the GraphDef's own: a library whose functions call each other many times over can blow
#: up exponentially (~17 s per million nodes). The GraphDef's own nodes are never cut: the
#: 2 GiB protobuf limit bounds them.
MAX_EXPANDED_NODES = 1_000_000


@dataclass
class BuildResult:
    graph: Graph
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: call outputs replaced by expansion: (call, slot) -> (_Retval node, 0)
    alias: dict[tuple[str, int], tuple[str, int]] = field(default_factory=dict)
    #: expanded call -> the NoOp its control consumers wait on (running it as a target)
    control_alias: dict[str, str] = field(default_factory=dict)


class _Builder(TopNodes, FunctionExpansion):
    def __init__(self, graph_def: GraphDef, name: str, library: FunctionLibrary,
                 early_alias: bool = True, fast: bool = True):
        self.graph = Graph(name)
        #: the usual nodes are added by the loops of ``add_top_level`` and ``add_body``
        #: (else each through ``add``: tests compare the two)
        self.fast = fast
        #: how deep the nodes of a ``proto_lite`` GraphDef sit in their file; 0: real
        self.lite_depth = node_depth(graph_def)
        #: an input read through the aliases of the calls expanded so far becomes an edge at
        #: once (see ``_add_inputs``); off for a graph that expands two calls of one name,
        #: whose second expansion redirects what the first one's aliases said
        self.early_alias = early_alias
        self.diags: list[Diagnostic] = []
        self.library = library
        self.opdb = get_opdb()
        # (node name, slot) -> real (node, slot) for call outputs replaced by _Retval nodes
        self.alias: dict[tuple[str, int], tuple[str, int]] = {}
        self.control_alias: dict[str, str] = {}
        # pending edges: (src, slot, dst, dst_slot, original text) resolved after expansion
        self.pending: list[tuple[str, int, str, int, str]] = []
        # the nodes a pending edge leaves (as named, and as resolved where an alias already
        # redirects it) / enters: their later edges wait too (see ``_add_inputs``)
        self.waiting_src: set[str] = set()
        self.waiting_dst: set[str] = set()
        # node -> its input dtypes (as typed when added), for nodes with a pending edge
        self._pending_types: dict[str, list[int] | None] = {}
        self.budget_exhausted = False
        # the graph's size at which expansion stops: room for every top-level node
        self.node_budget = len(graph_def.node) + MAX_EXPANDED_NODES
        self.depth_exceeded = False
        self._duplicates: set[str] = set()
        # device string -> (one copy of it, parse_device(device)): models repeat a handful
        self._devices: dict[str, tuple[str, DeviceSpec | None]] = {}
        # destination -> its data edges reading an output their source lacks
        self._bad_inputs: dict[str, list[Edge]] = {}
        # calls (and functional control-flow nodes) whose bodies are soft-placed
        self._soft_calls: set[str] = set()
        # function -> what expansion reads of it (see ``_function_parts``)
        self._function_bodies: dict[str, tuple] = {}
        # id of a NodeDef that is not top level -> (it, its record)
        self._nd_records: dict[int, tuple] = {}
        # (op, dtype, index, call arg?) -> the record of a node the builder makes (see
        # ``_made_record``)
        self._made_records: dict[tuple, tuple] = {}
        # op -> its output args' starts, for an op whose attrs do not change them (each
        # arg one output) and that calls no function by its name; False: they depend on
        # the attrs
        self._out_starts: dict[str, dict[str, int] | bool] = {}
        # (op, the attrs' wire bytes, or the id of a record's attrs) -> (their output arg
        # ranges, the attrs for an id)
        self._out_ranges: dict[tuple, tuple] = {}
        # op -> what ``add`` does by op, one look-up per node: (one copy of the op string,
        # whether it may call a function, whether it is functional control flow, {a
        # NodeDef's attrs as wire bytes -> (its node's attrs, their typing)})
        self._op_facts: dict[str, tuple[str, bool, bool, dict[bytes, tuple]]] = {}
        # op -> (its string, its records) for the ops ``add_top_level`` adds itself: those
        # that call no function and are not functional control flow
        self._plain: dict[str, tuple[str, dict[bytes, tuple]]] = {}
        # each node's attrs and typing, one per distinct set of attrs
        self.attr_records = AttrRecords(self.opdb, self.lite_depth)
        #: function -> its body nodes' attrs as wire bytes where the check of the called
        #: bodies read them (``check_function``'s ``keys``), taken by ``_function_parts``
        self.body_keys: dict[str, list] = {}
        #: the typing of the node ``add`` made last and ``_add_inputs``' answer for it (for
        #: the import-time validation)
        self.last: tuple = (None, -1)

    # -- nodes -------------------------------------------------------------------
    def add_nodedef(self, nd: NodeDef, name: str, device: str, function: str, call_site: str,
                    loop: str, resolve, stack: tuple[str, ...]):
        self.add(nd, name, nd.op, device, nd.input[:], function, call_site, loop, resolve, stack)

    def add(self, nd: NodeDef, name: str, op: str, device: str, inputs: list[str],
            function: str, call_site: str, loop: str, resolve, stack: tuple[str, ...]):
        """Add ``nd`` as ``name`` (``op``, ``device``, ``inputs``: its fields as the caller
        read them: each protobuf field access makes a new Python object). Returns the
        ``Node`` made (None: a duplicate, an expanded call, or past the budget)."""
        nodes = self.graph.nodes
        if name in nodes:
            if name in self._duplicates:
                return
            self._duplicates.add(name)
            self.diags.append(InvalidGraph.diag(
                f"duplicate node name '{name}': only the first node of that "
                f"name is analysed (TensorFlow: \"Node '{name}' is not "
                "unique\")", node=name))
            return
        if len(nodes) >= self.node_budget:
            if not self.budget_exhausted:
                self.budget_exhausted = True
                self.diags.append(UnsupportedFormat.diag(
                    f"function expansion stopped at {self.node_budget} nodes (the graph's "
                    f"{self.node_budget - MAX_EXPANDED_NODES} and {MAX_EXPANDED_NODES} from "
                    "function bodies); the rest of the model is not analysed", node=name))
            return
        op, calls, control_flow, records = self._op_facts.get(op) or self._facts(op)
        if not name:
            # (PL005, see ``finish``) an empty call site means the top level: a call or
            # control-flow node without a name is left unexpanded, as an opaque node
            calls = control_flow = False
        if calls and compilation_mark(nd.attr) is None:
            fname = self._called_function(nd)
            if self._expand_call(nd, name, fname, device, function, call_site, loop, resolve, stack):
                return None
        try:
            device, spec = self._devices[device]
        except KeyError:
            spec = parse_device(device)
            self._devices[device] = (device, spec)
        if call_site:
            # a function body's NodeDef (or a control-flow branch call) is added once per
            # call: its record is looked up once (``nd`` is kept alive, so its id is not
            # reused)
            known = self._nd_records.get(id(nd))
            record = known[1] if known is not None else self.nd_record(nd, nd.name, op, nd.device,
                                                                       inputs)
        else:
            record = self.attr_records.record(nd, name, op, device, inputs, records)
        attrs, typed = record
        signature, types, out_types, shapes = typed
        # every field positionally: no default factories to run
        node = Node(name, op, device, spec, attrs, [], [], out_types, shapes, function, call_site,
                    loop, None, None, signature,
                    bool(call_site) and call_site in self._soft_calls)
        nodes[name] = node
        n_data = self._add_inputs(node, inputs, resolve, types) if inputs else 0
        if control_flow:
            self._attach_bodies(nd, node, device, function, loop, resolve, stack)
        # (after the bodies, whose nodes set it too: it is this node's)
        self.last = (typed, n_data)
        return node

    def _facts(self, op: str) -> tuple[str, bool, bool, dict[bytes, tuple]]:
        """``_op_facts[op]``, made on its first use."""
        facts = self._op_facts.get(op)
        if facts is None:
            facts = self._op_facts[op] = (op, op in PARTITIONED_CALL or op in self.library,
                                          op in CONTROL_FLOW_FUNCS, {})
            if not (facts[1] or facts[2]):
                self._plain[op] = (op, facts[3])
        return facts

    def nd_record(self, nd: NodeDef, name: str, op: str, device: str, inputs: list[str],
                  key: bytes | None = None) -> tuple[dict[str, AttrValue], tuple]:
        """``AttrRecords.record`` of a NodeDef that is not top level (``key``: its attrs'
        wire bytes when known), kept for its next calls."""
        records = self._facts(op)[3]
        if key is None:
            record = self.attr_records.record(nd, name, op, device, inputs, records)
        else:
            record = records.get(key) or self.attr_records.miss(op, key, records)
        self._nd_records[id(nd)] = (nd, record)
        return record

    def _add_inputs(self, node: Node, inputs, resolve, types: list[int] | None = None,
                    slot: int = 0, seen_control: int = 0) -> int:
        """Connect ``node`` to its ``inputs`` (``types``: its input dtypes; ``slot``: the
        first one's data slot, and ``seen_control`` 1 after a control input: for the rest
        of a node's inputs). Returns the number of data inputs when each became an edge
        from a top-level node at once, with a dtype compatible with its source's output (or
        either unknown): then the import-time validation has nothing to check on them;
        else -1."""
        pending, name = self.pending, node.name
        waiting_src, waiting_dst = self.waiting_src, self.waiting_dst
        nodes, alias, control_alias = self.graph.nodes, self.alias, self.control_alias
        connect = self._connect
        aliased, early = bool(alias or control_alias), self.early_alias
        top_level = resolve is _top_resolve
        clean = True
        for ref in inputs:
            if not top_level or not ref:
                src, src_slot, text = resolve(ref)
            elif ref[0] == "^":
                if ":" not in ref and len(ref) > 1:     # _top_resolve's usual control case
                    src, src_slot, text = ref[1:], -1, ref
                else:
                    src, src_slot, text = resolve(ref)
            elif ":" not in ref:                        # ... and its usual data cases
                src, src_slot, text = ref, 0, ref
            else:
                src, _, index = ref.rpartition(":")
                if src and index.isdigit() and index.isascii() and len(index) < 10:
                    src_slot, text = int(index), ref
                else:
                    src, src_slot, text = resolve(ref)
            real, real_slot = src, src_slot     # (the source as ``finish`` resolves it)
            if src_slot == -1:
                seen_control = seen_control or 1
                dst_slot = -1
                if aliased:
                    real = control_alias.get(src, src)
            else:
                if seen_control == 1:
                    seen_control = 2   # once per node
                    self.diags.append(InvalidGraph.diag(
                        f"node '{node.name}' lists data input '{text}' after "
                        f"a control input (TensorFlow: \"Node '{node.name}': "
                        "Control dependencies must come after regular "
                        "dependencies\")", node=node.name))
                dst_slot = slot
                slot += 1
                if src_slot < 0:
                    real = None     # (unreadable: reported by ``finish``)
                elif aliased:
                    while (real, real_slot) in alias:
                        real, real_slot = alias[(real, real_slot)]
            # The edge is made now when ``finish`` would make exactly it, in the same place
            # of its two nodes' edge lists: no pending edge leaves its source or enters its
            # destination, and its source exists (and then can no longer become an expanded
            # call: a call is expanded only under a name not yet in the graph), read through
            # the aliases of the calls expanded so far (a call's output -> its _Retval, a
            # control input -> its exit NoOp: ~9.7k edges of a TF2 SavedModel at 10^5
            # nodes, and the later edges of their destinations, which would wait behind
            # them). Otherwise it waits for ``finish``. An edge made here goes from an older
            # node to the newest one: forward (see finish).
            source = (nodes.get(real) if real is not None and real not in waiting_src
                      and name not in waiting_dst
                      and (real is src or early and src not in waiting_src) else None)
            if source is not None and source is not node:     # (a self-loop waits too)
                if not connect(source, real_slot, node, dst_slot, types) or source.function:
                    clean = False
            else:
                pending.append((src, src_slot, name, dst_slot, text))
                waiting_src.add(src)
                waiting_dst.add(name)
                if real is not src and real is not None:
                    waiting_src.add(real)
                if dst_slot >= 0:
                    self._pending_types[name] = types
                    clean = False
        return slot if clean else -1

    def _connect(self, source: Node, src_slot: int, dest: Node, dst_slot: int,
                 types: list[int] | None) -> bool:
        """The one way an edge is made: added to its two nodes and, for data, typed from
        the destination's input dtypes ``types`` (else its source's output dtypes); its
        ``ref`` is true for a ref or ``DT_RESOURCE`` dtype. Returns False for a data edge
        whose two dtypes are known and not compatible (as the import-time validation
        checks them), or whose source lacks the output."""
        # the source's own name string (equal to the input's): later look-ups of
        # ``e.src`` in ``graph.nodes`` then match the key by identity
        if src_slot < 0:
            edge = Edge(source.name, src_slot, dest.name, dst_slot)
            agree = True
        else:
            src_types = source.output_dtypes
            known = types is not None and dst_slot < len(types)
            if src_types is not None and src_slot < len(src_types):
                actual = src_types[src_slot]
                dtype = types[dst_slot] if known else actual
                # TypesCompatible: equal, or a ref output feeding an input of its base type
                agree = dtype == actual or (actual > REF_OFFSET and dtype == actual - REF_OFFSET)
                lacking = False
            else:
                dtype = types[dst_slot] if known else None
                lacking = src_types is not None         # the source lacks the output
                agree = not lacking
            edge = Edge(source.name, src_slot, dest.name, dst_slot, dtype,
                        dtype is not None and (dtype == DT_RESOURCE or dtype > REF_OFFSET))
            if lacking and source.op != "_Arg":
                self._bad_inputs.setdefault(dest.name, []).append(edge)
        source.out_edges.append(edge)
        dest.in_edges.append(edge)
        return agree

    # -- edges -------------------------------------------------------------------
    def finish(self) -> BuildResult:
        nodes = self.graph.nodes
        connect, pending_types = self._connect, self._pending_types
        alias, control_alias = self.alias, self.control_alias
        # per destination node: inputs that name no node / that cannot be parsed (a node
        # with a huge fan-in gets one diagnostic, listing a bounded number of names)
        missing: dict[str, list[str]] = {}
        unreadable: dict[str, list[str]] = {}
        # The edges made as the inputs were read point forward (see _add_inputs): only
        # pending ones may not. Their spans (positions) let validation look for a cycle
        # only where one can be (an expanded TF2 body lists a NoOp after the nodes it feeds).
        # The pending edges are consumed as they are made (at 10^6 nodes of a TF2 model
        # the build's end is the check's peak memory, and nine edges in ten were pending)
        self.graph.changed()    # (the nodes are all in: the positions made here stay valid)
        pending, backward = self.pending, []
        index = self.graph.positions() if pending else {}
        pending.reverse()
        while pending:
            src, slot, dst, dst_slot, text = pending.pop()
            if slot == -1:
                src = control_alias.get(src, src)
            elif alias:     # empty unless functions were expanded
                while (src, slot) in alias:
                    src, slot = alias[(src, slot)]
            if dst not in nodes:
                continue
            if slot == -2:
                unreadable.setdefault(dst, []).append(text)
            elif src not in nodes:
                missing.setdefault(dst, []).append(text)
            else:
                connect(nodes[src], slot, nodes[dst], dst_slot, pending_types.get(dst))
                if index[src] >= index[dst]:
                    backward.append((index[dst], index[src]))
        self.diags.extend(input_diagnostics(self.graph, unreadable, missing,
                                            self._bad_inputs.values()))
        if "" in nodes:
            self.diags.append(InvalidGraph.diag(
                f"a node ({nodes[''].op or 'no op'}) has no name (TensorFlow: \"Node '': Node "
                "name contains invalid characters\")", node=""))
        if not backward:
            self.graph.note_edges_point_forward()   # (validation then looks for no cycle)
        if not self.attr_records.class_seen:        # (every node's attrs are its records')
            self.graph.note_no_class_attrs()
        # (every op a node was added with went through ``add``, or is _Arg, _Retval, NoOp)
        self.diags.extend(validate(self.graph, self._op_facts.keys() | {"_Arg", "_Retval", "NoOp"},
                                   backward or None))
        return BuildResult(self.graph, self.diags, self.alias, self.control_alias)


def build_graph(graph_def: GraphDef, *, name: str = "", library=None) -> BuildResult:
    """Build the analysed graph from a GraphDef, expanding its function library (``library``:
    its ``FunctionLibrary`` when read apart from ``graph_def``)."""
    library = FunctionLibrary.of(graph_def) if library is None else library
    try:
        return _build(graph_def, name, library, True)
    except Reexpanded:      # (a malformed graph: TF refuses its duplicate names anyway)
        return _build(graph_def, name, library, False)


def _build(graph_def: GraphDef, name: str, library: FunctionLibrary, early_alias: bool,
           fast: bool = True) -> BuildResult:
    """``build_graph`` (``early_alias``, ``fast``: see ``_Builder``)."""
    b = _Builder(graph_def, name, library, early_alias, fast)
    validator = NodeDefValidator(graph_def, b.opdb, b.graph.nodes, b.library)
    validator.check_functions()     # the called bodies, while the graph is still empty
    b.body_keys = validator.body_keys
    b.library.release()     # (parsed again as the expansion reads them)
    b.add_top_level(graph_def.node, validator)
    b.release_bodies()     # the function bodies are read no more: their messages go
    b.body_keys.clear()
    result = b.finish()
    checked = validator.result()
    if checked.findings:
        result.graph.invalid_nodes = checked.invalid_nodes
        result.diagnostics.extend(checked.diagnostics())
    return result
