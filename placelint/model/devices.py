"""The target's devices: one ``DeviceName`` per device, carried from placement to output,
and the ``DeviceSet`` of a machine or a cluster, in TensorFlow's preference order.

Device specifications and their parsing (``DeviceSpec``, ``parse_device``) are in
``device_spec.py`` and re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable

from .device_spec import (DEFAULT_JOB, DEVICE_TYPE_PRIORITY, TYPE_NAME, DeviceSpec,  # noqa: F401
                          MergeError, parse_device, parse_local_name)

if TYPE_CHECKING:
    from .cluster import Cluster

#: How a device set's names are displayed (``DeviceName.display``).
LOCAL, TASK, REPLICA = "local", "task", "replica"


class DeviceName(str):
    """One device of the target, by its full name, parsed once and carried from placement
    to output.

    The value *is* the full name (``/job:J/replica:R/task:T/device:TYPE:ID``): it compares,
    hashes and serialises (JSON) as that string. It also carries the parsed fields and its
    display form, chosen by the device set it belongs to: ``CPU:0`` when the set is one
    local task (``/job:localhost/replica:0/task:0``), ``/job:ps/task:0/device:CPU:0`` when
    it spans jobs or tasks (the replica too when some replica is not 0). Make one with
    ``DeviceName.of(text)`` (a name outside any set picks its form from its own fields) or
    take it from ``DeviceSet`` / ``PlacementResult.device``.
    """

    spec: DeviceSpec
    style: str

    def __new__(cls, spec: DeviceSpec, style: str | None = None):
        self = super().__new__(cls, str(spec))
        self.spec = spec
        self.style = style or _own_style(spec)
        return self

    def __reduce__(self):
        return (DeviceName, (self.spec, self.style))

    @classmethod
    def of(cls, text: "str | DeviceName") -> "DeviceName":
        """``text`` as a ``DeviceName`` (itself when it is one). Unparsable text keeps its
        text as display."""
        if isinstance(text, DeviceName):
            return text
        return _name_of(text)

    @property
    def job(self) -> str | None:
        return self.spec.job

    @property
    def replica(self) -> int | None:
        return self.spec.replica

    @property
    def task(self) -> int | None:
        return self.spec.task

    @property
    def type(self) -> str | None:
        return self.spec.type

    @property
    def id(self) -> int | None:
        return self.spec.id

    @property
    def task_name(self) -> str:
        """``/job:J/replica:R/task:T``: the process (address space) the device is in."""
        return str(self.spec.address_space())

    @property
    def local_name(self) -> str:
        """``TYPE:ID`` (TF's ``LocalName``), without job and task."""
        if self.spec.type is not None and self.spec.id is not None:
            return f"{self.spec.type}:{self.spec.id}"
        return str(self)

    @property
    def display(self) -> str:
        """The name as reports print it (see the class docstring)."""
        s = self.spec
        if self.style == LOCAL or s.type is None or s.id is None:
            return self.local_name if self.style == LOCAL else str(self)
        if self.style == TASK and not s.replica:
            return str(DeviceSpec(s.job, None, s.task, s.type, s.id))
        return str(self)

    def same_task(self, other: "DeviceName") -> bool:
        return self.spec.address_space() == DeviceName.of(other).spec.address_space()

    def on(self, device_type: str, device_id: int) -> "DeviceName":
        """Another device of the same task (``CPU:0`` of a GPU's host), displayed alike."""
        s = self.spec
        return DeviceName(DeviceSpec(s.job, s.replica, s.task, device_type, device_id), self.style)


def _own_style(spec: DeviceSpec) -> str:
    if spec.job in (None, DEFAULT_JOB) and not spec.replica and not spec.task:
        return LOCAL
    return REPLICA if spec.replica else TASK


@lru_cache(maxsize=1024)
def _name_of(text: str) -> "DeviceName | str":
    spec = parse_device(text)
    if spec is None:
        return text      # (not a device name: shown as it is)
    return DeviceName(spec)


#: a run of more devices than this, of one type and consecutive ids, is written as a range
#: (``GPU:0-299``): ``--devices GPU=65536`` made a summary line of every name
MAX_LISTED_RUN = 8


def _runs(names: list[str]) -> list[str]:
    """``names`` (sorted device names), each run of more than ``MAX_LISTED_RUN`` names that
    differ only by consecutive ids (``.../GPU:0`` ... ``.../GPU:299``) as one range
    (``.../GPU:0-299``)."""
    out: list[str] = []
    start = 0
    while start < len(names):
        head, _, first = names[start].rpartition(":")
        end = start + 1
        if head and first.isdecimal():
            expect = int(first) + 1
            while end < len(names):
                h, _, i = names[end].rpartition(":")
                if h != head or not i.isdecimal() or int(i) != expect:
                    break
                end, expect = end + 1, expect + 1
        if end - start > MAX_LISTED_RUN:
            out.append(f"{names[start]}-{names[end - 1].rpartition(':')[2]}")
        else:
            out.extend(names[start:end])
        start = end
    return out


def display(name: "str | None") -> str:
    """How reports print a placed device: ``DeviceName.display``, ``nowhere`` for None."""
    if not name:
        return "nowhere"
    named = DeviceName.of(name)
    return named.display if isinstance(named, DeviceName) else str(named)


@dataclass(frozen=True, slots=True)
class Device:
    """A concrete device of the target machine."""

    spec: DeviceSpec
    #: how the device set displays its names (``DeviceName.display``)
    style: str = field(default=LOCAL, compare=False)
    #: in the session's own task: TF prefers local devices among equals (``IsLocal``)
    local: bool = field(default=True, compare=False)
    #: the full name, parsed once: placement stores it for every node
    name: DeviceName = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "name", DeviceName(self.spec, self.style))

    @property
    def type(self) -> str:
        return self.spec.type  # type: ignore[return-value]

    def __str__(self) -> str:
        return self.name


def device_type_priority(device_type: str) -> int:
    return DEVICE_TYPE_PRIORITY.get(device_type, 0)


class DeviceSetError(ValueError):
    """A ``--devices`` value that cannot be understood."""


@dataclass(frozen=True)
class DeviceSet:
    """The devices of the target machine (or cluster), in TF's preference order.

    ``DeviceSet::PrioritizedDeviceTypeList`` orders types by priority (GPU before CPU);
    devices of one type are ordered by name (``CPU:0`` before ``CPU:1``). In a cluster the
    session's own task (``session_task``) is local: ``SortPrioritizedDeviceVector`` puts
    local devices before remote ones of the same priority, so ops without a request land
    on the task the session talks to.
    """

    devices: tuple[Device, ...]
    source: str = "default"
    #: the task the session runs on (``/job:worker/replica:0/task:0``); None: chosen as
    #: :func:`default_session_task` says
    session_task: DeviceSpec | None = None
    #: what the set was parsed from (``--devices`` text), to apply it again to a cluster
    text: str = field(default="", compare=False)

    def __post_init__(self):
        tasks = sorted({d.spec.address_space() for d in self.devices}, key=_task_order)
        local = self.session_task or default_session_task(tasks)
        if len(tasks) == 1 and tasks[0] == DeviceSpec(DEFAULT_JOB, 0, 0):
            style = LOCAL
        else:
            style = REPLICA if any(t.replica for t in tasks) else TASK
        devices = {Device(d.spec, style, d.spec.address_space() == local) for d in self.devices}
        ordered = tuple(sorted(devices, key=_device_order))
        object.__setattr__(self, "devices", ordered)
        object.__setattr__(self, "session_task", local)
        object.__setattr__(self, "tasks", tuple(tasks))
        object.__setattr__(self, "style", style)
        object.__setattr__(self, "_by_name", {d.name: d for d in ordered})
        object.__setattr__(self, "_matching", {})

    @property
    def names(self) -> list[DeviceName]:
        return [d.name for d in self.devices]

    @property
    def types(self) -> list[str]:
        seen: list[str] = []
        for d in self.devices:
            if d.type not in seen:
                seen.append(d.type)
        return seen

    @property
    def multi_task(self) -> bool:
        return len(self.tasks) > 1  # type: ignore[attr-defined]

    def task_display(self, task: DeviceSpec) -> str:
        """A task as this set displays it: ``/job:ps/task:0`` (the replica when shown)."""
        if self.style == TASK and not task.replica:  # type: ignore[attr-defined]
            return str(DeviceSpec(task.job, None, task.task))
        return str(task.address_space())

    def get(self, name: str) -> Device | None:
        return self._by_name.get(name)  # type: ignore[attr-defined]

    def name(self, text: str) -> "DeviceName | str":
        """``text`` as this set's ``DeviceName`` (displayed as the set displays its names),
        for full names read back from JSON or a cache."""
        found = self._by_name.get(text)  # type: ignore[attr-defined]
        if found is not None:
            return found.name
        spec = parse_device(text)
        return text if spec is None else DeviceName(spec, self.style)  # type: ignore[attr-defined]

    def matching(self, spec: DeviceSpec) -> list[Device]:
        """TF's ``FindMatchingDevices`` (cached per spec: placement asks once per group)."""
        cache = self._matching  # type: ignore[attr-defined]
        found = cache.get(spec)
        if found is None:
            found = cache[spec] = [d for d in self.devices if spec.matches(d.spec)]
        return found

    def describe(self) -> str:
        """The set in a few words: ``CPU:0, GPU:0`` for one local task; for a cluster
        ``CPU:0, GPU:0 on each of /job:ps/task:0, /job:worker/task:0`` when every task has
        the same devices, else every device's displayed name."""
        by_task: dict[DeviceSpec, list[Device]] = {}
        for d in sorted(self.devices, key=lambda d: (_task_order(d.spec.address_space()),
                                                     d.type, d.spec.id)):
            by_task.setdefault(d.spec.address_space(), []).append(d)
        if len(by_task) == 1 and self.style == LOCAL:  # type: ignore[attr-defined]
            return ", ".join(_runs([d.name.local_name for d in self.devices_sorted()]))
        locals_ = {tuple(d.name.local_name for d in ds) for ds in by_task.values()}
        if len(locals_) == 1:
            task_names = [self.task_display(t) for t in by_task]
            each = "on each of " if len(task_names) > 1 else "on "
            return f"{', '.join(_runs(list(next(iter(locals_)))))} {each}{', '.join(task_names)}"
        return ", ".join(_runs([d.name.display for ds in by_task.values() for d in ds]))

    def devices_sorted(self) -> list[Device]:
        """By task, type and id (for listings; ``devices`` is in TF's preference order)."""
        return sorted(self.devices, key=lambda d: (_task_order(d.spec.address_space()),
                                                   d.type, d.spec.id))

    @classmethod
    def parse(cls, text: str, *, source: str = "--devices",
              cluster: "Cluster | None" = None) -> "DeviceSet":
        """Parse ``CPU:0,GPU:0,GPU:1`` (names) or ``CPU=1,GPU=2`` (counts, as in
        ``ConfigProto.device_count``), or full names with job, replica and task
        (``/job:ps/task:0/device:CPU:0``); comma separated. With a ``cluster``, local names
        and counts apply to each of its tasks, and full names must name one of its tasks."""
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise DeviceSetError("no devices given")
        tasks = cluster.tasks if cluster is not None else [DeviceSpec(DEFAULT_JOB, 0, 0)]
        devices: list[Device] = []
        for item in items:
            if "=" in item:
                dtype, _, count = item.partition("=")
                dtype = dtype.strip().upper()
                count = count.strip()
                if not (TYPE_NAME.fullmatch(dtype) and count.isascii() and count.isdigit()):
                    raise DeviceSetError(f"cannot read device count {item!r} (expected TYPE=N, e.g. GPU=2)")
                if int(count) > MAX_DEVICE_COUNT:
                    raise DeviceSetError(f"device count {item!r} is too large (at most "
                                         f"{MAX_DEVICE_COUNT} devices of a type per task)")
                devices += [Device(DeviceSpec(t.job, t.replica, t.task, dtype, i))
                            for t in tasks for i in range(int(count))]
                continue
            spec = parse_local_name(item) or parse_device(item)
            if spec is None or spec.type is None or spec.id is None:
                raise DeviceSetError(
                    f"cannot read device {item!r} (expected a name such as CPU:0, /device:GPU:1 "
                    "or /job:ps/replica:0/task:0/device:CPU:0, or a count such as GPU=2)")
            if spec.type.lower() in ("cpu", "gpu"):
                spec = replace(spec, type=spec.type.upper())
            if spec.job is None and spec.replica is None and spec.task is None:
                devices += [Device(DeviceSpec(t.job, t.replica, t.task, spec.type, spec.id))
                            for t in tasks]
                continue
            full = DeviceSpec(spec.job if spec.job is not None else DEFAULT_JOB,
                              spec.replica if spec.replica is not None else 0,
                              spec.task if spec.task is not None else 0, spec.type, spec.id)
            if cluster is not None and full.address_space() not in cluster.tasks:
                raise DeviceSetError(f"device {item!r} is not in a task of the cluster "
                                     f"({', '.join(str(t) for t in cluster.tasks)})")
            devices.append(Device(full))
        every_task = {d.spec.address_space() for d in devices} | set(
            cluster.tasks if cluster is not None else ())
        for task in every_task:
            if not any(d.type == "CPU" and d.spec.address_space() == task for d in devices):
                # Every TF process has a host CPU device; a task cannot run without one.
                devices.append(Device(replace(task, type="CPU", id=0)))
        return cls(tuple(devices), source=source, text=text,
                   session_task=cluster.session_task if cluster is not None else None)

    def for_cluster(self, cluster: "Cluster") -> "DeviceSet":
        """These devices on each task of ``cluster`` (local names and counts per task)."""
        where = f"--cluster {cluster.source}" if cluster.source else "cluster"
        source = where if self.source == "default" else f"{self.source}, {where}"
        return DeviceSet.parse(self.text or DEFAULT_DEVICES, source=source, cluster=cluster)

    @classmethod
    def default(cls) -> "DeviceSet":
        """The assumed target when neither ``--devices`` nor config names one: a
        single-GPU workstation, ``CPU:0`` and ``GPU:0``."""
        return cls((_local("CPU", 0), _local("GPU", 0)), source="default", text=DEFAULT_DEVICES)


DEFAULT_DEVICES = "CPU:0,GPU:0"
#: The most devices ``TYPE=N`` makes per task: each is an object every placement reads
#: (65536 take ~1 s); ``CPU=99999999999999999999`` was a MemoryError, or the process killed.
MAX_DEVICE_COUNT = 2**16


def default_session_task(tasks: list[DeviceSpec]) -> DeviceSpec | None:
    """The task a session runs on when nobody said: ``/job:chief/task:0``, else
    ``/job:worker/task:0``, else ``/job:localhost/task:0`` (the usual client targets), else
    the first task by name."""
    for job in ("chief", "worker", DEFAULT_JOB):
        for t in tasks:
            if t.job == job and not t.replica and not t.task:
                return t
    return min(tasks, key=_task_order) if tasks else None


def _task_order(t: DeviceSpec):
    return (t.job or "", t.replica or 0, t.task or 0)


def _local(dtype: str, i: int) -> Device:
    return Device(DeviceSpec(DEFAULT_JOB, 0, 0, dtype, i))


def _device_order(d: Device):
    s = d.spec
    return (-device_type_priority(s.type or ""), s.type or "", not d.local, s.job or "",
            s.replica or 0, s.task or 0, s.id or 0)


def full_names(devices: Iterable[Device]) -> list[str]:
    return [d.name for d in devices]
