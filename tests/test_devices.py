"""Device-name parsing, matching and merging, checked against TF's device_name_utils rules."""

import pytest

from placelint.model.cluster import Cluster
from placelint.model.devices import (MAX_DEVICE_COUNT, DeviceSet, DeviceSetError, DeviceSpec, MergeError,
                                     parse_device)


@pytest.mark.parametrize("text, expected", [
    ("", DeviceSpec()),
    ("/", DeviceSpec()),
    ("/job:localhost/replica:0/task:0/device:CPU:0", DeviceSpec("localhost", 0, 0, "CPU", 0)),
    ("/device:GPU:1", DeviceSpec(type="GPU", id=1)),
    ("/cpu:0", DeviceSpec(type="CPU", id=0)),
    ("/CPU:3", DeviceSpec(type="CPU", id=3)),
    ("/gpu:*", DeviceSpec(type="GPU")),
    ("/job:worker/task:1", DeviceSpec(job="worker", task=1)),
    ("/device:GPU:*", DeviceSpec(type="GPU")),
    ("/job:*/replica:*/task:*/device:*", DeviceSpec()),
    ("/job:ps/replica:1/task:2/cpu:1", DeviceSpec("ps", 1, 2, "CPU", 1)),
    ("/device:CPU", DeviceSpec(type="CPU")),
])
def test_parse_valid(text, expected):
    assert parse_device(text) == expected


@pytest.mark.parametrize("text", ["CPU:0", "GPU", "/device:CPU:x", "/job:1abc", "/task:a",
                                  "/gpu:", "/job:worker/bogus:1", "cpu:0", "/device:CPU:0 "])
def test_parse_malformed(text):
    assert parse_device(text) is None


def test_to_string_is_tf_parsed_name_to_string():
    assert str(parse_device("/cpu:1")) == "/device:CPU:1"
    assert str(parse_device("/gpu:*")) == "/device:GPU:*"
    assert str(parse_device("/job:w/task:2")) == "/job:w/task:2"


def test_partial_spec_matches():
    gpu1 = parse_device("/job:localhost/replica:0/task:0/device:GPU:1")
    assert parse_device("/device:GPU:*").matches(gpu1)
    assert parse_device("/job:localhost").matches(gpu1)
    assert not parse_device("/job:worker").matches(gpu1)
    assert not parse_device("/device:CPU:1").matches(gpu1)


def test_merge_rules():
    a, b = parse_device("/device:CPU:0"), parse_device("/device:GPU:0")
    with pytest.raises(MergeError, match="incompatible types"):
        a.merge(b)
    assert a.merge(b, allow_soft_placement=True) == DeviceSpec()
    with pytest.raises(MergeError, match="incompatible ids"):
        a.merge(parse_device("/device:CPU:1"))
    assert a.merge(parse_device("/device:CPU:1"), True) == DeviceSpec(type="CPU")
    with pytest.raises(MergeError, match="incompatible jobs"):
        parse_device("/job:a").merge(parse_device("/job:b"), True)
    assert parse_device("/job:a").merge(parse_device("/device:GPU:1")) == DeviceSpec(job="a", type="GPU", id=1)


def test_device_set_counts_and_names():
    ds = DeviceSet.parse("CPU=1,GPU=2")
    assert ds.names == ["/job:localhost/replica:0/task:0/device:GPU:0",
                        "/job:localhost/replica:0/task:0/device:GPU:1",
                        "/job:localhost/replica:0/task:0/device:CPU:0"]
    assert DeviceSet.parse("CPU:0,GPU:0,GPU:1").names == ds.names
    assert DeviceSet.parse("/cpu:0").describe() == "CPU:0"
    # a host CPU is always there
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in DeviceSet.parse("GPU:0").names
    with pytest.raises(DeviceSetError):
        DeviceSet.parse("GPU:x")
    with pytest.raises(DeviceSetError, match="cannot read device count"):
        DeviceSet.parse("CPU=²")     # a digit to str.isdigit, not to int()
    with pytest.raises(DeviceSetError, match="too large"):
        DeviceSet.parse("CPU=99999999999999999999")     # (was a MemoryError, or killed)
    with pytest.raises(DeviceSetError, match="too large"):
        DeviceSet.parse(f"GPU={MAX_DEVICE_COUNT + 1}")
    gpus = [d for d in DeviceSet.parse(f"GPU={MAX_DEVICE_COUNT}").devices if d.type == "GPU"]
    assert len(gpus) == MAX_DEVICE_COUNT
    with pytest.raises(DeviceSetError):
        DeviceSet.parse("")


def test_placer_prefers_devices_by_name_as_strings():
    """SortPrioritizedDeviceVector compares device names as strings: CPU:10 before CPU:2."""
    from google.protobuf import text_format

    from placelint.api import place_graphdef
    from placelint.proto import GraphDef
    gd = text_format.Parse('node { name: "x" op: "NoOp" }', GraphDef())
    r = place_graphdef(gd, devices="CPU:2,CPU:10")
    assert r.placement == {"x": "/job:localhost/replica:0/task:0/device:CPU:10"}


def test_describe_writes_long_runs_of_ids_as_ranges():
    # ``--devices GPU=65536`` printed every name in the summary line
    assert DeviceSet.parse("GPU=300").describe() == "CPU:0, GPU:0-299"
    # up to MAX_LISTED_RUN names of a run are listed as they were
    assert DeviceSet.parse("CPU=2,GPU=8").describe() == (
        "CPU:0, CPU:1, " + ", ".join(f"GPU:{i}" for i in range(8)))
    assert DeviceSet.parse("CPU=2,GPU=9").describe() == "CPU:0, CPU:1, GPU:0-8"
    # a gap ends a run; every task of a cluster gets the same ranges
    gapped = ",".join(f"GPU:{i}" for i in [*range(10), *range(11, 13)])
    assert DeviceSet.parse(gapped).describe() == "CPU:0, GPU:0-9, GPU:11, GPU:12"
    cluster = DeviceSet.parse("CPU=1,GPU=16", cluster=Cluster.from_dict({"worker": ["a:1", "b:1"]}))
    assert cluster.describe() == "CPU:0, GPU:0-15 on each of /job:worker/task:0, /job:worker/task:1"
    # devices that differ by task: every displayed name, runs as ranges
    full = ",".join([f"/job:worker/task:0/device:GPU:{i}" for i in range(9)]
                    + ["/job:ps/task:0/device:CPU:0"])
    assert DeviceSet.parse(full).describe() == (
        "/job:ps/task:0/device:CPU:0, /job:worker/task:0/device:CPU:0, "
        "/job:worker/task:0/device:GPU:0-8")
