"""TensorFlow op and kernel knowledge, read from generated data (no TensorFlow import).

``placelint/data/opdb.json.gz`` is produced by ``tools/gen_opdb.py`` from
TensorFlow's own OpRegistry and kernel registry (format described there).  This
package answers, for a NodeDef's op and attrs, what TensorFlow itself would
compute:

* the dtype of every actual input and output (``InOutTypesForNode``,
  node_def_util.cc), with list and number args expanded and ref args as ref
  enums: ``arg_types``;
* which kernel serves the node on a device type (``FindKernelRegistration`` and
  ``KernelAttrsMatch``, op_kernel.cc / kernel_def_util.cc), hence the Placer's
  supported device types and kernel priorities: ``kernels``;
* which inputs and outputs live in host memory (``MemoryTypesForNode``,
  memory_types.cc), as the graph partitioner sees them: ``kernels``.

``OpInfo`` (``op_info``) asks both for one op, memoized; ``OpDB`` (here) loads the
shipped database and builds an ``OpInfo`` per op on first use.

``attrs`` is a NodeDef's ``attr`` map (str -> ``AttrValue``; any mapping of
protobuf ``AttrValue``-like objects works).  Attrs missing from it take their
OpDef default, as TensorFlow's graph construction adds them
(``AddDefaultsToNodeDef``).

DEFAULT kernels: TensorFlow looks for kernels registered for the exact device
type first; only when none of them matches (after constraints and label) does
it fall back to the kernels registered for ``DEVICE_DEFAULT``, and never for
symbolic XLA compilation devices (``XLA_CPU_JIT``, ``XLA_GPU_JIT``: see
``OpDB.symbolic_device_types``).  ``OpInfo.supported_device_types(attrs)``
reports this as a ``"DEFAULT"`` key meaning "every other non-symbolic device
type, at this priority"; pass ``device_types=`` (or call ``kernel_priority`` /
``find_kernel``) to have it resolved for concrete device types.

Errors: where TensorFlow would reject the node (a kernel constraint names an
attr the node lacks, an attr of the wrong kind, two kernels matching at the same
priority) the kernel functions raise ``KernelMatchError``; the memory-type
functions raise ``OpDBError`` when the node's argument layout cannot be
resolved.  Ops missing from the database (e.g. calls of library functions by
name) give ``OpDB.op(name) is None``; TensorFlow then assumes every device type
supports the node (SupportedDeviceTypesForNode).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from placelint.data import OPDB_FILE as DATA_FILE, OPDB_FORMAT as SUPPORTED_FORMAT, opdb_document

from .arg_types import ArgDef, AttrDef
from .kernels import DEFAULT_DEVICE_TYPE, KernelInfo, KernelMatchError, OpDBError
from .op_info import OpInfo

__all__ = ["DATA_FILE", "SUPPORTED_FORMAT", "DEFAULT_DEVICE_TYPE", "ArgDef", "AttrDef",
           "KernelInfo", "KernelMatchError", "OpDB", "OpDBError", "OpInfo", "get_opdb"]


@functools.lru_cache(maxsize=1)
def get_opdb() -> OpDB:
    """The shipped op database (loaded once per process)."""
    header, ops = opdb_document()
    return OpDB(header, ops)


class OpDB:
    """All ops of one TensorFlow release; OpInfo objects are built on first use."""

    def __init__(self, header: dict[str, Any], raw_ops: dict[str, str]) -> None:
        self.tf_version: str = header["tf_version"]
        self.tf_git_version: str = header.get("tf_git_version", "")
        self.device_types: tuple[str, ...] = tuple(header["device_types"])
        self.symbolic_device_types = frozenset(header["symbolic_device_types"])
        self._raw = raw_ops
        self._cache: dict[str, OpInfo] = {}

    def op(self, name: str) -> OpInfo | None:
        """The op registered under ``name``, None when TensorFlow has no such op."""
        info = self._cache.get(name)
        if info is None:
            raw = self._raw.get(name)
            if raw is None:
                return None
            info = OpInfo(name, json.loads(raw), self.symbolic_device_types)
            self._cache[name] = info
        return info

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __len__(self) -> int:
        return len(self._raw)

    def op_names(self) -> list[str]:
        """Every registered op name, sorted."""
        return sorted(self._raw)

    def is_symbolic(self, device_type: str) -> bool:
        """XLA compilation device types, for which DEFAULT kernels never apply."""
        return device_type in self.symbolic_device_types
