"""One op's OpDef and kernels (``OpInfo``), answering TensorFlow's questions about a
NodeDef of that op, memoized on the attrs that decide the answers.

``attrs`` is a NodeDef's ``attr`` map (str -> ``AttrValue``; any mapping of protobuf
``AttrValue``-like objects works). Attrs missing from it take their OpDef default.
The answers come from ``arg_types`` (dtypes and arg ranges) and ``kernels`` (kernel
lookup, memory types).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .arg_types import (ArgDef, AttrDef, DefaultValue, Getter, arg_count, arg_ranges, arg_types,
                        count_error)
from .kernels import KERNEL_LABEL_ATTR, KernelInfo, KernelTable, OpDBError

AttrMap = Mapping[str, Any]


class OpInfo:
    """An op's OpDef and kernels, with TensorFlow's resolution rules."""

    def __init__(self, name: str, raw: dict[str, Any], symbolic: frozenset[str]) -> None:
        self.name = name
        self.is_stateful: bool = raw.get("is_stateful", False)
        self.input_args = tuple(ArgDef(**a) for a in raw["inputs"])
        self.output_args = tuple(ArgDef(**a) for a in raw["outputs"])
        self.attr_defs: dict[str, AttrDef] = {
            n: AttrDef.from_raw(n, a) for n, a in raw["attrs"].items()}
        self._defaults = {
            n: DefaultValue(a["type"], a["default"]) for n, a in raw["attrs"].items() if "default" in a
        }
        self.kernels = tuple(KernelInfo.from_raw(name, k) for k in raw["kernels"])
        self._table = KernelTable(name, self.kernels, symbolic)
        # Every attr that can change an answer below: argument type/number attrs, kernel
        # constraint attrs and the kernel label. Answers are memoized on their values, so
        # a graph with 10^5 MatMuls resolves MatMul's kernels once per distinct dtype.
        sig = {KERNEL_LABEL_ATTR}
        for arg in (*self.input_args, *self.output_args):
            sig.update(a for a in (arg.type_attr, arg.type_list_attr, arg.number_attr) if a)
        for k in self.kernels:
            sig.update(c.attr for c in k.constraints)
        self._sig_attrs = tuple(sorted(sig))
        self._memo: dict[tuple, Any] = {}
        self._io_memo: dict[tuple, tuple] = {}

    def signature(self, attrs: AttrMap | None) -> tuple:
        """The values of the attrs that decide every answer below: the memo key. Callers
        that ask several questions about the same, unchanged attrs can pass it back as
        ``signature=`` and skip recomputing it."""
        # A memo key only. A value is its ``type`` when that is non-zero: every AttrValue
        # field is in the ``value`` oneof, so a non-zero ``type`` is the whole value.
        # Anything else is its bytes; plain (non-deterministic) serialization is enough:
        # equal values serialized in another map order merely miss the memo, and two
        # different values never serialize to the same bytes (nor to an int).
        if attrs is None:
            return ()
        key = []
        for k in self._sig_attrs:
            if k in attrs:
                value = attrs[k]
                key.append(value.type or value.SerializeToString())
            else:
                key.append(None)
        return tuple(key)

    @property
    def signature_attrs(self) -> tuple[str, ...]:
        """The attrs ``signature`` reads, in its order."""
        return self._sig_attrs

    def _memoized(self, what: str, attrs: AttrMap | None, extra, compute: Callable[[], Any],
                  signature: tuple | None = None):
        key = (what, self.signature(attrs) if signature is None else signature, extra)
        try:
            hit = self._memo[key]
        except KeyError:
            try:
                hit = (True, compute())
            except OpDBError as exc:
                hit = (False, exc)
            self._memo[key] = hit
        if hit[0]:
            return hit[1]
        raise hit[1]

    def __repr__(self) -> str:
        return f"OpInfo({self.name!r}, {len(self.kernels)} kernels)"

    @property
    def kernel_device_types(self) -> frozenset[str]:
        """Device types with at least one registered kernel (may include DEFAULT)."""
        return frozenset(k.device_type for k in self.kernels)

    def _getter(self, attrs: AttrMap | None) -> Getter:
        """get(name) -> the node's AttrValue, else the OpDef default, else None."""
        attrs = attrs if attrs is not None else {}
        defaults = self._defaults

        def get(name: str) -> Any:
            # `in` first: indexing a protobuf map inserts missing keys.
            if name in attrs:
                return attrs[name]
            return defaults.get(name)

        return get

    # ----- arg types (results are memoized per attr signature and shared: do not mutate)

    def input_types(self, attrs: AttrMap | None) -> list[int] | None:
        """One DataType enum per actual input (refs as base+100); None if unresolvable."""
        return self._memoized("in", attrs, None,
                              lambda: arg_types(self.input_args, self._getter(attrs)))

    def output_types(self, attrs: AttrMap | None) -> list[int] | None:
        """One DataType enum per actual output (refs as base+100); None if unresolvable."""
        return self._memoized("out", attrs, None,
                              lambda: arg_types(self.output_args, self._getter(attrs)))

    def typing(self, attrs: AttrMap | None
               ) -> tuple[tuple, list[int] | None, list[int] | None]:
        """``(signature(attrs), input_types(attrs), output_types(attrs))`` in one call, for
        the builder, which asks for all three per node. The signature is the first equal
        one seen, so nodes with equal attrs share one tuple rather than each keeping its own."""
        # a plain dict lookup on a hit (arg_types raises no OpDBError, so no error memo)
        key = self.signature(attrs)
        hit = self._io_memo.get(key)
        if hit is None:
            get = self._getter(attrs)
            hit = self._io_memo[key] = (key, arg_types(self.input_args, get),
                                        arg_types(self.output_args, get))
        return hit

    def count_error(self, attrs: AttrMap | None) -> str | None:
        """TF's refusal of a number attr too big for an int32 (the args' dtypes are then
        unknown here), else None."""
        return count_error((*self.input_args, *self.output_args), self._getter(attrs))

    def input_count(self, attrs: AttrMap | None, head: int) -> tuple[int, list[int]] | None:
        """The number of actual inputs and the dtypes of the first ``head`` (``arg_count``):
        known also when a number attr is too large for ``input_types``."""
        return arg_count(self.input_args, self._getter(attrs), head)

    def num_inputs(self, attrs: AttrMap | None) -> int | None:
        ranges = self.input_ranges(attrs)
        return None if ranges is None else sum(e - s for s, e in ranges.values())

    def num_outputs(self, attrs: AttrMap | None) -> int | None:
        """Number of actual outputs (needs only number/list attrs, not the dtypes)."""
        ranges = self.output_ranges(attrs)
        return None if ranges is None else sum(e - s for s, e in ranges.values())

    def input_ranges(self, attrs: AttrMap | None) -> dict[str, tuple[int, int]] | None:
        """Input arg name -> (start, end) of its actual input indices."""
        return self._memoized("in_ranges", attrs, None,
                              lambda: arg_ranges(self.input_args, self._getter(attrs)))

    def output_ranges(self, attrs: AttrMap | None) -> dict[str, tuple[int, int]] | None:
        """Output arg name -> (start, end) of its actual output indices."""
        return self._memoized("out_ranges", attrs, None,
                              lambda: arg_ranges(self.output_args, self._getter(attrs)))

    # ----- kernels

    def find_kernel(self, device_type: str, attrs: AttrMap | None) -> KernelInfo | None:
        """The kernel TensorFlow picks for this node on ``device_type`` (DEFAULT
        fallback included), None when there is none; KernelMatchError where TF errors."""
        return self._table.find(device_type, self._getter(attrs))

    def kernel_priority(self, device_type: str, attrs: AttrMap | None) -> int | None:
        """Priority of the kernel for ``device_type``, None when unsupported."""
        kernel = self.find_kernel(device_type, attrs)
        return None if kernel is None else kernel.priority

    def supported_device_types(
        self, attrs: AttrMap | None, device_types: Iterable[str] | None = None,
        signature: tuple | None = None,
    ) -> dict[str, int]:
        """Device type -> priority of the kernel TF would use (``KernelTable``'s)."""
        types = None if device_types is None else tuple(device_types)
        return self._memoized(
            "supported", attrs, types,
            lambda: self._table.supported_device_types(self._getter(attrs), types), signature)

    # ----- memory types

    def memory_types(self, device_type: str, attrs: AttrMap | None) -> tuple[frozenset[int], frozenset[int]]:
        """(host-memory input indices, host-memory output indices) on ``device_type``,
        following memory_types.cc MemoryTypesForNode: the kernel's HostMemory args,
        every DT_STRING/DT_STRING_REF/DT_RESOURCE value, int32 values when there is
        no kernel (or for function-call ops) unless the device is TPU or the node
        has ``_XlaMustCompile``, and the ``_input_hostmem``/``_output_hostmem`` attrs.
        On CPU devices host memory is device memory; the partitioner still uses this.
        """
        in_types = self.input_types(attrs)
        out_types = self.output_types(attrs)
        if in_types is None or out_types is None:
            raise OpDBError(f"cannot resolve the input/output types of a {self.name} node")
        return self._table.memory_types(device_type, self._getter(attrs), in_types, out_types,
                                        self.input_ranges(attrs), self.output_ranges(attrs))

    def host_memory_inputs(self, device_type: str, attrs: AttrMap | None) -> frozenset[int]:
        """Actual input indices in host memory on ``device_type`` (see memory_types)."""
        return self.memory_types(device_type, attrs)[0]

    def host_memory_outputs(self, device_type: str, attrs: AttrMap | None) -> frozenset[int]:
        """Actual output indices in host memory on ``device_type`` (see memory_types)."""
        return self.memory_types(device_type, attrs)[1]
