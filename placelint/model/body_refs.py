"""A called function's body inputs, read as what they name.

A FunctionDef's body node writes its inputs as ``arg`` (an input arg), ``node:out_arg:idx``
(output ``idx`` of the output arg ``out_arg`` of a body node), ``^node`` (control), or
``node`` (output 0). What an input names is a function of the body alone, so it is read
once per function (``_function_resolver``'s ``resolved``) and each call of the function
only adds its prefix to the body node's name; ``node:out_arg:idx`` needs where the output
arg starts among the node's outputs, which is the op's alone for most ops (one output
per arg) and otherwise depends on the node's attrs (a call's ``Tout``, a ``RestoreV2``'s
``dtypes``).
"""

from __future__ import annotations

from .ops import PARTITIONED_CALL
from .tensor_names import slot_index


class BodyRefs:
    """Mixed into the graph builder (with ``FunctionExpansion``)."""

    def _function_resolver(self, prefix: str, arg_nodes: dict[str, str], by_name: dict,
                           resolved: dict):
        """Resolve a body input of the call whose body nodes are named ``prefix<node>``
        (``arg_nodes``: input arg -> its ``_Arg`` node). What an input names is a function
        of the body alone (``resolved``: input -> (an arg?, arg or body node, slot), shared
        by the function's calls): each call only adds its prefix."""
        body_ref = self._body_ref

        def resolve(ref: str):
            known = resolved.get(ref)
            if known is None:
                known = resolved[ref] = body_ref(ref, arg_nodes, by_name)
            is_arg, local, slot = known
            return (arg_nodes[local] if is_arg else prefix + local), slot, ref

        return resolve

    def _body_ref(self, ref: str, args, by_name: dict) -> tuple[bool, str, int]:
        """(an input arg?, the arg or body node, output slot: -1 control, -2 unreadable)
        for body input ``ref`` (``args``: the input args; ``by_name``: the body nodes).
        ``node:out_arg:idx`` counts from the start of the output arg of that body node."""
        if ref[:1] == "^":
            return False, ref[1:], -1
        parts = ref.split(":")
        n = len(parts)
        if n == 1 or (n == 2 and parts[0] in args):
            return parts[0] in args, parts[0], 0
        if n == 3 and slot_index(parts[2]) is not None:
            src, out_arg, idx = parts
            body = by_name.get(src)
            if body is None:
                return False, src, -2
            starts = self._out_starts.get(body[2])
            start = (starts.get(out_arg) if starts else self._find_output_arg_start(body, out_arg))
            if start is None:
                return False, src, -2
            return False, src, start + int(idx)
        return False, ref, -2

    def _find_output_arg_start(self, body: tuple, out_arg: str):
        """Where output arg ``out_arg`` of a body node (``body``: its ``_function_parts``
        tuple) starts among its outputs (None: it has no such arg), for an op whose starts
        ``_out_starts`` does not hold (``_body_ref`` reads those itself)."""
        nd, op, key = body[0], body[2], body[5]
        if op not in PARTITIONED_CALL and op in self.library:   # a call by its name
            names = [a.name for a in self.library[op].signature.output_arg]
            return names.index(out_arg) if out_arg in names else None
        info = self.opdb.op(op)
        if op not in self._out_starts:
            if info is None:
                self._out_starts[op] = {"output": 0}
                return 0 if out_arg == "output" else None
            args = info.output_args
            # one output per arg whatever the attrs: the starts are the op's; else they
            # depend on the attrs (False)
            starts = self._out_starts[op] = (
                False if any(a.number_attr or a.type_list_attr for a in args)
                else {a.name: i for i, a in enumerate(args)})
            if starts:
                return starts.get(out_arg)
        if key is not None:
            # the attrs' wire bytes the body check read: one look-up per distinct attrs
            # (each call's are its own), the ranges read off the NodeDef's attr map
            ranges = self._out_ranges.get((op, key))
            if ranges is None:
                ranges = self._out_ranges[(op, key)] = (info.output_ranges(nd.attr),)
        else:
            # asked once per attrs the builder shares (see ``nd_record``), not per reference
            known = self._nd_records.get(id(nd))
            attrs = (known[1] if known is not None
                     else self.nd_record(nd, nd.name, op, nd.device, nd.input[:]))[0]
            ranges = self._out_ranges.get((op, id(attrs)))
            if ranges is None:
                ranges = self._out_ranges[(op, id(attrs))] = (info.output_ranges(attrs), attrs)
        ranges = ranges[0]
        if ranges is None or out_arg not in ranges:
            return None
        return ranges[out_arg][0]
