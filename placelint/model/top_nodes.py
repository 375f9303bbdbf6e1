"""The GraphDef's own nodes, added to the graph by one loop.

Most nodes of a model are top-level NodeDefs: the loop here does for the usual one what
``_Builder.add`` and ``_add_inputs`` do, without their calls and tests per node (see
``add_top_level``), as ``body_nodes.py`` does for the nodes of a called function's body.
Each node's attrs key is the wire bytes of its attrs: cut by the loader from the file's
bytes when it read the GraphDef in chunks (``loaders.chunked``), else from the node
serialized again (``attr_wire.attrs_key``).
"""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING

from ..dtypes import DT_RESOURCE, REF_OFFSET
from ..proto_lite import real_node
from .attr_wire import attrs_key
from .devices import parse_device
from .graph import Edge, Node
from .tensor_names import top_resolve as _top_resolve

if TYPE_CHECKING:
    from .nodedef_validation import NodeDefValidator


class TopNodes:
    """Mixed into the graph builder."""

    def add_top_level(self, nds, validator: NodeDefValidator) -> None:
        """Add the GraphDef's own NodeDefs ``nds`` in order and hand each to the import-time
        ``validator`` unless it passes (see ``NodeDefValidator.passes``): the fields of each
        are read once, for both. Nodes read in chunks give each one's attrs key from the
        file's bytes (``ChunkedNodes.attr_keys``: None for a node they do not).

        Most nodes of a model are added by the loop here, which does for them what ``add``
        and ``_add_inputs`` do, without their calls and tests per node: a node whose op
        calls no function and is not functional control flow (``_plain``), whose name is
        new, while no call was expanded (no alias) and the budget has room. Its inputs
        that name an existing node that no pending edge leaves (``x``, ``x:1``, ``^x``),
        whose output dtypes are known for a data input, become edges here, typed as
        ``_connect`` types them; from its first other input on, ``_add_inputs`` takes the
        rest. Any other node goes through ``add``, as every node does when not ``self.fast``
        (tests compare the two). (While no call was expanded, every node of the graph is
        a top-level one, and a pending edge enters only nodes of the graph: the tests of
        ``_add_inputs`` on the source's function and on edges waiting to enter the new
        node always pass here.)"""
        nodes, budget = self.graph.nodes, self.node_budget
        plain = self._plain if self.fast else {}
        devices, alias, control_alias = self._devices, self.alias, self.control_alias
        waiting_src = self.waiting_src
        add, add_inputs, record_of = self.add, self._add_inputs, self.attr_records.miss
        check, passes = validator.check, validator.passes
        depth = self.lite_depth
        keys = nds.attr_keys() if hasattr(nds, "attr_keys") else repeat(None)
        for nd, key in zip(nds, keys):
            name, op, inputs = nd.name, nd.op, nd.input[:]
            device = nd.device
            facts = plain.get(op)
            if (facts is None or alias or control_alias or name in nodes
                    or len(nodes) >= budget):
                if depth and (facts is None or name in nodes or len(nodes) >= budget):
                    nd = real_node(nd, depth)   # (its attrs are read: see ``proto_lite``)
                if add(nd, name, op, device, inputs, "", "", "", _top_resolve, ()) is None:
                    check(nd, name, op, inputs, None)
                else:
                    typed, n_data = self.last
                    if passes.get(id(typed)) != n_data:
                        check(nd, name, op, inputs, typed, n_data >= 0)
                continue
            op, records = facts
            try:
                device, spec = devices[device]
            except KeyError:
                spec = parse_device(device)
                devices[device] = (device, spec)
            if key is None:
                key = attrs_key(nd, name, op, device, inputs)
            record = records.get(key)
            if record is None:
                record = record_of(op, key, records)
            attrs, typed = record
            signature, types, out_types, shapes = typed
            node = Node(name, op, device, spec, attrs, [], [], out_types, shapes, "", "", "",
                        None, None, signature, False)
            nodes[name] = node
            n_data = 0
            if inputs:
                in_edges, clean, control = node.in_edges, True, 0
                n_types = -1 if types is None else len(types)
                for ref in inputs:
                    if not ref:
                        pass
                    elif ref[0] == "^":
                        src = ref[1:]
                        source = nodes.get(src) if src and ":" not in src else None
                        if source is not None and source is not node and src not in waiting_src:
                            edge = Edge(source.name, -1, name, -1)
                            source.out_edges.append(edge)
                            in_edges.append(edge)
                            control += 1
                            continue
                    elif not control:
                        if ":" not in ref:
                            src, slot = ref, 0
                        else:       # (as _add_inputs reads it)
                            src, _, index = ref.rpartition(":")
                            slot = (int(index) if src and index.isdigit() and index.isascii()
                                    and len(index) < 10 else -1)
                        source = nodes.get(src)
                        if (source is not None and source is not node and slot >= 0
                                and src not in waiting_src):
                            src_types = source.output_dtypes
                            if src_types is not None and slot < len(src_types):
                                actual = src_types[slot]
                                dtype = types[n_data] if n_data < n_types else actual
                                if not (dtype == actual or actual > REF_OFFSET
                                        and dtype == actual - REF_OFFSET):
                                    clean = False
                                edge = Edge(source.name, slot, name, n_data, dtype, dtype is not None
                                            and (dtype == DT_RESOURCE or dtype > REF_OFFSET))
                                source.out_edges.append(edge)
                                in_edges.append(edge)
                                n_data += 1
                                continue
                    # (the rest of the inputs, from this one on)
                    n_data = add_inputs(node, inputs[n_data + control:], _top_resolve, types,
                                        n_data, 1 if control else 0)
                    break
                if not clean:
                    n_data = -1
            if passes.get(id(typed)) != n_data:
                check(nd, name, op, inputs, typed, n_data >= 0)
