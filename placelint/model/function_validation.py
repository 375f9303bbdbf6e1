"""Function bodies as TensorFlow's importer checks them: ``InstantiateFunction``.

Importing a graph that calls a library function (``PartitionedCall``,
``StatefulPartitionedCall``, or the function's name as op) runs the call's shape function,
which instantiates the body (function.cc ``InstantiateNode``): for each body node, each
input arg of its op is typed from the node's attrs (``ArgNumType``: ``type attr not
found: T``, ``number attr not found: N``, ``type list attr not found: T``) and matched,
element by element and exactly (no ref conversion), against the body inputs it consumes
(``input features[0] expected type string != float, the type of a[0]``); running out of
inputs is ``Attempt to access beyond input size: 1 >= 1``. The error names the body
node: ``... In {{node id}}``.

Conservative by design (no false refusals): only functions called from the top level are
checked, body nodes whose attrs hold a placeholder (``$T``, set by the call) or whose op
placelint does not know are skipped, and a node's input check stops at the first input
whose dtype cannot be told (an argument typed by the call's attrs, another function's
output, a name that does not resolve).
"""

from __future__ import annotations

from ..dtypes import base_type
from ..loaders.library import FunctionLibrary
from ..opdb.arg_types import MAX_ARG_COUNT
from ..proto_lite import real_node
from .attr_validation import dtype_string, value_case
from .attr_wire import attrs_key
from .ops import PARTITIONED_CALL

class _Unknown(Exception):
    """A dtype placelint cannot tell: stop checking (conservative)."""


def called_functions(graph_def, library, visit=None) -> list[str]:
    """Library functions called from the top level, and the functions they call, in
    order of first call (``library``: the graph's ``FunctionLibrary``). ``visit(name)``,
    when given, is called on each function in that order and returns the functions its
    body calls, in body order (``check_function``'s ``callees``): the bodies are then
    walked once, for both."""
    if not library:
        return []
    order: list[str] = []
    todo = [callee(nd, library) for nd in graph_def.node]
    todo = [f for f in reversed(todo) if f]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        order.append(name)
        called = (visit(name) if visit is not None
                  else [f for f in (callee(nd, library) for nd in library[name].node_def) if f])
        todo.extend(reversed(called))
    return order


def callee(nd, library, op: str | None = None) -> str | None:
    """The library function NodeDef ``nd`` calls (by name or through a
    (Stateful)PartitionedCall), else None (``op``: ``nd.op`` when the caller read it)."""
    if op is None:
        op = nd.op      # (read once: each read of a protobuf field makes a new string)
    if op in library:
        return op
    if op in PARTITIONED_CALL:
        attrs = real_node(nd).attr     # (a lite node's attrs: see ``proto_lite``)
        if "f" in attrs:
            name = attrs["f"].func.name
            return name if name in library else None
    return None


def check_function(fdef, opdb, library, typings: dict | None = None,
                   keys: list | None = None, callees: list | None = None
                   ) -> list[tuple[str, str]]:
    """(body node, TensorFlow's message) for each body node InstantiateNode refuses
    (``typings``: ``_NodeTypes`` by (op, ``OpInfo.signature`` of the attrs) and by (op,
    the attrs' wire bytes), shared by the checks of one library's functions: most body
    nodes repeat a few ops with a few dtypes; ``keys``, when given, gets per body node
    its attrs' wire bytes, one object per distinct value, or None where not read: the
    graph builder keys its records on them too; ``callees``, when given, gets the library
    functions the body nodes call, as ``callee`` reads them, in body order)."""
    sig = fdef.signature
    arg_types: dict[str, list[int] | None] = {a.name: ([a.type] if a.type else None)
                                              for a in sig.input_arg}
    if typings is None:
        typings = {}
    # (``callee`` and ``opdb.op``, inline: a TF2 SavedModel's library has ~3/4 of its
    # nodes; the names' table where ``library`` has one, whose ``in`` is a dict's)
    names = library.table() if isinstance(library, FunctionLibrary) else library
    infos = opdb.op
    # the body nodes that are checked, in body order: an op placelint knows (not a call),
    # no attr a placeholder set by the call; ``known``: by name (the last node of a name),
    # such a node's ``_NodeTypes`` or None, to type the inputs that read it
    checked = []
    known: dict[str, _NodeTypes | None] = {}
    for nd in fdef.node_def:
        op, name = nd.op, nd.name
        if op in names:
            if callees is not None:
                callees.append(op)
            if keys is not None:
                keys.append(None)
            known[name] = None
            continue
        if callees is not None and op in PARTITIONED_CALL and "f" in nd.attr:
            called = nd.attr["f"].func.name
            if called in names:
                callees.append(called)
        info = infos(op)
        if info is None:
            if keys is not None:
                keys.append(None)
            known[name] = None
            continue
        inputs = nd.input[:]
        # the attrs as wire bytes, the memo's first key: equal bytes, equal answer (a
        # library repeats a few thousand sets of attrs over its 10^5-10^6 body nodes)
        wire = (op, attrs_key(nd, name, op, nd.device, inputs))
        known_wire = typings.get(wire)
        if known_wire is None:
            attrs = nd.attr
            if _has_placeholder(attrs):
                types = _PLACEHOLDER
            else:
                key = (op, info.signature(attrs))
                types = typings.get(key)
                if types is None:
                    types = typings[key] = _NodeTypes(info, attrs)
            known_wire = typings[wire] = (types, wire[1])
        types = known_wire[0]
        if keys is not None:
            keys.append(known_wire[1])
        if types is _PLACEHOLDER:
            known[name] = None
        else:
            checked.append((name, inputs, types))
            known[name] = types
    # each input's dtypes by its name (``_item_types``), read once per function
    items: dict[str, list[int] | None] = {}
    found = []
    for name, inputs, types in checked:
        flat = types.flat
        if flat is not None and len(inputs) >= len(flat):
            # the usual case, decided in one pass: each input one dtype, the expected one
            # (else, or a control input among them, ``_check_node`` reads the node)
            for ref, dtype in zip(inputs, flat):
                item = items.get(ref, _UNREAD)
                if item is _UNREAD:
                    item = items[ref] = (None if ref[:1] == "^"
                                         else _item_types(ref, arg_types, known))
                if item is None or len(item) != 1 or item[0] != dtype:
                    break
            else:
                continue
        try:
            err = _check_node(name, inputs, types, arg_types, known, items)
        except _Unknown:
            continue
        if err:
            found.append((name, err))
    return found


#: (an input not read yet)
_UNREAD = object()


def _has_placeholder(attrs) -> bool:
    for key in attrs:
        if value_case(attrs[key]) == "placeholder":
            return True
    return False


#: (a body node whose attrs hold a placeholder: not checked)
_PLACEHOLDER = object()


class _NodeTypes:
    """What checking a body node of an op with some attrs reads, a function of the op and
    the values of its attrs that type args (``OpInfo.signature``): per input arg its
    name and ``_arg_num_type``'s answer (its dtypes, the message of a missing attr, or
    ``_UNKNOWN``), and (output arg -> index range, output dtypes) or None."""

    __slots__ = ("inputs", "flat", "outputs")

    def __init__(self, info, attrs):
        inputs = []
        for arg in info.input_args:
            try:
                inputs.append((arg.name, _arg_num_type(arg, attrs, info)))
            except _Missing as exc:
                inputs.append((arg.name, str(exc)))
            except _Unknown:
                inputs.append((arg.name, _UNKNOWN))
        self.inputs = inputs
        #: every input's dtype in order, when each arg's are known (else None)
        self.flat = (None if any(d.__class__ is not list for _, d in inputs)
                     else tuple(t for _, d in inputs for t in d))
        ranges = info.output_ranges(attrs)
        out_types = info.output_types(attrs)
        self.outputs = (None if ranges is None or out_types is None
                        else (ranges, [base_type(t) for t in out_types]))


_UNKNOWN = object()


def _arg_num_type(arg, attrs, info) -> list[int]:
    """function.cc ArgNumType; a missing attr with an OpDef default counts as that
    default (whether instantiation adds defaults or not, no false refusal)."""
    def get(name, field):
        if name in attrs:
            value = attrs[name]
            return list(value.list.type) if field == "list" else getattr(value, field)
        default = info.attr_defs.get(name)
        if default is not None and default.has_default:
            if not default.default_kept:
                raise _Unknown
            return default.default
        return None

    if arg.type_list_attr:
        types = get(arg.type_list_attr, "list")
        if types is None:
            raise _Missing(f"type list attr not found: {arg.type_list_attr}")
        return [int(t) for t in types]
    num = 1
    if arg.number_attr:
        num = get(arg.number_attr, "i")
        if num is None:
            raise _Missing(f"number attr not found: {arg.number_attr}")
        if num > MAX_ARG_COUNT:
            raise _Unknown      # (TF refuses over int32; a list that long is not made)
    if arg.type:
        dtype = arg.type
    elif not arg.type_attr:
        dtype = 0
    else:
        dtype = get(arg.type_attr, "type")
        if dtype is None:
            raise _Missing(f"type attr not found: {arg.type_attr}")
    return [int(dtype)] * max(int(num), 0)


class _Missing(Exception):
    pass


def _check_node(name: str, inputs: list[str], types: _NodeTypes, arg_types, known, items
                ) -> str | None:
    """Body node ``name``'s refusal (``inputs``: its inputs as written), else None (the
    usual case, each input one dtype and the expected one, is ``check_function``'s)."""
    inputs = [r for r in inputs if r[:1] != "^"]
    index = 0
    for arg_name, dtypes in types.inputs:
        if dtypes.__class__ is str:
            return dtypes
        if dtypes is _UNKNOWN:
            raise _Unknown
        j = 0
        while j < len(dtypes):
            if index >= len(inputs):
                return f"Attempt to access beyond input size: {index} >= {len(inputs)}"
            name = inputs[index]
            try:
                item = items[name]
            except KeyError:
                item = items[name] = _item_types(name, arg_types, known)
            if item is None:
                raise _Unknown
            if len(item) > len(dtypes) - j:
                return f"Input {name} too long for {arg_name}"
            for k, actual in enumerate(item):
                if actual != dtypes[j]:
                    return (f"input {arg_name}[{j}] expected type {dtype_string(dtypes[j])} != "
                            f"{dtype_string(actual)}, the type of {name}[{k}]")
                j += 1
            index += 1
    return None


def _item_types(name: str, arg_types, known) -> list[int] | None:
    """The dtypes a body input names: a function argument, or ``node:out_arg:idx`` of a
    ``known`` body node; None when they cannot be told."""
    if name in arg_types:
        return arg_types[name]
    parts = name.split(":")
    if len(parts) != 3 or not (parts[2].isascii() and parts[2].isdigit()):
        return None
    types = known.get(parts[0])
    typed = None if types is None else types.outputs
    if typed is None or parts[1] not in typed[0]:
        return None
    start, end = typed[0][parts[1]]
    k = start + int(parts[2])
    return [typed[1][k]] if k < end else None
