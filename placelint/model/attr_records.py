"""Each node's attrs and typing as the graph builder gives them, worked out once per
distinct set of attrs and shared (read only) by the nodes with it: a model repeats a few
hundred sets over its 10^5-10^6 nodes.

A node's attrs are copied out of the parsed GraphDef (a value of its attr map keeps the
whole message alive) into a dict of shared ``AttrValue``s; its typing is the op
database's (op signature, input dtypes, output dtypes) and the output shapes its attrs
state.
"""

from __future__ import annotations

from typing import Mapping

from ..opdb import OpInfo
from ..proto import AttrValue, GraphDef, NodeDef
from ..proto_lite import parse_real
from .attr_wire import attrs_key, split_class
from .graph import Node
from .shapes import SHAPE_ATTR_OPS, static_output_shapes

#: attrs whose wire bytes are longer are not kept as keys (a large Const's tensor is not
#: kept twice)
MAX_KEY = 4096


class AttrRecords:
    """A node's record: (its attrs, their typing ``(op signature, input dtypes, output
    dtypes, stated output shapes)``), kept per op in a dict the builder holds (``records``
    below: the attrs' wire bytes -> the record)."""

    def __init__(self, opdb, lite_depth: int = 0):
        self.opdb = opdb
        #: how deep the nodes of a ``proto_lite`` GraphDef sit in their file, else 0: the
        #: keys of its nodes are the file's bytes, which protobuf has not checked yet
        self.lite_depth = lite_depth
        self._infos: dict[str, OpInfo | None] = {}     # op -> opdb.op(op)
        # The attrs of a node are a dict of shared AttrValues: those but ``_class`` (the
        # colocation lists, which make most nodes of a training graph differ, and which
        # neither the op database nor the validation read), one dict per value of the rest
        # (its wire bytes -> it, parsed in a NodeDef of ``_store``: one message, as a
        # message of its own costs ~2 KiB); the ``_class`` values, one per value
        self._bases: dict[bytes, dict[str, AttrValue]] = {}
        self._store = GraphDef().node
        self._classes: dict[bytes, AttrValue] = {}
        # (op, id of a node's attrs) -> (OpInfo.typing's answer, stated output shapes, attrs),
        # for the nodes made by the builder rather than from a NodeDef (_Arg, _Retval, NoOp)
        self._typings: dict[tuple[str, int], tuple] = {}
        #: some record's attrs hold a ``_class`` (split off its key, or in a base whose
        #: bytes ``split_class`` could not cut): False means no node of the build has one
        self.class_seen = False

    def record(self, nd: NodeDef, name: str, op: str, device: str, inputs: list[str],
               records: dict[bytes, tuple]) -> tuple[dict[str, AttrValue], tuple]:
        """``nd``'s record (``name``, ``op``, ``device``, ``inputs``: its fields as the caller
        read them; ``records``: the op's)."""
        key = attrs_key(nd, name, op, device, inputs)
        record = records.get(key)
        if record is None:
            record = self.miss(op, key, records)
        return record

    def miss(self, op: str, key: bytes, records: dict[bytes, tuple]
             ) -> tuple[dict[str, AttrValue], tuple]:
        """The record of an ``op`` node whose attrs' wire bytes are ``key``, not in
        ``records`` (the op's): made, and kept there unless large."""
        base_key, class_value = split_class(key)
        kept = len(base_key) <= MAX_KEY
        # (the record of the attrs but ``_class``: a node's without ``_class``)
        known = records.get(base_key) if kept else None
        if known is None:
            base = self._bases.get(base_key) if kept else None
            if base is None:
                if self.lite_depth:     # (``LiteRefused`` when the file's parse refuses it)
                    parse_real(key, self.lite_depth)
                copy = self._store.add()
                copy.MergeFromString(base_key)
                base = dict(copy.attr)
                if "_class" in base:
                    self.class_seen = True
                if kept:
                    self._bases[base_key] = base
            known = (base, self._typing(op, base))
            if kept:
                records[base_key] = known
        base, typed = known
        if class_value is None:
            record = known
        else:
            self.class_seen = True
            value = self._classes.get(class_value)
            if value is None:
                if self.lite_depth:     # (``LiteRefused`` when the file's parse refuses it)
                    parse_real(key, self.lite_depth)
                value = self._classes[class_value] = AttrValue.FromString(class_value)
            record = ({**base, "_class": value}, typed)
        if len(key) <= MAX_KEY:
            records[key] = record
        return record

    def _info(self, op: str) -> OpInfo | None:
        try:
            return self._infos[op]
        except KeyError:
            info = self._infos[op] = self.opdb.op(op)
            return info

    def _typing(self, op: str, attrs: Mapping[str, AttrValue]) -> tuple:
        """(op signature, input dtypes, output dtypes, stated output shapes) of an ``op``
        node with ``attrs`` (None where unknown); the nodes that share it read it only."""
        info = self._info(op)
        shapes = (static_output_shapes(Node("", op, "", None, attrs))
                  if "_output_shapes" in attrs or op in SHAPE_ATTR_OPS else None)
        if info is None:
            return None, None, None, shapes
        return (*info.typing(attrs), shapes)

    def type_node(self, node: Node, own_types: bool = False, types: list[int] | None = None
                  ) -> list[int] | None:
        """Set the op signature, output dtypes and stated output shapes of ``node`` (one
        the builder made: _Arg, _Retval, NoOp); return the dtypes of its inputs (None when
        unknown; ``own_types``: they are ``types``, whatever its op says). All are functions
        of the op and the attrs: computed once per (op, attrs copy), and the nodes share
        them (read only)."""
        op, attrs = node.op, node.attrs
        typing = self._typings.get((op, id(attrs)))
        if typing is None:
            info = self._info(op)
            shapes = (static_output_shapes(node) if "_output_shapes" in attrs
                      or op in SHAPE_ATTR_OPS else None)
            # (the entry keeps ``attrs`` alive: its id is not reused during the build)
            typing = self._typings[(op, id(attrs))] = (
                None if info is None else info.typing(attrs), shapes, attrs)
        signature_types, shapes, _ = typing
        if signature_types is not None:
            node.op_signature, in_types, out_types = signature_types
            if node.output_dtypes is None:
                node.output_dtypes = out_types
            if not own_types:
                types = in_types
        if node.output_shapes is None:
            node.output_shapes = shapes
        return types
