"""A called function's body nodes, added to the graph by one loop per call.

A TF2 SavedModel is mostly function bodies: at 10^5 nodes, nine in ten nodes come from
expanding ~3k calls. The generic path (``_Builder.add``, ``_add_inputs`` and the call's
``resolve``) tests per node and per input what is the same for every node of a call
(its function, call site, loop, soft placement), and calls a closure per input; the loop
here does for the usual body node what those do, as ``_Builder.add_top_level`` does for
the GraphDef's own nodes: a node whose op calls no function and is not functional control
flow (``_plain``), whose name is new (and no pending edge waits to enter it), while the
budget has room. Its inputs become edges here while each resolves (through the aliases of
the calls expanded so far) to an existing node, other than itself, that no pending edge
leaves, and no data input follows a control one; from its first other input on,
``_add_inputs`` takes the rest. Any other node goes through ``add``, as every node does
when the builder is not ``fast`` (tests compare the two).
"""

from __future__ import annotations

from ..dtypes import DT_RESOURCE, REF_OFFSET
from .devices import parse_device
from .graph import Edge, Node


class BodyNodes:
    """Mixed into the graph builder (with ``FunctionExpansion``)."""

    def add_body(self, bodies, prefix: str, device: str, fname: str, call: str, loop: str,
                 resolve, stack: tuple[str, ...], parts: tuple, entry_control: str | None
                 ) -> None:
        """Add the body nodes of function ``fname`` (``bodies``: per node ``(nd, name, op,
        device, inputs, attrs key)``, see ``_function_parts``) for the call ``call`` on
        ``device``, named ``prefix<name>``;
        ``resolve`` reads a body input, ``parts`` is ``(input arg -> its _Arg node, body
        node -> NodeDef, input -> (an arg?, arg or body node, slot))`` it reads; a node
        without inputs waits on ``entry_control`` (the call's control inputs) if any."""
        arg_nodes, by_name, resolved = parts
        body_ref = self._body_ref
        nodes, budget = self.graph.nodes, self.node_budget
        plain = self._plain if self.fast else {}
        devices, nd_records, nd_record = self._devices, self._nd_records, self.nd_record
        record_miss = self.attr_records.miss
        alias, control_alias = self.alias, self.control_alias
        waiting_src, waiting_dst = self.waiting_src, self.waiting_dst
        add, add_inputs, connect = self.add, self._add_inputs, self._connect
        early = self.early_alias
        soft = call in self._soft_calls     # (as ``add`` reads it for each node of the call)
        for nd, body_name, op, body_device, inputs, key in bodies:
            name = prefix + body_name
            facts = plain.get(op)
            if (facts is None or name in nodes or len(nodes) >= budget
                    or name in waiting_dst):
                added = add(nd, name, op, body_device or device, inputs, fname, call, loop,
                            resolve, stack)
                if entry_control and not inputs:
                    if added is not None:
                        self.control_edge(entry_control, added, "^" + entry_control)
                    else:   # (a duplicate name, an expanded call: as finish resolves them)
                        self.wait(entry_control, -1, name, -1, "^" + entry_control)
                continue
            op = facts[0]
            dev = body_device or device
            try:
                dev, spec = devices[dev]
            except KeyError:
                spec = parse_device(dev)
                devices[dev] = (dev, spec)
            if key is not None:     # (as ``nd_record`` finds it, without keeping it by id)
                record = facts[1].get(key) or record_miss(op, key, facts[1])
            else:
                known = nd_records.get(id(nd))
                record = known[1] if known is not None else nd_record(nd, body_name, op,
                                                                      body_device, inputs)
            attrs, typed = record
            signature, types, out_types, shapes = typed
            node = Node(name, op, dev, spec, attrs, [], [], out_types, shapes, fname, call,
                        loop, None, None, signature, soft)
            nodes[name] = node
            if not inputs:
                self.last = (typed, 0)
                if entry_control:
                    self.control_edge(entry_control, node, "^" + entry_control)
                continue
            n_data, clean, control = 0, True, 0
            in_edges, n_types = node.in_edges, -1 if types is None else len(types)
            for ref in inputs:
                known = resolved.get(ref)
                if known is None:
                    known = resolved[ref] = body_ref(ref, arg_nodes, by_name)
                is_arg, local, slot = known
                src = arg_nodes[local] if is_arg else prefix + local
                if slot == -1:
                    real = control_alias.get(src, src)
                    if (real not in waiting_src and (real is src or early
                                                     and src not in waiting_src)):
                        source = nodes.get(real)
                        if source is not None and source is not node:
                            edge = Edge(source.name, -1, name, -1)     # (as ``_connect``)
                            source.out_edges.append(edge)
                            in_edges.append(edge)
                            control += 1
                            continue
                elif slot >= 0 and not control:
                    real, real_slot = src, slot
                    while (real, real_slot) in alias:
                        real, real_slot = alias[(real, real_slot)]
                    if (real not in waiting_src and (real is src or early
                                                     and src not in waiting_src)):
                        source = nodes.get(real)
                        if source is not None and source is not node:
                            src_types = source.output_dtypes
                            if src_types is not None and real_slot < len(src_types):
                                # (typed as ``_connect`` types it when the source has the
                                # output; else through it)
                                actual = src_types[real_slot]
                                dtype = types[n_data] if n_data < n_types else actual
                                if (not (dtype == actual or actual > REF_OFFSET
                                         and dtype == actual - REF_OFFSET)
                                        or source.function):
                                    clean = False
                                edge = Edge(source.name, real_slot, name, n_data, dtype,
                                            dtype is not None and (dtype == DT_RESOURCE
                                                                   or dtype > REF_OFFSET))
                                source.out_edges.append(edge)
                                in_edges.append(edge)
                            elif (not connect(source, real_slot, node, n_data, types)
                                    or source.function):
                                clean = False
                            n_data += 1
                            continue
                # (the rest of the inputs, from this one on)
                rest = add_inputs(node, inputs[n_data + control:], resolve, types, n_data,
                                  1 if control else 0)
                n_data = rest if rest < 0 or clean else -1
                break
            else:
                if not clean:
                    n_data = -1
            self.last = (typed, n_data)
