"""Which registered kernel serves a node on a device type, and which of its arguments
live in host memory.

``FindKernelRegistration`` and ``KernelAttrsMatch`` (op_kernel.cc, kernel_def_util.cc),
hence the Placer's supported device types and kernel priorities, with the
``DEVICE_DEFAULT`` fallback (never for symbolic XLA compilation devices); and
``MemoryTypesForNode`` (memory_types.cc) as the graph partitioner sees it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from placelint import dtypes as _dt

from .arg_types import Getter, get_type_list, value_case

DEFAULT_DEVICE_TYPE = "DEFAULT"  # types.h DEVICE_DEFAULT
KERNEL_LABEL_ATTR = "_kernel"  # op_kernel.cc GetKernelLabelAttr
# memory_types.cc
XLA_MUST_COMPILE_ATTR = "_XlaMustCompile"
INPUT_HOSTMEM_ATTR = "_input_hostmem"
OUTPUT_HOSTMEM_ATTR = "_output_hostmem"
# memory_types.cc IsFunctionCallOp: their int32 args stay in host memory even
# though they have kernels.
FUNCTION_CALL_OPS = frozenset({"SymbolicGradient", "PartitionedCall", "StatefulPartitionedCall", "While"})


class OpDBError(ValueError):
    """The node is malformed in a way TensorFlow would reject."""


class KernelMatchError(OpDBError):
    """TensorFlow's kernel lookup fails with an error (not merely 'no kernel')."""


class Constraint(NamedTuple):
    """A KernelDef attr constraint: ``kind`` is 'type', 's', 'i' or 'b'."""

    attr: str
    kind: str
    allowed: frozenset


class KernelInfo(NamedTuple):
    """One registered KernelDef."""

    op: str
    device_type: str
    constraints: tuple[Constraint, ...]
    host_memory_args: tuple[str, ...]
    label: str
    priority: int

    @classmethod
    def from_raw(cls, op: str, raw: dict[str, Any]) -> KernelInfo:
        """From one kernel of an op's record in ``opdb.json.gz``."""
        constraints = []
        for attr, kind, allowed in raw["constraints"]:
            values = [a.encode("utf-8") for a in allowed] if kind == "s" else allowed
            constraints.append(Constraint(attr, kind, frozenset(values)))
        return cls(op=op, device_type=raw["device"], constraints=tuple(constraints),
                   host_memory_args=tuple(raw.get("host_memory", ())),
                   label=raw.get("label", ""), priority=raw.get("priority", 0))

    def attrs_match(self, get: Getter) -> bool:
        """kernel_def_util.cc KernelAttrsMatch; ``get(name)`` returns the attr value
        with defaults applied, or None.  Raises KernelMatchError where TF errors."""
        for con in self.constraints:
            value = get(con.attr)
            if value is None:
                raise KernelMatchError(
                    f"OpKernel '{self.op}' has constraint on attr '{con.attr}' not in NodeDef, "
                    f"KernelDef: {self.describe()}"
                )
            case = value_case(value)
            if con.kind != "type":
                if case != con.kind:
                    raise KernelMatchError(
                        f"KernelDef {self.describe()} has constraint on attr '{con.attr}' "
                        f"that does not have the same type in NodeDef"
                    )
                if getattr(value, con.kind) not in con.allowed:
                    return False
                continue
            if case == "type" and value.type != _dt.DT_INVALID:
                if value.type not in con.allowed:
                    return False
                continue
            types = get_type_list(value)
            if types is None:
                raise KernelMatchError(
                    f"KernelDef {self.describe()} has constraint on attr '{con.attr}' that "
                    f"does not have type 'type' or 'list(type)' in NodeDef"
                )
            if any(t not in con.allowed for t in types):
                return False
        return True

    def describe(self) -> str:
        cons = ", ".join(
            f"{c.attr} in [{', '.join(sorted(map(str, c.allowed)))}]" for c in self.constraints
        )
        label = f" label='{self.label}'" if self.label else ""
        return f"{self.op} on {self.device_type}{label} priority {self.priority} ({cons})"


def kernel_label(get: Getter) -> str:
    value = get(KERNEL_LABEL_ATTR)
    if value is None or value_case(value) != "s":
        return ""
    return value.s.decode("utf-8", errors="replace")


class KernelTable:
    """One op's kernels, indexed by (device type, label), and TensorFlow's lookup."""

    def __init__(self, op: str, kernels: tuple[KernelInfo, ...], symbolic: frozenset[str]) -> None:
        self.op = op
        self.kernels = kernels
        self._symbolic = symbolic
        self._by_key: dict[tuple[str, str], list[KernelInfo]] = {}
        for k in kernels:
            self._by_key.setdefault((k.device_type, k.label), []).append(k)

    def find(self, device_type: str, get: Getter) -> KernelInfo | None:
        """op_kernel.cc FindKernelRegistration for one device type.

        TF keeps the highest-priority match and errors when a second match has the
        same priority as the one kept so far, so with three matches (priorities
        0, 0, 1) whether it errors depends on hash-map order.  We use the
        order-independent reading: error only when the best priority is tied.
        (TF 2.21's registry has no overlapping same-priority kernels.)
        """
        label = kernel_label(get)
        best: KernelInfo | None = None
        tied = False
        for kernel in self._by_key.get((device_type, label), ()):
            if kernel.attrs_match(get):
                if best is None or kernel.priority > best.priority:
                    best, tied = kernel, False
                elif kernel.priority == best.priority:
                    tied = True
        if tied:
            raise KernelMatchError(
                f"Multiple OpKernel registrations match NodeDef at the same priority: "
                f"{self.op} on {device_type} priority {best.priority}"
            )
        if best is not None or device_type in self._symbolic:
            return best
        return self.find_default(label, get)

    def find_default(self, label: str, get: Getter) -> KernelInfo | None:
        found: KernelInfo | None = None
        for kernel in self._by_key.get((DEFAULT_DEVICE_TYPE, label), ()):
            if kernel.attrs_match(get):
                if found is not None:
                    raise KernelMatchError(f"Multiple Default OpKernel registrations match NodeDef: {self.op}")
                found = kernel
        return found

    def supported_device_types(self, get: Getter, device_types: Iterable[str] | None = None
                               ) -> dict[str, int]:
        """Device type -> priority of the kernel TF would use.

        Without ``device_types``: every device type with a matching kernel of its
        own, plus ``"DEFAULT"`` when a DEFAULT kernel matches, standing for every
        other non-symbolic device type.  With ``device_types`` (the types present
        in a device set): exactly those that are supported, DEFAULT resolved, like
        op_kernel.cc SupportedDeviceTypesForNode (unsorted; TF stable-sorts by
        priority).  Raises KernelMatchError where TF's lookup errors.
        """
        result: dict[str, int] = {}
        if device_types is not None:
            for device_type in device_types:
                kernel = self.find(device_type, get)
                if kernel is not None:
                    result[device_type] = kernel.priority
            return result
        own_types = sorted({dev for dev, _ in self._by_key if dev != DEFAULT_DEVICE_TYPE})
        for device_type in own_types:
            kernel = self.find(device_type, get)
            if kernel is not None and kernel.device_type == device_type:
                result[device_type] = kernel.priority
        default = self.find_default(kernel_label(get), get)
        if default is not None:
            result[DEFAULT_DEVICE_TYPE] = default.priority
        return result

    def memory_types(self, device_type: str, get: Getter, in_types: list[int], out_types: list[int],
                     in_ranges: dict[str, tuple[int, int]] | None,
                     out_ranges: dict[str, tuple[int, int]] | None,
                     ) -> tuple[frozenset[int], frozenset[int]]:
        """memory_types.cc MemoryTypesForNode for a node whose actual input and output
        types (and arg ranges) are known: see ``OpInfo.memory_types``."""
        try:
            kernel = self.find(device_type, get)
        except KernelMatchError:
            kernel = None  # MemoryTypesForNode ignores FindKernelDef's status
        has_kernel_def = kernel is not None and self.op not in FUNCTION_CALL_OPS
        must_compile = get(XLA_MUST_COMPILE_ATTR)
        int32_on_device = (
            has_kernel_def
            or device_type == "TPU"
            or (must_compile is not None and bool(must_compile.b))
        )

        def required(dtype: int) -> bool:
            return _dt.always_on_host(dtype) or (dtype == _dt.DT_INT32 and not int32_on_device)

        host_in = {i for i, t in enumerate(in_types) if required(t)}
        host_out = {i for i, t in enumerate(out_types) if required(t)}
        if has_kernel_def:
            in_ranges = in_ranges or {}
            out_ranges = out_ranges or {}
            for arg in kernel.host_memory_args:
                if arg in in_ranges:
                    host_in.update(range(*in_ranges[arg]))
                elif arg in out_ranges:
                    host_out.update(range(*out_ranges[arg]))
                else:
                    raise OpDBError(f"HostMemory arg '{arg}' not found in OpDef of {self.op}")
        for attr_name, indices, count in (
            (INPUT_HOSTMEM_ATTR, host_in, len(in_types)),
            (OUTPUT_HOSTMEM_ATTR, host_out, len(out_types)),
        ):
            value = get(attr_name)
            if value is not None and value_case(value) == "list":
                indices.update(i for i in value.list.i if 0 <= i < count)
        return frozenset(host_in), frozenset(host_out)
