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
from .attr_validation import dtype_string, value_case
from .ops import PARTITIONED_CALL

class _Unknown(Exception):
    """A dtype placelint cannot tell: stop checking (conservative)."""


def called_functions(graph_def, library) -> list[str]:
    """Library functions called from the top level, and the functions they call, in
    order of first call (``library``: the graph's ``FunctionLibrary``)."""
    if not library:
        return []
    order: list[str] = []
    todo = [_callee(nd, library) for nd in graph_def.node]
    todo = [f for f in reversed(todo) if f]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        order.append(name)
        todo.extend(reversed([f for f in (_callee(nd, library)
                                          for nd in library[name].node_def) if f]))
    return order


def _callee(nd, library) -> str | None:
    if nd.op in library:
        return nd.op
    if nd.op in PARTITIONED_CALL and "f" in nd.attr:
        name = nd.attr["f"].func.name
        return name if name in library else None
    return None


def check_function(fdef, opdb, library) -> list[tuple[str, str]]:
    """(body node, TensorFlow's message) for each body node InstantiateNode refuses."""
    sig = fdef.signature
    arg_types: dict[str, list[int] | None] = {a.name: ([a.type] if a.type else None)
                                              for a in sig.input_arg}
    # the body nodes that are checked, in body order: an op placelint knows (not a call),
    # no attr a placeholder set by the call; ``known``: by name (the last node of a name),
    # such a node or None, to type the inputs that read it
    checked = []
    known: dict[str, tuple | None] = {}
    for nd in fdef.node_def:
        info = opdb.op(nd.op) if nd.op not in library else None
        entry = None if info is None or _has_placeholder(nd.attr) else (nd, info)
        known[nd.name] = entry
        if entry is not None:
            checked.append(entry)
    outputs: dict[str, tuple | None] = {}
    found = []
    for nd, info in checked:
        try:
            err = _check_node(nd, info, arg_types, known, outputs)
        except _Unknown:
            continue
        if err:
            found.append((nd.name, err))
    return found


def _has_placeholder(attrs) -> bool:
    for key in attrs:
        if value_case(attrs[key]) == "placeholder":
            return True
    return False


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


def _check_node(nd, info, arg_types, known, outputs) -> str | None:
    attrs = nd.attr
    inputs = [r for r in nd.input if not r.startswith("^")]
    index = 0
    for arg in info.input_args:
        try:
            dtypes = _arg_num_type(arg, attrs, info)
        except _Missing as exc:
            return str(exc)
        j = 0
        while j < len(dtypes):
            if index >= len(inputs):
                return f"Attempt to access beyond input size: {index} >= {len(inputs)}"
            name = inputs[index]
            item = _item_types(name, arg_types, known, outputs)
            if len(item) > len(dtypes) - j:
                return f"Input {name} too long for {arg.name}"
            for k, actual in enumerate(item):
                if actual != dtypes[j]:
                    return (f"input {arg.name}[{j}] expected type {dtype_string(dtypes[j])} != "
                            f"{dtype_string(actual)}, the type of {name}[{k}]")
                j += 1
            index += 1
    return None


def _item_types(name: str, arg_types, known, outputs) -> list[int]:
    """The dtypes a body input names: a function argument, or ``node:out_arg:idx`` of a
    ``known`` body node (its output ranges and types kept in ``outputs``)."""
    if name in arg_types:
        types = arg_types[name]
        if types is None:
            raise _Unknown
        return types
    parts = name.split(":")
    if len(parts) != 3 or not parts[2].isdigit():
        raise _Unknown
    src = parts[0]
    try:
        typed = outputs[src]
    except KeyError:
        typed = outputs[src] = _output_typing(known.get(src))
    if typed is None or parts[1] not in typed[0]:
        raise _Unknown
    start, end = typed[0][parts[1]]
    k = start + int(parts[2])
    if k >= end:
        raise _Unknown
    return [base_type(typed[1][k])]


def _output_typing(entry) -> tuple[dict, list[int]] | None:
    """(output arg -> index range, output dtypes) of a known body node; None if unknown."""
    if entry is None:
        return None
    nd, info = entry
    ranges = info.output_ranges(nd.attr)
    types = info.output_types(nd.attr)
    return None if ranges is None or types is None else (ranges, types)
